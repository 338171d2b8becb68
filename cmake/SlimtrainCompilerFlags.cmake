# Warnings, sanitizers, compiler caching and unity builds, applied to every target of the project.

find_program(SLIMTRAIN_CCACHE ccache)
if(SLIMTRAIN_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_C_COMPILER_LAUNCHER "${SLIMTRAIN_CCACHE}")
  set(CMAKE_CXX_COMPILER_LAUNCHER "${SLIMTRAIN_CCACHE}")
endif()

# Unity builds: each target's sources are compiled in batches of up to 8 per translation unit, so
# LibTorch's headers are paid once per batch (even precompiled, loading the 570 MB header takes
# ~8 s per translation unit here). A clean build on 2 cores: 22.5 -> 11.2 min. Turn it off
# (-DSLIMTRAIN_UNITY_BUILD=OFF) when editing one file at a time: a batch recompiles as a whole.
option(SLIMTRAIN_UNITY_BUILD "Compile each target's sources in batches (halves a clean build)" ON)
if(SLIMTRAIN_UNITY_BUILD AND NOT DEFINED CMAKE_UNITY_BUILD)
  set(CMAKE_UNITY_BUILD ON)
endif()

add_compile_options(-Wall -Wextra)
# In a batch, a test's fixture in an anonymous namespace is a base of gtest's test class declared
# in the batch's main file; GCC warns about that although each test stays in its own file.
if(CMAKE_UNITY_BUILD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-Wno-subobject-linkage>)
endif()
if(SLIMTRAIN_WERROR)
  add_compile_options(-Werror)
endif()

if(SLIMTRAIN_SANITIZE)
  set(_san "-fsanitize=${SLIMTRAIN_SANITIZE}")
  add_compile_options(${_san} -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(${_san})
endif()
