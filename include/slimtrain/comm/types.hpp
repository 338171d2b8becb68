#pragma once
/** @brief Element types, reduction operators, deadlines and options shared by every backend. */
#include <climits>
#include <cstddef>
#include <cstdint>

namespace slimtrain::comm {

/** @brief Element type of a collective's buffer. */
enum class DType { f32, f64, i64, f16, bf16, u8 };

/** @brief Reduction operator; avg is sum / size and exists for floating types only. */
enum class ReduceOp { sum, avg, max, min };

/**
 * @brief What a collective is, as flight recorders, fingerprints and stall reports name it. The
 * values travel between ranks (stall inquiries, desync reports): append, never renumber.
 */
enum class OpKind : std::int64_t {
  none = 0,
  all_reduce = 1,
  broadcast = 2,
  barrier = 3,
  agree = 4,
  fields = 5,
  all_gather = 6,
  reduce_scatter = 7
};

/** @brief How one field of a mixed reduction combines across ranks. */
enum class FieldOp : std::int64_t { max = 1, min = 2, sum = 3, sum_f64 = 4 };

/**
 * @brief One field of a mixed reduction. Its operator travels with it, so one all-reduce combines
 * flags (max), counters (sum), reals (sum_f64) and fingerprints (min and max) at once.
 */
struct Field {
  FieldOp op = FieldOp::max;
  std::int64_t value = 0;  ///< for sum_f64: the bits of a double
  static Field of(FieldOp op, std::int64_t value) { return Field{op, value}; }
  static Field real_sum(double value);
  double real() const;
};

/** @brief Bytes per element of `dtype`. */
std::size_t dtype_size(DType dtype);
const char* to_string(DType dtype);
const char* to_string(ReduceOp op);
const char* to_string(OpKind kind);
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
  /** @brief Shown in flight recorders and stall reports, e.g. "grad-bucket"; first 15 chars. */
  const char* tag = "";
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
