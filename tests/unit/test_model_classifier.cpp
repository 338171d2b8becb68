#include <gtest/gtest.h>
#include <torch/torch.h>

#include <type_traits>

#include "slimtrain/core/error.hpp"
#include "slimtrain/model/classifier.hpp"

using namespace slimtrain;
using model::ModelSpec;

namespace {

ModelSpec spec_of(const std::string& name, std::vector<std::int64_t> shape, std::int64_t classes) {
  ModelSpec spec;
  spec.name = name;
  spec.input_shape = std::move(shape);
  spec.num_classes = classes;
  if (name == "vit-tiny" && spec.input_shape.back() % 7 != 0) spec.vit_patch = 4;
  return spec;
}

// Smoothed cross-entropy written out from log-softmax, independent of LibTorch's loss.
double reference_loss(const torch::Tensor& logits, const torch::Tensor& y, double eps) {
  const auto logp = torch::log_softmax(logits.to(torch::kDouble), 1);
  const auto c = static_cast<double>(logits.size(1));
  double total = 0;
  for (std::int64_t i = 0; i < logits.size(0); ++i) {
    const double nll = -logp[i][y[i].item<std::int64_t>()].item<double>();
    const double uniform = -logp[i].sum().item<double>() / c;
    total += (1 - eps) * nll + eps * uniform;
  }
  return total / static_cast<double>(logits.size(0));
}

template <typename Fn>
std::string config_error_of(Fn&& fn) {
  try {
    fn();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no ConfigError)";
}

}  // namespace

// The slim-output contract: exactly two tensors leave forward.
static_assert(sizeof(model::Output) == 2 * sizeof(torch::Tensor),
              "Output must hold logits and loss only");
static_assert(std::is_aggregate_v<model::Output>);

TEST(Model, OutputHasOnlyLogitsAndLoss) {
  torch::manual_seed(0);
  auto net = model::make_model(spec_of("mlp", {4}, 3));
  auto [logits, loss] = net->forward(torch::randn({5, 4}));  // compiles only with two members
  EXPECT_EQ(logits.sizes(), (std::vector<std::int64_t>{5, 3}));
  EXPECT_FALSE(loss.defined());
}

TEST(Model, ShapesOnFashionAndCifarLikeInputs) {
  torch::manual_seed(0);
  for (const std::string name : {"mlp", "cnn-small", "cnn-bn", "vit-tiny"}) {
    for (const auto& shape : {std::vector<std::int64_t>{1, 28, 28}, {3, 32, 32}}) {
      auto net = model::make_model(spec_of(name, shape, 10));
      auto x = torch::randn({3, shape[0], shape[1], shape[2]});
      const auto out = net->forward(x);
      EXPECT_EQ(out.logits.sizes(), (std::vector<std::int64_t>{3, 10})) << name;
      EXPECT_FALSE(out.loss.defined()) << name;
      const auto features = net->embed(x);
      EXPECT_EQ(features.sizes(), (std::vector<std::int64_t>{3, net->embedding_dim()})) << name;
    }
  }
}

TEST(Model, TwoDimensionalImagesAreOneChannel) {
  torch::manual_seed(0);
  auto net = model::make_model(spec_of("cnn-small", {28, 28}, 10));
  const auto a = torch::randn({2, 28, 28});
  EXPECT_TRUE(torch::equal(net->forward(a).logits, net->forward(a.unsqueeze(1)).logits));
  EXPECT_THROW(net->forward(torch::randn({2, 1, 28, 27})), DataError);
}

TEST(Model, LossOnlyWithLabelsAndEqualToCrossEntropy) {
  for (const double eps : {0.0, 0.1}) {
    for (const std::string name : {"mlp", "cnn-small", "cnn-bn", "vit-tiny"}) {
      torch::manual_seed(1);
      auto spec = spec_of(name, {1, 28, 28}, 10);
      spec.label_smoothing = eps;
      auto net = model::make_model(spec);
      const auto x = torch::randn({6, 1, 28, 28});
      const auto y = torch::tensor({0, 3, 9, 1, 1, 7}, torch::kLong);
      const auto out = net->forward(x, y);
      ASSERT_TRUE(out.loss.defined());
      EXPECT_EQ(out.loss.dim(), 0);
      EXPECT_NEAR(out.loss.item<double>(), reference_loss(out.logits, y, eps), 1e-5)
          << name << " eps " << eps;
      out.loss.backward();
      for (const auto& p : net->parameters()) {
        ASSERT_TRUE(p.grad().defined()) << name;
      }
      EXPECT_THROW(net->forward(x, y.slice(0, 0, 5)), DataError);
    }
  }
}

TEST(Model, ParameterCountsByHand) {
  // cnn-small on 1x28x28, 10 classes: conv1 32*1*9+32, conv2 64*32*9+64, fc1 3136*128+128,
  // fc2 128*10+10.
  const std::int64_t cnn =
      (32 * 9 + 32) + (64 * 32 * 9 + 64) + (3136 * 128 + 128) + (128 * 10 + 10);
  EXPECT_EQ(cnn, 421642);
  EXPECT_EQ(model::parameter_count(*model::make_model(spec_of("cnn-small", {1, 28, 28}, 10))), cnn);
  // 3x32x32 -> 8x8 after two poolings.
  EXPECT_EQ(model::parameter_count(*model::make_model(spec_of("cnn-small", {3, 32, 32}, 10))),
            (32 * 27 + 32) + (64 * 32 * 9 + 64) + (4096 * 128 + 128) + (128 * 10 + 10));

  // cnn-bn: five bias-free convs with BatchNorm (weight and bias: 2 per channel), then the head.
  const std::int64_t bn = (16 * 1 * 9 + 32) + (16 * 16 * 9 + 32) + (32 * 16 * 9 + 64) +
                          (32 * 32 * 9 + 64) + (64 * 32 * 9 + 128) + (64 * 10 + 10);
  EXPECT_EQ(model::parameter_count(*model::make_model(spec_of("cnn-bn", {1, 28, 28}, 10))), bn);
  EXPECT_EQ(model::parameter_count(*model::make_model(spec_of("cnn-bn", {3, 32, 32}, 10))),
            bn + 16 * 2 * 9);  // only the first conv sees the channels; pooling is global
  EXPECT_EQ(model::make_model(spec_of("cnn-bn", {1, 28, 28}, 10))->buffers().size(), 15u);
  // --cnn-layers 6: one more bias-free 4W -> 4W conv and its BatchNorm before the pooling.
  auto deeper = spec_of("cnn-bn", {1, 28, 28}, 10);
  deeper.cnn_layers = 6;
  const auto deeper_model = model::make_model(deeper);
  EXPECT_EQ(model::parameter_count(*deeper_model), bn + (64 * 64 * 9 + 128));
  EXPECT_EQ(deeper_model->buffers().size(), 18u);
  EXPECT_EQ(deeper_model->forward(torch::randn({2, 1, 28, 28})).logits.sizes(),
            (std::vector<std::int64_t>{2, 10}));

  auto mlp = spec_of("mlp", {1, 28, 28}, 10);
  mlp.mlp_widths = {256, 128};
  EXPECT_EQ(model::parameter_count(*model::make_model(mlp)),
            (784 * 256 + 256) + (256 * 128 + 128) + (128 * 10 + 10));

  auto vit = spec_of("vit-tiny", {1, 28, 28}, 10);  // patch 7 -> 16 tokens
  const std::int64_t d = vit.vit_dim, tokens = 16;
  const std::int64_t block =
      2 * (2 * d) + (d * 3 * d + 3 * d) + (d * d + d) + (d * 4 * d + 4 * d) + (4 * d * d + d);
  EXPECT_EQ(model::parameter_count(*model::make_model(vit)),
            (49 * d + d) + tokens * d + vit.vit_depth * block + 2 * d + (d * 10 + 10));
}

TEST(Model, DeterministicInitGivenSeed) {
  const auto spec = spec_of("vit-tiny", {1, 28, 28}, 10);
  torch::manual_seed(42);
  auto a = model::make_model(spec);
  torch::manual_seed(42);
  auto b = model::make_model(spec);
  const auto pa = a->parameters(), pb = b->parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (std::size_t i = 0; i < pa.size(); ++i) EXPECT_TRUE(torch::equal(pa[i], pb[i]));
  torch::manual_seed(43);
  auto c = model::make_model(spec);
  EXPECT_FALSE(torch::equal(pa[0], c->parameters()[0]));
}

TEST(Model, FingerprintIsStableAndSeparatesArchitectures) {
  const auto base = spec_of("cnn-small", {1, 28, 28}, 10);
  // Pinned (recorded from this implementation): a silent change would orphan saved checkpoints.
  EXPECT_EQ(base.fingerprint(), ModelSpec(base).fingerprint());
  EXPECT_EQ(base.fingerprint().size(), 16u);
  EXPECT_EQ(base.fingerprint(), "8bc2f061517667ae");

  auto smoothed = base;
  smoothed.label_smoothing = 0.1;
  smoothed.mlp_widths = {7};  // not a cnn field
  EXPECT_EQ(smoothed.fingerprint(), base.fingerprint());

  auto other_shape = base;
  other_shape.input_shape = {3, 28, 28};
  auto other_classes = base;
  other_classes.num_classes = 11;
  auto other_model = base;
  other_model.name = "mlp";
  auto other_widths = other_model;
  other_widths.mlp_widths = {256};
  auto vit = spec_of("vit-tiny", {1, 28, 28}, 10);
  auto vit_deeper = vit;
  vit_deeper.vit_depth = 3;
  auto bn = spec_of("cnn-bn", {1, 28, 28}, 10);
  // Pinned before --cnn-layers existed: its default keeps those checkpoints resumable.
  EXPECT_EQ(bn.fingerprint(), "76a7ec58b3f6bfdf");
  auto bn_deeper = bn;
  bn_deeper.cnn_layers = 6;
  const std::vector<std::string> prints{
      base.fingerprint(),        other_shape.fingerprint(),  other_classes.fingerprint(),
      other_model.fingerprint(), other_widths.fingerprint(), vit.fingerprint(),
      vit_deeper.fingerprint(),  bn.fingerprint(),           bn_deeper.fingerprint()};
  for (std::size_t i = 0; i < prints.size(); ++i) {
    for (std::size_t j = i + 1; j < prints.size(); ++j) EXPECT_NE(prints[i], prints[j]) << i << j;
  }
}

TEST(Model, SpecJsonRoundTrip) {
  auto spec = spec_of("vit-tiny", {3, 32, 32}, 7);
  spec.vit_depth = 3;
  spec.label_smoothing = 0.05;
  spec.mlp_widths = {5, 6};
  const auto back = ModelSpec::from_json(nlohmann::json::parse(spec.to_json().dump()));
  EXPECT_EQ(back.to_json(), spec.to_json());
  EXPECT_EQ(back.fingerprint(), spec.fingerprint());
  EXPECT_NE(spec.describe().find("vit-tiny input [3,32,32] classes 7"), std::string::npos)
      << spec.describe();
  EXPECT_THROW(ModelSpec::from_json({{"num_classes", "ten"}}), ConfigError);
}

TEST(Model, BadSpecsNameTheOption) {
  EXPECT_NE(config_error_of([] {
              model::make_model(spec_of("resnet", {1, 28, 28}, 10));
            }).find("--model: unknown model 'resnet'"),
            std::string::npos);
  const auto flat = config_error_of([] { model::make_model(spec_of("cnn-small", {784}, 10)); });
  EXPECT_NE(flat.find("--model cnn-small needs image samples"), std::string::npos) << flat;
  EXPECT_NE(flat.find("[784]"), std::string::npos) << flat;
  EXPECT_NE(config_error_of([] {
              model::make_model(spec_of("vit-tiny", {784}, 10));
            }).find("--model vit-tiny"),
            std::string::npos);
  auto vit = spec_of("vit-tiny", {1, 28, 28}, 10);
  vit.vit_patch = 5;
  EXPECT_NE(config_error_of([&] { model::make_model(vit); }).find("--vit-patch"),
            std::string::npos);
  vit.vit_patch = 7;
  vit.vit_heads = 5;
  EXPECT_NE(config_error_of([&] { model::make_model(vit); }).find("--vit-dim"), std::string::npos);
  auto smooth = spec_of("mlp", {4}, 10);
  smooth.label_smoothing = 1.0;
  EXPECT_NE(config_error_of([&] { model::make_model(smooth); }).find("--label-smoothing"),
            std::string::npos);
  EXPECT_THROW(model::make_model(spec_of("cnn-small", {1, 3, 3}, 10)), ConfigError);
  auto shallow = spec_of("cnn-bn", {1, 28, 28}, 10);
  shallow.cnn_layers = 4;
  EXPECT_NE(config_error_of([&] { model::make_model(shallow); }).find("--cnn-layers: 4"),
            std::string::npos);
  EXPECT_THROW(model::make_model(spec_of("mlp", {4}, 1)), ConfigError);
  EXPECT_THROW(model::make_model(spec_of("mlp", {0, 4}, 3)), ConfigError);
  // mlp flattens any shape but refuses a sample of the wrong size.
  auto mlp = model::make_model(spec_of("mlp", {2, 3}, 3));
  EXPECT_EQ(mlp->forward(torch::randn({4, 6})).logits.size(0), 4);
  EXPECT_THROW(mlp->forward(torch::randn({4, 7})), DataError);
}

TEST(Model, EachModelFitsATinyBatch) {
  for (const std::string name : {"mlp", "cnn-small", "cnn-bn", "vit-tiny"}) {
    torch::manual_seed(5);
    auto net = model::make_model(spec_of(name, {1, 28, 28}, 4));
    const auto x = torch::randn({16, 1, 28, 28});
    const auto y = torch::arange(16, torch::kLong) % 4;
    // lr 0.05 fitted cnn-small in 20 steps and then bounced back out with LibTorch 2.11's kernels
    // (MKL, oneDNN) where 1.13's (OpenBLAS) kept it: a step small enough for both.
    torch::optim::SGD sgd(net->parameters(), torch::optim::SGDOptions(0.02).momentum(0.9));
    const double first = net->forward(x, y).loss.item<double>();
    double last = first;
    for (int step = 0; step < 40; ++step) {
      sgd.zero_grad();
      auto loss = net->forward(x, y).loss;
      loss.backward();
      sgd.step();
      last = loss.item<double>();
    }
    EXPECT_LT(last, 0.5 * first) << name << ": loss " << first << " -> " << last;
  }
}

TEST(Model, ModelOptionParsesBuiltInsAndTorchScriptPaths) {
  slimtrain::model::ModelSpec spec;
  spec.set_model("vit-tiny");
  EXPECT_EQ(spec.name, "vit-tiny");
  EXPECT_EQ(spec.model_option(), "vit-tiny");
  spec.set_model("torchscript:models/m.pt");
  EXPECT_EQ(spec.name, "torchscript");
  EXPECT_EQ(spec.script_path, "models/m.pt");
  EXPECT_EQ(spec.model_option(), "torchscript:models/m.pt");
  for (const std::string bad : {"resnet", "torchscript:", "TorchScript:m.pt", ""}) {
    try {
      slimtrain::model::ModelSpec s;
      s.set_model(bad, "--model");
      FAIL() << "accepted '" << bad << "'";
    } catch (const slimtrain::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("--model"), std::string::npos) << e.what();
    }
  }
}

TEST(Model, TorchScriptSpecRoundTripsAndItsFingerprintFollowsTheSignatureNotThePath) {
  slimtrain::model::ModelSpec a;
  a.set_model("torchscript:/old/place/m.pt");
  a.input_shape = {1, 8, 8};
  a.num_classes = 4;
  a.script_signature = "p fc.weight float32 [4,64];";
  a.logits_output = "1";
  a.model_loss = true;
  const auto back = slimtrain::model::ModelSpec::from_json(a.to_json());
  EXPECT_EQ(back.script_path, a.script_path);
  EXPECT_EQ(back.script_signature, a.script_signature);
  EXPECT_EQ(back.logits_output, "1");
  EXPECT_TRUE(back.model_loss);
  slimtrain::model::ModelSpec moved = a;
  moved.script_path = "/new/place/m.pt";
  EXPECT_EQ(moved.fingerprint(), a.fingerprint());
  slimtrain::model::ModelSpec other = a;
  other.script_signature = "p fc.weight float32 [5,64];";
  EXPECT_NE(other.fingerprint(), a.fingerprint());
}

TEST(Model, SizesPeopleRead) {
  using slimtrain::model::format_bytes;
  EXPECT_EQ(format_bytes(816), "816 B");
  EXPECT_EQ(format_bytes(1024), "1.0 KiB");
  EXPECT_EQ(format_bytes(1u << 20), "1.0 MiB");
  EXPECT_EQ(slimtrain::model::format_shape({64, 16, 256}), "[64,16,256]");
}

TEST(Model, BuiltInsHaveNoScriptToExport) {
  slimtrain::model::ModelSpec spec;
  spec.set_model("mlp");
  spec.input_shape = {4};
  spec.num_classes = 3;
  auto model = slimtrain::model::make_model(spec);
  EXPECT_TRUE(model->dropped_outputs().empty());
  EXPECT_EQ(model->trainable_parameters().size(), model->parameters().size());
  EXPECT_THROW(model->save_script("/tmp/never.pt"), slimtrain::ConfigError);
}
