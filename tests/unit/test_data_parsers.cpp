// The input parsers against their sources, and every bad-input case they must name.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <string>

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/csv_source.hpp"
#include "slimtrain/data/idx_source.hpp"
#include "slimtrain/data/input_file.hpp"
#include "slimtrain/data/npy_source.hpp"

namespace sd = slimtrain::data;
using Bytes = std::vector<std::uint8_t>;

namespace {

Bytes idx(std::vector<std::uint32_t> dims, const Bytes& payload, std::uint8_t type = 0x08) {
  Bytes b{0, 0, type, static_cast<std::uint8_t>(dims.size())};
  for (std::uint32_t d : dims) {
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<std::uint8_t>(d >> s));
  }
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

Bytes pattern(std::size_t n) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>((i * 37 + 11) & 0xff);
  return b;
}

Bytes text(const std::string& s) {
  return Bytes(s.begin(), s.end());
}

Bytes npy(const std::string& descr, const std::string& shape, const Bytes& payload,
          bool fortran = false) {
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string prefix = "\x93NUMPY";
  prefix += '\x01';
  prefix += '\x00';
  prefix += static_cast<char>(header.size() & 0xff);
  prefix += static_cast<char>(header.size() >> 8);
  prefix += header;
  Bytes b(prefix.begin(), prefix.end());
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

template <typename T>
Bytes raw(const std::vector<T>& values) {
  Bytes b(values.size() * sizeof(T));
  std::memcpy(b.data(), values.data(), b.size());
  return b;
}

// Expects a DataError whose message contains every fragment.
template <typename Fn>
void expect_data_error(Fn fn, std::vector<std::string> fragments) {
  try {
    fn();
    FAIL() << "no DataError thrown";
  } catch (const slimtrain::DataError& e) {
    for (const std::string& f : fragments)
      EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(IdxSource, RoundTripIsByteExact) {
  const Bytes pixels = pattern(5 * 3 * 4);
  sd::IdxSource source(idx({5, 3, 4}, pixels), "img", idx({5}, {0, 1, 2, 9, 4}), "lab");
  ASSERT_EQ(source.size(), 5);
  EXPECT_EQ(source.sample_shape(), (std::vector<std::int64_t>{3, 4}));
  Bytes out(12);
  for (int i = 0; i < 5; ++i) {
    const std::int64_t label = source.read(i, out.data());
    EXPECT_EQ(label, std::vector<int>({0, 1, 2, 9, 4})[i]);
    EXPECT_EQ(0, std::memcmp(out.data(), pixels.data() + 12 * i, 12));
  }
}

TEST(IdxSource, RejectsBadInput) {
  expect_data_error([] { sd::IdxSource(text("PK\3\4xxxxxxxx"), "img.idx", idx({1}, {0}), "l"); },
                    {"img.idx", "wrong magic"});
  expect_data_error(
      [] {
        sd::IdxSource(idx({2, 2, 2}, pattern(7)), "img.idx", idx({2}, {0, 1}), "l");
      },
      {"img.idx", "truncated", "record 1"});
  expect_data_error(
      [] {
        sd::IdxSource(idx({2, 2, 2}, pattern(8)), "img", idx({3}, {0, 1, 2}), "lab");
      },
      {"img", "2 images", "lab", "3 labels"});
  expect_data_error(
      [] {
        sd::IdxSource(idx({2, 2, 2}, pattern(32), 0x0D), "img", idx({2}, {0, 1}), "l");
      },
      {"img", "element type 0xd"});
  expect_data_error(
      [] {
        sd::IdxSource(idx({2, 2, 2}, pattern(8)), "img", idx({2}, {0}), "lab.idx");
      },
      {"lab.idx", "truncated"});
  // Found by fuzz_idx: no records hid absurd sample sizes; empty samples reached memcpy(null).
  const Bytes huge = idx({0, 0x14030808, 0x1403}, {});
  expect_data_error([&] { sd::parse_idx(huge.data(), huge.size(), "huge.idx"); },
                    {"huge.idx", "implausibly large"});
  expect_data_error(
      [] {
        sd::IdxSource(idx({8, 0, 2}, {}), "empty.idx", idx({8}, pattern(8)), "l");
      },
      {"empty.idx", "empty dimension"});
}

TEST(InputFile, ReadsGzipAndRawAndNamesCorruption) {
  const std::string dir = ::testing::TempDir();
  const Bytes payload = pattern(100000);
  {
    gzFile f = gzopen((dir + "/p.gz").c_str(), "wb");
    gzwrite(f, payload.data(), static_cast<unsigned>(payload.size()));
    gzclose(f);
    std::ofstream(dir + "/p.raw", std::ios::binary)
        .write(reinterpret_cast<const char*>(payload.data()), payload.size());
  }
  EXPECT_EQ(sd::read_input_file(dir + "/p.gz"), payload);
  EXPECT_EQ(sd::read_input_file(dir + "/p.raw"), payload);
  // A gzip cut in half must not pass as a short file.
  std::ifstream in(dir + "/p.gz", std::ios::binary);
  std::string gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir + "/cut.gz", std::ios::binary).write(gz.data(), gz.size() / 2);
  expect_data_error([&] { sd::read_input_file(dir + "/cut.gz"); }, {"cut.gz", "gzip"});
  expect_data_error([&] { sd::read_input_file(dir + "/missing.gz"); },
                    {"missing.gz", "cannot open"});
}

TEST(CsvSource, ParsesFeaturesAndLabels) {
  sd::CsvOptions options;
  options.header = true;
  sd::CsvSource source(text("a,b,label\n1.5, -2 ,3\r\n\n0,1e3,0\n"), "d.csv", options);
  ASSERT_EQ(source.size(), 2);
  EXPECT_EQ(source.sample_shape(), (std::vector<std::int64_t>{2}));
  float x[2];
  EXPECT_EQ(source.read(0, x), 3);
  EXPECT_FLOAT_EQ(x[0], 1.5f);
  EXPECT_FLOAT_EQ(x[1], -2.0f);
  EXPECT_EQ(source.read(1, x), 0);
  EXPECT_FLOAT_EQ(x[1], 1000.0f);

  options.header = false;
  options.label_column = "first";
  options.delimiter = ';';
  sd::CsvSource first(text("7;0.25;0.5\n"), "f.csv", options);
  EXPECT_EQ(first.read(0, x), 7);
  EXPECT_FLOAT_EQ(x[0], 0.25f);
  options.label_column = "1";
  sd::CsvSource middle(text("0.25;7;0.5\n"), "m.csv", options);
  EXPECT_EQ(middle.read(0, x), 7);
  EXPECT_FLOAT_EQ(x[1], 0.5f);
}

TEST(CsvSource, NamesLineAndColumnOfBadRows) {
  sd::CsvOptions options;
  float x[8];
  sd::CsvSource ragged(text("1,2,0\n3,4,1\n5,1\n"), "r.csv", options);
  expect_data_error([&] { ragged.read(2, x); }, {"r.csv", "line 3", "2 fields, expected 3"});
  sd::CsvSource word(text("1,2,0\n\n1,abc,1\n"), "w.csv", options);
  expect_data_error([&] { word.read(1, x); }, {"w.csv", "line 3", "column 1", "abc"});
  sd::CsvSource nan(text("1,nan,0\n"), "n.csv", options);
  expect_data_error([&] { nan.read(0, x); }, {"n.csv", "line 1", "NaN"});
  sd::CsvSource inf(text("1,inf,0\n"), "i.csv", options);
  expect_data_error([&] { inf.read(0, x); }, {"i.csv", "infinite"});
  sd::CsvSource label(text("1,2,1.5\n"), "l.csv", options);
  expect_data_error([&] { label.read(0, x); }, {"l.csv", "label", "not an integer"});
  sd::CsvSource negative(text("1,2,-1\n"), "g.csv", options);
  expect_data_error([&] { negative.read(0, x); }, {"g.csv", "negative"});
  expect_data_error([&] { sd::CsvSource(text("\n\n"), "e.csv", options); },
                    {"e.csv", "no data rows"});
  options.label_column = "9";
  EXPECT_THROW(sd::CsvSource(text("1,2,0\n"), "c.csv", options), slimtrain::ConfigError);
}

TEST(NpySource, ConvertsEachFeatureDtype) {
  const std::vector<std::int32_t> labels{2, 0, 1};
  const Bytes y = npy("<i4", "(3,)", raw(labels));
  float x[4];
  sd::NpySource f8(
      npy("<f8", "(3, 2, 2)", raw(std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11.5})),
      "x", y, "y");
  EXPECT_EQ(f8.sample_shape(), (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(f8.read(2, x), 1);
  EXPECT_FLOAT_EQ(x[3], 11.5f);
  sd::NpySource i8(npy("<i8", "(3, 1)", raw(std::vector<std::int64_t>{-5, 6, 7})), "x", y, "y");
  EXPECT_EQ(i8.read(0, x), 2);
  EXPECT_FLOAT_EQ(x[0], -5.0f);
  sd::NpySource f4(npy("<f4", "(3, 1)", raw(std::vector<float>{0.5f, 1, 2})), "x", y, "y");
  EXPECT_EQ(f4.element_type(), sd::ElementType::kFloat32);
  f4.read(0, x);
  EXPECT_FLOAT_EQ(x[0], 0.5f);
  const Bytes pixels = pattern(3 * 2 * 2 * 2);
  sd::NpySource u1(npy("|u1", "(3, 2, 2, 2)", pixels), "x", npy("|u1", "(3,)", {4, 5, 6}), "y");
  EXPECT_EQ(u1.element_type(), sd::ElementType::kUint8);
  std::uint8_t px[8];
  EXPECT_EQ(u1.read(1, px), 5);
  EXPECT_EQ(0, std::memcmp(px, pixels.data() + 8, 8));
}

TEST(NpySource, RejectsBadInput) {
  const Bytes y = npy("<i8", "(2,)", raw(std::vector<std::int64_t>{0, 1}));
  const Bytes x = npy("<f4", "(2, 1)", raw(std::vector<float>{1, 2}));
  expect_data_error([&] { sd::NpySource(npy("<f2", "(2, 1)", pattern(4)), "x.npy", y, "y"); },
                    {"x.npy", "dtype"});
  expect_data_error([&] { sd::NpySource(npy(">f4", "(2, 1)", pattern(8)), "x.npy", y, "y"); },
                    {"x.npy", "'>f4'"});
  expect_data_error([&] { sd::NpySource(npy("<i4", "(2, 1)", pattern(8)), "x.npy", y, "y"); },
                    {"x.npy", "feature dtype"});
  expect_data_error(
      [&] { sd::NpySource(npy("<f4", "(2, 2)", pattern(16), true), "x.npy", y, "y"); },
      {"x.npy", "Fortran"});
  expect_data_error([&] { sd::NpySource(npy("<f4", "(2, 2)", pattern(12)), "x.npy", y, "y"); },
                    {"x.npy", "truncated"});
  expect_data_error([&] { sd::NpySource(text("not numpy at all"), "x.npy", y, "y"); },
                    {"x.npy", "magic"});
  expect_data_error([&] { sd::NpySource(x, "x", npy("<f8", "(2,)", pattern(16)), "y.npy"); },
                    {"y.npy", "integers"});
  expect_data_error([&] { sd::NpySource(x, "x", npy("<i8", "(3,)", pattern(24)), "y.npy"); },
                    {"2 samples", "3 labels"});
  sd::NpySource negative(x, "x", npy("<i1", "(2,)", {0, 0xff}), "y.npy");
  float v;
  expect_data_error([&] { negative.read(1, &v); }, {"y.npy", "sample 1", "negative"});
  sd::NpySource nan(npy("<f4", "(2, 1)", raw(std::vector<float>{1, std::nanf("")})), "x.npy", y,
                    "y");
  expect_data_error([&] { nan.read(1, &v); }, {"x.npy", "sample 1", "NaN"});
}
