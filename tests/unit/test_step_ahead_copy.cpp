// The step-ahead copy's order (train/step_ahead_copy.hpp) on a fake that keeps the caching
// allocator's rule: a block freed on a stream goes back at once to that stream's next allocation
// unless it was recorded as used on another stream whose work may still be queued. The fake
// hands out numbered blocks and says, for each write, whether a step still reads that block.
// The GPU tier checks the same with real streams (tests/gpu/test_step_ahead_copy.cpp).
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "slimtrain/train/step_ahead_copy.hpp"

namespace slimtrain::train {
namespace {

enum class On { side, step };

// Streams as one timeline: everything queued on the step stream is "still to run" until the test
// says the step finished (drain_step). A block's owner stream is where it was allocated; a block
// the host freed is reusable on its owner stream at once, or, if it was used on the step stream,
// only after that stream drained.
class FakeStreams final : public CopyStreams {
 public:
  torch::Tensor allocate_on_side(const torch::Tensor& host) override {
    log.push_back("alloc:side");
    return block_for(host, On::side);
  }
  void copy_on_side(const torch::Tensor& device, const torch::Tensor& host) override {
    log.push_back("copy:side");
    const int id = id_of(device);
    if (step_reads_.count(id)) overwritten.push_back(id);  // a queued step still reads it
    device.copy_(host);
  }
  std::shared_ptr<void> mark_side() override {
    log.push_back("mark:side");
    return std::make_shared<int>(++marks_);
  }
  void step_waits(const std::shared_ptr<void>& mark) override {
    log.push_back("wait:step:" + std::to_string(*static_cast<int*>(mark.get())));
  }
  void use_on_step(const torch::Tensor& t) override {
    log.push_back("use:step");
    recorded_on_step_[id_of(t)] = true;
  }

  // The step reads `t` in kernels still queued (as the step's forward does with its batch).
  void step_reads(const torch::Tensor& t) { step_reads_[id_of(t)] = true; }
  // The step stream ran everything queued so far: blocks held for it are free again.
  void drain_step() {
    step_reads_.clear();
    for (const int id : held_) free_[owner_[id]].push_back(id);
    held_.clear();
  }
  // The host drops `t`: its block is free, for its own stream at once unless recorded on the
  // step stream while that has work queued (the allocator then waits for an event).
  void host_frees(const torch::Tensor& t) {
    const int id = id_of(t);
    if (recorded_on_step_[id] && !step_reads_.empty()) {
      held_.push_back(id);
      return;
    }
    free_[owner_[id]].push_back(id);
  }
  // An allocation on the step stream (an activation): it takes a block freed on that stream.
  torch::Tensor allocate_on_step(const torch::Tensor& like) { return block_for(like, On::step); }

  std::vector<std::string> log;
  std::vector<int> overwritten;

 private:
  torch::Tensor block_for(const torch::Tensor& like, On stream) {
    int id;
    auto& pool = free_[stream];
    if (!pool.empty()) {
      id = pool.back();
      pool.pop_back();
    } else {
      id = next_id_++;
      storage_[id] = torch::empty({1024}, like.options());
      owner_[id] = stream;
    }
    recorded_on_step_[id] = false;
    return storage_[id].narrow(0, 0, like.numel()).view(like.sizes());
  }
  int id_of(const torch::Tensor& t) const {
    for (const auto& [id, s] : storage_)
      if (s.data_ptr() == t.data_ptr()) return id;
    return -1;
  }
  std::map<int, torch::Tensor> storage_;
  std::map<int, On> owner_;
  std::map<On, std::vector<int>> free_;
  std::map<int, bool> step_reads_, recorded_on_step_;
  std::vector<int> held_;
  int next_id_ = 0, marks_ = 0;
};

data::Batch host_batch(float value) {
  data::Batch b;
  b.x = torch::full({4, 3}, value);
  b.y = torch::full({4}, static_cast<std::int64_t>(value), torch::kLong);
  b.inputs.emplace_back("mask", torch::full({4, 2}, value + 0.5f));
  return b;
}

TEST(StepAheadCopy, AllocatesAndCopiesOnTheSideStreamAndHandsOverOnTheStep) {
  FakeStreams streams;
  CopyInFlight f = start_copy(streams, host_batch(3));
  const std::vector<std::string> started = {"alloc:side", "copy:side", "alloc:side", "copy:side",
                                            "alloc:side", "copy:side", "mark:side"};
  EXPECT_EQ(streams.log, started);
  streams.log.clear();
  const data::Batch b = take_copy(streams, std::move(f));
  const std::vector<std::string> taken = {"wait:step:1", "use:step", "use:step", "use:step"};
  EXPECT_EQ(streams.log, taken) << "the step must wait for the copy before it uses the tensors";
  EXPECT_TRUE(torch::equal(b.x, torch::full({4, 3}, 3.0f)));
  EXPECT_TRUE(torch::equal(b.y, torch::full({4}, 3, torch::kLong)));
  ASSERT_EQ(b.inputs.size(), 1u);
  EXPECT_EQ(b.inputs[0].first, "mask");
}

// The race of issue 54: the host frees what a queued step still reads (a flag, an activation, a
// batch) and fetches the next batch while those kernels have not run. No copy may write a block
// a queued step still reads, over many steps.
TEST(StepAheadCopy, NoCopyWritesABlockAQueuedStepStillReads) {
  FakeStreams streams;
  std::optional<CopyInFlight> ahead = start_copy(streams, host_batch(0));
  for (int step = 1; step <= 50; ++step) {
    // DeviceBatches::next: the batch taken, the next one fetched at once, while the previous
    // step's kernels may still be queued.
    data::Batch b = take_copy(streams, std::move(*ahead));
    ahead = start_copy(streams, host_batch(static_cast<float>(step)));
    // The step's kernels are queued: they read the batch and an activation made on the step
    // stream; the host frees both (and the step's temporaries) before they ran.
    const torch::Tensor activation = streams.allocate_on_step(b.x);
    streams.step_reads(b.x);
    streams.step_reads(b.y);
    streams.step_reads(activation);
    streams.host_frees(activation);
    streams.host_frees(b.x);
    streams.host_frees(b.y);
    for (const auto& named : b.inputs) streams.host_frees(named.second);
    // Every other step the device catches up before the next fetch; otherwise it does not.
    if (step % 2 == 0) streams.drain_step();
  }
  EXPECT_TRUE(streams.overwritten.empty())
      << streams.overwritten.size() << " copies wrote into a block a queued step still read";
}

}  // namespace
}  // namespace slimtrain::train
