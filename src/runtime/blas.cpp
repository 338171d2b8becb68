#include "slimtrain/runtime/blas.hpp"

#include <dlfcn.h>

#include <climits>

namespace slimtrain::runtime {
namespace {

// The library that holds `address`, symbolic links resolved (Debian's alternatives are links).
std::string library_of(void* address) {
  Dl_info info{};
  if (address == nullptr || dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "";
  char resolved[PATH_MAX];
  if (realpath(info.dli_fname, resolved) != nullptr) return resolved;
  return info.dli_fname;
}

// A symbol of the library that holds sgemm_ (and of what it depends on), not of the process:
// another BLAS loaded beside it must not be mistaken for the one LibTorch calls.
void* symbol_in(void* handle, const char* name) {
  return handle == nullptr ? nullptr : dlsym(handle, name);
}

// MKL's version string: mkl_get_version_string in MKL's own libraries; a pip LibTorch links MKL
// statically into libtorch_cpu.so and exports only the upper-case spelling.
void* mkl_version_function(void* handle) {
  void* f = symbol_in(handle, "mkl_get_version_string");
  return f != nullptr ? f : symbol_in(handle, "MKL_Get_Version_String");
}

}  // namespace

std::string BlasInfo::describe() const {
  if (library.empty()) return "no BLAS found (sgemm_ is not loaded)";
  std::string name;
  switch (kind) {
    case Kind::openblas:
    case Kind::blis:
    case Kind::mkl:
      name = detail;
      break;
    case Kind::reference:
      name = "reference BLAS (netlib: slow)";
      break;
    case Kind::unknown:
      name = "an unrecognised BLAS";
      break;
  }
  return name + " (" + library + ")";
}

std::string BlasInfo::reference_warning() {
  return "LibTorch calls the reference BLAS, 2-3x slower than an optimised one for these models: "
         "install OpenBLAS (Debian: apt-get install libopenblas0-openmp, which becomes the "
         "libblas.so.3 alternative; scripts/install-deps.sh does it), or load your cluster's "
         "OpenBLAS, BLIS or MKL module (INSTALL.md, 'BLAS')";
}

BlasInfo detect_blas() {
  BlasInfo blas;
  void* sgemm = dlsym(RTLD_DEFAULT, "sgemm_");
  blas.library = library_of(sgemm);
  if (blas.library.empty()) return blas;
  void* handle = dlopen(blas.library.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (auto* config = reinterpret_cast<char* (*)()>(symbol_in(handle, "openblas_get_config"))) {
    blas.kind = BlasInfo::Kind::openblas;
    blas.detail = config();
    // The configuration names the build's baseline target (DYNAMIC_ARCH: Prescott); the kernels
    // chosen for this CPU at load time are the core name.
    if (auto* core = reinterpret_cast<char* (*)()>(symbol_in(handle, "openblas_get_corename"))) {
      blas.kernels = core();
      blas.detail += ", kernels for " + blas.kernels;
    }
    auto* parallel = reinterpret_cast<int (*)()>(symbol_in(handle, "openblas_get_parallel"));
    if (parallel != nullptr) {
      const int p = parallel();
      blas.own_pool = p == 1;
      blas.detail += p == 0 ? " (sequential)" : p == 1 ? " (pthreads)" : " (OpenMP)";
    }
  } else if (auto* version = reinterpret_cast<const char* (*)()>(
                 symbol_in(handle, "bli_info_get_version_str"))) {
    blas.kind = BlasInfo::Kind::blis;
    blas.detail = std::string("BLIS ") + version();
  } else if (auto* mkl = reinterpret_cast<void (*)(char*, int)>(mkl_version_function(handle))) {
    blas.kind = BlasInfo::Kind::mkl;
    char text[256] = {};
    mkl(text, sizeof text - 1);
    blas.detail = text;
  } else if (blas.library.find("/blas/libblas.so") != std::string::npos ||
             blas.library.find("netlib") != std::string::npos) {
    // Debian's and most distributions' reference BLAS: libblas.so.3 under a blas/ directory.
    blas.kind = BlasInfo::Kind::reference;
  }
  if (handle != nullptr) dlclose(handle);
  return blas;
}

int set_blas_threads(const BlasInfo& blas, int threads) {
  if (blas.library.empty() || threads < 1) return 0;
  void* handle = dlopen(blas.library.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  int done = 0;
  if (blas.kind == BlasInfo::Kind::openblas) {
    if (auto* set =
            reinterpret_cast<void (*)(int)>(symbol_in(handle, "openblas_set_num_threads"))) {
      // The OpenMP build runs in LibTorch's OpenMP team; the pthreads build keeps a pool beside
      // it, whose threads would be busy next to OpenMP's: one thread, the caller's, is its share.
      done = blas.own_pool ? 1 : threads;
      set(done);
    }
  } else if (blas.kind == BlasInfo::Kind::blis) {
    if (auto* set =
            reinterpret_cast<void (*)(long)>(symbol_in(handle, "bli_thread_set_num_threads"))) {
      set(threads);
      done = threads;
    }
  } else if (blas.kind == BlasInfo::Kind::mkl) {
    if (auto* set = reinterpret_cast<void (*)(int)>(symbol_in(handle, "MKL_Set_Num_Threads"))) {
      set(threads);
      done = threads;
    }
  }
  if (handle != nullptr) dlclose(handle);
  return done;
}

}  // namespace slimtrain::runtime
