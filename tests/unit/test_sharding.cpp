// --shard's bookkeeping without MPI: the flat layout's buckets, padding and per-rank pieces; the
// N -> M reshard of optimizer state by element for every N, M in 1..5; shard files; and a
// LibTorch optimizer's state through the by-element form and back.
#include <gtest/gtest.h>

#include <fstream>
#include <numeric>

#include "slimtrain/ckpt/optimizer_shards.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/file_io.hpp"
#include "slimtrain/train/flat_layout.hpp"
#include "slimtrain/train/optim.hpp"
#include "slimtrain/train/optimizer_state.hpp"
#include "test_ckpt_support.hpp"

namespace st = slimtrain::train;
namespace ck = slimtrain::ckpt;

namespace {

// A model's parameter sizes: uneven, some smaller than any world size.
const std::vector<std::int64_t> kNumels = {300, 12, 1, 4096, 37, 5, 1000, 3};

std::vector<ck::ElementRange> ranges_of(const st::FlatLayout& layout, int rank) {
  std::vector<ck::ElementRange> out;
  for (const st::ShardPiece& p : layout.shard(rank))
    if (p.logical.length > 0) out.push_back({p.logical.start, p.logical.length});
  return out;
}

// `state` through a shard file and back, as a checkpoint and a resume take it.
ck::FlatOptimizerState through_file(const ck::FlatOptimizerState& state) {
  const slimtrain::ckpt::testing::TempDir dir;
  const std::string path = dir.path() + "/optimizer-rank-00000.bin";
  slimtrain::files::DurableFile out(path);
  ck::write_shard(out, state);
  out.commit();
  return ck::read_shard(path);
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Rank `rank`'s state of a run at world `n`, whose value at logical element i is i (+ offset).
ck::FlatOptimizerState written(const st::FlatLayout& layout, int rank) {
  ck::FlatOptimizerState s;
  s.optimizer = "adamw";
  s.step = 17;
  s.ranges = ranges_of(layout, rank);
  std::vector<float> a, b;
  for (const ck::ElementRange& r : s.ranges)
    for (std::int64_t i = r.start; i < r.start + r.length; ++i) {
      a.push_back(static_cast<float>(i));
      b.push_back(static_cast<float>(-i));
    }
  s.tensors["exp_avg"] = torch::tensor(a);
  s.tensors["exp_avg_sq"] = torch::tensor(b);
  return s;
}

}  // namespace

TEST(FlatLayout, BucketsInReverseOrderPaddedToTheWorld) {
  for (int world = 1; world <= 5; ++world) {
    const st::FlatLayout layout(kNumels, 2048, world);
    const std::int64_t total = std::accumulate(kNumels.begin(), kNumels.end(), std::int64_t{0});
    EXPECT_EQ(layout.numel(), total);
    ASSERT_GE(layout.buckets().size(), 3u);
    EXPECT_EQ(layout.buckets().front().params.front(), kNumels.size() - 1) << "last param first";
    std::int64_t offset = 0, padding = 0;
    for (std::size_t b = 0; b < layout.buckets().size(); ++b) {
      const st::FlatBucket& bucket = layout.buckets()[b];
      EXPECT_EQ(bucket.offset, offset);
      EXPECT_EQ(bucket.padded % world, 0);
      EXPECT_LT(bucket.padded - bucket.numel, world);
      padding += bucket.padded - bucket.numel;
      offset += bucket.padded;
      for (std::size_t k : bucket.params) EXPECT_EQ(layout.bucket_of(k), b);
    }
    EXPECT_EQ(layout.padded_numel(), offset);
    EXPECT_LT(static_cast<double>(padding) / static_cast<double>(total), 0.01);
    // Every element is in exactly one rank's shard; every piece has the bucket's piece length.
    std::vector<int> owner(static_cast<std::size_t>(total), -1);
    for (int r = 0; r < world; ++r)
      for (const st::ShardPiece& p : layout.shard(r)) {
        EXPECT_EQ(p.length, layout.piece_length(p.bucket));
        for (std::int64_t i = p.logical.start; i < p.logical.start + p.logical.length; ++i) {
          EXPECT_EQ(owner[static_cast<std::size_t>(i)], -1) << "element " << i << " twice";
          owner[static_cast<std::size_t>(i)] = r;
        }
      }
    for (int o : owner) EXPECT_GE(o, 0) << "an element in no shard at world " << world;
  }
}

TEST(FlatLayout, LogicalOrderDoesNotDependOnWorldOrBuckets) {
  const st::FlatLayout a(kNumels, 64, 1), b(kNumels, 1 << 20, 4);
  for (std::size_t k = 0; k < kNumels.size(); ++k) EXPECT_EQ(a.logical_of(k), b.logical_of(k));
  EXPECT_THROW(st::parse_shard_mode("zero3"), slimtrain::ConfigError);
  EXPECT_EQ(st::parse_shard_mode("gradients"), st::ShardMode::gradients);
}

TEST(Reshard, EveryWorldSizeToEveryOther) {
  for (int from = 1; from <= 5; ++from) {
    const st::FlatLayout old_layout(kNumels, 1024, from);
    const slimtrain::ckpt::testing::TempDir dir;
    std::vector<std::string> files;  // written and read as a checkpoint and a resume do
    for (int r = 0; r < from; ++r) {
      files.push_back(dir.path() + "/" + ck::shard_file_name(r));
      slimtrain::files::DurableFile out(files.back());
      ck::write_shard(out, written(old_layout, r));
      out.commit();
    }
    for (int to = 1; to <= 5; ++to) {
      const st::FlatLayout new_layout(kNumels, 3000, to);
      for (int r = 0; r < to; ++r) {
        ck::FlatOptimizerState mine, whole;
        mine.ranges = whole.ranges = ranges_of(new_layout, r);
        std::int64_t copied = 0, copied_whole = 0;
        for (const std::string& f : files) {
          const ck::FlatOptimizerState theirs = ck::read_shard(f);
          if (!ck::overlaps(theirs.ranges, mine.ranges)) continue;
          const ck::FilledFrom filled = ck::fill_from_file(mine, f);
          EXPECT_TRUE(filled.has_state);
          copied += filled.elements;
          copied_whole += ck::fill_from(whole, theirs);  // the file read whole: the same
        }
        ASSERT_EQ(copied, mine.elements()) << from << " -> " << to << " rank " << r;
        EXPECT_EQ(copied_whole, copied);
        EXPECT_EQ(mine.step, 17);
        EXPECT_EQ(mine.optimizer, "adamw");
        const ck::FlatOptimizerState expected = written(new_layout, r);
        for (const char* kind : {"exp_avg", "exp_avg_sq"}) {
          EXPECT_TRUE(torch::equal(mine.tensors.at(kind), expected.tensors.at(kind)))
              << kind << " " << from << " -> " << to << " rank " << r;
          EXPECT_TRUE(torch::equal(whole.tensors.at(kind), expected.tensors.at(kind)));
        }
      }
    }
  }
}

TEST(Reshard, PlanCopiesIsPure) {
  EXPECT_EQ(ck::plan_copies({{0, 10}, {20, 5}}, {{5, 20}}),
            (std::vector<ck::ElementCopy>{{5, 0, 5}, {10, 15, 5}}));
  EXPECT_TRUE(ck::plan_copies({{0, 10}}, {{10, 5}}).empty());
}

TEST(ShardFile, BadFilesAreDataErrorsNamingTheFile) {
  const slimtrain::ckpt::testing::TempDir dir;
  const st::FlatLayout layout(kNumels, 1024, 2);
  const std::string good = dir.path() + "/good.bin";
  {
    slimtrain::files::DurableFile out(good);
    ck::write_shard(out, written(layout, 1));
    out.commit();
  }
  std::string bytes;
  {
    std::ifstream in(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto expect_error = [&](const std::string& name, const std::string& content,
                                const std::string& says) {
    const std::string path = dir.path() + "/" + name;
    write_bytes(path, content);
    for (const bool whole : {true, false}) {  // read_shard, and a resume's fill_from_file
      try {
        ck::FlatOptimizerState mine;
        mine.ranges = ranges_of(layout, 1);
        if (whole)
          ck::read_shard(path);
        else
          ck::fill_from_file(mine, path);
        ADD_FAILURE() << name << " was read";
      } catch (const slimtrain::DataError& e) {
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
      }
    }
  };
  expect_error("text.bin", "not a shard file at all", "STSHARD1");
  expect_error("short.bin", "STSH", "not an optimizer shard");
  expect_error("truncated.bin", bytes.substr(0, bytes.size() - 4), "its header describes");
  expect_error("longer.bin", bytes + "x", "its header describes");
  std::string header_lies = bytes;
  header_lies[8] = '\x7f';  // the header's length, far past the file
  header_lies[13] = '\x01';
  expect_error("header.bin", header_lies, "its header claims");
  std::string not_json = bytes;
  not_json[16] = '#';
  expect_error("json.bin", not_json, "its header is not a shard's");
  expect_error("zip.bin", std::string("PK\x03\x04", 4) + "garbage", "not an optimizer shard");
  EXPECT_EQ(ck::read_shard(good).elements(), written(layout, 1).elements());
}

// Checkpoints written before the STSHARD1 format hold a torch archive per shard: still read.
TEST(ShardFile, ReadsTheTorchArchivesOfEarlierCheckpoints) {
  const st::FlatLayout layout(kNumels, 1024, 3);
  const ck::FlatOptimizerState state = written(layout, 2);
  torch::serialize::OutputArchive archive;  // the layout those files had
  std::vector<std::int64_t> ranges;
  for (const ck::ElementRange& r : state.ranges) {
    ranges.push_back(r.start);
    ranges.push_back(r.length);
  }
  archive.write("ranges", torch::tensor(ranges, torch::kInt64));
  archive.write("step", torch::tensor(state.step, torch::kInt64));
  const std::string name = state.optimizer, kinds = "exp_avg\nexp_avg_sq\n";
  const auto text = [](const std::string& t) {
    return torch::from_blob(const_cast<char*>(t.data()), {static_cast<std::int64_t>(t.size())},
                            torch::kUInt8)
        .clone();
  };
  archive.write("optimizer", text(name));
  for (const auto& [kind, tensor] : state.tensors) archive.write("state." + kind, tensor);
  archive.write("kinds", text(kinds));
  const slimtrain::ckpt::testing::TempDir dir;
  const std::string path = dir.path() + "/optimizer-rank-00002.bin";
  archive.save_to(path);
  const ck::FlatOptimizerState read = ck::read_shard(path);
  EXPECT_EQ(read.optimizer, "adamw");
  EXPECT_EQ(read.step, 17);
  ASSERT_EQ(read.ranges.size(), state.ranges.size());
  for (std::size_t i = 0; i < read.ranges.size(); ++i) {
    EXPECT_EQ(read.ranges[i].start, state.ranges[i].start);
    EXPECT_EQ(read.ranges[i].length, state.ranges[i].length);
  }
  for (const auto& [kind, tensor] : state.tensors)
    EXPECT_TRUE(torch::equal(read.tensors.at(kind), tensor)) << kind;
  ck::FlatOptimizerState mine;  // a resume at world 1 takes what the file holds of everything
  mine.ranges = ranges_of(st::FlatLayout(kNumels, 1024, 1), 0);
  const ck::FilledFrom filled = ck::fill_from_file(mine, path);
  EXPECT_TRUE(filled.has_state);
  EXPECT_EQ(filled.elements, state.elements());
}

TEST(OptimizerState, ByElementAndBackGivesTheSameSteps) {
  for (const std::string name : {"sgd", "adamw"}) {
    torch::manual_seed(3);
    std::vector<torch::Tensor> params = {torch::randn({4, 3}).requires_grad_(),
                                         torch::randn({5}).requires_grad_()};
    std::vector<torch::Tensor> copies = {params[0].detach().clone().requires_grad_(),
                                         params[1].detach().clone().requires_grad_()};
    st::OptimConfig oc;
    oc.name = name;
    oc.lr = 0.1;
    oc.momentum = name == "sgd" ? 0.9 : 0.0;
    auto a = st::make_optimizer(oc, params);
    auto b = st::make_optimizer(oc, copies);
    const st::FlatLayout layout({12, 5}, 1 << 20, 1);
    auto step = [](torch::optim::Optimizer& opt, std::vector<torch::Tensor>& ps, int k) {
      for (std::size_t i = 0; i < ps.size(); ++i)
        ps[i].mutable_grad() = torch::full_like(ps[i], 0.1 * (k + 1) + static_cast<double>(i));
      opt.step();
    };
    for (int k = 0; k < 3; ++k) step(*a, params, k);
    {
      torch::NoGradGuard no_grad;
      for (std::size_t i = 0; i < params.size(); ++i) copies[i].copy_(params[i]);
    }
    const auto spans_a = st::parameter_spans(params, layout);
    const auto spans_b = st::parameter_spans(copies, layout);
    const ck::FlatOptimizerState state = through_file(st::flat_state(*a, name, spans_a));
    ck::FlatOptimizerState into = st::empty_state(spans_b);
    ck::fill_from(into, state);
    st::load_flat_state(*b, name, spans_b, into);
    for (int k = 3; k < 6; ++k) {
      step(*a, params, k);
      step(*b, copies, k);
    }
    for (std::size_t i = 0; i < params.size(); ++i)
      EXPECT_TRUE(torch::equal(params[i], copies[i])) << name << " param " << i;
    EXPECT_THROW(st::load_flat_state(*b, name == "sgd" ? "adamw" : "sgd", spans_b, into),
                 slimtrain::DataError);
  }
}
