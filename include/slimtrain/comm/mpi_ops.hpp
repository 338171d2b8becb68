#pragma once
/**
 * @brief What MPI lacks for slimtrain's reductions: the MPI datatype of each DType, sums and
 * extrema over 16-bit floats (through float, rounded back), the operator of mixed-field records
 * (each field combines by the operator it carries), and averaging in place.
 */
#include <mpi.h>

#include <cstddef>

#include "slimtrain/comm/types.hpp"

namespace slimtrain::comm {

/** @brief The MPI datatype a buffer of `dtype` travels as (16-bit floats as MPI_UINT16_T). */
MPI_Datatype mpi_type(DType dtype);

/** @brief Multiplies `n` elements of `dtype` by `factor` (avg = sum, then this). */
void scale_in_place(void* data, std::size_t n, DType dtype, double factor);

/** @brief The user-defined operators of one communicator; MPI must outlive it. */
class MpiOps {
 public:
  MpiOps();
  ~MpiOps();
  MpiOps(const MpiOps&) = delete;
  MpiOps& operator=(const MpiOps&) = delete;

  /** @brief MPI_SUM/MAX/MIN, or the 16-bit float operator; avg reduces as sum. */
  MPI_Op reduce_op(DType dtype, ReduceOp op) const;
  /** @brief One field: {operator, value} as two int64. */
  MPI_Datatype field_type() const { return field_type_; }
  MPI_Op field_op() const { return field_op_; }

 private:
  MPI_Op ops16_[2][3] = {};  // [f16, bf16][sum, max, min]
  MPI_Datatype field_type_ = MPI_DATATYPE_NULL;
  MPI_Op field_op_ = MPI_OP_NULL;
};

}  // namespace slimtrain::comm
