// TorchScript classifiers trained data-parallel at np = 2, 3, 4, as the trainer runs them: rank
// 0's weights broadcast over the data plane, trainable parameters bucketed and averaged, the rest
// left alone. After N steps every rank holds the same trainable parameters bit for bit, frozen
// parameters are untouched, and BatchNorm statistics (different on every rank, each saw its own
// data) are identical once broadcast from rank 0, the trainer's buffer policy. The modules are
// written by python3-torch inside the test (tests/e2e/torchscript_models.py).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "mpi_runtime.hpp"
#include "replicas.hpp"
#include "slimtrain/comm/data_plane.hpp"
#include "slimtrain/model/classifier.hpp"
#include "slimtrain/train/grad_sync.hpp"
#include "slimtrain/train/optim.hpp"

namespace sm = slimtrain::model;
namespace st = slimtrain::train;
namespace fs = std::filesystem;

namespace {
using slimtrain_test::flatten;
using slimtrain_test::rt;
using slimtrain_test::same_on_every_rank;

// The modules, written once by rank 0; "" with the reason in `why` when python3-torch is missing.
std::string models_dir(std::string& why) {
  static std::string dir;
  static std::string reason;
  static bool made = false;
  if (!made) {
    made = true;
    char name[256] = {};
    int ok = 0;
    if (rt().rank() == 0) {
      std::string pattern = (fs::temp_directory_path() / "slimtrain-ts-XXXXXX").string();
      if (mkdtemp(pattern.data())) {
        std::strncpy(name, pattern.c_str(), sizeof(name) - 1);
        const std::string command = std::string("/usr/bin/python3 ") + SLIMTRAIN_SOURCE_DIR +
                                    "/tests/e2e/torchscript_models.py " + name + " 1 8 8 4";
        ok = std::system(command.c_str()) == 0;
        const std::string made_dir = name;
        slimtrain_test::before_finalize([made_dir] { fs::remove_all(made_dir); });
      }
    }
    MPI_Bcast(name, sizeof(name), MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    dir = ok ? name : "";
    reason = "python3-torch could not script the test modules (/usr/bin/python3 lacks torch?)";
  }
  why = reason;
  return dir;
}

sm::ModelSpec spec_for(const std::string& path) {
  sm::ModelSpec spec;
  spec.set_model("torchscript:" + path);
  spec.input_shape = {1, 8, 8};
  spec.num_classes = 4;
  return spec;
}

class TorchScriptTest : public ::testing::TestWithParam<const char*> {};

TEST_P(TorchScriptTest, ReplicasIdenticalFrozenUntouchedBuffersSynchronised) {
  std::string why;
  const std::string dir = models_dir(why);
  if (dir.empty()) GTEST_SKIP() << why;
  torch::manual_seed(3);  // Dropout masks: the same seed on every rank, as the trainer seeds
  auto model = sm::make_model(spec_for(dir + "/" + GetParam() + ".pt"));
  // Different weights per rank before the broadcast: only it makes them equal.
  {
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.add_(static_cast<float>(rt().rank()));
  }
  slimtrain::comm::CommConfig cc;
  cc.deadline.base_s = 30;
  auto plane = slimtrain::comm::make_data_plane(rt(), torch::Device(torch::kCPU), "data", cc);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) plane->broadcast(p.detach(), 0);
    for (auto& b : model->buffers()) plane->broadcast(b, 0);
  }
  std::vector<torch::Tensor> frozen;
  for (const auto& p : model->parameters())
    if (!p.requires_grad()) frozen.push_back(p.detach().clone());
  const std::vector<torch::Tensor> trainable = model->trainable_parameters();
  st::OptimConfig oc;
  oc.lr = 0.05;
  auto optimizer = st::make_optimizer(oc, trainable);
  std::vector<std::int64_t> numels;
  for (const auto& p : trainable) numels.push_back(p.numel());
  const st::FlatLayout layout(numels, 4 << 10, 1);
  st::GradientSync sync(trainable, *plane, layout, st::ShardMode::none, false);

  model->probe(16, torch::Device(torch::kCPU));
  for (int step = 0; step < 6; ++step) {
    torch::manual_seed(static_cast<std::uint64_t>(1000 * step + rt().rank()));  // own data
    const torch::Tensor x = torch::rand({16, 1, 8, 8});
    const torch::Tensor y = torch::randint(0, 4, {16}, torch::kLong);
    torch::manual_seed(static_cast<std::uint64_t>(77 + step));  // shared Dropout masks
    sync.prepare();
    sm::Output out = model->forward(x, y);
    out.loss.backward();
    sync.launch();
    sync.wait();
    optimizer->step();
  }
  EXPECT_TRUE(same_on_every_rank(flatten(trainable))) << "replicas diverged";
  std::size_t k = 0;
  for (const auto& p : model->parameters()) {
    if (p.requires_grad()) continue;
    EXPECT_TRUE(torch::equal(p.detach(), frozen[k++])) << "a frozen parameter moved";
  }
  const std::vector<torch::Tensor> buffers = model->buffers();
  if (!buffers.empty()) {
    if (rt().size() > 1) {
      EXPECT_FALSE(same_on_every_rank(flatten(buffers)))
          << "BatchNorm statistics equal without a broadcast: the test proves nothing";
    }
    for (auto& b : model->buffers()) plane->broadcast(b, 0);  // Session::sync_buffers
    EXPECT_TRUE(same_on_every_rank(flatten(buffers)));
  }
}

INSTANTIATE_TEST_SUITE_P(Modules, TorchScriptTest, ::testing::Values("hf", "dict", "bn", "frozen"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

TEST(TorchScript, DroppedOutputsAreNamedWithShapeAndSize) {
  std::string why;
  const std::string dir = models_dir(why);
  if (dir.empty()) GTEST_SKIP() << why;
  auto hf = sm::make_model(spec_for(dir + "/hf.pt"));
  hf->probe(16, torch::Device(torch::kCPU));
  EXPECT_EQ(hf->dropped_outputs(), (std::vector<std::string>{"[0] float32 [] (4 B)",
                                                             "[2] float32 [16,16,32] (32.0 KiB)"}));
  auto plain = sm::make_model(spec_for(dir + "/plain.pt"));
  plain->probe(4, torch::Device(torch::kCPU));
  EXPECT_TRUE(plain->dropped_outputs().empty());
  // Names mirror the module's, as PyTorch's state_dict has them.
  std::vector<std::string> names;
  for (const auto& p : hf->named_parameters()) names.push_back(p.key());
  EXPECT_EQ(names, (std::vector<std::string>{"encoder.weight", "encoder.bias", "head.weight",
                                             "head.bias"}));
}

}  // namespace
