// Sharded safetensors as save_pretrained writes them (slimtrain/ckpt/safetensors_shards.hpp) and
// the sizes --max-shard-size takes (slimtrain/core/byte_size.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "slimtrain/ckpt/safetensors.hpp"
#include "slimtrain/ckpt/safetensors_shards.hpp"
#include "slimtrain/core/byte_size.hpp"
#include "slimtrain/core/error.hpp"
#include "test_ckpt_support.hpp"

namespace slimtrain::ckpt {
namespace {

using testing::TempDir;

// A tensor of `n` floats valued `v`, made when asked, counting how often it was.
TensorToWrite counted(const std::string& name, std::int64_t n, float v, int* made) {
  return {name, torch::kFloat32, {n}, [=] {
            ++*made;
            return torch::full({n}, v);
          }};
}

TEST(SafetensorsShards, OneFileWhenEverythingFits) {
  TempDir dir;
  int made = 0;
  const auto written = write_safetensors_shards(
      dir.path(), {counted("a", 4, 1, &made), counted("b", 2, 2, &made)}, 24, {{"format", "pt"}});
  EXPECT_EQ(written, std::vector<std::string>{"model.safetensors"});
  EXPECT_EQ(made, 2);  // each made once
  SafetensorsSet set(dir.path());
  EXPECT_TRUE(torch::equal(set.read("b"), torch::full({2}, 2.0f)));
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/model.safetensors.index.json"));
}

TEST(SafetensorsShards, ShardsFilledInOrderAndIndexedAsTransformersDoes) {
  TempDir dir;
  int made = 0;
  // 16, 16, 40 (over the limit: a shard of its own), 8 bytes under a 32-byte limit.
  const auto written =
      write_safetensors_shards(dir.path(),
                               {counted("a", 4, 1, &made), counted("b", 4, 2, &made),
                                counted("big", 10, 3, &made), counted("c", 2, 4, &made)},
                               32, {{"format", "pt"}});
  EXPECT_EQ(written, (std::vector<std::string>{
                         "model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors",
                         "model-00003-of-00003.safetensors", "model.safetensors.index.json"}));
  EXPECT_EQ(made, 4);
  std::ifstream in(dir.path() + "/model.safetensors.index.json");
  const nlohmann::json index = nlohmann::json::parse(in);
  EXPECT_EQ(index["metadata"]["total_size"], 80);
  EXPECT_EQ(index["weight_map"]["a"], "model-00001-of-00003.safetensors");
  EXPECT_EQ(index["weight_map"]["b"], "model-00001-of-00003.safetensors");
  EXPECT_EQ(index["weight_map"]["big"], "model-00002-of-00003.safetensors");
  EXPECT_EQ(index["weight_map"]["c"], "model-00003-of-00003.safetensors");
  SafetensorsSet set(dir.path());  // read back through the index
  EXPECT_EQ(set.names(), (std::vector<std::string>{"a", "b", "big", "c"}));
  EXPECT_TRUE(torch::equal(set.read("big"), torch::full({10}, 3.0f)));
  EXPECT_EQ(set.metadata().at("format"), "pt");
}

TEST(SafetensorsShards, ATensorUnlikeItsHeaderIsRefused) {
  TempDir dir;
  const TensorToWrite wrong{"w", torch::kFloat32, {3}, [] { return torch::zeros({4}); }};
  EXPECT_THROW(write_safetensors_stream(dir.path() + "/w.safetensors", {wrong}, {}), Error);
}

TEST(ByteSize, DecimalAndBinaryUnitsAsSavePretrainedTakesThem) {
  EXPECT_EQ(parse_byte_size("5GB", "--x"), 5'000'000'000u);
  EXPECT_EQ(parse_byte_size("500MB", "--x"), 500'000'000u);
  EXPECT_EQ(parse_byte_size("200kb", "--x"), 200'000u);
  EXPECT_EQ(parse_byte_size("2GiB", "--x"), 2ull << 30);
  EXPECT_EQ(parse_byte_size("1.5 MiB", "--x"), 3ull << 19);
  EXPECT_EQ(parse_byte_size("123456", "--x"), 123456u);
  for (const char* bad : {"", "GB", "5 parsecs", "-1GB", "0", "1.2.3MB", "5XB"}) {
    try {
      parse_byte_size(bad, "--max-shard-size");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("--max-shard-size"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace slimtrain::ckpt
