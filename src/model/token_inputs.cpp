#include "slimtrain/model/token_inputs.hpp"

#include "slimtrain/core/error.hpp"

namespace slimtrain::model {
namespace {

const torch::Tensor* find(const NamedInputs& inputs, const std::string& name) {
  for (const auto& [n, t] : inputs)
    if (n == name) return &t;
  return nullptr;
}

}  // namespace

TokenInputs token_inputs(const NamedInputs& inputs, const std::string& model) {
  const torch::Tensor* ids = find(inputs, "input_ids");
  const torch::Tensor* mask = find(inputs, "attention_mask");
  if (ids == nullptr || mask == nullptr)
    SLIMTRAIN_THROW(DataError, "--model ", model,
                    " reads input_ids and attention_mask; the batch has no ",
                    ids == nullptr ? "input_ids" : "attention_mask");
  const torch::Tensor* types = find(inputs, "token_type_ids");
  return {*ids, *mask, types != nullptr ? *types : torch::Tensor()};
}

void refuse_single_input(const std::string& model) {
  SLIMTRAIN_THROW(ConfigError, "--model ", model,
                  " reads input_ids and attention_mask by name: a data file of layout 2 from "
                  "prep text, not one input x");
}

void refuse_embeddings(const std::string& model) {
  SLIMTRAIN_THROW(ConfigError, "--embeddings: model ", model,
                  " reads token sequences (layout 2); export its weights instead");
}

}  // namespace slimtrain::model
