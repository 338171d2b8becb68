#include "slimtrain/model/text_models.hpp"

#include <cmath>

#include "slimtrain/core/error.hpp"
#include "slimtrain/model/token_inputs.hpp"

namespace slimtrain::model {
namespace {

// Sinusoidal position codes [L, D] (Vaswani et al.): no parameter, so no longest length.
torch::Tensor positions(std::int64_t length, std::int64_t dim, const torch::TensorOptions& o) {
  const torch::Tensor pos = torch::arange(length, o).unsqueeze(1);
  const torch::Tensor i = torch::arange(0, dim, 2, o);
  const torch::Tensor angle = pos * torch::exp(i * (-std::log(10000.0) / static_cast<double>(dim)));
  torch::Tensor out = torch::zeros({length, dim}, o);
  out.index_put_({torch::indexing::Slice(), torch::indexing::Slice(0, torch::indexing::None, 2)},
                 torch::sin(angle));
  out.index_put_({torch::indexing::Slice(), torch::indexing::Slice(1, torch::indexing::None, 2)},
                 torch::cos(angle).narrow(1, 0, dim / 2));
  return out;
}

// Mean of `values` [B, L, D] over the positions `mask` [B, L] marks.
torch::Tensor masked_mean(const torch::Tensor& values, const torch::Tensor& mask) {
  const torch::Tensor m = mask.unsqueeze(-1).to(values.scalar_type());
  return (values * m).sum(1) / m.sum(1).clamp_min(1.0);
}

}  // namespace

TextClassifierImpl::TextClassifierImpl(const ModelSpec& spec) : ClassifierImpl(spec) {
  if (spec.vocab_size < 1)
    SLIMTRAIN_THROW(ConfigError, "--model ", spec.name,
                    ": needs the file's input_ids with a vocab_size attribute (layout 2)");
  if (spec.text_dim < 2 || spec.text_dim % 2 != 0)
    SLIMTRAIN_THROW(ConfigError, "--text-dim: ", spec.text_dim, " must be even and at least 2");
  head_ = register_module("head", torch::nn::Linear(spec.text_dim, spec.num_classes));
}

Output TextClassifierImpl::forward(const torch::Tensor&, const torch::Tensor&) {
  refuse_single_input(spec().model_option());
}

Output TextClassifierImpl::forward_named(const NamedInputs& inputs, const torch::Tensor& y) {
  const TokenInputs in = token_inputs(inputs, spec().model_option());
  const torch::Tensor pooled = features(in.ids, in.mask);
  await_weights(*head_, pooled);
  return make_output(head_->forward(pooled), y);
}

torch::Tensor TextClassifierImpl::embed(const torch::Tensor&) {
  refuse_embeddings(spec().model_option());
}

TextBowImpl::TextBowImpl(const ModelSpec& spec) : TextClassifierImpl(spec) {
  if (spec.text_bigrams < 0)
    SLIMTRAIN_THROW(ConfigError, "--text-bigrams: ", spec.text_bigrams, " must be >= 0");
  embedding_ = register_module(
      "embedding", torch::nn::Embedding(spec.vocab_size + spec.text_bigrams, spec.text_dim));
}

torch::Tensor TextBowImpl::features(const torch::Tensor& ids, const torch::Tensor& mask) {
  await_weights(*embedding_);
  const std::int64_t buckets = spec().text_bigrams;
  if (buckets == 0 || ids.size(1) < 2) return masked_mean(embedding_->forward(ids), mask);
  // fastText's hashed bigrams: (previous, current) into one of `buckets` rows past the vocabulary.
  const std::int64_t length = ids.size(1);
  const torch::Tensor bigrams =
      (ids.narrow(1, 0, length - 1) * 1000003 + ids.narrow(1, 1, length - 1)).remainder(buckets) +
      spec().vocab_size;
  const torch::Tensor both = torch::cat({ids, bigrams}, 1);
  const torch::Tensor both_mask =
      torch::cat({mask, mask.narrow(1, 0, length - 1) * mask.narrow(1, 1, length - 1)}, 1);
  return masked_mean(embedding_->forward(both), both_mask);
}

TextTransformerImpl::TextTransformerImpl(const ModelSpec& spec) : TextClassifierImpl(spec) {
  if (spec.text_heads < 1 || spec.text_dim % spec.text_heads != 0)
    SLIMTRAIN_THROW(ConfigError, "--text-dim: ", spec.text_dim,
                    " must be a multiple of --text-heads ", spec.text_heads);
  if (spec.text_depth < 1)
    SLIMTRAIN_THROW(ConfigError, "--text-depth: ", spec.text_depth, " must be at least 1");
  namespace nn = torch::nn;
  embedding_ = register_module("embedding", nn::Embedding(spec.vocab_size, spec.text_dim));
  blocks_ = register_module("blocks", nn::ModuleList());
  for (std::int64_t i = 0; i < spec.text_depth; ++i)
    blocks_->push_back(EncoderBlock(spec.text_dim, spec.text_heads));
  norm_ = register_module("norm", nn::LayerNorm(nn::LayerNormOptions({spec.text_dim})));
}

torch::Tensor TextTransformerImpl::features(const torch::Tensor& ids, const torch::Tensor& mask) {
  const std::int64_t dim = spec().text_dim;
  await_weights(*embedding_);
  torch::Tensor tokens = embedding_->forward(ids) * std::sqrt(static_cast<double>(dim));
  tokens = tokens + positions(ids.size(1), dim, tokens.options());
  // A sequence with no token at all keeps its first position, or no key would be left to attend.
  torch::Tensor padding = mask == 0;
  padding.select(1, 0).masked_fill_(mask.sum(1) == 0, false);
  for (const auto& block : *blocks_) {
    await_weights(*block, tokens);
    EncoderBlockImpl* b = block->as<EncoderBlock>();
    tokens =
        run_layer([b, padding](const torch::Tensor& h) { return b->forward(h, padding); }, tokens);
  }
  await_weights(*norm_, tokens);
  return norm_->forward(masked_mean(tokens, mask));
}

}  // namespace slimtrain::model
