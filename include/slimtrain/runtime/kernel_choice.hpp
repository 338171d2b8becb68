#pragma once
/**
 * @brief A decision on OpenBLAS's kernels and the figures behind it: what each kernel set
 * measured, which one a process loads and why, the lines the start line and warnings show, and the
 * text form the cache file and a re-executed process carry. How the figures are measured and the
 * decision made is blas_kernels.hpp's.
 */
#include <string>
#include <vector>

namespace slimtrain::runtime {

/** @brief One kernel set's single-core sgemm rate, measured in a probe child. */
struct KernelRate {
  std::string requested;  ///< the OPENBLAS_CORETYPE the child got; "" = OpenBLAS's own choice
  std::string kernels;    ///< what the child's OpenBLAS loaded (openblas_get_corename)
  double gflops = 0;
};

/** @brief Which kernels a process runs with, and how that was decided. */
struct KernelChoice {
  std::string kernels;  ///< the OPENBLAS_CORETYPE to load with; "" = OpenBLAS's own choice
  std::string
      how;  ///< "measured now, cached in P", "cached in P", "set by you", "not measured: why"
  std::vector<KernelRate> rates;  ///< OpenBLAS's own choice first; empty when nothing was measured
  /// The kernels a user's OPENBLAS_CORETYPE loaded (left alone, never replaced); "" when unset.
  std::string yours;

  /** @brief OpenBLAS's own choice's rate, or nullptr when not measured. */
  const KernelRate* own() const;
  /** @brief The chosen kernels' rate (the own choice's when kept), or nullptr. */
  const KernelRate* chosen() const;
  /** @brief The fastest measured rate, or nullptr. */
  const KernelRate* fastest() const;
  /** @brief The rate of the kernels named `kernels` (as OpenBLAS names them), or nullptr. */
  const KernelRate* rate_of(const std::string& kernels) const;
  /**
   * @brief When a user's OPENBLAS_CORETYPE loaded kernels that measured kKernelMargin slower
   * than the fastest set: one line naming both figures and the way out; else "".
   */
  std::string slower_than_best_warning() const;
  /** @brief The start line's note: the kernels, both figures and how they were decided. */
  std::string describe() const;
  /** @brief Text form, for the cache file and for the process this one re-executes into. */
  std::string serialise() const;
  /** @brief Reads serialise()'s text; a damaged text gives a choice with no rates. */
  static KernelChoice parse(const std::string& text);
};

/**
 * @brief Switching kernels needs this much over OpenBLAS's own choice: less is noise (SkylakeX
 * and Cooperlake, the same sgemm kernels, measured 5.6% apart in one run on one machine).
 */
constexpr double kKernelMargin = 1.10;

/**
 * @brief Picks the fastest of `rates` (rates[0] is OpenBLAS's own choice): another set must be
 * kKernelMargin faster to replace it. Returns the OPENBLAS_CORETYPE to set, "" to keep the own.
 */
std::string fastest_kernels(const std::vector<KernelRate>& rates);

}  // namespace slimtrain::runtime
