// Pure parts of the communication layer: deadlines, chunk planning, 16-bit floats, the flight
// recorder, the stall analysis and device choice.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>

#include "slimtrain/comm/chunking.hpp"
#include "slimtrain/comm/flight_recorder.hpp"
#include "slimtrain/comm/half.hpp"
#include "slimtrain/comm/stall_report.hpp"
#include "slimtrain/comm/types.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/runtime/affinity.hpp"
#include "slimtrain/runtime/device.hpp"

using namespace slimtrain;
using namespace slimtrain::comm;

TEST(DeadlinePolicy, ScalesWithBytes) {
  DeadlinePolicy p;
  EXPECT_DOUBLE_EQ(p.deadline_for(0), 60.0);
  EXPECT_DOUBLE_EQ(p.deadline_for(50'000'000), 61.0);
  // The seeds' 467M-element float32 all-reduce: 1.87 GB at 50 MB/s floor -> ~97 s.
  EXPECT_NEAR(p.deadline_for(467019003ull * 4), 60.0 + 37.36, 0.01);
  p.base_s = 1.5;
  p.floor_bytes_per_s = 1e9;
  EXPECT_DOUBLE_EQ(p.deadline_for(2'000'000'000), 3.5);
}

TEST(DeadlinePolicy, RejectsNonPositiveFloor) {
  DeadlinePolicy p;
  p.floor_bytes_per_s = 0;
  EXPECT_THROW(p.deadline_for(1), ConfigError);
  p = DeadlinePolicy{};
  p.base_s = -1;
  EXPECT_THROW(p.deadline_for(1), ConfigError);
}

TEST(Types, SizesAndNames) {
  EXPECT_EQ(dtype_size(DType::f32), 4u);
  EXPECT_EQ(dtype_size(DType::f64), 8u);
  EXPECT_EQ(dtype_size(DType::i64), 8u);
  EXPECT_EQ(dtype_size(DType::f16), 2u);
  EXPECT_EQ(dtype_size(DType::bf16), 2u);
  EXPECT_STREQ(to_string(DType::bf16), "bfloat16");
  EXPECT_STREQ(to_string(ReduceOp::avg), "avg");
  EXPECT_FALSE(is_floating(DType::i64));
  EXPECT_FALSE(is_floating(DType::u8));
  EXPECT_EQ(dtype_size(DType::u8), 1u);
  EXPECT_TRUE(is_floating(DType::f16));
}

TEST(PlanPieces, EmptyBufferHasNoPieces) {
  EXPECT_TRUE(plan_pieces(0, 4, 1024, 100).empty());
}

TEST(PlanPieces, CoversInOrderWithinBounds) {
  for (std::size_t count : {1ul, 255ul, 256ul, 257ul, 1000ul, 4099ul}) {
    const auto pieces = plan_pieces(count, 4, 1024, 1u << 30);
    std::size_t next = 0;
    for (const Piece& p : pieces) {
      EXPECT_EQ(p.offset, next);
      EXPECT_GT(p.count, 0u);
      EXPECT_LE(p.count * 4, 1024u);
      next += p.count;
    }
    EXPECT_EQ(next, count);
    EXPECT_EQ(pieces.size(), (count + 255) / 256) << count;
  }
}

TEST(PlanPieces, ExactlyOneChunk) {
  const auto pieces = plan_pieces(1024, 4, 4096, 1u << 30);
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(pieces[0], (Piece{0, 1024}));
}

TEST(PlanPieces, ElementLimitCapsPiecesBeyondIntMax) {
  // 3e9 elements: no piece may exceed INT_MAX elements even with no byte bound.
  const std::size_t count = 3'000'000'000ull;
  const auto pieces = plan_pieces(count, 1, 0, std::numeric_limits<int>::max());
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[0].count, static_cast<std::size_t>(std::numeric_limits<int>::max()));
  EXPECT_EQ(pieces[0].count + pieces[1].count, count);
  const auto small = plan_pieces(20, 8, 0, 7);
  ASSERT_EQ(small.size(), 3u);
  EXPECT_EQ(small[2], (Piece{14, 6}));
}

TEST(PlanPieces, ElementBiggerThanChunkStillProgresses) {
  const auto pieces = plan_pieces(3, 8, 4, 100);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_THROW(plan_pieces(3, 0, 4, 100), ConfigError);
}

namespace {
std::uint32_t bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
}  // namespace

TEST(Half, EveryHalfRoundTripsExactly) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const auto x = static_cast<std::uint16_t>(h);
    const float f = half_to_float(x);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(half_to_float(float_to_half(f)))) << std::hex << h;
      continue;
    }
    EXPECT_EQ(float_to_half(f), x) << std::hex << h;
  }
}

TEST(Half, KnownValuesAndRounding) {
  EXPECT_EQ(float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_half(65520.0f), 0x7C00);  // halfway to the next binade: rounds to inf
  EXPECT_EQ(float_to_half(1e-8f), 0x0000);
  EXPECT_EQ(float_to_half(5.9604645e-08f), 0x0001);  // smallest subnormal
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1.0).
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9: rounds up to even.
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  EXPECT_FLOAT_EQ(half_to_float(0x3555), 0.333251953125f);
}

TEST(Half, RoundingErrorIsWithinHalfAnUlp) {
  for (float f = -1000.0f; f < 1000.0f; f += 0.37f) {
    const float back = half_to_float(float_to_half(f));
    const float ulp = std::ldexp(1.0f, std::ilogb(f == 0 ? 1.0f : f) - 10);
    EXPECT_LE(std::fabs(back - f), ulp / 2) << f;
  }
}

TEST(BFloat16, RoundTripsAndRoundsToNearestEven) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const auto x = static_cast<std::uint16_t>(h);
    const float f = bf16_to_float(x);
    if (std::isnan(f)) continue;
    EXPECT_EQ(float_to_bf16(f), x) << std::hex << h;
  }
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even.
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  EXPECT_EQ(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::nanf("")))));
  EXPECT_EQ(bits(bf16_to_float(float_to_bf16(-0.0f))), bits(-0.0f));
}

TEST(FlightRecorder, KeepsTheLastEntriesInOrder) {
  FlightRecorder recorder(4);
  for (std::uint64_t seq = 1; seq <= 6; ++seq) {
    recorder.enqueued(seq, "all_reduce", "float32", seq * 100, seq == 6 ? "grad-bucket" : "");
    recorder.started(seq);
    if (seq < 6) recorder.ended(seq, seq == 3 ? OpStatus::failed : OpStatus::done);
  }
  recorder.caller_timed_out(6);
  recorder.ended(1, OpStatus::done);  // overwritten long ago: ignored
  const auto entries = recorder.snapshot();
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries.front().seq, 3u);
  EXPECT_EQ(entries.front().status, OpStatus::failed);
  EXPECT_EQ(entries.back().seq, 6u);
  EXPECT_EQ(entries.back().status, OpStatus::timed_out);
  EXPECT_EQ(entries.back().bytes, 600u);
  EXPECT_LT(entries.back().ended_s, 0);
  recorder.ended(6, OpStatus::done);  // drained after the caller gave up
  const auto lines = recorder.format("train");
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines.back().find("seq 6 all_reduce float32 600 B [grad-bucket] done (after caller "
                              "timeout)"),
            std::string::npos)
      << lines.back();
}

namespace {
PeerProgress peer(int rank, bool answered, std::uint64_t issued, std::uint64_t completed) {
  PeerProgress p;
  p.rank = rank;
  p.host = "node" + std::to_string(rank / 2);
  p.answered = answered;
  p.known = answered;
  p.issued = issued;
  p.completed = completed;
  return p;
}

OpSummary op(std::uint64_t seq, OpKind kind, std::uint64_t bytes, const char* tag) {
  OpSummary o;
  o.seq = seq;
  o.kind = kind;
  o.bytes = bytes;
  o.tag = tag;
  return o;
}
}  // namespace

TEST(StallAnalysis, NamesLateAndSilentRanksWithHostAndWhatTheyAreDoing) {
  std::vector<PeerProgress> peers = {peer(0, true, 5, 4), peer(1, true, 4, 4),
                                     peer(3, false, 0, 0)};
  peers[1].activity = "evaluation";
  peers[1].activity_step = 8;
  peers[1].busy_comm = "eval";
  peers[1].busy = op(3, OpKind::all_reduce, 816, "eval-stats");
  const StallReport r = analyse_stall(op(5, OpKind::fields, 160, "step-control"), peers);
  EXPECT_EQ(r.missing, (std::vector<int>{1, 3}));
  EXPECT_EQ(r.description,
            "1 on node0 (at seq 4; now: evaluation at step 8, running all_reduce #3 of 816 bytes "
            "[eval-stats] on eval), 3 on node1 (no answer)");
}

TEST(StallAnalysis, ALateRankInNoCollectiveSaysWhereItIs) {
  std::vector<PeerProgress> peers = {peer(2, true, 9, 9)};
  peers[0].activity = "forward";
  peers[0].activity_step = 57;
  const StallReport r = analyse_stall(op(10, OpKind::fields, 160, ""), peers);
  EXPECT_EQ(r.description, "2 on node1 (at seq 9; now: forward at step 57, in no collective)");
}

TEST(StallAnalysis, AllIssuedNamesRanksStillBehind) {
  std::vector<PeerProgress> peers = {peer(1, true, 7, 6), peer(2, true, 7, 3)};
  peers[1].current = op(4, OpKind::all_reduce, 4096, "grad-bucket");
  const StallReport r = analyse_stall(op(7, OpKind::all_reduce, 64, ""), peers);
  EXPECT_EQ(r.missing, (std::vector<int>{2}));
  EXPECT_NE(r.description.find("issued it but still runs all_reduce #4 of 4,096 bytes"),
            std::string::npos)
      << r.description;
  const StallReport none = analyse_stall(op(7, OpKind::all_reduce, 64, ""), {peer(1, true, 7, 6)});
  EXPECT_TRUE(none.missing.empty());
  EXPECT_NE(none.description.find("every rank has issued seq 7"), std::string::npos);
}

TEST(StallAnalysis, SameSequenceDifferentOperationIsADesync) {
  std::vector<PeerProgress> peers = {peer(1, true, 57, 56)};
  peers[0].current = op(57, OpKind::all_reduce, 1868076012, "");
  const StallReport r = analyse_stall(op(57, OpKind::all_reduce, 816, "eval-stats"), peers);
  EXPECT_EQ(r.missing, (std::vector<int>{1}));
  EXPECT_EQ(r.description,
            "1 on node0 (desync: it issued all_reduce #57 of 1,868,076,012 bytes where this rank "
            "issued all_reduce #57 of 816 bytes [eval-stats])");
}

TEST(StallAnalysis, ThousandsSeparators) {
  EXPECT_EQ(with_thousands(0), "0");
  EXPECT_EQ(with_thousands(816), "816");
  EXPECT_EQ(with_thousands(1000), "1,000");
  EXPECT_EQ(with_thousands(467019003), "467,019,003");
}

TEST(DeviceChoice, ThreadsPerRank) {
  EXPECT_EQ(runtime::choose_threads(0, 2), 2);
  EXPECT_EQ(runtime::choose_threads(0, 0), 1);
  EXPECT_EQ(runtime::choose_threads(3, 2), 3);
  EXPECT_THROW(runtime::choose_threads(-1, 2), ConfigError);
}

runtime::CpuMask mask_of(std::initializer_list<int> cpus) {
  runtime::CpuMask mask(runtime::kCpuMaskWords, 0);
  for (int c : cpus) mask[static_cast<std::size_t>(c / 64)] |= std::uint64_t{1} << (c % 64);
  return mask;
}

TEST(DeviceChoice, CoresComeFromTheAffinityMasks) {
  // srun --cpus-per-task=4: each of two tasks has its own four cpus.
  const std::vector<runtime::CpuMask> own = {mask_of({0, 1, 2, 3}), mask_of({4, 5, 6, 7})};
  EXPECT_EQ(runtime::cores_for_rank(own, 0), 4);
  EXPECT_EQ(runtime::cores_for_rank(own, 1), 4);
  // A job-wide cpuset of 6 cpus on a 128-core machine, no binding: three ranks split it.
  const auto job = mask_of({10, 11, 12, 13, 70, 71});
  EXPECT_EQ(runtime::cores_for_rank({job, job, job}, 2), 2);
  // More ranks than cpus still get one thread each.
  EXPECT_EQ(runtime::cores_for_rank({mask_of({0}), mask_of({0})}, 1), 1);
  EXPECT_EQ(runtime::cpu_count(mask_of({0, 63, 64, 1023})), 4);
}

TEST(DeviceChoice, OneGpuPerLocalRank) {
  EXPECT_EQ(runtime::choose_gpu(3, 4, 4, "n1", ""), 3);
  EXPECT_EQ(runtime::choose_gpu(1, 2, 8, "n1", ""), 1);
  // Each task sees one GPU (srun --gpus-per-task=1): GPU 0 is its own.
  EXPECT_EQ(runtime::choose_gpu(3, 4, 1, "n1", ""), 0);
  // More local ranks than visible GPUs: right when each task sees its own two (srun
  // --gpus-per-task=2); when they are the same GPUs, shared_gpu names the colliding ranks.
  EXPECT_EQ(runtime::choose_gpu(5, 8, 4, "node7", ""), 1);
  try {
    runtime::choose_gpu(0, 1, 0, "n1", "CUDA driver version is insufficient");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no usable GPU on host n1 (CUDA driver"),
              std::string::npos)
        << e.what();
  }
}

TEST(DeviceChoice, NoTwoRanksOfAHostShareAGpu) {
  using runtime::GpuIdentity;
  EXPECT_EQ(runtime::shared_gpu({{"a", "u0"}, {"a", "u1"}, {"b", "u0"}, {"b", "u1"}}), "");
  const std::string shared = runtime::shared_gpu({{"a", "u0"}, {"b", "u7"}, {"b", "u7"}});
  EXPECT_NE(shared.find("ranks 1, 2 on host b would share GPU u7"), std::string::npos) << shared;
  EXPECT_NE(shared.find("--gpus-per-task=1"), std::string::npos) << shared;
}

TEST(StallInquiry, SmallJobsAskEveryone) {
  EXPECT_EQ(inquiry_targets(2, 4), (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(inquiry_targets(0, 1), std::vector<int>{});
}

TEST(StallInquiry, LargeJobsStayLinearInRanks) {
  EXPECT_EQ(inquiry_targets(0, 256).size(), 255u);
  EXPECT_EQ(inquiry_targets(7, 256), (std::vector<int>{0, 6, 8}));
  EXPECT_EQ(inquiry_targets(255, 256), (std::vector<int>{0, 254}));
  EXPECT_EQ(inquiry_targets(1, 256), (std::vector<int>{0, 2}));
  std::size_t messages = 0;
  for (int r = 0; r < 256; ++r) messages += inquiry_targets(r, 256).size();
  EXPECT_LE(messages, 4u * 255u) << "a stall in a 256-rank job must not cost N^2 inquiries";
}
