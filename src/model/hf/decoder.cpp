#include "slimtrain/model/hf/decoder.hpp"

#include "slimtrain/model/token_inputs.hpp"

namespace slimtrain::model::hf {

DecoderForSequenceClassification::DecoderForSequenceClassification(const ModelSpec& spec)
    : HfModel(spec), config_(config_as<DecoderConfig>(spec)) {
  check_vocabulary(spec, config_->vocab_size);
  model_ = std::make_unique<DecoderBody>(*group(*this, "model"), config_);
  score_ = add_linear(*this, "score", config_->hidden_size, spec.num_classes,
                      config_->initializer_range, false);
}

Output DecoderForSequenceClassification::forward(const torch::Tensor&, const torch::Tensor&) {
  refuse_single_input(spec().model_option());
}

Output DecoderForSequenceClassification::forward_named(const NamedInputs& inputs,
                                                       const torch::Tensor& y) {
  const DecoderConfig& c = *config_;
  model_->set_grad_sink(grad_sink());
  const TokenInputs in = token_inputs(fit_padding(inputs, c.max_tokens()), spec().model_option());
  const std::int64_t t = in.ids.size(1);
  check_length(spec(), t, c.max_tokens());
  const torch::Tensor x = model_->embed(in.ids, weight_gate());
  // Rotary angles of positions 0..T-1, in float32 as transformers computes them.
  const auto [cos, sin] = model_->rotary(torch::arange(t, in.ids.options()), x.scalar_type());
  const torch::Tensor real = in.mask.to(torch::kBool);
  const torch::Tensor hidden =
      model_->forward(x, cos, sin, real, is_training(), weight_gate(), layer_recompute());
  const torch::Tensor last = DecoderBody::last_token(hidden, real);
  await_weights(*score_, last);
  return make_output(score_->forward(last), y);
}

torch::Tensor DecoderForSequenceClassification::embed(const torch::Tensor&) {
  refuse_embeddings(spec().model_option());
}

HfArchitecture decoder_architecture(
    const std::string& model_type, const std::string& prefix,
    std::function<std::shared_ptr<const HfConfig>(const ConfigReader&)> parse) {
  HfArchitecture a;
  a.model_type = model_type;
  a.export_name = prefix + "ForSequenceClassification";
  a.reads_architectures = {prefix};
  a.parse = std::move(parse);
  a.build = [](const ModelSpec& spec) {
    return std::make_shared<DecoderForSequenceClassification>(spec);
  };
  a.gates_layers = true;
  return a;
}

}  // namespace slimtrain::model::hf
