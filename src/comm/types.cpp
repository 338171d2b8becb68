#include "slimtrain/comm/types.hpp"

#include <cmath>
#include <cstring>

#include "slimtrain/core/error.hpp"

namespace slimtrain::comm {

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return 4;
    case DType::f64:
      return 8;
    case DType::i64:
      return 8;
    case DType::f16:
      return 2;
    case DType::bf16:
      return 2;
    case DType::u8:
      return 1;
  }
  SLIMTRAIN_THROW(ConfigError, "unknown DType ", static_cast<int>(dtype));
}

const char* to_string(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return "float32";
    case DType::f64:
      return "float64";
    case DType::i64:
      return "int64";
    case DType::f16:
      return "float16";
    case DType::bf16:
      return "bfloat16";
    case DType::u8:
      return "uint8";
  }
  return "unknown";
}

const char* to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return "sum";
    case ReduceOp::avg:
      return "avg";
    case ReduceOp::max:
      return "max";
    case ReduceOp::min:
      return "min";
  }
  return "unknown";
}

const char* to_string(OpKind kind) {
  switch (kind) {
    case OpKind::none:
      return "none";
    case OpKind::all_reduce:
      return "all_reduce";
    case OpKind::broadcast:
      return "broadcast";
    case OpKind::barrier:
      return "barrier";
    case OpKind::agree:
      return "agree";
    case OpKind::fields:
      return "control_reduce";
    case OpKind::all_gather:
      return "all_gather";
    case OpKind::reduce_scatter:
      return "reduce_scatter";
  }
  return "unknown";
}

bool is_floating(DType dtype) {
  return dtype != DType::i64 && dtype != DType::u8;
}

Field Field::real_sum(double value) {
  Field f{FieldOp::sum_f64, 0};
  std::memcpy(&f.value, &value, sizeof value);
  return f;
}

double Field::real() const {
  double out = 0;
  std::memcpy(&out, &value, sizeof out);
  return out;
}

double DeadlinePolicy::deadline_for(std::size_t bytes) const {
  if (!(base_s > 0) || !(floor_bytes_per_s > 0) || !(grace_s >= 0) || !std::isfinite(base_s)) {
    SLIMTRAIN_THROW(ConfigError, "invalid communication deadline policy: base ", base_s,
                    " s, floor ", floor_bytes_per_s, " B/s, grace ", grace_s,
                    " s (base and floor must be positive, grace non-negative)");
  }
  return base_s + static_cast<double>(bytes) / floor_bytes_per_s;
}

}  // namespace slimtrain::comm
