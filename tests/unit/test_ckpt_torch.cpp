// Torch helpers: parameters and buffers round-trip bit-identically, mismatches name the parameter,
// and the optimizer state round-trips so training continues on the same trajectory.
#include "slimtrain/ckpt/checkpoint_io.hpp"
#include "slimtrain/ckpt/checkpoint_manager.hpp"
#include "slimtrain/ckpt/layout.hpp"
#include "slimtrain/ckpt/torch_state.hpp"
#include "slimtrain/core/error.hpp"
#include "test_ckpt_support.hpp"

namespace slimtrain::ckpt {
namespace {
using testing::TempDir;

struct NetImpl : torch::nn::Module {
  explicit NetImpl(int classes = 3)
      : conv(register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 4, 3)))),
        bn(register_module("bn", torch::nn::BatchNorm2d(4))),
        fc(register_module("fc", torch::nn::Linear(4 * 4 * 4, classes))) {}
  torch::Tensor forward(const torch::Tensor& x) { return fc(torch::relu(bn(conv(x))).flatten(1)); }
  torch::nn::Conv2d conv;
  torch::nn::BatchNorm2d bn;
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

void train_steps(Net& net, torch::optim::Optimizer& opt, int steps, int seed) {
  torch::manual_seed(seed);
  for (int i = 0; i < steps; ++i) {
    const auto x = torch::randn({8, 1, 6, 6});
    const auto y = torch::randint(0, 3, {8});
    opt.zero_grad();
    torch::nn::functional::cross_entropy(net->forward(x), y).backward();
    opt.step();
  }
}

void expect_identical(const Net& a, const Net& b) {
  const auto pa = host_copy(*a), pb = host_copy(*b);
  ASSERT_EQ(pa.size(), pb.size());
  for (std::size_t i = 0; i < pa.size(); ++i) {
    EXPECT_EQ(pa[i].name, pb[i].name);
    EXPECT_TRUE(testing::same_bytes(pa[i].tensor, pb[i].tensor)) << pa[i].name;
  }
}

TEST(CkptTorch, ParametersAndBuffersRoundTripBitIdentical) {
  TempDir dir;
  torch::manual_seed(1);
  Net net;
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  train_steps(net, opt, 3, 7);  // moves running stats and num_batches_tracked off their defaults

  CheckpointState state;
  state.step = 3;
  state.tensors = host_copy(*net);
  std::vector<std::string> names;
  for (const auto& e : state.tensors) names.push_back(e.name);
  EXPECT_NE(std::find(names.begin(), names.end(), "model/bn.running_mean"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "model/bn.num_batches_tracked"), names.end());
  const std::string path = write_checkpoint(checkpoints_dir(dir.path()), state);

  torch::manual_seed(2);
  Net fresh;
  load_into(*fresh, CheckpointManager::load(path));
  expect_identical(net, fresh);
  EXPECT_EQ(fresh->bn->num_batches_tracked.item<int64_t>(), 3);
}

TEST(CkptTorch, ShapeMismatchNamesTheParameterAndBothShapes) {
  torch::manual_seed(1);
  Net five(5);
  CheckpointState state;
  state.tensors = host_copy(*five);
  Net three(3);
  const auto before = three->conv->weight.clone();
  try {
    load_into(*three, state);
    FAIL() << "a mismatched checkpoint loaded";
  } catch (const DataError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'fc.weight' has shape [5, 64] in the checkpoint and [3, 64] in the model"),
              std::string::npos)
        << what;
  }
  EXPECT_TRUE(torch::equal(before, three->conv->weight)) << "a failed load changed the model";

  CheckpointState missing;
  missing.tensors = host_copy(*three);
  missing.tensors.erase(missing.tensors.begin() + 2);
  try {
    load_into(*three, missing);
    FAIL() << "a checkpoint with a missing tensor loaded";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("no tensor 'model/"), std::string::npos) << e.what();
  }
  CheckpointState extra;
  extra.tensors = host_copy(*three);
  extra.tensors.push_back({"model/head.weight", torch::zeros({2})});
  try {
    load_into(*three, extra);
    FAIL() << "a checkpoint with an extra tensor loaded";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("'model/head.weight' (shape [2]) has no counterpart"),
              std::string::npos)
        << e.what();
  }
}

TEST(CkptTorch, OptimizerStateContinuesTheSameTrajectory) {
  torch::manual_seed(1);
  Net net;
  torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(1e-2));
  train_steps(net, opt, 3, 11);
  CheckpointState state;
  state.tensors = host_copy(*net);
  state.blobs["optimizer"] = serialize_optimizer(opt);

  Net resumed;
  load_into(*resumed, state);
  torch::optim::Adam resumed_opt(resumed->parameters(), torch::optim::AdamOptions(1e-2));
  deserialize_optimizer(resumed_opt, state.blobs["optimizer"]);
  Net naive;
  load_into(*naive, state);
  torch::optim::Adam naive_opt(naive->parameters(), torch::optim::AdamOptions(1e-2));

  train_steps(net, opt, 2, 12);
  train_steps(resumed, resumed_opt, 2, 12);
  train_steps(naive, naive_opt, 2, 12);
  expect_identical(net, resumed);
  EXPECT_FALSE(torch::equal(net->fc->weight, naive->fc->weight))
      << "fresh Adam state gave the same result: the test cannot tell";

  EXPECT_THROW(deserialize_optimizer(resumed_opt, "not an archive"), DataError);
}

}  // namespace
}  // namespace slimtrain::ckpt
