#include "slimtrain/model/hf/post_norm_layer.hpp"

#include "slimtrain/model/attention.hpp"
#include "slimtrain/model/hf/hf_model.hpp"
#include "slimtrain/model/lora.hpp"

namespace slimtrain::model::hf {

torch::Tensor PostNormLayer::forward(const torch::Tensor& x, const torch::Tensor& padding,
                                     const Settings& s, bool training) {
  const std::int64_t b = x.size(0), t = x.size(1), width = x.size(2);
  const std::int64_t d = width / s.heads;
  auto split = [&](torch::nn::Linear& proj) {
    return lora_linear(proj, x).view({b, t, s.heads, d}).transpose(1, 2);
  };
  const double p = training ? s.attention_dropout : 0.0;
  const torch::Tensor context = attention(split(query), split(key), split(value), padding, true, p)
                                    .transpose(1, 2)
                                    .reshape({b, t, width});
  const torch::Tensor a = attention_norm->forward(
      torch::dropout(lora_linear(attention_out, context), s.hidden_dropout, training) + x);
  const torch::Tensor f =
      lora_linear(output, activation(s.activation, lora_linear(intermediate, a)));
  return output_norm->forward(torch::dropout(f, s.hidden_dropout, training) + a);
}

torch::Tensor padding_of(const torch::Tensor& mask) {
  torch::Tensor padding = mask == 0;
  padding.select(1, 0).masked_fill_(mask.sum(1) == 0, false);
  return padding;
}

}  // namespace slimtrain::model::hf
