#include "slimtrain/model/hf/bert.hpp"

#include "slimtrain/core/error.hpp"
#include "slimtrain/model/lora.hpp"
#include "slimtrain/model/recompute.hpp"
#include "slimtrain/model/token_inputs.hpp"

namespace slimtrain::model::hf {

namespace nn = torch::nn;

std::shared_ptr<BertConfig> read_bert_config(const ConfigReader& r, bool roberta_positions) {
  auto c = std::make_shared<BertConfig>();
  const std::string positions = r.text_or("position_embedding_type", "absolute");
  r.refuse(positions != "absolute", "position_embedding_type",
           "slimtrain's BERT has absolute positions");
  r.refuse(r.flag_or("is_decoder", false) || r.flag_or("add_cross_attention", false), "is_decoder",
           "a decoder BERT is not a classifier's encoder");
  read_base(r, *c);
  c->intermediate_size = r.size("intermediate_size");
  c->vocab_size = r.size("vocab_size");
  c->max_position_embeddings = r.size("max_position_embeddings");
  c->type_vocab_size = r.size("type_vocab_size");
  c->hidden_act = r.activation_or("hidden_act", "gelu");
  c->pad_token_id = r.integer_or("pad_token_id", 0);
  c->layer_norm_eps = r.number_or("layer_norm_eps", 1e-12);
  c->hidden_dropout_prob = r.probability_or("hidden_dropout_prob", 0.1);
  c->attention_probs_dropout_prob = r.probability_or("attention_probs_dropout_prob", 0.1);
  c->classifier_dropout = r.probability_or("classifier_dropout", c->hidden_dropout_prob);
  if (roberta_positions) {
    c->position_offset = c->pad_token_id + 1;
    if (c->max_tokens() < 1)
      SLIMTRAIN_THROW(ConfigError, r.where(), ": max_position_embeddings ",
                      c->max_position_embeddings, " leaves no position past pad_token_id ",
                      c->pad_token_id);
  }
  return c;
}

BertBody::BertBody(nn::Module& base, std::shared_ptr<const BertConfig> config)
    : config_(std::move(config)) {
  const BertConfig& c = *config_;
  const std::int64_t h = c.hidden_size, inner = c.intermediate_size;
  const double init = c.initializer_range, eps = c.layer_norm_eps;
  auto embeddings = group(base, "embeddings");
  word_embeddings_ = add_embedding(*embeddings, "word_embeddings", c.vocab_size, h, init);
  position_embeddings_ =
      add_embedding(*embeddings, "position_embeddings", c.max_position_embeddings, h, init);
  token_type_embeddings_ =
      add_embedding(*embeddings, "token_type_embeddings", c.type_vocab_size, h, init);
  embeddings_norm_ = add_norm(*embeddings, "LayerNorm", h, eps);
  auto list = group(base, "encoder")->register_module("layer", nn::ModuleList());
  for (std::int64_t i = 0; i < c.num_hidden_layers; ++i) {
    auto block = std::make_shared<nn::Module>();
    list->push_back(block);
    auto attention = group(*block, "attention");
    auto self = group(*attention, "self");
    PostNormLayer l;
    l.query = add_linear(*self, "query", h, h, init);
    l.key = add_linear(*self, "key", h, h, init);
    l.value = add_linear(*self, "value", h, h, init);
    auto attention_output = group(*attention, "output");
    l.attention_out = add_linear(*attention_output, "dense", h, h, init);
    l.attention_norm = add_norm(*attention_output, "LayerNorm", h, eps);
    l.intermediate = add_linear(*group(*block, "intermediate"), "dense", h, inner, init);
    auto output = group(*block, "output");
    l.output = add_linear(*output, "dense", inner, h, init);
    l.output_norm = add_norm(*output, "LayerNorm", h, eps);
    layer_.push_back(l);
  }
}

torch::Tensor BertBody::forward(const torch::Tensor& ids, const torch::Tensor& mask,
                                const torch::Tensor& token_types, bool training, bool recompute) {
  const BertConfig& c = *config_;
  torch::Tensor positions;
  if (c.position_offset > 0) {
    // RoBERTa numbers the tokens that are not padding from pad_token_id + 1, as transformers.
    const torch::Tensor real = ids.ne(c.pad_token_id).to(torch::kInt64);
    positions = real.cumsum(1) * real + c.pad_token_id;
  } else {
    positions = torch::arange(ids.size(1), ids.options().dtype(torch::kInt64)).unsqueeze(0);
  }
  const torch::Tensor types = token_types.defined() ? token_types : torch::zeros_like(ids);
  torch::Tensor x = word_embeddings_->forward(ids) + position_embeddings_->forward(positions) +
                    token_type_embeddings_->forward(types);
  x = torch::dropout(embeddings_norm_->forward(x), c.hidden_dropout_prob, training);
  const torch::Tensor padding = padding_of(mask);
  const PostNormLayer::Settings settings = c.layer_settings();
  for (PostNormLayer& l : layer_)
    x = run_layer([&l, padding, settings, training](
                      const torch::Tensor& h) { return l.forward(h, padding, settings, training); },
                  x, recompute);
  return x;
}

BertForSequenceClassification::BertForSequenceClassification(const ModelSpec& spec)
    : HfModel(spec), config_(config_as<BertConfig>(spec)) {
  check_vocabulary(spec, config_->vocab_size);
  const std::int64_t h = config_->hidden_size;
  auto base = group(*this, "bert");
  bert_ = std::make_unique<BertBody>(*base, config_);
  pooler_dense_ = add_linear(*group(*base, "pooler"), "dense", h, h, config_->initializer_range);
  classifier_ = add_linear(*this, "classifier", h, spec.num_classes, config_->initializer_range);
}

std::vector<std::string> BertForSequenceClassification::optional_input_names() const {
  if (!bert_->has_token_types()) return {};
  return {"token_type_ids"};
}

Output BertForSequenceClassification::forward(const torch::Tensor&, const torch::Tensor&) {
  refuse_single_input(spec().model_option());
}

Output BertForSequenceClassification::forward_named(const NamedInputs& inputs,
                                                    const torch::Tensor& y) {
  const TokenInputs in =
      token_inputs(fit_padding(inputs, config_->max_tokens()), spec().model_option());
  check_length(spec(), in.ids.size(1), config_->max_tokens());
  const torch::Tensor hidden =
      bert_->forward(in.ids, in.mask, in.token_types, is_training(), layer_recompute());
  const torch::Tensor pooled = torch::tanh(lora_linear(pooler_dense_, hidden.select(1, 0)));
  const double drop = config_->classifier_dropout;
  return make_output(classifier_->forward(torch::dropout(pooled, drop, is_training())), y);
}

torch::Tensor BertForSequenceClassification::embed(const torch::Tensor&) {
  refuse_embeddings(spec().model_option());
}

HfArchitecture bert_architecture() {
  HfArchitecture a;
  a.model_type = "bert";
  a.export_name = "BertForSequenceClassification";
  a.reads_architectures = {"Bert"};
  a.parse = [](const ConfigReader& r) { return read_bert_config(r, false); };
  a.build = [](const ModelSpec& spec) {
    return std::make_shared<BertForSequenceClassification>(spec);
  };
  return a;
}

}  // namespace slimtrain::model::hf
