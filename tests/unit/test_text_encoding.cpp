// prep text's reading of files as people have them (issue 60): encodings by byte order mark or
// name, UTF-16 without a mark named, labels' flaws made printable or replaced, a header by
// default, integral float labels, short records and column numbers counted from 0.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/text_check.hpp"
#include "slimtrain/data/text_encoding.hpp"
#include "slimtrain/data/text_table.hpp"

namespace sd = slimtrain::data;

namespace {

sd::InputBytes bytes_of(const std::string& s) {
  return sd::InputBytes(std::vector<std::uint8_t>(s.begin(), s.end()));
}

std::string text_of(const sd::InputBytes& b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

// "text,label\nhé,a\n" in UTF-16: little-endian (with a mark when asked) or big-endian.
std::string utf16(bool little, bool mark) {
  const std::u16string s = u"text,label\nh\u00e9,a\n";
  std::string out = mark ? (little ? "\xFF\xFE" : "\xFE\xFF") : "";
  for (const char16_t c : s) {
    const char lo = static_cast<char>(c & 0xFF), hi = static_cast<char>(c >> 8);
    out += little ? std::string{lo, hi} : std::string{hi, lo};
  }
  return out;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const slimtrain::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(TextEncoding, ByteOrderMarksSayTheEncodingAndNamesConvertTheRest) {
  sd::TextDecoding how;
  EXPECT_EQ(text_of(sd::decode_text(bytes_of(utf16(true, true)), "a.csv", "utf-8", &how)),
            "text,label\nh\xC3\xA9,a\n");
  EXPECT_TRUE(how.by_mark && how.converted);
  EXPECT_EQ(how.from, "UTF-16LE");
  EXPECT_EQ(text_of(sd::decode_text(bytes_of(utf16(false, true)), "a.csv", "utf-8")),
            "text,label\nh\xC3\xA9,a\n");
  EXPECT_EQ(text_of(sd::decode_text(bytes_of(utf16(false, false)), "a.csv", "utf-16be")),
            "text,label\nh\xC3\xA9,a\n");
  // Windows-1252's 0x80 is the euro sign; Latin-1's 0xE9 is é.
  EXPECT_EQ(text_of(sd::decode_text(bytes_of("caf\xE9 \x80\n"), "a.csv", "cp1252")),
            "caf\xC3\xA9 \xE2\x82\xAC\n");
  // UTF-8 is left as it is, its mark too (the table reader skips it and says so).
  EXPECT_EQ(text_of(sd::decode_text(bytes_of("\xEF\xBB\xBFok\n"), "a.csv", "UTF8", &how)),
            "\xEF\xBB\xBFok\n");
  EXPECT_FALSE(how.converted);
}

TEST(TextEncoding, Utf16WithoutAMarkAndUnknownNamesAndBadBytesAreNamed) {
  // Issue 60: "'text' is not a column of utf16.csv (its header: \xff\xfet", the header cut at
  // the first NUL; now the file's encoding is named, with the option that reads it.
  const std::string e =
      error_of([] { sd::decode_text(bytes_of(utf16(true, false)), "utf16.csv", "utf-8"); });
  EXPECT_NE(e.find("utf16.csv looks like utf-16le without a byte order mark"), std::string::npos)
      << e;
  EXPECT_NE(e.find("--encoding utf-16le"), std::string::npos) << e;
  EXPECT_THROW(sd::decode_text(bytes_of("x"), "a.csv", "no-such-encoding"), slimtrain::ConfigError);
  const std::string bad =
      error_of([] { sd::decode_text(bytes_of("ok\nbad \xFF\n"), "a.csv", "utf-16le"); });
  EXPECT_NE(bad.find("a.csv: line"), std::string::npos) << bad;
  const std::string bytes =
      error_of([] { sd::decode_text(bytes_of("a\nb\n\x81\n"), "s.csv", "shift_jis"); });
  EXPECT_NE(bytes.find("s.csv: line 3, byte 4 (0x81)"), std::string::npos) << bytes;
  // A legacy encoding named for a file with a mark contradicts it.
  EXPECT_THROW(sd::decode_text(bytes_of(utf16(true, true)), "a.csv", "latin1"),
               slimtrain::ConfigError);
}

TEST(TextCheck, FlawsArePrintableInMessagesAndReplacedInLabels) {
  EXPECT_EQ(sd::printable(std::string("a\0x", 3)), "a\\x00x");
  EXPECT_EQ(sd::printable("caf\xE9\n"), "caf\\xe9\\x0a");
  EXPECT_EQ(sd::printable("caf\xC3\xA9\t"), "caf\xC3\xA9\t");
  EXPECT_EQ(sd::without_flaws(std::string("a\0x", 3)), "a\xEF\xBF\xBDx");
  EXPECT_EQ(sd::without_flaws("caf\xE9"), "caf\xEF\xBF\xBD");
  EXPECT_FALSE(sd::text_flaws(sd::without_flaws(std::string("\0\xFF\xC3", 3))).any());
}

TEST(TextTable, TheFirstRowIsAHeaderAsPandasReadsIt) {
  sd::TextColumns columns;
  columns.text = {"0"};
  columns.label = "1";
  // Issue 60: banking77 given by index got a class "category" of one sample.
  const sd::TextTable table(bytes_of("text,category\nhello,greet\nbye,leave\n"), "b.csv",
                            sd::TextFormat::csv, columns);
  EXPECT_EQ(table.size(), 2);
  EXPECT_EQ(table.header(), (std::vector<std::string>{"text", "category"}));
  EXPECT_EQ(table.read(0).label, "greet");
  columns.header = false;  // --no-header
  const sd::TextTable records(bytes_of("text,category\nhello,greet\n"), "b.csv",
                              sd::TextFormat::csv, columns);
  EXPECT_EQ(records.size(), 2);
  EXPECT_EQ(records.read(0).label, "category");
  columns.text = {"text"};
  EXPECT_THROW(sd::TextTable(bytes_of("a,b\n"), "b.csv", sd::TextFormat::csv, columns),
               slimtrain::ConfigError);
}

TEST(TextTable, LabelsOfIntegralValueColumnsFromZeroAndShortRecords) {
  sd::TextColumns columns;
  columns.text = {"text"};
  columns.label = "label";
  // pandas writes 1 as 1.0 in a column with gaps.
  const sd::TextTable json(bytes_of("{\"text\": \"a\", \"label\": 1.0}\n"
                                    "{\"text\": \"b\", \"label\": \"-2.0\"}\n"
                                    "{\"text\": \"c\", \"label\": 1.5}\n"),
                           "p.jsonl", sd::TextFormat::jsonl, columns);
  EXPECT_EQ(json.read(0).label, "1");
  EXPECT_TRUE(json.read(0).integer_label);
  EXPECT_EQ(json.read(1).label, "-2");
  EXPECT_THROW(json.read(2), slimtrain::DataError);
  // Columns counted from 0 in messages as in options; a short record is no quoting problem.
  const sd::TextTable csv(bytes_of("text,label\n\"a\" b,x\nshort\n"), "c.csv", sd::TextFormat::csv,
                          columns);
  const std::string quote = error_of([&] { csv.read(0); });
  EXPECT_NE(quote.find("c.csv: line 2, column 0: text after a closing quote"), std::string::npos)
      << quote;
  const std::string short_record = error_of([&] { csv.read(1); });
  EXPECT_NE(short_record.find("line 3 has 1 field, expected 2"), std::string::npos) << short_record;
  EXPECT_NE(short_record.find("a record cut short"), std::string::npos) << short_record;
  EXPECT_EQ(short_record.find("must be quoted"), std::string::npos) << short_record;
}
