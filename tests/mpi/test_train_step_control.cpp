// The per-step control decision at np = 2, 3, 4: one reduction carries stop, the timed
// checkpoint, the loss and the data-plane fingerprints; ranks whose data planes issued different
// operations are named with the first diverging operation, on the MPI plane before the step's
// buckets start (check_before_backward).
#include <gtest/gtest.h>

#include <string>

#include "mpi_runtime.hpp"
#include "slimtrain/comm/data_plane.hpp"
#include "slimtrain/train/step_control.hpp"

namespace st = slimtrain::train;
namespace sc = slimtrain::comm;

namespace {
using slimtrain_test::rt;

struct Planes {
  sc::ControlPlane control{rt(), "control"};
  std::unique_ptr<sc::DataPlane> data =
      sc::make_data_plane(rt(), torch::Device(torch::kCPU), "data");
};

TEST(StepControl, OneReductionDecidesStopCheckpointAndLoss) {
  Planes p;
  st::StepControl control(p.control, *p.data, rt().hostnames());
  const int r = rt().rank(), n = rt().size();
  for (std::int64_t step = 1; step <= 3; ++step) {
    torch::Tensor bucket = torch::full({100}, static_cast<float>(r));
    sc::OpOptions options;
    options.tag = "grad-bucket";
    control.check_before_backward(step);
    auto work = p.data->all_reduce_async(bucket, sc::ReduceOp::avg, options);
    st::StepVote vote;
    vote.step = step;
    vote.stop = step == 3 && r == n - 1;        // any rank stops everyone
    vote.checkpoint_due = step == 2 && r == 0;  // rank 0's clock
    if (step != 2) vote.loss = 1.0 + r;         // logged on steps 1 and 3
    // Step 2: every rank from the last one down has a non-finite loss; step 3: none.
    vote.nonfinite_loss = step == 2 && (r == n - 1 || r >= n / 2);
    const st::StepDecision d = control.decide(vote);
    work->wait();
    EXPECT_FLOAT_EQ(bucket[0].item<float>(), (n - 1) / 2.0f);
    EXPECT_EQ(d.stop, step == 3);
    EXPECT_EQ(d.checkpoint_due, step == 2);
    EXPECT_EQ(d.mean_loss.has_value(), step != 2);
    EXPECT_EQ(d.nonfinite_rank.has_value(), step == 2);
    if (d.nonfinite_rank) {
      EXPECT_EQ(*d.nonfinite_rank, std::min(n / 2, n - 1)) << "not the lowest";
    }
    if (d.mean_loss) {
      EXPECT_DOUBLE_EQ(*d.mean_loss, 1.0 + (n - 1) / 2.0);
    }
  }
}

TEST(StepControl, ADesyncNamesTheRanksAndTheFirstDivergingOperation) {
  Planes p;
  st::StepControl control(p.control, *p.data, rt().hostnames());
  const int r = rt().rank(), n = rt().size();
  // One agreed step first: the diagnosis looks only at what came after it.
  control.check_before_backward(1);
  auto first = p.data->all_reduce_async(torch::zeros({100}), sc::ReduceOp::sum);
  st::StepVote vote;
  vote.step = 1;
  control.decide(vote);
  first->wait();

  sc::OpOptions injected, bucket;
  injected.tag = "injected";
  bucket.tag = "grad-bucket";
  std::shared_ptr<sc::Work> extra;
  if (r == 1) extra = p.data->all_reduce_async(torch::zeros({4096}), sc::ReduceOp::sum, injected);
  std::string others = n == 2 ? "rank 0" : "ranks 0";
  for (int k = 2; k < n; ++k) others += ", " + std::to_string(k);
  try {
    control.check_before_backward(2);  // before any rank issues the step's buckets
    FAIL() << "no desync reported";
  } catch (const st::DesyncError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("data-plane desync at step 2 (checked before its gradient buckets): "),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("all_reduce #2 of 16,384 bytes [injected]"), std::string::npos) << what;
    EXPECT_NE(what.find(others + " issued nothing"), std::string::npos) << what;
  }
  // The others match rank 1's operation, so every plane can shut down without a deadline.
  auto drain =
      r == 1 ? extra : p.data->all_reduce_async(torch::zeros({4096}), sc::ReduceOp::sum, injected);
  drain->wait();
  // After the step's buckets, decide() still compares everything issued.
  auto work = p.data->all_reduce_async(torch::zeros({100}), sc::ReduceOp::sum, bucket);
  vote.step = 2;
  EXPECT_NO_THROW(control.decide(vote));
  work->wait();
}

TEST(StepControl, RanksAtDifferentStepsAreADesyncToo) {
  Planes p;
  st::StepControl control(p.control, *p.data, rt().hostnames());
  st::StepVote vote;
  vote.step = rt().rank() == rt().size() - 1 ? 8 : 7;
  try {
    control.decide(vote);
    FAIL() << "no desync reported";
  } catch (const st::DesyncError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank " + std::to_string(rt().size() - 1) + " at step 8"),
              std::string::npos)
        << what;
  }
}

TEST(StepControl, FirstDivergenceIsPure) {
  using sc::IssuedOp;
  const IssuedOp a{57, sc::OpKind::all_reduce, sc::DType::f32, 204, "grad-bucket"};
  const IssuedOp big{57, sc::OpKind::all_reduce, sc::DType::f32, 467019003, ""};
  EXPECT_EQ(st::first_divergence({{a}, {a}}, {"n0", "n0"}), "");
  EXPECT_EQ(st::first_divergence({{a}, {big}, {a}, {a}}, {"n0", "n1", "n1", "n2"}),
            "rank 1 on n1 issued all_reduce #57 of 1,868,076,012 bytes where ranks 0 on n0, "
            "2 on n1, 3 on n2 issued all_reduce #57 of 816 bytes [grad-bucket]");
  EXPECT_EQ(st::first_divergence({{a}, {}}, {"n", "n"}),
            "rank 1 issued nothing where rank 0 issued all_reduce #57 of 816 bytes [grad-bucket]");
}

}  // namespace
