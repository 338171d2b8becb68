#pragma once
/**
 * @brief Which BLAS LibTorch calls, found at run time, and its thread pool.
 *
 * LibTorch's matrix products (and its convolutions where oneDNN does not take them) go through
 * `sgemm_` of whatever libblas.so.3 the dynamic linker found: on Debian an alternative, the
 * reference BLAS unless an optimised one is installed (2.4x slower for cnn-small here). OpenBLAS
 * and BLIS also keep a thread pool of their own, sized to the machine's cores unless told, which
 * fights with the rank's LibTorch threads when several ranks share a node.
 */
#include <string>

namespace slimtrain::runtime {

/** @brief The BLAS behind `sgemm_` in this process. */
struct BlasInfo {
  enum class Kind { openblas, blis, mkl, reference, unknown };
  Kind kind = Kind::unknown;
  std::string library;  ///< the file that holds sgemm_, symbolic links resolved; "" if none
  std::string detail;   ///< e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY SkylakeX MAX_THREADS=64"
  std::string kernels;  ///< OpenBLAS: the core its kernels were chosen for ("SkylakeX")
  bool own_pool = false;  ///< OpenBLAS's pthreads build: a thread pool beside OpenMP's
  /** @brief "OpenBLAS 0.3.21 ... (/usr/lib/.../libopenblasp-r0.3.21.so)". */
  std::string describe() const;
  /** @brief One line saying why the reference BLAS is slow and how to install a fast one. */
  static std::string reference_warning();
};

/** @brief Looks up sgemm_ as LibTorch's calls resolve it, and asks its library what it is. */
BlasInfo detect_blas();

/**
 * @brief Sizes the BLAS's own thread pool to `threads` (openblas_set_num_threads,
 * bli_thread_set_num_threads, mkl_set_num_threads) and returns the size; 0 when the BLAS has no
 * pool to size
 * (reference BLAS) or does not say how. OpenBLAS's pthreads build gets 1: its pool runs beside
 * LibTorch's OpenMP team rather than in it, so any more would be threads beyond the share.
 */
int set_blas_threads(const BlasInfo& blas, int threads);

}  // namespace slimtrain::runtime
