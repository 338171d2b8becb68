#include "slimtrain/ckpt/optimizer_shards.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "slimtrain/core/error.hpp"

namespace slimtrain::ckpt {

std::int64_t FlatOptimizerState::elements() const {
  std::int64_t n = 0;
  for (const ElementRange& r : ranges) n += r.length;
  return n;
}

std::string shard_file_name(int rank) {
  char name[40];
  std::snprintf(name, sizeof name, "optimizer-rank-%05d.bin", rank);
  return name;
}

std::string serialize_shard(const FlatOptimizerState& state) {
  torch::serialize::OutputArchive archive;
  std::vector<std::int64_t> ranges;
  for (const ElementRange& r : state.ranges) {
    ranges.push_back(r.start);
    ranges.push_back(r.length);
  }
  archive.write("ranges", torch::tensor(ranges, torch::kInt64));
  archive.write("step", torch::tensor(state.step, torch::kInt64));
  archive.write("optimizer",
                torch::from_blob(const_cast<char*>(state.optimizer.data()),
                                 {static_cast<std::int64_t>(state.optimizer.size())}, torch::kUInt8)
                    .clone());
  std::string kinds;
  for (const auto& [kind, tensor] : state.tensors) {
    archive.write("state." + kind, tensor.contiguous());
    kinds += kind + "\n";
  }
  archive.write("kinds", torch::from_blob(kinds.data(), {static_cast<std::int64_t>(kinds.size())},
                                          torch::kUInt8)
                             .clone());
  std::ostringstream out;
  archive.save_to(out);
  return out.str();
}

namespace {
std::string text_of(const torch::Tensor& t) {
  return std::string(static_cast<const char*>(t.data_ptr()), static_cast<std::size_t>(t.numel()));
}
}  // namespace

FlatOptimizerState deserialize_shard(const std::string& bytes, const std::string& file) {
  FlatOptimizerState state;
  try {
    torch::serialize::InputArchive archive;
    std::istringstream in(bytes);
    archive.load_from(in);
    // A fresh tensor per read: read() copies into a defined tensor instead of replacing it.
    auto read = [&archive](const std::string& key) {
      torch::Tensor t;
      archive.read(key, t);
      return t;
    };
    const torch::Tensor ranges = read("ranges");
    const auto* words = ranges.data_ptr<std::int64_t>();
    for (std::int64_t i = 0; i + 1 < ranges.numel(); i += 2)
      state.ranges.push_back({words[i], words[i + 1]});
    state.step = read("step").item<std::int64_t>();
    state.optimizer = text_of(read("optimizer"));
    std::istringstream kinds(text_of(read("kinds")));
    for (std::string kind; std::getline(kinds, kind);) {
      const torch::Tensor t = read("state." + kind);
      if (t.scalar_type() != torch::kFloat32 || t.numel() != state.elements())
        SLIMTRAIN_THROW(DataError, file, ": optimizer state '", kind, "' holds ", t.numel(),
                        " elements for ranges of ", state.elements());
      state.tensors[kind] = t;
    }
  } catch (const c10::Error& e) {
    SLIMTRAIN_THROW(DataError, file, ": not an optimizer shard: ", e.what_without_backtrace());
  }
  return state;
}

std::vector<ElementCopy> plan_copies(const std::vector<ElementRange>& source,
                                     const std::vector<ElementRange>& target) {
  std::vector<ElementCopy> copies;
  std::int64_t to = 0;
  for (const ElementRange& t : target) {
    std::int64_t from = 0;
    for (const ElementRange& s : source) {
      const std::int64_t lo = std::max(s.start, t.start);
      const std::int64_t hi = std::min(s.start + s.length, t.start + t.length);
      if (lo < hi) copies.push_back({from + (lo - s.start), to + (lo - t.start), hi - lo});
      from += s.length;
    }
    to += t.length;
  }
  return copies;
}

bool overlaps(const std::vector<ElementRange>& a, const std::vector<ElementRange>& b) {
  for (const ElementRange& x : a)
    for (const ElementRange& y : b)
      if (std::max(x.start, y.start) < std::min(x.start + x.length, y.start + y.length))
        return true;
  return false;
}

std::int64_t fill_from(FlatOptimizerState& target, const FlatOptimizerState& source) {
  const std::vector<ElementCopy> copies = plan_copies(source.ranges, target.ranges);
  std::int64_t copied = 0;
  for (const ElementCopy& c : copies) copied += c.length;
  if (copied == 0) return 0;
  target.optimizer = source.optimizer;
  target.step = std::max(target.step, source.step);
  for (const auto& [kind, from] : source.tensors) {
    torch::Tensor& to = target.tensors[kind];
    if (!to.defined()) to = torch::zeros({target.elements()}, torch::kFloat32);
    for (const ElementCopy& c : copies)
      to.narrow(0, c.to, c.length).copy_(from.narrow(0, c.from, c.length));
  }
  return copied;
}

}  // namespace slimtrain::ckpt
