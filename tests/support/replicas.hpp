// Comparing replicas across the ranks of an mpi-tier test: tensors flattened to floats, and one
// answer on every rank to whether they hold the same values bit for bit.
#pragma once

#include <mpi.h>
#include <torch/torch.h>

#include <cstring>
#include <vector>

namespace slimtrain_test {

/** @brief The tensors' values as float32, one after the other. */
inline std::vector<float> flatten(const std::vector<torch::Tensor>& tensors) {
  std::vector<float> out;
  for (const torch::Tensor& t : tensors) {
    const torch::Tensor c = t.detach().to(torch::kFloat32).contiguous();
    out.insert(out.end(), c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  }
  return out;
}

/** @brief True on every rank when every rank's `values` equals rank 0's bit for bit. */
inline bool same_on_every_rank(const std::vector<float>& values) {
  std::vector<float> root = values;
  MPI_Bcast(root.data(), static_cast<int>(root.size()), MPI_FLOAT, 0, MPI_COMM_WORLD);
  int same = std::memcmp(root.data(), values.data(), values.size() * sizeof(float)) == 0;
  MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return same != 0;
}

}  // namespace slimtrain_test
