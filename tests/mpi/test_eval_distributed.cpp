// Distributed evaluation against a single-process evaluation of the same weights: exact counts
// and confusion matrix, the loss sum within rounding, at any world size (shares of unequal size,
// empty shares); the bytes an evaluation passes to the communicator; skip and retry agreed on
// every rank.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <thread>

#include "mpi_runtime.hpp"
#include "slimtrain/cli/prep_job.hpp"
#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/data/normalisation.hpp"
#include "slimtrain/eval/evaluator.hpp"
#include "slimtrain/eval/shard_pass.hpp"
#include "slimtrain/model/classifier.hpp"
#include "slimtrain/runtime/runtime.hpp"

namespace se = slimtrain::eval;
namespace sd = slimtrain::data;
namespace sm = slimtrain::model;
namespace fs = std::filesystem;

namespace {

using slimtrain_test::rt;

// The file's layout with its mean/std and `classes` classes, as the jobs give it to a shard pass.
sd::DatasetInfo shard_info(const std::string& path, std::int64_t classes) {
  sd::DatasetInfo info = sd::read_normalised_info(path);
  info.num_classes = classes;
  return info;
}

// Sample i: a pseudo-random pattern (so an untrained model predicts several classes), label
// (3i + 1) mod C. Deterministic on every rank.
class PatternSource : public sd::RecordSource {
 public:
  PatternSource(std::int64_t n, std::vector<std::int64_t> shape, std::int64_t classes)
      : n_(n), shape_(std::move(shape)), classes_(classes) {}
  std::int64_t size() const override { return n_; }
  const std::vector<std::int64_t>& sample_shape() const override { return shape_; }
  sd::ElementType element_type() const override { return sd::ElementType::kUint8; }
  std::int64_t read(std::int64_t i, void* x) const override {
    auto* out = static_cast<std::uint8_t*>(x);
    std::uint64_t h = static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull + 12345;
    for (std::int64_t k = 0; k < sample_elements(); ++k) {
      h ^= h >> 29;
      h *= 0xBF58476D1CE4E5B9ull;
      h ^= h >> 32;
      out[k] = static_cast<std::uint8_t>(h & 0xff);
    }
    return (3 * i + 1) % classes_;
  }
  std::string describe() const override { return "pattern"; }

 private:
  std::int64_t n_;
  std::vector<std::int64_t> shape_;
  std::int64_t classes_;
};

class EvalDistributedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[256] = {};
    if (rt().rank() == 0) {
      std::string pattern = (fs::temp_directory_path() / "slimtrain-evaltest-XXXXXX").string();
      std::strncpy(name, mkdtemp(pattern.data()), sizeof(name) - 1);
    }
    MPI_Bcast(name, sizeof(name), MPI_CHAR, 0, MPI_COMM_WORLD);
    dir_ = name;
  }
  void TearDown() override {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rt().rank() == 0) fs::remove_all(dir_);
  }

  std::string make_file(const std::string& file, std::int64_t n_test,
                        const std::vector<std::int64_t>& shape, std::int64_t classes) {
    slimtrain::cli::PrepOptions options;
    options.output = dir_ + "/" + file;
    options.num_classes = classes;
    options.chunk_bytes = 256;  // several chunks per share
    PatternSource train(32, shape, classes), test(n_test, shape, classes);
    slimtrain::cli::prepare_dataset(slimtrain_test::control(), MPI_COMM_WORLD, train, &test,
                                    options);
    return options.output;
  }

  // The same weights on every rank: rank 0's, broadcast (as the trainer does).
  static std::shared_ptr<sm::ClassifierImpl> make_model(const sm::ModelSpec& spec) {
    torch::manual_seed(static_cast<std::uint64_t>(7 + 1000 * rt().rank()));
    auto model = sm::make_model(spec);
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) {
      torch::Tensor t = p.detach().contiguous();
      MPI_Bcast(t.data_ptr<float>(), static_cast<int>(t.numel()), MPI_FLOAT, 0, MPI_COMM_WORLD);
    }
    return model;
  }

  // `model` on every rank's share of `path`'s test split, reduced on a control plane of its own
  // (30 s deadlines); the plane's bytes in `bytes_sent`.
  static se::EvalOutcome evaluate_test_split(sm::ClassifierImpl& model, const std::string& path,
                                             std::int64_t classes, std::uint64_t* bytes_sent) {
    auto comm = std::make_unique<slimtrain::comm::ControlPlane>(rt(), "eval");
    se::EvalPolicy policy;
    policy.deadline_s = 30;
    policy.agree_timeout_s = 30;
    auto local = [&](std::int64_t batch) {
      return se::evaluate_shard(model, shard_info(path, classes), "test", rt().rank(), rt().size(),
                                batch);
    };
    se::EvalOutcome o = se::evaluate(local, *comm, classes, {}, 16, policy);
    *bytes_sent = comm->bytes_sent();
    return o;
  }

  std::string dir_;
};

struct EvalCase {
  const char* model;
  std::int64_t n_test;  // prime or tiny: never divisible by every world size
  std::int64_t batch;
};

class EvalMatchesSingleProcess : public EvalDistributedTest,
                                 public ::testing::WithParamInterface<EvalCase> {};

TEST_P(EvalMatchesSingleProcess, CountsConfusionAndLossEqualTheWholeSplitOnOneRank) {
  const EvalCase param = GetParam();
  const std::int64_t classes = 5;
  const std::vector<std::int64_t> shape{1, 8, 8};
  const std::string path = make_file("d.h5", param.n_test, shape, classes);
  sm::ModelSpec spec;
  spec.name = param.model;
  spec.input_shape = shape;
  spec.num_classes = classes;
  spec.mlp_widths = {32, 16};
  auto model = make_model(spec);

  // The reference: the whole split on this rank alone, same code path, another batch size.
  const se::EvalStats reference =
      se::evaluate_shard(*model, shard_info(path, classes), "test", 0, 1, param.batch + 5);
  ASSERT_EQ(reference.count(), param.n_test);
  std::set<std::int64_t> predicted_classes;
  for (std::int64_t t = 0; t < classes; ++t) {
    std::int64_t support = 0;
    for (std::int64_t p = 0; p < classes; ++p) {
      support += reference.at(t, p);
      if (reference.at(t, p) > 0) predicted_classes.insert(p);
    }
    std::int64_t expected_support = 0;
    for (std::int64_t i = 0; i < param.n_test; ++i) expected_support += (3 * i + 1) % classes == t;
    EXPECT_EQ(support, expected_support) << "class " << t;
  }
  if (param.n_test > 20) {  // a confusion matrix with one busy column would prove little
    EXPECT_GE(predicted_classes.size(), 2u);
  }

  auto comm = std::make_unique<slimtrain::comm::ControlPlane>(rt(), "eval");
  se::EvalPolicy policy;
  policy.deadline_s = 30;
  policy.agree_timeout_s = 30;
  std::int64_t local_count = -1;
  auto local = [&](std::int64_t batch) {
    se::EvalStats s = se::evaluate_shard(*model, shard_info(path, classes), "test", rt().rank(),
                                         rt().size(), batch);
    local_count = s.count();
    return s;
  };
  const se::EvalOutcome o = se::evaluate(local, *comm, classes, {}, param.batch, policy);
  ASSERT_TRUE(o.ok) << o.reason;
  EXPECT_EQ(o.attempts, 1);
  // Shares differ by at most one sample and cover the split once.
  const std::int64_t base = param.n_test / rt().size();
  EXPECT_TRUE(local_count == base || local_count == base + 1) << local_count;
  EXPECT_EQ(o.metrics.count, param.n_test);

  const se::Metrics expected = se::compute_metrics(reference, {});
  EXPECT_EQ(o.metrics.accuracy, expected.accuracy);
  EXPECT_EQ(o.metrics.macro_f1, expected.macro_f1);
  EXPECT_NEAR(o.metrics.mean_loss, expected.mean_loss, 1e-5 * (1 + std::abs(expected.mean_loss)));
  ASSERT_EQ(o.metrics.per_class.size(), static_cast<std::size_t>(classes));
  for (std::size_t k = 0; k < o.metrics.per_class.size(); ++k) {
    EXPECT_EQ(o.metrics.per_class[k].support, expected.per_class[k].support) << k;
    EXPECT_EQ(o.metrics.per_class[k].precision, expected.per_class[k].precision) << k;
    EXPECT_EQ(o.metrics.per_class[k].recall, expected.per_class[k].recall) << k;
  }

  // The reduced statistics themselves, cell by cell, on every rank.
  std::vector<double> packed = se::EvalStats(classes).pack();
  {
    se::EvalStats mine = local(param.batch);
    packed = mine.pack();
    MPI_Allreduce(MPI_IN_PLACE, packed.data(), static_cast<int>(packed.size()), MPI_DOUBLE, MPI_SUM,
                  MPI_COMM_WORLD);
  }
  const se::EvalStats reduced = se::EvalStats::unpack(packed, classes);
  EXPECT_EQ(reduced.count(), reference.count());
  EXPECT_EQ(reduced.confusion(), reference.confusion());
  EXPECT_NEAR(reduced.loss_sum(), reference.loss_sum(),
              1e-5 * (1 + std::abs(reference.loss_sum())));
}

INSTANTIATE_TEST_SUITE_P(Models, EvalMatchesSingleProcess,
                         ::testing::Values(EvalCase{"mlp", 97, 8}, EvalCase{"cnn-small", 61, 7},
                                           EvalCase{"mlp", 2, 4}),
                         [](const ::testing::TestParamInfo<EvalCase>& info) {
                           std::string name = std::string(info.param.model) + "_n" +
                                              std::to_string(info.param.n_test);
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

// What an evaluation passes to the communicator: the packed statistics and nothing else, so
// neither the model's hidden width nor the split size shows in it.
TEST_F(EvalDistributedTest, BytesSentAreTheStatisticsOnlyWhateverTheHiddenWidth) {
  const std::int64_t classes = 10;
  const std::vector<std::int64_t> shape{1, 8, 8};
  const std::string path = make_file("wide.h5", 53, shape, classes);
  // Up to --confusion-max-classes (100) the matrix travels too: 3C + 2 + C^2 doubles.
  const std::uint64_t bound = 8 * (classes * classes + 3 * classes) + 64;
  const std::uint64_t exact = (2 + 3 * classes + classes * classes) * 8;
  for (std::int64_t width : {16, 4096}) {
    sm::ModelSpec spec;
    spec.name = "mlp";
    spec.input_shape = shape;
    spec.num_classes = classes;
    spec.mlp_widths = {width};
    auto model = make_model(spec);
    std::uint64_t plane_bytes = 0;
    const se::EvalOutcome o = evaluate_test_split(*model, path, classes, &plane_bytes);
    ASSERT_TRUE(o.ok) << o.reason;
    EXPECT_EQ(o.bytes_sent, exact) << "hidden width " << width;
    EXPECT_LE(o.bytes_sent, bound);
    EXPECT_LE(o.bytes_sent, 1536u) << "10 classes must stay within 1.5 KiB";
    EXPECT_EQ(plane_bytes, o.bytes_sent);
  }
}

// Issue 60: 20,000 classes reduced a 3.2 GB matrix (std::bad_alloc under 6 GB at 20,000). Now
// 3C + 2 numbers and each rank's top confusions; the same scores as one rank over the whole split.
TEST_F(EvalDistributedTest, TwentyThousandClassesSendLinearStatisticsAndScoreAsOneRank) {
  const std::int64_t classes = 20000;
  const std::vector<std::int64_t> shape{1, 4, 4};
  const std::string path = make_file("many.h5", 89, shape, classes);
  sm::ModelSpec spec;
  spec.name = "mlp";
  spec.input_shape = shape;
  spec.num_classes = classes;
  spec.mlp_widths = {8};
  auto model = make_model(spec);
  const se::EvalStats reference =
      se::evaluate_shard(*model, shard_info(path, classes), "test", 0, 1, 16);
  EXPECT_FALSE(reference.keeps_matrix());
  std::uint64_t plane_bytes = 0;
  const se::EvalOutcome o = evaluate_test_split(*model, path, classes, &plane_bytes);
  ASSERT_TRUE(o.ok) << o.reason;
  // The statistics, each rank's confusion record, the agreement: under a megabyte.
  const std::uint64_t record = 8 * (2 + 3 * se::kRankTopConfusions);
  EXPECT_LE(o.bytes_sent, 8 * (3 * classes + 2) + record * rt().size() + 64);
  const se::Metrics expected = se::compute_metrics(reference, {});
  EXPECT_EQ(o.metrics.count, 89);
  EXPECT_EQ(o.metrics.accuracy, expected.accuracy);
  EXPECT_EQ(o.metrics.macro_f1, expected.macro_f1);
  for (std::size_t k = 0; k < static_cast<std::size_t>(classes); ++k) {
    ASSERT_EQ(o.metrics.per_class[k].support, expected.per_class[k].support) << k;
    ASSERT_EQ(o.metrics.per_class[k].f1, expected.per_class[k].f1) << k;
  }
  // 89 samples, all sampled: the most frequent confusions are exact, on every rank.
  EXPECT_EQ(o.metrics.confusion_sampled, 89);
  EXPECT_EQ(o.metrics.top_confusions, expected.top_confusions);
  EXPECT_TRUE(o.metrics.confusion.empty());
}

// A rank whose local pass fails: skipped on every rank, that rank named, still bounded traffic.
TEST_F(EvalDistributedTest, LocalFailureSkipsOnEveryRankNamingTheRank) {
  const std::int64_t classes = 10;
  const int bad = rt().size() - 1;
  auto comm = std::make_unique<slimtrain::comm::ControlPlane>(rt(), "eval");
  se::EvalPolicy policy;
  policy.deadline_s = 30;
  policy.agree_timeout_s = 30;
  auto local = [&](std::int64_t) {
    if (rt().rank() == bad)
      SLIMTRAIN_THROW(slimtrain::DataError, "test.h5: /test/x row 3: unreadable");
    se::EvalStats s(classes);
    s.add_batch(torch::eye(classes), torch::arange(classes), 1.0);
    return s;
  };
  const se::EvalOutcome o = se::evaluate(local, *comm, classes, {}, 8, policy);
  EXPECT_FALSE(o.ok);
  EXPECT_EQ(o.late_ranks, std::vector<int>{bad});
  EXPECT_FALSE(o.reason.empty());
  if (rt().rank() == bad) {
    EXPECT_NE(o.reason.find("row 3: unreadable"), std::string::npos) << o.reason;
  }
  EXPECT_LE(o.bytes_sent, static_cast<std::uint64_t>(8 * (classes * classes + 3 * classes) + 64));
  EXPECT_EQ(o.attempts, 1);
}

// A late rank past the deadline: skipped everywhere with the late rank named; with one retry and
// a delay only on the first attempt, the second attempt (half the batch) succeeds everywhere.
TEST_F(EvalDistributedTest, LateRankSkipsEverywhereAndARetryRecovers) {
  if (rt().size() < 2) GTEST_SKIP() << "a late rank needs a second rank";
  const std::int64_t classes = 4;
  const int late = rt().size() - 1;
  auto comm = std::make_unique<slimtrain::comm::ControlPlane>(rt(), "eval");
  int calls = 0;
  auto local = [&](std::int64_t) {
    if (rt().rank() == late && calls++ == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    se::EvalStats s(classes);
    s.add_batch(torch::eye(classes), torch::arange(classes), 2.0);
    return s;
  };
  se::EvalPolicy policy;
  policy.deadline_s = 1.0;
  policy.agree_timeout_s = 30;

  const se::EvalOutcome skipped = se::evaluate(local, *comm, classes, {}, 64, policy);
  EXPECT_FALSE(skipped.ok);
  EXPECT_EQ(skipped.late_ranks, std::vector<int>{late});
  EXPECT_EQ(skipped.attempts, 1);

  calls = 0;
  policy.retries = 1;
  const se::EvalOutcome retried = se::evaluate(local, *comm, classes, {}, 64, policy);
  ASSERT_TRUE(retried.ok) << retried.reason;
  EXPECT_EQ(retried.attempts, 2);
  EXPECT_EQ(retried.batch_size, 32);
  EXPECT_TRUE(retried.late_ranks.empty());
  EXPECT_EQ(retried.metrics.count, classes * rt().size());
  EXPECT_EQ(retried.metrics.accuracy, 1.0);
  EXPECT_NEAR(retried.metrics.mean_loss, 2.0 / classes, 1e-12);
  // Two attempts of statistics plus the late-rank flags, each within the bound.
  EXPECT_LE(retried.bytes_sent, 2u * (8 * (classes * classes + 3 * classes) + 64));
}

// A pass whose forwards are collectives agrees on readiness first (split_evaluation.cpp): the rank
// that saw the deadline throws its TimeoutError, the others PeerLate. Skipped on every rank, only
// the late rank named, no rank blamed for failing.
TEST_F(EvalDistributedTest, APeerLateToStartSkipsWithoutBlamingTheRanksThatWereReady) {
  if (rt().size() < 2) GTEST_SKIP() << "a late rank needs a second rank";
  const std::int64_t classes = 4;
  const int late = rt().size() - 1;
  auto comm = std::make_unique<slimtrain::comm::ControlPlane>(rt(), "eval");
  auto local = [&](std::int64_t) -> se::EvalStats {
    if (rt().rank() == 0)
      throw slimtrain::TimeoutError("eval-ready missed its deadline", {late}, __FILE__, __LINE__);
    throw se::PeerLate("another rank was late to the evaluation");
  };
  se::EvalPolicy policy;
  policy.deadline_s = 30;
  policy.agree_timeout_s = 30;
  const se::EvalOutcome o = se::evaluate(local, *comm, classes, {}, 8, policy);
  EXPECT_FALSE(o.ok);
  EXPECT_FALSE(o.input_error);
  EXPECT_EQ(o.late_ranks, std::vector<int>{late});
  const char* expected = rt().rank() == 0 ? "missed its deadline" : "was late to the evaluation";
  EXPECT_NE(o.reason.find(expected), std::string::npos) << o.reason;
}

}  // namespace
