#include "slimtrain/cli/version_info.hpp"

#include <H5public.h>
#include <mpi.h>
#include <torch/version.h>

#include <sstream>

#include "slimtrain/build_commit.hpp"
#include "slimtrain/version.hpp"

#ifdef SLIMTRAIN_HAVE_NCCL
#include <cuda_runtime_api.h>
#include <nccl.h>
#endif

namespace slimtrain::cli {
namespace {

// MPI_Get_library_version may be called before MPI_Init: the library actually loaded, which on
// a cluster can differ from the headers (a module swapped after the build).
std::string loaded_mpi() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  if (MPI_Get_library_version(text, &length) != MPI_SUCCESS) return "unknown";
  std::string out(text, static_cast<std::size_t>(length));
  const auto comma = out.find(',');  // "Open MPI v4.1.4, package: ..., ident: ..., repo rev: ..."
  if (comma != std::string::npos) out.resize(comma);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

}  // namespace

std::string version_text() {
  std::ostringstream out;
  out << "slimtrain " << kVersion << " (commit " << kBuildCommit << ")\n";
  out << "  LibTorch  " << TORCH_VERSION_MAJOR << '.' << TORCH_VERSION_MINOR << '.'
      << TORCH_VERSION_PATCH << " (headers)\n";
  out << "  MPI       ";
#ifdef OMPI_MAJOR_VERSION
  out << "Open MPI " << OMPI_MAJOR_VERSION << '.' << OMPI_MINOR_VERSION << '.'
      << OMPI_RELEASE_VERSION << " (headers), ";
#endif
  out << "MPI " << MPI_VERSION << '.' << MPI_SUBVERSION << "; loaded: " << loaded_mpi() << "\n";
  out << "  HDF5      " << H5_VERS_MAJOR << '.' << H5_VERS_MINOR << '.' << H5_VERS_RELEASE
#ifdef H5_HAVE_PARALLEL
      << " (parallel)"
#endif
      << "\n";
#ifdef SLIMTRAIN_HAVE_NCCL
  out << "  NCCL      " << NCCL_MAJOR << '.' << NCCL_MINOR << '.' << NCCL_PATCH << ", CUDA runtime "
      << CUDART_VERSION / 1000 << '.' << (CUDART_VERSION % 1000) / 10 << " (headers)\n";
#else
  out << "  NCCL      not built (configure with -DSLIMTRAIN_WITH_NCCL=ON)\n";
#endif
  return out.str();
}

}  // namespace slimtrain::cli
