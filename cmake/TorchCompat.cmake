# What a CUDA LibTorch 2.x from pip needs to configure, for every build that meets one: CI's
# second build (TORCH=pip scripts/build.sh) and the GPU machine's (scripts/gpu/build-and-check.sh)
# alike. Included by SlimtrainDependencies.cmake before find_package(Torch); a CPU LibTorch
# (Debian's 1.13) takes nothing from it.
#
# Before find_package(Torch): its Caffe2 config enables the CUDA language and looks for the
# toolkit, cuDNN, cuSPARSELt and cuDSS. slimtrain compiles no kernels and calls none of those
# libraries itself (libtorch_cuda.so links them at run time), so their headers are not required;
# the toolkit is the one at /usr/local/cuda unless CUDAToolkit_ROOT says otherwise, and the
# architecture list defaults to 9.0 (H100/H200, the GPUs these builds run on; only LibTorch's own
# CUDA flags use it).
# A prefix given as a wheel's `torch.utils.cmake_prefix_path` (.../torch/share/cmake) finds the
# config files but not the libraries: TorchConfig's find_library would take a system LibTorch's
# (Debian's libtorch.so in /usr/lib) before the wheel's. The wheel's root goes on the path too.
foreach(_p IN LISTS CMAKE_PREFIX_PATH)
  if(_p MATCHES "^(.*)/share/cmake/?$" AND EXISTS "${CMAKE_MATCH_1}/lib")
    list(APPEND CMAKE_PREFIX_PATH "${CMAKE_MATCH_1}")
  endif()
endforeach()
if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CUDAToolkit_ROOT /usr/local/cuda)
endif()
if(CUDAToolkit_ROOT AND NOT CMAKE_CUDA_COMPILER AND EXISTS "${CUDAToolkit_ROOT}/bin/nvcc")
  set(CMAKE_CUDA_COMPILER "${CUDAToolkit_ROOT}/bin/nvcc")
  set(CUDA_TOOLKIT_ROOT_DIR "${CUDAToolkit_ROOT}")
endif()
if(NOT TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
  set(TORCH_CUDA_ARCH_LIST 9.0)
endif()
# CUDA 12.9+ has NVTX3 only, header-only: seeding its folder takes LibTorch's NVTX3 branch.
if(CUDAToolkit_ROOT AND EXISTS "${CUDAToolkit_ROOT}/include/nvtx3" AND NOT nvtx3_dir)
  set(nvtx3_dir "${CUDAToolkit_ROOT}/include")
endif()
foreach(_lib CUDNN CUSPARSELT CUDSS)
  if(NOT DEFINED CAFFE2_USE_${_lib})
    set(CAFFE2_USE_${_lib} OFF)
  endif()
  if(NOT DEFINED USE_${_lib})
    set(USE_${_lib} OFF)
  endif()
endforeach()

# After: the libraries found must be the package's own (see above).
macro(slimtrain_check_torch_libraries)
  foreach(_lib TORCH_LIBRARY c10_LIBRARY)
    if(${_lib} AND TORCH_INSTALL_PREFIX AND NOT ${_lib} MATCHES "^${TORCH_INSTALL_PREFIX}/")
      message(FATAL_ERROR "LibTorch's config at '${TORCH_INSTALL_PREFIX}' found ${_lib} "
                          "'${${_lib}}' outside it (another LibTorch on the system). Configure a "
                          "fresh build folder with CMAKE_PREFIX_PATH naming the LibTorch's root.")
    endif()
  endforeach()
endmacro()

# After: LibTorch's CMake package can name targets the CUDA toolkit at hand no longer has
# (CUDA::nvToolsExt is gone from CUDA 12.9+; torch::nvtx3 and torch::cudnn depend on what its
# cuda.cmake found). At the end of the top-level directory, every `ns::name` in the link interface
# of LibTorch's imported targets that is not a target becomes an empty GLOBAL INTERFACE IMPORTED
# target, named in the configure log.
function(_slimtrain_stub_missing_torch_targets)
  set(seen "")
  set(queue torch torch_library torch_cpu torch_cuda c10 c10_cuda caffe2::cuda caffe2::cublas
            caffe2::curand caffe2::cufft caffe2::nvrtc torch::cudart torch::nvtoolsext torch::nvtx3
            torch::cudnn)
  while(queue)
    list(POP_FRONT queue t)
    if(t IN_LIST seen)
      continue()
    endif()
    list(APPEND seen "${t}")
    if(NOT TARGET "${t}")
      continue()
    endif()
    get_target_property(libs "${t}" INTERFACE_LINK_LIBRARIES)
    if(NOT libs)
      continue()
    endif()
    foreach(l IN LISTS libs)
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" l "${l}")
      if(l MATCHES "^[A-Za-z0-9_]+::[A-Za-z0-9_]+$")
        if(TARGET "${l}")
          list(APPEND queue "${l}")
        else()
          add_library(${l} INTERFACE IMPORTED GLOBAL)
          message(STATUS "slimtrain: LibTorch's '${t}' links '${l}', which is not a target: made an empty one")
        endif()
      endif()
    endforeach()
  endwhile()
endfunction()
if(NOT CMAKE_VERSION VERSION_LESS 3.19)
  cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _slimtrain_stub_missing_torch_targets)
endif()

# A pip LibTorch 2.x exports its own statically linked copies of many std::filesystem functions
# from libtorch.so and libtorch_cpu.so (pytorch/pytorch#133437), some of them broken (2.11's
# remove_all calls address 0). A program binds each symbol to the first library that defines it,
# in the order of its DT_NEEDED entries: naming libstdc++ first in every link makes the C++
# library's own definitions win, for slimtrain's code and the tests' alike.
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  add_link_options("LINKER:--push-state,--no-as-needed" -lstdc++ "LINKER:--pop-state")
endif()
