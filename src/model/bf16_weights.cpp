#include "slimtrain/model/bf16_weights.hpp"

namespace slimtrain::model {

std::vector<torch::Tensor> float32_only_parameters(torch::nn::Module& model) {
  std::vector<torch::Tensor> out;
  for (const std::shared_ptr<torch::nn::Module>& m : model.modules()) {
    const bool norm = dynamic_cast<torch::nn::BatchNorm1dImpl*>(m.get()) != nullptr ||
                      dynamic_cast<torch::nn::BatchNorm2dImpl*>(m.get()) != nullptr ||
                      dynamic_cast<torch::nn::BatchNorm3dImpl*>(m.get()) != nullptr;
    if (!norm) continue;
    for (const torch::Tensor& p : m->parameters(/*recurse=*/false)) out.push_back(p);
  }
  return out;
}

}  // namespace slimtrain::model
