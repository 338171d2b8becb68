#pragma once
/**
 * @brief LibTorch's SGD and AdamW with the same arithmetic, stepped in pieces.
 *
 * LibTorch 1.13's AdamW makes two temporaries the size of each parameter (sqrt(v), then its
 * quotient) and its SGD one or two (the weight-decayed gradient, the Nesterov step). For a
 * 4096 x 4096 layer that is 128 MiB above the training state at the step's peak (bench/memory).
 * These step each contiguous tensor in pieces of `chunk` elements through one scratch piece:
 * the same element-wise operations in the same order, so the results are bit-identical to
 * LibTorch's (tests/unit/test_chunked_optim.cpp), the state the same objects under the same keys
 * (checkpoints, optimizer_state.cpp and set_learning_rate see no difference). A tensor that is
 * not contiguous (channels-last weights) is stepped whole, as LibTorch does.
 */
#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace slimtrain::train {

/** @brief Elements per piece: 1 MiB of float32, the temporaries' bound per tensor. */
constexpr std::int64_t kOptimizerChunk = std::int64_t{1} << 18;

class ChunkedSGD : public torch::optim::SGD {
 public:
  ChunkedSGD(std::vector<torch::Tensor> params, const torch::optim::SGDOptions& options,
             std::int64_t chunk = kOptimizerChunk)
      : torch::optim::SGD(std::move(params), options), chunk_(chunk) {}
  torch::Tensor step(LossClosure closure = nullptr) override;

 private:
  std::int64_t chunk_;
};

class ChunkedAdamW : public torch::optim::AdamW {
 public:
  ChunkedAdamW(std::vector<torch::Tensor> params, const torch::optim::AdamWOptions& options,
               std::int64_t chunk = kOptimizerChunk)
      : torch::optim::AdamW(std::move(params), options), chunk_(chunk) {}
  torch::Tensor step(LossClosure closure = nullptr) override;

 private:
  std::int64_t chunk_;
};

}  // namespace slimtrain::train
