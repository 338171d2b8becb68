// model::linear's gradient sink (model/grad_sink.hpp): what a sink is handed, what autograd gets
// back when it takes or declines the gradients, and when no sink is asked at all.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "slimtrain/model/autocast.hpp"
#include "slimtrain/model/grad_sink.hpp"

namespace sm = slimtrain::model;

namespace {

// Records each offer; takes the gradients (as go^T x and the column sums) when told to.
class RecordingSink : public sm::GradSink {
 public:
  explicit RecordingSink(bool take) : take_(take) {}
  bool take_linear(const torch::Tensor& weight, const torch::Tensor& bias,
                   const torch::Tensor& grad_out, const torch::Tensor& input) override {
    ++offers;
    same_weight = weight.unsafeGetTensorImpl() == expected_weight;
    same_bias = bias.unsafeGetTensorImpl() == expected_bias;
    if (!take_) return false;
    weight_grad = grad_out.t().mm(input);
    bias_grad = grad_out.sum(0);
    return true;
  }
  int offers = 0;
  bool same_weight = false, same_bias = false;
  const c10::TensorImpl* expected_weight = nullptr;
  const c10::TensorImpl* expected_bias = nullptr;
  torch::Tensor weight_grad, bias_grad;

 private:
  bool take_;
};

struct Fixture {
  torch::nn::Linear layer{torch::nn::LinearOptions(6, 4)};
  torch::Tensor x = torch::randn({3, 5, 6}, torch::requires_grad());  // leading dims flattened
  torch::Tensor go = torch::randn({3, 5, 4});
};

// Autograd's own gradients of the layer for the fixture's input and output gradient.
std::vector<torch::Tensor> reference(Fixture& f) {
  torch::Tensor y = f.layer->forward(f.x);
  return torch::autograd::grad({y}, {f.x, f.layer->weight, f.layer->bias}, {f.go});
}

TEST(GradSink, TakenGradientsLeaveAutogradAndTheInputGradientStays) {
  torch::manual_seed(3);
  Fixture f;
  const std::vector<torch::Tensor> want = reference(f);
  RecordingSink sink(true);
  sink.expected_weight = f.layer->weight.unsafeGetTensorImpl();
  sink.expected_bias = f.layer->bias.unsafeGetTensorImpl();
  torch::Tensor y = sm::linear(f.x, *f.layer, &sink);
  EXPECT_TRUE(torch::allclose(y, f.layer->forward(f.x)));
  y.backward(f.go);
  EXPECT_EQ(sink.offers, 1);
  EXPECT_TRUE(sink.same_weight && sink.same_bias) << "the sink must see the parameters themselves";
  EXPECT_FALSE(f.layer->weight.grad().defined()) << "a taken weight gradient reached .grad";
  EXPECT_FALSE(f.layer->bias.grad().defined()) << "a taken bias gradient reached .grad";
  ASSERT_TRUE(f.x.grad().defined());
  EXPECT_TRUE(torch::allclose(f.x.grad(), want[0], 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(sink.weight_grad, want[1], 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(sink.bias_grad, want[2], 1e-5, 1e-6));
}

TEST(GradSink, DeclinedGradientsGoToAutograd) {
  torch::manual_seed(4);
  Fixture f;
  const std::vector<torch::Tensor> want = reference(f);
  RecordingSink sink(false);
  sm::linear(f.x, *f.layer, &sink).backward(f.go);
  EXPECT_EQ(sink.offers, 1);
  ASSERT_TRUE(f.layer->weight.grad().defined());
  EXPECT_TRUE(torch::allclose(f.layer->weight.grad(), want[1], 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(f.layer->bias.grad(), want[2], 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(f.x.grad(), want[0], 1e-5, 1e-6));
}

TEST(GradSink, NotAskedWithoutGradientsOrUnderAutocast) {
  torch::manual_seed(5);
  Fixture f;
  RecordingSink sink(true);
  {
    torch::NoGradGuard no_grad;
    EXPECT_FALSE(sm::linear(f.x, *f.layer, &sink).requires_grad());
  }
  {
    // --precision bf16: the casts must be autograd's, so the layer's own backward runs.
    slimtrain::model::AutocastScope bf16(true, false);
    torch::Tensor y = sm::linear(f.x, *f.layer, &sink);
    EXPECT_EQ(y.scalar_type(), torch::kBFloat16);
    y.to(torch::kFloat32).sum().backward();
  }
  EXPECT_EQ(sink.offers, 0);
  EXPECT_TRUE(f.layer->weight.grad().defined());
  EXPECT_EQ(f.layer->weight.grad().scalar_type(), torch::kFloat32);
}

}  // namespace

// A layer without a bias (an hf decoder's o_proj, its feed-forward's projections) is offered an
// undefined bias and, taken or declined, gets its gradients as with one; a frozen weight (LoRA's
// base) is not offered at all, and its input gradient still flows.
TEST(GradSink, ALayerWithoutBiasAndAFrozenOne) {
  torch::manual_seed(6);
  torch::nn::Linear layer{torch::nn::LinearOptions(6, 4).bias(false)};
  const torch::Tensor x = torch::randn({3, 5, 6}, torch::requires_grad());
  const torch::Tensor go = torch::randn({3, 5, 4});
  const std::vector<torch::Tensor> want =
      torch::autograd::grad({layer->forward(x)}, {x, layer->weight}, {go});
  for (const bool take : {true, false}) {
    RecordingSink sink(take);
    sink.expected_weight = layer->weight.unsafeGetTensorImpl();
    sink.expected_bias = nullptr;
    layer->weight.mutable_grad() = torch::Tensor();
    x.mutable_grad() = torch::Tensor();
    sm::linear(x, *layer, &sink).backward(go);
    EXPECT_EQ(sink.offers, 1);
    EXPECT_TRUE(sink.same_weight);
    EXPECT_TRUE(torch::allclose(x.grad(), want[0], 1e-5, 1e-6));
    const torch::Tensor weight_grad = take ? sink.weight_grad : layer->weight.grad();
    ASSERT_TRUE(weight_grad.defined()) << (take ? "taken" : "declined");
    EXPECT_TRUE(torch::allclose(weight_grad, want[1], 1e-5, 1e-6));
    EXPECT_EQ(layer->weight.grad().defined(), !take);
  }
  layer->weight.set_requires_grad(false);
  RecordingSink sink(true);
  x.mutable_grad() = torch::Tensor();
  sm::linear(x, *layer, &sink).backward(go);
  EXPECT_EQ(sink.offers, 0) << "a frozen weight's gradient was offered";
  EXPECT_TRUE(torch::allclose(x.grad(), want[0], 1e-5, 1e-6));
}
