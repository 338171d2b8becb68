# Run at every build (cmake -P): writes OUT with the source tree's git commit, and rewrites it
# only when that changed, so `slimtrain --version` names the commit it was built from without
# recompiling anything on an unchanged tree. Not a checkout (a tarball): "unknown".
find_package(Git QUIET)
set(commit "unknown")
if(GIT_FOUND AND EXISTS "${SOURCE_DIR}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --short=12 HEAD WORKING_DIRECTORY "${SOURCE_DIR}"
                  OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
  if(rc EQUAL 0)
    set(commit "${head}")
    # Uncommitted changes to tracked files: the binary is not exactly that commit.
    execute_process(COMMAND "${GIT_EXECUTABLE}" diff --quiet HEAD -- WORKING_DIRECTORY "${SOURCE_DIR}"
                    RESULT_VARIABLE dirty ERROR_QUIET)
    if(NOT dirty EQUAL 0)
      set(commit "${commit}+changes")
    endif()
  endif()
endif()
set(text "#pragma once\nnamespace slimtrain {\ninline constexpr const char* kBuildCommit = \"${commit}\";\n}\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE "${OUT}" "${text}")
endif()
