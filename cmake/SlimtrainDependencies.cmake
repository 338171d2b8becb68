# Every dependency is found here, once, so parts only link imported targets.

include(TorchCompat)  # what a CUDA LibTorch 2.x from pip needs (a CPU LibTorch takes nothing)
find_package(Torch REQUIRED)
slimtrain_check_torch_libraries()
find_package(MPI REQUIRED COMPONENTS C CXX)
find_package(Boost 1.71 REQUIRED COMPONENTS program_options)
find_package(nlohmann_json 3.9 REQUIRED)
find_package(xxHash REQUIRED)
find_package(ZLIB REQUIRED)
find_package(Threads REQUIRED)

# SentencePiece (libsentencepiece-dev): `prep text` trains and encodes with it, from a module of
# its own (src/data/CMakeLists.txt says why). It has no CMake package.
find_path(SENTENCEPIECE_INCLUDE_DIR sentencepiece_processor.h)
find_library(SENTENCEPIECE_LIBRARY sentencepiece)
find_library(SENTENCEPIECE_TRAIN_LIBRARY sentencepiece_train)
if(NOT SENTENCEPIECE_INCLUDE_DIR OR NOT SENTENCEPIECE_LIBRARY OR NOT SENTENCEPIECE_TRAIN_LIBRARY)
  message(FATAL_ERROR
    "slimtrain needs SentencePiece (headers and libsentencepiece, libsentencepiece_train) for "
    "'prep text'. On Debian/Ubuntu: apt-get install libsentencepiece-dev; elsewhere point "
    "CMAKE_PREFIX_PATH at a SentencePiece install.")
endif()
if(NOT TARGET slimtrain::sentencepiece)
  add_library(slimtrain::sentencepiece INTERFACE IMPORTED)
  target_include_directories(slimtrain::sentencepiece SYSTEM INTERFACE ${SENTENCEPIECE_INCLUDE_DIR})
  target_link_libraries(slimtrain::sentencepiece INTERFACE ${SENTENCEPIECE_LIBRARY}
                                                           ${SENTENCEPIECE_TRAIN_LIBRARY})
endif()

# Parallel HDF5: FindHDF5 prefers the MPI flavour when HDF5_PREFER_PARALLEL is set.
set(HDF5_PREFER_PARALLEL TRUE)
find_package(HDF5 1.10 REQUIRED COMPONENTS C)
if(NOT HDF5_IS_PARALLEL)
  message(FATAL_ERROR
    "slimtrain needs HDF5 built with MPI (parallel HDF5), but found a serial HDF5 at "
    "'${HDF5_INCLUDE_DIRS}'. On Debian/Ubuntu: apt-get install libhdf5-openmpi-dev. "
    "On a cluster: load the parallel HDF5 module (e.g. 'module load hdf5/1.10-mpi') or point "
    "HDF5_ROOT at an MPI build of HDF5.")
endif()
if(NOT TARGET slimtrain::hdf5)
  add_library(slimtrain::hdf5 INTERFACE IMPORTED)
  target_include_directories(slimtrain::hdf5 SYSTEM INTERFACE ${HDF5_C_INCLUDE_DIRS} ${HDF5_INCLUDE_DIRS})
  target_compile_definitions(slimtrain::hdf5 INTERFACE ${HDF5_C_DEFINITIONS} ${HDF5_DEFINITIONS})
  target_link_libraries(slimtrain::hdf5 INTERFACE ${HDF5_C_LIBRARIES} MPI::MPI_C)
endif()

# CUDA + NCCL: optional. AUTO builds the backend when both are found; ON insists.
string(TOUPPER "${SLIMTRAIN_WITH_NCCL}" _nccl_mode)
set(SLIMTRAIN_HAVE_NCCL OFF)
if(NOT _nccl_mode STREQUAL "OFF")
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
  find_package(NCCL QUIET)
  if(CUDAToolkit_FOUND AND NCCL_FOUND)
    set(SLIMTRAIN_HAVE_NCCL ON)
    message(STATUS "slimtrain: CUDA ${CUDAToolkit_VERSION} and NCCL ${NCCL_VERSION} found")
  elseif(_nccl_mode STREQUAL "ON")
    message(FATAL_ERROR
      "SLIMTRAIN_WITH_NCCL=ON but CUDA (found: ${CUDAToolkit_FOUND}) or NCCL (found: ${NCCL_FOUND}) "
      "is missing. Set CUDAToolkit_ROOT and NCCL_ROOT, or configure with -DSLIMTRAIN_WITH_NCCL=OFF.")
  else()
    message(STATUS "slimtrain: CUDA/NCCL not found, building the CPU (MPI) backend only")
  endif()
endif()

# A LibTorch built with CUDA (a pip torch on a GPU cluster; Debian's is CPU-only) lets the NCCL
# data plane order its work against LibTorch's current stream.
set(SLIMTRAIN_TORCH_CUDA OFF)
if(TORCH_CUDA_LIBRARIES OR TARGET torch_cuda OR TARGET c10_cuda)
  set(SLIMTRAIN_TORCH_CUDA ON)
endif()
if(SLIMTRAIN_REQUIRE_TORCH_CUDA AND NOT (SLIMTRAIN_TORCH_CUDA AND SLIMTRAIN_HAVE_NCCL))
  message(FATAL_ERROR
    "SLIMTRAIN_REQUIRE_TORCH_CUDA=ON, but the LibTorch found (${Torch_DIR}) has CUDA "
    "${SLIMTRAIN_TORCH_CUDA} and the NCCL backend is ${SLIMTRAIN_HAVE_NCCL}: every CUDA branch "
    "must compile here. Point CMAKE_PREFIX_PATH at a CUDA LibTorch (scripts/install-deps.sh "
    "--torch pip) and CUDAToolkit_ROOT / NCCL_ROOT at CUDA and NCCL.")
endif()

# Open MPI refuses to run as root and to oversubscribe cores unless told: tests say so explicitly.
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _mpiexec_version
                ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
set(SLIMTRAIN_MPIEXEC_EXTRA_FLAGS "")
if(_mpiexec_version MATCHES "Open MPI|OpenRTE")
  set(SLIMTRAIN_MPIEXEC_EXTRA_FLAGS --oversubscribe)
endif()

# LibTorch's umbrella header costs ~20 s per translation unit here; every target that includes
# it reuses one precompiled header: slimtrain_use_torch(<target>).
add_library(slimtrain_torch_pch OBJECT ${PROJECT_SOURCE_DIR}/cmake/torch_pch.cpp)
target_link_libraries(slimtrain_torch_pch PUBLIC torch slimtrain_core)
target_precompile_headers(slimtrain_torch_pch PUBLIC <torch/torch.h>)
function(slimtrain_use_torch target)
  target_link_libraries(${target} PUBLIC torch)
  target_precompile_headers(${target} REUSE_FROM slimtrain_torch_pch)
endfunction()
