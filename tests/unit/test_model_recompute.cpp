// --activation-checkpointing layers (model/recompute.hpp): the same gradients as without, dropout
// on, the random stream after the layers untouched; the weights of a layer whose input needs no
// gradient still get theirs; without autograd, the layer simply runs; vit-tiny and
// text-transformer with their layers recomputed train as without.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "slimtrain/model/classifier.hpp"
#include "slimtrain/model/recompute.hpp"

using slimtrain::model::recompute_in_backward;

namespace {

struct TwoLinears {
  torch::nn::Linear a{16, 32}, b{32, 16};
  torch::Tensor operator()(const torch::Tensor& h) {
    return h + b->forward(torch::dropout(torch::gelu(a->forward(h)), 0.3, true));
  }
  void zero_grad() {
    a->zero_grad();
    b->zero_grad();
  }
};

// Three layers' gradients and the random numbers drawn after forward and after backward.
std::vector<torch::Tensor> run(TwoLinears& layer, const torch::Tensor& x0, bool recompute,
                               bool x_needs_grad, std::uint64_t seed = 11) {
  layer.zero_grad();
  const torch::Tensor x = x0.clone().requires_grad_(x_needs_grad);
  torch::manual_seed(seed);
  torch::Tensor h = x;
  for (int i = 0; i < 3; ++i) {
    auto f = [&layer](const torch::Tensor& in) { return layer(in); };
    h = recompute ? recompute_in_backward(f, h) : f(h);
  }
  const torch::Tensor after_forward = torch::rand({4});
  h.square().mean().backward();
  const torch::Tensor after_backward = torch::rand({4});
  std::vector<torch::Tensor> out = {layer.a->weight.grad().clone(), layer.b->weight.grad().clone(),
                                    after_forward, after_backward};
  if (x_needs_grad) out.push_back(x.grad().clone());
  return out;
}

void expect_same(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(torch::allclose(a[i], b[i], 1e-6, 1e-7))
        << "tensor " << i << ": largest difference " << (a[i] - b[i]).abs().max().item<double>();
}

TEST(Recompute, GradientsEqualWithoutItDropoutOn) {
  torch::manual_seed(3);
  TwoLinears layer;
  const torch::Tensor x0 = torch::randn({4, 5, 16});
  const auto plain = run(layer, x0, false, true);
  const auto recomputed = run(layer, x0, true, true);
  expect_same(plain, recomputed);
  // The dropout masks matter: a recomputation that drew new ones would differ.
  const auto other_masks = run(layer, x0, false, true, 12);
  EXPECT_FALSE(torch::allclose(plain[0], other_masks[0], 1e-6, 1e-7));
}

TEST(Recompute, ALayerWhoseInputNeedsNoGradientStillTrainsItsWeights) {
  torch::manual_seed(4);
  TwoLinears layer;
  const torch::Tensor x0 = torch::randn({2, 3, 16});
  expect_same(run(layer, x0, false, false), run(layer, x0, true, false));
}

TEST(Recompute, WithoutAutogradTheLayerSimplyRuns) {
  TwoLinears layer;
  torch::NoGradGuard no_grad;
  const torch::Tensor x = torch::randn({2, 16});
  int calls = 0;
  const torch::Tensor y = recompute_in_backward(
      [&](const torch::Tensor& in) {
        ++calls;
        return layer.a->forward(in);
      },
      x);
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(y.requires_grad());
}

// A built-in model's parameters' gradients over one step, with and without its layers recomputed.
std::vector<torch::Tensor> model_grads(const slimtrain::model::ModelSpec& spec,
                                       const slimtrain::model::NamedInputs& inputs,
                                       const torch::Tensor& y, bool recompute) {
  torch::manual_seed(5);
  auto model = slimtrain::model::make_model(spec);
  EXPECT_TRUE(model->recomputes_layers());
  model->set_layer_recompute(recompute);
  model->train();
  torch::manual_seed(6);
  model->forward_named(inputs, y).loss.backward();
  std::vector<torch::Tensor> grads;
  for (const auto& p : model->parameters())
    if (p.grad().defined()) grads.push_back(p.grad().clone());
  return grads;
}

TEST(Recompute, VitTinyAndTextTransformerGradientsEqualWithout) {
  slimtrain::model::ModelSpec vit;
  vit.name = "vit-tiny";
  vit.input_shape = {1, 28, 28};
  vit.num_classes = 10;
  const slimtrain::model::NamedInputs images = {{"x", torch::randn({4, 1, 28, 28})}};
  const torch::Tensor labels = torch::tensor({1, 2, 3, 4}, torch::kInt64);
  const auto plain = model_grads(vit, images, labels, false);
  EXPECT_FALSE(plain.empty());
  expect_same(plain, model_grads(vit, images, labels, true));

  slimtrain::model::ModelSpec text;
  text.name = "text-transformer";
  text.input_shape = {12};
  text.num_classes = 3;
  text.vocab_size = 50;
  torch::Tensor mask = torch::ones({4, 12}, torch::kInt64);
  mask.narrow(1, 9, 3).zero_();  // padding at the end of every sequence
  const slimtrain::model::NamedInputs ids = {
      {"input_ids", torch::randint(1, 50, {4, 12}, torch::kInt64) * mask},
      {"attention_mask", mask}};
  const torch::Tensor y3 = torch::tensor({0, 1, 2, 1}, torch::kInt64);
  expect_same(model_grads(text, ids, y3, false), model_grads(text, ids, y3, true));
}

}  // namespace
