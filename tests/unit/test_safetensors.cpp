// safetensors: every dtype round-trips byte for byte; an index spreads a checkpoint over files;
// each damage the reference refuses (and a name given twice) is a DataError naming the file and,
// where there is one, the tensor.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "slimtrain/ckpt/safetensors.hpp"
#include "slimtrain/core/error.hpp"
#include "test_ckpt_support.hpp"

namespace slimtrain::ckpt {
namespace {

using testing::TempDir;

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void put_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// A file of header `json` (its length written first) and `data` bytes after it.
std::string made(const std::string& json, const std::string& data) {
  std::string out(8, '\0');
  const std::uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(n >> (8 * i));
  return out + json + data;
}

// The DataError's message for the file made of `bytes`, or "" when it opens.
std::string refusal(const std::string& bytes) {
  TempDir dir;
  const std::string path = dir.path() + "/damaged.safetensors";
  put_bytes(path, bytes);
  try {
    SafetensorsFile f(path);
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    return e.what();
  }
  return "";
}

TEST(Safetensors, RoundTripsEveryDtypeInOrderWithMetadata) {
  TempDir dir;
  const std::string path = dir.path() + "/w.safetensors";
  const std::vector<std::pair<std::string, torch::Tensor>> tensors = {
      {"encoder.layer.0.weight", torch::randn({3, 4})},
      {"half", torch::randn({5}).to(torch::kFloat16)},
      {"brain", torch::randn({2, 3}).to(torch::kBFloat16)},
      {"double", torch::randn({2}, torch::kFloat64)},
      {"ids", torch::arange(7, torch::kInt64)},
      {"i32", torch::arange(3, torch::kInt32)},
      {"i16", torch::arange(3, torch::kInt16)},
      {"i8", torch::arange(3, torch::kInt8)},
      {"u8", torch::arange(4, torch::kUInt8)},
      {"flags", torch::tensor({true, false, true})},
      {"scalar", torch::tensor(2.5f)},
      {"empty", torch::empty({0, 3})},
      {"transposed", torch::randn({4, 5}).t()},
  };
  write_safetensors(path, tensors, {{"format", "pt"}});
  const std::string bytes = file_bytes(path);
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u) << "the header is padded to 8 bytes";
  SafetensorsFile f(path);
  EXPECT_EQ(f.header().metadata.at("format"), "pt");
  ASSERT_EQ(f.header().tensors.size(), tensors.size());
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    EXPECT_EQ(f.header().tensors[i].name, tensors[i].first) << "offsets in the order given";
    const torch::Tensor back = f.read(tensors[i].first);
    EXPECT_EQ(back.scalar_type(), tensors[i].second.scalar_type()) << tensors[i].first;
    EXPECT_EQ(back.sizes(), tensors[i].second.sizes()) << tensors[i].first;
    EXPECT_TRUE(torch::equal(back, tensors[i].second.contiguous())) << tensors[i].first;
  }
  EXPECT_EQ(f.header().find("brain")->dtype, "BF16");
  EXPECT_THROW(f.read("absent"), DataError);
  EXPECT_THROW(write_safetensors(path, {{"a", torch::ones(1)}, {"a", torch::ones(1)}}, {}), Error);
}

TEST(Safetensors, ReadsARunOfElementsAlone) {
  TempDir dir;
  const std::string path = dir.path() + "/slices.safetensors";
  const torch::Tensor wide = torch::randn({3, 7});
  const torch::Tensor brain = torch::randn({5, 4}).to(torch::kBFloat16);
  write_safetensors(path, {{"wide", wide}, {"brain", brain}}, {});
  SafetensorsFile f(path);
  for (const auto& [from, count] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {0, 21}, {0, 1}, {5, 9}, {20, 1}, {7, 0}}) {
    const torch::Tensor run = f.read_elements("wide", from, count);
    EXPECT_EQ(run.sizes(), (std::vector<std::int64_t>{count}));
    EXPECT_TRUE(torch::equal(run, wide.reshape({-1}).narrow(0, from, count))) << from;
  }
  const torch::Tensor b = f.read_elements("brain", 3, 11);
  EXPECT_EQ(b.scalar_type(), torch::kBFloat16) << "of its stored dtype";
  EXPECT_TRUE(torch::equal(b, brain.reshape({-1}).narrow(0, 3, 11)));
  EXPECT_THROW(f.read_elements("wide", 15, 7), Error) << "past the end";
  EXPECT_THROW(f.read_elements("wide", -1, 2), Error);
  EXPECT_THROW(f.read_elements("absent", 0, 1), DataError);
}

TEST(Safetensors, AnIndexSpreadsTheTensorsOverFiles) {
  TempDir dir;
  write_safetensors(dir.path() + "/model-00001-of-00002.safetensors",
                    {{"a", torch::ones({2})}, {"b", torch::zeros({3})}}, {{"format", "pt"}});
  write_safetensors(dir.path() + "/model-00002-of-00002.safetensors",
                    {{"c", torch::full({2, 2}, 3.0)}}, {{"format", "pt"}});
  put_bytes(
      dir.path() + "/model.safetensors.index.json",
      R"({"metadata": {"total_size": 36}, "weight_map": {"a": "model-00001-of-00002.safetensors",
                "b": "model-00001-of-00002.safetensors", "c": "model-00002-of-00002.safetensors"}})");
  SafetensorsSet set(dir.path());  // the folder: its index
  EXPECT_EQ(set.names(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(set.files().size(), 2u);
  EXPECT_TRUE(torch::equal(set.read("c"), torch::full({2, 2}, 3.0)));
  EXPECT_EQ(set.entry("b").shape, (std::vector<std::int64_t>{3}));
  EXPECT_TRUE(torch::equal(set.read_elements("c", 1, 2), torch::full({2}, 3.0)));
  EXPECT_THROW(set.read("d"), DataError);

  // The index names a tensor its file does not hold.
  put_bytes(dir.path() + "/model.safetensors.index.json",
            R"({"weight_map": {"z": "model-00002-of-00002.safetensors"}})");
  SafetensorsSet wrong(dir.path() + "/model.safetensors.index.json");
  try {
    wrong.read("z");
    ADD_FAILURE() << "read a tensor its file lacks";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("names 'z' in"), std::string::npos) << e.what();
  }
}

TEST(Safetensors, DamageIsADataErrorNamingTheFileAndTheTensor) {
  const std::string one = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  ASSERT_EQ(refusal(made(one, std::string(8, '\0'))), "");
  EXPECT_NE(refusal(made(one, std::string(5, '\0'))).find("truncated"), std::string::npos);
  EXPECT_NE(refusal(made(one, std::string(9, '\0'))).find("bytes after them"), std::string::npos);
  EXPECT_NE(refusal(std::string(5, 'x')).find("too short"), std::string::npos);
  std::string past = made(one, std::string(8, '\0'));
  past[0] = static_cast<char>(200);  // a header length past the end of the file
  EXPECT_NE(refusal(past).find("past the end of the file"), std::string::npos);
  std::string huge = made(one, "");
  for (int i = 0; i < 8; ++i) huge[i] = static_cast<char>(0x7f);
  EXPECT_NE(refusal(huge).find("more than the 100,000,000"), std::string::npos);
  EXPECT_NE(refusal(made("[1,2]", "")).find("does not start with '{'"), std::string::npos);
  EXPECT_NE(refusal(made("{\"w\": ", "")).find("not JSON"), std::string::npos);
  EXPECT_NE(refusal(made(R"({"w":{"dtype":"F31","shape":[2],"data_offsets":[0,8]}})",
                         std::string(8, '\0')))
                .find("tensor 'w': unknown dtype 'F31'"),
            std::string::npos);
  const std::string overlap = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                              R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
  EXPECT_NE(refusal(made(overlap, std::string(12, '\0'))).find("tensor 'b'"), std::string::npos);
  EXPECT_NE(refusal(made(overlap, std::string(12, '\0'))).find("overlap"), std::string::npos);
  const std::string hole = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                           R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})";
  EXPECT_NE(refusal(made(hole, std::string(12, '\0'))).find("leave a hole"), std::string::npos);
  EXPECT_NE(refusal(made(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})",
                         std::string(8, '\0')))
                .find("tensor 'w': 8 bytes for a F32 tensor of 3 elements (12 bytes)"),
            std::string::npos);
  EXPECT_NE(refusal(made(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}})", ""))
                .find("not an integer of 0 or more"),
            std::string::npos);
  EXPECT_NE(refusal(made(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296]},"x":1})", ""))
                .find("no \"data_offsets\""),
            std::string::npos);
  EXPECT_NE(
      refusal(
          made(R"({"w":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", ""))
          .find("overflows"),
      std::string::npos);
  const std::string twice = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                            R"("w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  EXPECT_NE(refusal(made(twice, std::string(4, '\0'))).find("tensor 'w' is named twice"),
            std::string::npos);
  EXPECT_NE(refusal(made(R"({"__metadata__":{"a":1}})", "")).find("is not a string"),
            std::string::npos);
  // A dtype safetensors has and LibTorch cannot hold opens, and is refused when read.
  TempDir dir;
  const std::string u16 = dir.path() + "/u16.safetensors";
  put_bytes(
      u16, made(R"({"w":{"dtype":"U16","shape":[2],"data_offsets":[0,4]}})", std::string(4, '\0')));
  SafetensorsFile f(u16);
  EXPECT_THROW(f.read("w"), DataError);
}

}  // namespace
}  // namespace slimtrain::ckpt
