#include "slimtrain/ckpt/optimizer_shards.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "slimtrain/core/error.hpp"
#include "slimtrain/core/file_io.hpp"

namespace slimtrain::ckpt {
namespace fs = std::filesystem;

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

std::string weights_file_name(int rank) {
  char name[40];
  std::snprintf(name, sizeof name, "weights-rank-%05d.bin", rank);
  return name;
}

namespace {

// The file: kMagic, the header's length (8 bytes, little-endian), the header (JSON), then each
// kind's float32 elements end to end in the header's order. Written straight from the tensors and
// read straight into them: a shard is never held as bytes beside itself (a torch archive in a
// string cost 3-4 copies of it at once, more than the training it is a checkpoint of).
constexpr char kMagic[8] = {'S', 'T', 'S', 'H', 'A', 'R', 'D', '1'};
constexpr char kArchiveMagic[4] = {'P', 'K', 3, 4};  // a zip: earlier versions' torch archives

std::string text_of(const torch::Tensor& t) {
  return std::string(static_cast<const char*>(t.data_ptr()), static_cast<std::size_t>(t.numel()));
}

void check_kind(const FlatOptimizerState& state, const std::string& kind, const torch::Tensor& t,
                const std::string& file) {
  if (t.scalar_type() != torch::kFloat32 || t.numel() != state.elements())
    SLIMTRAIN_THROW(DataError, file, ": optimizer state '", kind, "' holds ", t.numel(), " ",
                    t.scalar_type(), " elements for ranges of ", state.elements(), " float32");
}

// Files written before the format above: a torch archive, read whole.
FlatOptimizerState read_archive_shard(const std::string& file) {
  FlatOptimizerState state;
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(file);
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
      check_kind(state, kind, t, file);
      state.tensors[kind] = t;
    }
  } catch (const c10::Error& e) {
    SLIMTRAIN_THROW(DataError, file, ": not an optimizer shard: ", e.what_without_backtrace());
  }
  return state;
}

}  // namespace

void write_shard(files::DurableFile& out, const FlatOptimizerState& state) {
  nlohmann::json ranges = nlohmann::json::array();
  for (const ElementRange& r : state.ranges) ranges.push_back({r.start, r.length});
  nlohmann::json kinds = nlohmann::json::array();
  for (const auto& [kind, tensor] : state.tensors) {
    check_kind(state, kind, tensor, out.path());
    kinds.push_back(kind);
  }
  const std::string header = nlohmann::json{
      {"optimizer", state.optimizer},
      {"step", state.step},
      {"ranges", ranges},
      {"dtype", "float32"},
      {"kinds", kinds}}.dump();
  std::uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<std::uint8_t>(header.size() >> (8 * i));
  out.write(kMagic, sizeof kMagic);
  out.write(length, sizeof length);
  out.write(header);
  for (const auto& [kind, tensor] : state.tensors) {
    const torch::Tensor t = tensor.contiguous();  // flat_state's tensors are: no copy
    out.write(t.data_ptr(), static_cast<std::size_t>(t.nbytes()));
  }
}

namespace {

// An open shard file of the STSHARD1 format, its header read and checked against its size.
struct ShardFile {
  files::FileDescriptor fd;
  FlatOptimizerState state;  // without tensors
  std::vector<std::string> kinds;
  std::uint64_t data_offset = 0;
  std::uint64_t kind_bytes = 0;  // each kind's bytes, end to end from data_offset
  bool archive = false;          // a torch archive of earlier checkpoints: read_archive_shard
};

ShardFile open_shard(const std::string& file) {
  ShardFile f;
  f.fd = files::open_for_reading(file);
  std::error_code ec;
  const std::uint64_t size = fs::file_size(file, ec);
  if (ec) SLIMTRAIN_THROW(DataError, file, ": cannot read its size: ", ec.message());
  char magic[sizeof kMagic] = {};
  if (size >= sizeof kArchiveMagic) files::read_exact_at(f.fd.get(), file, magic, 4, 0);
  if (std::memcmp(magic, kArchiveMagic, sizeof kArchiveMagic) == 0) {
    f.archive = true;
    return f;
  }
  if (size < 16) SLIMTRAIN_THROW(DataError, file, ": not an optimizer shard (", size, " bytes)");
  files::read_exact_at(f.fd.get(), file, magic, sizeof magic, 0);
  if (std::memcmp(magic, kMagic, sizeof kMagic) != 0)
    SLIMTRAIN_THROW(DataError, file, ": not an optimizer shard (it does not begin with STSHARD1)");
  std::uint8_t length[8];
  files::read_exact_at(f.fd.get(), file, length, sizeof length, 8);
  std::uint64_t header_size = 0;
  for (int i = 0; i < 8; ++i) header_size |= static_cast<std::uint64_t>(length[i]) << (8 * i);
  if (header_size > size - 16)
    SLIMTRAIN_THROW(DataError, file, ": its header claims ", header_size, " bytes of ", size);
  std::string header(header_size, '\0');
  files::read_exact_at(f.fd.get(), file, header.data(), header.size(), 16);
  try {
    const nlohmann::json h = nlohmann::json::parse(header);
    f.state.optimizer = h.at("optimizer").get<std::string>();
    f.state.step = h.at("step").get<std::int64_t>();
    for (const nlohmann::json& r : h.at("ranges")) {
      const ElementRange range{r.at(0).get<std::int64_t>(), r.at(1).get<std::int64_t>()};
      if (range.start < 0 || range.length < 0)
        SLIMTRAIN_THROW(DataError, file, ": a negative range in its header");
      f.state.ranges.push_back(range);
    }
    if (h.at("dtype").get<std::string>() != "float32")
      SLIMTRAIN_THROW(DataError, file, ": optimizer state of dtype ", h.at("dtype").dump(),
                      " (only float32 is written)");
    f.kinds = h.at("kinds").get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    SLIMTRAIN_THROW(DataError, file, ": its header is not a shard's: ", e.what());
  }
  f.data_offset = 16 + header_size;
  f.kind_bytes = static_cast<std::uint64_t>(f.state.elements()) * sizeof(float);
  if (f.data_offset + f.kinds.size() * f.kind_bytes != size)
    SLIMTRAIN_THROW(DataError, file, ": ", size, " bytes; its header describes ",
                    f.data_offset + f.kinds.size() * f.kind_bytes);
  return f;
}

// Reads the element runs `copies` names from the file into `target` (zeros first for each kind
// it lacks), taking the file's optimizer and step.
void read_runs(const ShardFile& f, const std::string& file, const std::vector<ElementCopy>& copies,
               FlatOptimizerState& target) {
  target.optimizer = f.state.optimizer;
  target.step = std::max(target.step, f.state.step);
  for (std::size_t k = 0; k < f.kinds.size(); ++k) {
    torch::Tensor& to = target.tensors[f.kinds[k]];
    if (!to.defined()) to = torch::zeros({target.elements()}, torch::kFloat32);
    auto* base = to.data_ptr<float>();
    for (const ElementCopy& c : copies)
      files::read_exact_at(
          f.fd.get(), file, base + c.to, static_cast<std::size_t>(c.length) * sizeof(float),
          f.data_offset + k * f.kind_bytes + static_cast<std::uint64_t>(c.from) * sizeof(float));
  }
}

}  // namespace

FlatOptimizerState read_shard(const std::string& file) {
  const ShardFile f = open_shard(file);
  if (f.archive) return read_archive_shard(file);
  FlatOptimizerState state = f.state;  // its ranges, optimizer and step; no tensors yet
  read_runs(f, file, plan_copies(state.ranges, state.ranges), state);
  return state;
}

FilledFrom fill_from_file(FlatOptimizerState& target, const std::string& file) {
  const ShardFile f = open_shard(file);
  if (f.archive) {
    const FlatOptimizerState source = read_archive_shard(file);
    return {fill_from(target, source), !source.tensors.empty()};
  }
  const std::vector<ElementCopy> copies = plan_copies(f.state.ranges, target.ranges);
  FilledFrom out{0, !f.kinds.empty()};
  for (const ElementCopy& c : copies) out.elements += c.length;
  if (out.elements > 0) read_runs(f, file, copies, target);
  return out;
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
