#include "slimtrain/comm/mpi_ops.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "slimtrain/comm/half.hpp"
#include "slimtrain/core/check_mpi.hpp"

namespace slimtrain::comm {
namespace {

// Reduction over 2-byte floats: each element goes through float and is rounded back (RNE).
template <float (*to_float)(std::uint16_t), std::uint16_t (*from_float)(float), int which>
void reduce_16(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const std::uint16_t*>(in);
  auto* b = static_cast<std::uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) {
    const float x = to_float(a[i]);
    const float y = to_float(b[i]);
    float r = 0;
    if (which == 0) r = x + y;
    if (which == 1) r = x > y ? x : y;
    if (which == 2) r = x < y ? x : y;
    b[i] = from_float(r);
  }
}

// A mixed record is pairs {operator, value}; each pair combines by its own operator. A pair
// whose operator differs between ranks (a caller bug) comes back with operator 0.
void reduce_fields(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const std::int64_t*>(in);
  auto* b = static_cast<std::int64_t*>(inout);
  for (int i = 0; i < *len; ++i) {
    const std::int64_t op = b[2 * i];
    if (a[2 * i] != op) {
      b[2 * i] = 0;
      continue;
    }
    const std::int64_t x = a[2 * i + 1];
    std::int64_t& y = b[2 * i + 1];
    switch (static_cast<FieldOp>(op)) {
      case FieldOp::max:
        y = std::max(x, y);
        break;
      case FieldOp::min:
        y = std::min(x, y);
        break;
      case FieldOp::sum:
        y = static_cast<std::int64_t>(static_cast<std::uint64_t>(x) +
                                      static_cast<std::uint64_t>(y));
        break;
      case FieldOp::sum_f64: {
        double dx = 0, dy = 0;
        std::memcpy(&dx, &x, sizeof dx);
        std::memcpy(&dy, &y, sizeof dy);
        dy += dx;
        std::memcpy(&y, &dy, sizeof y);
        break;
      }
      default:
        b[2 * i] = 0;
    }
  }
}

template <typename T>
void scale(void* data, std::size_t n, double factor) {
  T* p = static_cast<T*>(data);
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<T>(p[i] * factor);
}

template <float (*to_float)(std::uint16_t), std::uint16_t (*from_float)(float)>
void scale_16(void* data, std::size_t n, float factor) {
  auto* p = static_cast<std::uint16_t*>(data);
  for (std::size_t i = 0; i < n; ++i) p[i] = from_float(to_float(p[i]) * factor);
}

}  // namespace

MPI_Datatype mpi_type(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return MPI_FLOAT;
    case DType::f64:
      return MPI_DOUBLE;
    case DType::i64:
      return MPI_INT64_T;
    case DType::f16:
    case DType::bf16:
      return MPI_UINT16_T;
    case DType::u8:
      return MPI_UINT8_T;
  }
  return MPI_DATATYPE_NULL;
}

void scale_in_place(void* data, std::size_t n, DType dtype, double factor) {
  switch (dtype) {
    case DType::f32:
      scale<float>(data, n, factor);
      return;
    case DType::f64:
      scale<double>(data, n, factor);
      return;
    case DType::f16:
      scale_16<half_to_float, float_to_half>(data, n, static_cast<float>(factor));
      return;
    case DType::bf16:
      scale_16<bf16_to_float, float_to_bf16>(data, n, static_cast<float>(factor));
      return;
    case DType::i64:
    case DType::u8:
      return;  // avg is refused for integers before it gets here
  }
}

MpiOps::MpiOps() {
  SLIMTRAIN_CHECK_MPI(MPI_Op_create(&reduce_16<half_to_float, float_to_half, 0>, 1, &ops16_[0][0]));
  SLIMTRAIN_CHECK_MPI(MPI_Op_create(&reduce_16<half_to_float, float_to_half, 1>, 1, &ops16_[0][1]));
  SLIMTRAIN_CHECK_MPI(MPI_Op_create(&reduce_16<half_to_float, float_to_half, 2>, 1, &ops16_[0][2]));
  SLIMTRAIN_CHECK_MPI(MPI_Op_create(&reduce_16<bf16_to_float, float_to_bf16, 0>, 1, &ops16_[1][0]));
  SLIMTRAIN_CHECK_MPI(MPI_Op_create(&reduce_16<bf16_to_float, float_to_bf16, 1>, 1, &ops16_[1][1]));
  SLIMTRAIN_CHECK_MPI(MPI_Op_create(&reduce_16<bf16_to_float, float_to_bf16, 2>, 1, &ops16_[1][2]));
  SLIMTRAIN_CHECK_MPI(MPI_Type_contiguous(2, MPI_INT64_T, &field_type_));
  SLIMTRAIN_CHECK_MPI(MPI_Type_commit(&field_type_));
  SLIMTRAIN_CHECK_MPI(MPI_Op_create(&reduce_fields, 1, &field_op_));
}

MpiOps::~MpiOps() {
  for (auto& row : ops16_) {
    for (MPI_Op& op : row)
      if (op != MPI_OP_NULL) MPI_Op_free(&op);
  }
  if (field_op_ != MPI_OP_NULL) MPI_Op_free(&field_op_);
  if (field_type_ != MPI_DATATYPE_NULL) MPI_Type_free(&field_type_);
}

MPI_Op MpiOps::reduce_op(DType dtype, ReduceOp op) const {
  if (dtype == DType::f16 || dtype == DType::bf16) {
    const int t = dtype == DType::f16 ? 0 : 1;
    return ops16_[t][op == ReduceOp::max ? 1 : op == ReduceOp::min ? 2 : 0];
  }
  return op == ReduceOp::max ? MPI_MAX : op == ReduceOp::min ? MPI_MIN : MPI_SUM;
}

}  // namespace slimtrain::comm
