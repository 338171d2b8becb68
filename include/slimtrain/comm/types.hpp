#pragma once
/** @brief Element types, reduction operators, deadlines and options shared by every backend. */
#include <climits>
#include <cstddef>

namespace slimtrain::comm {

/** @brief Element type of a collective's buffer. */
enum class DType { f32, f64, i64, f16, bf16 };

/** @brief Reduction operator; avg is sum / size and exists for floating types only. */
enum class ReduceOp { sum, avg, max, min };

/** @brief Bytes per element of `dtype`. */
std::size_t dtype_size(DType dtype);
const char* to_string(DType dtype);
const char* to_string(ReduceOp op);
/** @brief True for f32, f64, f16, bf16. */
bool is_floating(DType dtype);

/**
 * @brief How long an operation may take: base_s + bytes / floor_bytes_per_s, plus grace_s for
 * the stall inspection that names the missing ranks once the deadline has passed.
 */
struct DeadlinePolicy {
  double base_s = 60.0;
  double floor_bytes_per_s = 50e6;
  double grace_s = 2.0;
  /** @brief Seconds allowed for a payload of `bytes`; throws ConfigError on a non-positive policy.
   */
  double deadline_for(std::size_t bytes) const;
};

/** @brief Per-operation options (Gloo style: the timeout travels with the operation). */
struct OpOptions {
  double timeout_s = -1.0;  ///< < 0: use the communicator's DeadlinePolicy
  const char* tag = "";     ///< shown in the flight recorder, e.g. "grad-bucket"
};

/** @brief Communicator construction parameters. */
struct CommConfig {
  DeadlinePolicy deadline;
  /** @brief Largest piece of one all-reduce or broadcast; 4 MiB won the bench/allreduce sweep. */
  std::size_t chunk_bytes = 4u << 20;
  std::size_t recorder_entries = 256;
  /** @brief Cap on elements per backend call (MPI counts are int); tests lower it. */
  std::size_t max_elements_per_call = INT_MAX;
};

}  // namespace slimtrain::comm
