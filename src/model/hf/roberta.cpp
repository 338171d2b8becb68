#include "slimtrain/model/hf/roberta.hpp"

#include "slimtrain/model/token_inputs.hpp"

namespace slimtrain::model::hf {

RobertaForSequenceClassification::RobertaForSequenceClassification(const ModelSpec& spec)
    : HfModel(spec), config_(config_as<BertConfig>(spec)) {
  check_vocabulary(spec, config_->vocab_size);
  const std::int64_t h = config_->hidden_size;
  const double init = config_->initializer_range;
  roberta_ = std::make_unique<BertBody>(*group(*this, "roberta"), config_);
  auto head = group(*this, "classifier");
  classifier_dense_ = add_linear(*head, "dense", h, h, init);
  classifier_out_proj_ = add_linear(*head, "out_proj", h, spec.num_classes, init);
}

std::vector<std::string> RobertaForSequenceClassification::optional_input_names() const {
  if (!roberta_->has_token_types()) return {};
  return {"token_type_ids"};
}

Output RobertaForSequenceClassification::forward(const torch::Tensor&, const torch::Tensor&) {
  refuse_single_input(spec().model_option());
}

Output RobertaForSequenceClassification::forward_named(const NamedInputs& inputs,
                                                       const torch::Tensor& y) {
  const TokenInputs in =
      token_inputs(fit_padding(inputs, config_->max_tokens()), spec().model_option());
  check_length(spec(), in.ids.size(1), config_->max_tokens());
  const torch::Tensor hidden =
      roberta_->forward(in.ids, in.mask, in.token_types, is_training(), layer_recompute());
  const double drop = config_->classifier_dropout;
  const torch::Tensor first = torch::dropout(hidden.select(1, 0), drop, is_training());
  const torch::Tensor pooled = torch::tanh(classifier_dense_->forward(first));
  return make_output(classifier_out_proj_->forward(torch::dropout(pooled, drop, is_training())), y);
}

torch::Tensor RobertaForSequenceClassification::embed(const torch::Tensor&) {
  refuse_embeddings(spec().model_option());
}

HfArchitecture roberta_alias(const std::string& model_type, const std::string& export_name,
                             const std::string& prefix) {
  HfArchitecture a;
  a.model_type = model_type;
  a.export_name = export_name;
  a.reads_architectures = {prefix, "Roberta"};
  a.parse = [](const ConfigReader& r) { return read_bert_config(r, true); };
  a.build = [](const ModelSpec& spec) {
    return std::make_shared<RobertaForSequenceClassification>(spec);
  };
  return a;
}

HfArchitecture roberta_architecture() {
  return roberta_alias("roberta", "RobertaForSequenceClassification", "Roberta");
}

}  // namespace slimtrain::model::hf
