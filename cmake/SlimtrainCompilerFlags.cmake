# Warnings, sanitizers and compiler caching, applied to every target of the project.

find_program(SLIMTRAIN_CCACHE ccache)
if(SLIMTRAIN_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_C_COMPILER_LAUNCHER "${SLIMTRAIN_CCACHE}")
  set(CMAKE_CXX_COMPILER_LAUNCHER "${SLIMTRAIN_CCACHE}")
endif()

add_compile_options(-Wall -Wextra)
if(SLIMTRAIN_WERROR)
  add_compile_options(-Werror)
endif()

if(SLIMTRAIN_SANITIZE)
  set(_san "-fsanitize=${SLIMTRAIN_SANITIZE}")
  add_compile_options(${_san} -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(${_san})
endif()
