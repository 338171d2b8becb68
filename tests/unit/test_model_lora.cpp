// --lora (model/lora.hpp): the option's text parsed and refused as the help says; adapters built
// as PEFT builds them (B zero, so the model starts as the base), the output W x + alpha/r B A x,
// the base frozen and the head trained, merge_lora equal to the adapted layer.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "slimtrain/core/error.hpp"
#include "slimtrain/model/lora.hpp"

namespace {

using slimtrain::ConfigError;
using slimtrain::model::LoraOptions;

struct Tiny : torch::nn::Module {
  Tiny() {
    body = register_module("body", std::make_shared<torch::nn::Module>());
    q_proj = body->register_module("q_proj", torch::nn::Linear(8, 6));
    v_proj = body->register_module("v_proj", torch::nn::Linear(8, 4));
    classifier = register_module("classifier", torch::nn::Linear(6, 3));
  }
  std::shared_ptr<torch::nn::Module> body;
  torch::nn::Linear q_proj{nullptr}, v_proj{nullptr}, classifier{nullptr};
};

std::string refusal(const std::string& text) {
  try {
    LoraOptions::parse(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Lora, ParsesTheOptionAndItsCanonicalText) {
  const LoraOptions o = LoraOptions::parse("r=16,alpha=32,dropout=0.05,targets=q_proj,k_proj");
  EXPECT_EQ(o.r, 16);
  EXPECT_EQ(o.alpha, 32.0);
  EXPECT_EQ(o.dropout, 0.05);
  EXPECT_EQ(o.targets, (std::vector<std::string>{"q_proj", "k_proj"}));
  EXPECT_EQ(o.canonical(), "r=16,alpha=32,dropout=0.05,targets=q_proj,k_proj");
  EXPECT_EQ(LoraOptions::parse(o.canonical()).canonical(), o.canonical());
  const LoraOptions d = LoraOptions::parse("r=4");  // alpha 2r, all-linear
  EXPECT_EQ(d.alpha, 8.0);
  EXPECT_TRUE(d.all_linear());
  EXPECT_NE(refusal("r=0").find("--lora: r=0 is not a positive whole rank"), std::string::npos);
  EXPECT_NE(refusal("r=2.5").find("not a positive whole rank"), std::string::npos);
  EXPECT_NE(refusal("dropout=1").find("dropout=1 is outside [0, 1)"), std::string::npos);
  EXPECT_NE(refusal("alpha=x").find("alpha='x' is not a number"), std::string::npos);
  EXPECT_NE(refusal("rank=4").find("unknown key 'rank'"), std::string::npos);
  EXPECT_NE(refusal("r=4,q_proj").find("'q_proj' is not KEY=VALUE"), std::string::npos);
  EXPECT_NE(refusal("targets=all-linear,q_proj").find("all-linear stands alone"),
            std::string::npos);
}

TEST(Lora, AdaptersStartAsTheBaseAndAddTheirLowRankProduct) {
  torch::manual_seed(3);
  Tiny m;
  const torch::Tensor x = torch::randn({5, 8});
  const torch::Tensor base = m.q_proj->forward(x);
  const auto targeted =
      slimtrain::model::attach_lora(m, LoraOptions::parse("r=2,alpha=6,dropout=0,targets=q_proj"),
                                    {"classifier.weight", "classifier.bias"}, {});
  EXPECT_EQ(targeted, (std::vector<std::string>{"body.q_proj"}));
  EXPECT_TRUE(torch::equal(slimtrain::model::lora_linear(m.q_proj, x), base));  // B is zero
  for (const auto& p : m.named_parameters()) {
    const bool trains =
        p.key().find("lora_") != std::string::npos || p.key().rfind("classifier.", 0) == 0;
    EXPECT_EQ(p.value().requires_grad(), trains) << p.key();
  }
  const auto params = m.q_proj->named_parameters();
  const torch::Tensor a = params["lora_A.weight"], b = params["lora_B.weight"];
  EXPECT_EQ(a.sizes(), (std::vector<std::int64_t>{2, 8}));
  EXPECT_EQ(b.sizes(), (std::vector<std::int64_t>{6, 2}));
  EXPECT_LE(a.abs().max().item<double>(), 1.0 / std::sqrt(8.0));  // PEFT's Kaiming-uniform
  {
    torch::NoGradGuard no_grad;
    b.normal_();
  }
  const torch::Tensor want = base + x.matmul(a.t()).matmul(b.t()) * 3.0;  // alpha / r = 3
  const torch::Tensor got = slimtrain::model::lora_linear(m.q_proj, x);
  EXPECT_TRUE(torch::allclose(got, want, 1e-5, 1e-6));
  EXPECT_TRUE(torch::equal(slimtrain::model::lora_linear(m.v_proj, x), m.v_proj->forward(x)));
  got.sum().backward();
  EXPECT_TRUE(a.grad().defined() && b.grad().defined());
  EXPECT_FALSE(m.q_proj->weight.grad().defined());  // frozen

  slimtrain::model::merge_lora(m);
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(torch::allclose(m.q_proj->forward(x), want, 1e-5, 1e-5));
}

TEST(Lora, NamesWhatIsThereWhenTargetsMatchNothing) {
  Tiny m;
  try {
    slimtrain::model::attach_lora(m, LoraOptions::parse("targets=query"), {"classifier.weight"},
                                  {});
    FAIL() << "no refusal";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("its linear layers: q_proj, v_proj"), std::string::npos)
        << e.what();
  }
  try {  // one name of several that matches nothing: a typo, not silently dropped
    Tiny other;
    slimtrain::model::attach_lora(other, LoraOptions::parse("targets=q_proj,v_prj"),
                                  {"classifier.weight"}, {});
    FAIL() << "no refusal";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("targets=v_prj matches no linear layer"),
              std::string::npos)
        << e.what();
  }
  try {
    slimtrain::model::attach_lora(m, LoraOptions::parse("r=2"), {"classifier.weight"}, {"norm"});
    FAIL() << "no refusal";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--lora-train: 'norm' names no module"),
              std::string::npos);
  }
}

}  // namespace
