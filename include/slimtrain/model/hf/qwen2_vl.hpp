#pragma once
/**
 * @brief Qwen2-VL and Qwen2.5-VL (model_type "qwen2_vl", "qwen2_5_vl") as sequence classifiers,
 * the seeds' model: the vision tower (vision_tower.hpp) turns each image's patches into features
 * of the language model's width; they replace the <|image_pad|> tokens' embeddings in order; the
 * language model (decoder_body.hpp, Qwen2's) reads them with multimodal rotary positions (each
 * image token at its frame, row and column, text after an image going on past its larger side,
 * as transformers' get_rope_index); the score (no bias) on the last token the attention mask
 * marks, as Qwen2ForSequenceClassification. A ...ForConditionalGeneration checkpoint loads with
 * its lm_head left out and the score created. Names as transformers 4.52+ and 5 save them
 * (model.visual.*, model.language_model.*); the original checkpoints' (visual.*, model.*) load
 * too. Inputs by name: input_ids and attention_mask, and where a file has images pixel_values
 * (each sample's patches, flattened, [patches x C*T*P*P]) and image_grid_thw (3 per image), with
 * their masks. The vision features and hidden states never leave forward.
 */
#include <memory>
#include <string>
#include <vector>

#include "slimtrain/model/hf/decoder_body.hpp"
#include "slimtrain/model/hf/qwen2_vl_config.hpp"
#include "slimtrain/model/hf/registry.hpp"
#include "slimtrain/model/hf/vision_tower.hpp"

namespace slimtrain::model::hf {

class Qwen2VLForSequenceClassification final : public HfModel {
 public:
  bool recomputes_layers() const override { return true; }
  explicit Qwen2VLForSequenceClassification(const ModelSpec& spec);

  Output forward(const torch::Tensor& x, const torch::Tensor& y = {}) override;
  Output forward_named(const NamedInputs& inputs, const torch::Tensor& y = {}) override;
  std::vector<std::string> input_names() const override { return {"input_ids", "attention_mask"}; }
  std::vector<std::string> optional_input_names() const override {
    return {"pixel_values", "pixel_values_mask", "image_grid_thw", "image_grid_thw_mask"};
  }
  torch::Tensor embed(const torch::Tensor& x) override;
  std::int64_t embedding_dim() const override { return config_->hidden_size; }
  const HfConfig& config() const override { return *config_; }
  std::string base_prefix() const override { return "model."; }
  bool applies_lora() const override { return true; }
  std::vector<std::string> head_names() const override { return {"score.weight"}; }
  std::vector<std::string> stored_names(const std::string& name) const override;

 private:
  /** @brief The [3, B, T] positions of get_rope_index, on the host. */
  torch::Tensor rope_positions(const torch::Tensor& ids, const torch::Tensor& mask,
                               const std::vector<Grid>& grids) const;

  std::shared_ptr<const Qwen2VLConfig> config_;
  std::unique_ptr<VisionTower> visual_;
  std::unique_ptr<DecoderBody> language_model_;
  torch::nn::Linear score_{nullptr};
};

HfArchitecture qwen2_vl_architecture();
HfArchitecture qwen2_5_vl_architecture();

}  // namespace slimtrain::model::hf
