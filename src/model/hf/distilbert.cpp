#include "slimtrain/model/hf/distilbert.hpp"

#include "slimtrain/core/error.hpp"
#include "slimtrain/model/token_inputs.hpp"

namespace slimtrain::model::hf {
namespace {

namespace nn = torch::nn;

std::shared_ptr<const HfConfig> read_distilbert_config(const ConfigReader& r) {
  auto c = std::make_shared<DistilBertConfig>();
  c->model_type = "distilbert";
  c->hidden_size = r.size("dim");
  c->num_hidden_layers = r.size("n_layers");
  c->num_attention_heads = r.size("n_heads");
  c->hidden_dim = r.size("hidden_dim");
  c->vocab_size = r.size("vocab_size");
  c->max_position_embeddings = r.size("max_position_embeddings");
  if (c->hidden_size % c->num_attention_heads != 0)
    SLIMTRAIN_THROW(ConfigError, r.where(), ": dim ", c->hidden_size,
                    " is not a multiple of n_heads ", c->num_attention_heads);
  c->activation = r.activation_or("activation", "gelu");
  c->pad_token_id = r.integer_or("pad_token_id", 0);
  c->initializer_range = r.number_or("initializer_range", 0.02);
  c->dropout = r.probability_or("dropout", 0.1);
  c->attention_dropout = r.probability_or("attention_dropout", 0.1);
  c->seq_classif_dropout = r.probability_or("seq_classif_dropout", 0.2);
  c->sinusoidal_pos_embds = r.flag_or("sinusoidal_pos_embds", false);
  c->num_labels = r.num_labels();
  return c;
}

}  // namespace

DistilBertForSequenceClassification::DistilBertForSequenceClassification(const ModelSpec& spec)
    : HfModel(spec), config_(config_as<DistilBertConfig>(spec)) {
  const DistilBertConfig& c = *config_;
  check_vocabulary(spec, c.vocab_size);
  const std::int64_t h = c.hidden_size, inner = c.hidden_dim;
  const double init = c.initializer_range, eps = 1e-12;  // DistilBERT's LayerNorms: 1e-12
  auto base = group(*this, "distilbert");
  auto embeddings = group(*base, "embeddings");
  word_embeddings_ = add_embedding(*embeddings, "word_embeddings", c.vocab_size, h, init);
  position_embeddings_ =
      add_embedding(*embeddings, "position_embeddings", c.max_position_embeddings, h, init);
  if (c.sinusoidal_pos_embds) position_embeddings_->weight.set_requires_grad(false);
  embeddings_norm_ = add_norm(*embeddings, "LayerNorm", h, eps);
  auto list = group(*base, "transformer")->register_module("layer", nn::ModuleList());
  for (std::int64_t i = 0; i < c.num_hidden_layers; ++i) {
    auto block = std::make_shared<nn::Module>();
    list->push_back(block);
    auto attention = group(*block, "attention");
    PostNormLayer l;
    l.query = add_linear(*attention, "q_lin", h, h, init);
    l.key = add_linear(*attention, "k_lin", h, h, init);
    l.value = add_linear(*attention, "v_lin", h, h, init);
    l.attention_out = add_linear(*attention, "out_lin", h, h, init);
    l.attention_norm = add_norm(*block, "sa_layer_norm", h, eps);
    auto ffn = group(*block, "ffn");
    l.intermediate = add_linear(*ffn, "lin1", h, inner, init);
    l.output = add_linear(*ffn, "lin2", inner, h, init);
    l.output_norm = add_norm(*block, "output_layer_norm", h, eps);
    layer_.push_back(l);
  }
  pre_classifier_ = add_linear(*this, "pre_classifier", h, h, init);
  classifier_ = add_linear(*this, "classifier", h, spec.num_classes, init);
}

Output DistilBertForSequenceClassification::forward(const torch::Tensor&, const torch::Tensor&) {
  refuse_single_input(spec().model_option());
}

Output DistilBertForSequenceClassification::forward_named(const NamedInputs& inputs,
                                                          const torch::Tensor& y) {
  const DistilBertConfig& c = *config_;
  const TokenInputs in = token_inputs(fit_padding(inputs, c.max_tokens()), spec().model_option());
  check_length(spec(), in.ids.size(1), c.max_tokens());
  const torch::Tensor positions =
      torch::arange(in.ids.size(1), in.ids.options().dtype(torch::kInt64)).unsqueeze(0);
  torch::Tensor x = word_embeddings_->forward(in.ids) + position_embeddings_->forward(positions);
  x = torch::dropout(embeddings_norm_->forward(x), c.dropout, is_training());
  const torch::Tensor padding = padding_of(in.mask);
  const PostNormLayer::Settings settings{c.num_attention_heads, c.activation, c.dropout,
                                         c.attention_dropout};
  const bool training = is_training();
  for (PostNormLayer& l : layer_)
    x = run_layer([&l, padding, settings, training](
                      const torch::Tensor& h) { return l.forward(h, padding, settings, training); },
                  x);
  const torch::Tensor pooled = torch::relu(pre_classifier_->forward(x.select(1, 0)));
  return make_output(
      classifier_->forward(torch::dropout(pooled, c.seq_classif_dropout, is_training())), y);
}

torch::Tensor DistilBertForSequenceClassification::embed(const torch::Tensor&) {
  refuse_embeddings(spec().model_option());
}

HfArchitecture distilbert_architecture() {
  HfArchitecture a;
  a.model_type = "distilbert";
  a.export_name = "DistilBertForSequenceClassification";
  a.reads_architectures = {"DistilBert"};
  a.parse = read_distilbert_config;
  a.build = [](const ModelSpec& spec) {
    return std::make_shared<DistilBertForSequenceClassification>(spec);
  };
  return a;
}

}  // namespace slimtrain::model::hf
