#pragma once
// Shared fixtures for the checkpoint unit tests: a scratch directory and small states.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "same_bytes.hpp"
#include "slimtrain/ckpt/checkpoint_state.hpp"

namespace slimtrain::ckpt::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "slimtrain-ckpt-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline CheckpointState small_state(std::int64_t step, std::int64_t numel = 64) {
  CheckpointState state;
  state.step = step;
  state.epoch = step / 10;
  state.epoch_step = step % 10;
  state.meta = {{"model", {{"name", "mlp"}, {"hidden", 16}}}, {"seed", 42}};
  state.tensors.push_back(
      {"model/fc.weight",
       torch::arange(numel, torch::kFloat32).mul(0.5).add(static_cast<double>(step))});
  state.tensors.push_back(
      {"model/fc.bias", torch::full({3}, static_cast<double>(step), torch::kFloat64)});
  state.blobs["optimizer"] = std::string("opt\0bytes-", 10) + std::to_string(step);
  return state;
}

inline std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

inline bool has_tmp_entries(const std::string& dir) {
  for (const std::string& name : entries(dir))
    if (name.rfind(".tmp-", 0) == 0) return true;
  return false;
}

inline void flip_byte(const std::string& path, std::uint64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 0x01);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
}

using slimtrain::testing::same_bytes;

}  // namespace slimtrain::ckpt::testing
