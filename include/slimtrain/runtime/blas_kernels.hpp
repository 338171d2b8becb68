#pragma once
/**
 * @brief OpenBLAS's kernels chosen by measurement, once per machine.
 *
 * OpenBLAS picks its kernels as it loads, from a table of CPU model numbers: a release older
 * than the CPU guesses (Debian 12's 0.3.21 runs its AVX2 Haswell kernels on an AVX-512 EPYC of
 * family 26: 131 GFLOP/s on one core where SkylakeX's gave 235), and OPENBLAS_CORETYPE, read at
 * load time, is the only way to change its mind. So slimtrain times a 1024-cubed sgemm with each
 * kernel set this CPU's instruction-set flags allow, each in a child process of its own (the
 * kernels cannot change inside a process), and keeps the fastest. The decision is cached per
 * machine (CPU model and flags, OpenBLAS build), so later runs pay nothing; the first rank of a
 * node to take the cache's lock measures and the node's other ranks read its decision.
 */
#include <string>
#include <vector>

#include "slimtrain/runtime/blas.hpp"
#include "slimtrain/runtime/cpu_info.hpp"
#include "slimtrain/runtime/kernel_choice.hpp"

namespace slimtrain::runtime {

/**
 * @brief The kernel sets `cpu` can run, by its instruction-set flags: Sandybridge (AVX, only
 * without AVX2), Haswell (AVX2 and FMA), Zen (AVX2 on AMD), SkylakeX (AVX-512 F, BW, DQ, VL,
 * CD), Cooperlake (SkylakeX plus avx512_bf16).
 */
std::vector<std::string> candidate_kernels(const CpuInfo& cpu = cpu_info());

/**
 * @brief Where decisions are cached: SLIMTRAIN_CACHE_DIR, else $XDG_CACHE_HOME/slimtrain, else
 * $HOME/.cache/slimtrain.
 */
std::string kernel_cache_dir();

/**
 * @brief The decision for this machine: read from the cache, or measured (under the cache's
 * lock, at most `lock_wait_s` waiting for another rank's measurement) and cached. Never throws:
 * what cannot be measured keeps OpenBLAS's own choice and says why in `how`.
 */
KernelChoice choose_openblas_kernels(const BlasInfo& blas, const std::string& cache_dir,
                                     double lock_wait_s = 60);

/**
 * @brief Times one kernel set ("" = OpenBLAS's own choice) in a probe child: this program run
 * again with OPENBLAS_CORETYPE set, killed past `timeout_s`. False, with `why`, when it failed.
 */
bool measure_kernels(const std::string& requested, double timeout_s, KernelRate& out,
                     std::string& why);

/**
 * @brief Decides this process's kernels before anything starts: a user's OPENBLAS_CORETYPE
 * stands (the sets are still measured, or read from the cache, so the start line can say when
 * it is slower than this CPU's best); otherwise choose_openblas_kernels, and when the choice
 * differs from what OpenBLAS loaded, this program runs again (execv of its own file, same pid
 * and arguments) with OPENBLAS_CORETYPE set. SLIMTRAIN_OPENBLAS_CHOICE carries the decision to the
 * start line and stops a second try. Returns when there is nothing to do or exec fails. Call before
 * MPI starts.
 */
void reexec_for_openblas_kernels(char** argv);

/** @brief The decision reexec_for_openblas_kernels made for this process (none: empty). */
KernelChoice current_kernel_choice();

/** @brief The start line's note on the kernels (KernelChoice::describe), or "". */
std::string openblas_kernels_note();

/** @brief Whether this process is a probe child (SLIMTRAIN_BLAS_PROBE_CHILD set). */
bool is_kernel_probe_child();

/**
 * @brief The probe child's work: times sgemm_ on one thread and prints
 * "kernels=NAME gflops=G" on stdout. Returns the exit code.
 */
int run_kernel_probe_child();

}  // namespace slimtrain::runtime
