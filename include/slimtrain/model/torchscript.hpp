#pragma once
/**
 * @brief A user's own classifier, a TorchScript module (`torch.jit.script(m).save("m.pt")`),
 * behind the slim boundary.
 *
 * forward(x) or forward(x, labels), found from the method's schema, or for named inputs
 * (layout 2) forward(pixel_values, input_ids, attention_mask[, labels]) matched by name (the
 * labels are the last argument when it is named labels, label, y, target or targets, or the
 * second of forward(x, ...)), may return
 * the logits, a
 * tuple (HuggingFace order: (loss, logits, ...) when labels were passed, (logits, ...) or
 * (None, logits, ...) otherwise) or a Dict[str, Tensor] with "logits" (and "loss"). Only the
 * logits, and the module's loss when --model-loss asks for it, pass the boundary: every other
 * output is dropped inside forward(), named in dropped_outputs(), and reaches nothing else.
 *
 * The module's parameters and buffers are mirrored as this nn::Module's own under the same dotted
 * names, sharing storage, so checkpoints, exports, device moves and the data plane see the
 * module's tensors as they see a built-in model's.
 */
#include <torch/script.h>

#include <cstdint>
#include <string>
#include <vector>

#include "slimtrain/model/classifier.hpp"

namespace slimtrain::model {

class TorchScriptClassifierImpl final : public ClassifierImpl {
 public:
  /**
   * @brief Loads spec.script_path; DataError naming the file when it is missing or not a
   * TorchScript module, ConfigError when its forward takes neither (x) nor (x, labels).
   */
  explicit TorchScriptClassifierImpl(const ModelSpec& spec);

  Output forward(const torch::Tensor& x, const torch::Tensor& y = {}) override;
  Output forward_named(const NamedInputs& inputs, const torch::Tensor& y = {}) override;
  std::vector<std::string> input_names() const override { return inputs_; }
  /** @brief The module's embed(x); ConfigError naming the file when it has none. */
  torch::Tensor embed(const torch::Tensor& x) override;
  std::int64_t embedding_dim() const override;
  void train(bool on = true) override;
  std::vector<std::string> dropped_outputs() const override { return dropped_; }
  void probe(std::int64_t batch_size, const torch::Device& device) override;
  void save_script(const std::string& path) override;

  /** @brief Names, shapes and dtypes of the module's parameters and buffers, for fingerprints. */
  static std::string signature(const torch::jit::Module& module);

 private:
  /** @brief forward on `args` (the inputs, in forward's order); `batch` rows. */
  Output call(std::vector<c10::IValue> args, std::int64_t batch, const torch::Tensor& y,
              bool record, const std::string& shapes);
  Output call(const torch::Tensor& x, const torch::Tensor& y, bool record);
  Output call_named(const NamedInputs& inputs, const torch::Tensor& y, bool record);
  void mirror(const std::string& dotted, const torch::Tensor& tensor, bool buffer);

  mutable torch::jit::Module script_;
  bool takes_labels_ = false;
  std::vector<std::string> inputs_;  ///< forward's arguments other than self and the labels
  std::vector<std::string> dropped_;
};

}  // namespace slimtrain::model
