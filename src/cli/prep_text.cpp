#include "slimtrain/cli/prep_text.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <thread>

#include "slimtrain/cli/prep_output.hpp"
#include "slimtrain/cli/shared_input.hpp"
#include "slimtrain/comm/agreement.hpp"
#include "slimtrain/core/check_hdf5.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/data/dataset_info.hpp"
#include "slimtrain/data/hdf5_attributes.hpp"
#include "slimtrain/data/shard.hpp"
#include "slimtrain/data/text_table.hpp"
#include "slimtrain/data/tokenizer.hpp"

namespace slimtrain::cli {
namespace {

using data::Hid;
using data::TextTable;
using data::Tokenizer;

// One output split: its source rows, and this rank's tokenized share of them.
struct TextSplit {
  std::string name;
  const TextTable* table = nullptr;
  std::vector<std::int64_t> rows;
  std::vector<std::int32_t> ids;      // this rank's sequences, end to end
  std::vector<std::int64_t> lengths;  // one per kept sample
  std::vector<std::string> labels;    // as written in the file
  std::vector<std::int64_t> y;        // the labels as class indices
  std::vector<std::int64_t> source;   // the source row of each kept sample
  std::vector<std::string> skipped;   // --skip-bad: "record: why"
  data::Range mine{0, 0}, tokens{0, 0};
  std::int64_t total = 0, total_tokens = 0;
  std::string first_integer, first_name;  // records, for the mixed-labels message
};

// One sample's ids: its text, or a pair joined by the tokenizer's separator.
void encode(const Tokenizer& tokenizer, const data::TextRecord& record,
            std::vector<std::int32_t>& ids, const std::string& where) {
  const std::size_t before = ids.size();
  for (std::size_t t = 0; t < record.texts.size(); ++t) {
    if (t > 0) ids.push_back(static_cast<std::int32_t>(tokenizer.separator_id()));
    tokenizer.encode(record.texts[t], ids);
  }
  if (ids.size() == before) SLIMTRAIN_THROW(DataError, where, ": the text encodes to no tokens");
}

void tokenize(TextSplit& split, const Tokenizer& tokenizer, const data::Range& share,
              bool skip_bad) {
  for (std::int64_t i = share.begin; i < share.end; ++i) {
    const std::int64_t row = split.rows[static_cast<std::size_t>(i)];
    const std::size_t before = split.ids.size();
    try {
      const data::TextRecord record = split.table->read(row);
      encode(tokenizer, record, split.ids, split.table->describe_record(row));
      split.lengths.push_back(static_cast<std::int64_t>(split.ids.size() - before));
      split.labels.push_back(record.label);
      split.source.push_back(row);
      std::string& first = record.integer_label ? split.first_integer : split.first_name;
      if (first.empty()) first = split.table->describe_record(row) + " has '" + record.label + "'";
    } catch (const DataError& e) {
      split.ids.resize(before);
      if (!skip_bad) throw;
      split.skipped.push_back(e.what());
    }
  }
}

// Rank 0 trains on the training rows (the ones --skip-bad would keep) and sends the bytes.
std::string train_tokenizer(const TextSplit& train, const data::TokenizerTraining& training,
                            bool skip_bad) {
  std::vector<std::string> texts;
  texts.reserve(train.rows.size());
  for (std::int64_t row : train.rows) {
    try {
      for (std::string& text : train.table->read(row).texts) texts.push_back(std::move(text));
    } catch (const DataError&) {
      if (!skip_bad) throw;
    }
  }
  log::info("prep text: training a ", training.type, " tokenizer of ", training.vocab_size,
            " pieces on ", texts.size(), " training texts");
  return Tokenizer::train(texts, training).bytes();
}

// Class indices for every split's labels: integers as written, or names in --class-names order
// or sorted (over every split and rank).
std::vector<std::string> resolve_labels(comm::ControlPlane& control, std::vector<TextSplit>& splits,
                                        PrepOptions& options, std::int64_t& num_classes) {
  std::set<std::string> mine;
  std::string integer_at, name_at;
  for (const TextSplit& s : splits) {
    mine.insert(s.labels.begin(), s.labels.end());
    if (integer_at.empty()) integer_at = s.first_integer;
    if (name_at.empty()) name_at = s.first_name;
  }
  const std::vector<std::string> integer_seen = gather_lines(control, integer_at + "\n");
  const std::vector<std::string> name_seen = gather_lines(control, name_at + "\n");
  auto first = [](const std::vector<std::string>& seen) {
    for (const std::string& s : seen)
      if (!s.empty()) return s;
    return std::string();
  };
  const std::string some_integer = first(integer_seen), some_name = first(name_seen);
  if (!some_integer.empty() && !some_name.empty())
    SLIMTRAIN_THROW(DataError, "the label column mixes integers and class names: ", some_integer,
                    ", ", some_name, "; use one or the other");
  std::int64_t local_max = -1;
  if (some_name.empty()) {
    for (TextSplit& s : splits)
      for (const std::string& label : s.labels) {
        s.y.push_back(std::stoll(label));
        local_max = std::max(local_max, s.y.back());
      }
  }
  const std::int64_t max_label =
      control.all_reduce(std::vector<std::int64_t>{local_max}, comm::ReduceOp::max).front();
  std::vector<std::string> classes = options.class_names;
  if (!some_name.empty() && classes.empty()) {
    std::string names;
    for (const std::string& n : mine) names += n + "\n";
    std::set<std::string> all;
    for (const std::string& n : gather_lines(control, names)) all.insert(n);
    classes.assign(all.begin(), all.end());
  }
  if (!some_name.empty()) {
    std::map<std::string, std::int64_t> index;
    for (std::size_t c = 0; c < classes.size(); ++c)
      index.emplace(classes[c], static_cast<std::int64_t>(c));
    comm::on_all_ranks(control, [&] {
      for (TextSplit& s : splits)
        for (std::size_t i = 0; i < s.labels.size(); ++i) {
          const auto it = index.find(s.labels[i]);
          if (it == index.end())
            SLIMTRAIN_THROW(DataError, s.table->describe_record(s.source[i]), ": label '",
                            s.labels[i], "' is not one of the ", classes.size(),
                            " names given by --class-names");
          s.y.push_back(it->second);
        }
    });
    options.class_names = classes;
  }
  num_classes = options.num_classes > 0 ? options.num_classes
                : !classes.empty()      ? static_cast<std::int64_t>(classes.size())
                                        : max_label + 1;
  comm::on_all_ranks(control, [&] {
    for (const TextSplit& s : splits)
      for (std::size_t i = 0; i < s.y.size(); ++i)
        if (s.y[i] >= num_classes)
          SLIMTRAIN_THROW(DataError, s.table->describe_record(s.source[i]), " has label ", s.y[i],
                          ", outside [0, ", num_classes, ") (--num-classes)");
  });
  for (std::int64_t c = static_cast<std::int64_t>(classes.size()); c < num_classes; ++c)
    classes.push_back(std::to_string(c));
  return classes;
}

// Where this rank's samples and tokens go, and each split's totals.
void place(comm::ControlPlane& control, TextSplit& split) {
  std::int64_t tokens = 0;
  for (std::int64_t n : split.lengths) tokens += n;
  const std::vector<std::int64_t> counts =
      control.all_gather({static_cast<std::int64_t>(split.lengths.size()), tokens});
  std::int64_t row = 0, token = 0;
  for (int r = 0; r < control.size(); ++r) {
    const std::int64_t rows_r = counts[2 * static_cast<std::size_t>(r)];
    const std::int64_t tokens_r = counts[2 * static_cast<std::size_t>(r) + 1];
    if (r == control.rank()) {
      split.mine = {row, row + rows_r};
      split.tokens = {token, token + tokens_r};
    }
    row += rows_r;
    token += tokens_r;
  }
  split.total = row;
  split.total_tokens = token;
}

void write_split(hid_t file, const TextSplit& split, const RowWriter& rows,
                 const Tokenizer& tokenizer, bool first_rank) {
  const std::string& where = rows.where();
  Hid group(SLIMTRAIN_CHECK_HDF5(
      H5Gcreate2(file, split.name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), where));
  Hid inputs(SLIMTRAIN_CHECK_HDF5(
      H5Gcreate2(group, "inputs", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), where));
  Hid ids(SLIMTRAIN_CHECK_HDF5(
      H5Gcreate2(inputs, "input_ids", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), where));
  data::write_int_attribute(ids, "vocab_size", tokenizer.vocab_size());
  data::write_int_attribute(ids, "pad_id", tokenizer.pad_id());
  data::write_string_attribute(ids, "tokenizer", {"/tokenizer"}, true);
  Hid values = rows.create(ids, "values", H5T_STD_I32LE, {static_cast<hsize_t>(split.total_tokens)},
                           sizeof(std::int32_t));
  rows.write_rows(values, H5T_NATIVE_INT32, split.tokens.begin,
                  split.tokens.end - split.tokens.begin, split.ids.data());
  // Offsets [N+1]: each rank writes the ends of its samples, the first rank also the leading 0.
  std::vector<std::int64_t> offsets;
  if (first_rank) offsets.push_back(0);
  std::int64_t end = split.tokens.begin;
  for (std::int64_t n : split.lengths) offsets.push_back(end += n);
  Hid offset_set = rows.create(ids, "offsets", H5T_STD_I64LE,
                               {static_cast<hsize_t>(split.total + 1)}, sizeof(std::int64_t));
  rows.write_rows(offset_set, H5T_NATIVE_INT64, first_rank ? 0 : split.mine.begin + 1,
                  static_cast<std::int64_t>(offsets.size()), offsets.data());
  Hid y = rows.create(group, "y", H5T_STD_I64LE, {static_cast<hsize_t>(split.total)},
                      sizeof(std::int64_t));
  rows.write_rows(y, H5T_NATIVE_INT64, split.mine.begin, split.mine.end - split.mine.begin,
                  split.y.data());
}

}  // namespace

void add_text_options(CommandLine& cl) {
  // clang-format off
  cl.add()
      ("text-column", po::value<std::vector<std::string>>()->composing(), "text: the text's column (a header name, a JSONL key, or a 0-based index); given twice, a pair joined by the tokenizer's separator (required)")
      ("tokenizer", po::value<std::string>(), "text: a SentencePiece .model to tokenize with (else one is trained on the training split)")
      ("vocab-size", po::value<std::int64_t>()->default_value(8000), "text: pieces of the tokenizer trained without --tokenizer")
      ("tokenizer-type", po::value<std::string>()->default_value("unigram"), "text: unigram or bpe, the tokenizer trained without --tokenizer");
  // clang-format on
}

PrepResult prepare_text(comm::ControlPlane& control, MPI_Comm io_comm, const CommandLine& cl,
                        PrepOptions& options) {
  if (!cl.has("train")) SLIMTRAIN_THROW(ConfigError, "--train is required for 'prep text'");
  if (!cl.has("text-column"))
    SLIMTRAIN_THROW(ConfigError, "--text-column is required for 'prep text'");
  data::TextColumns columns;
  columns.text = cl.get<std::vector<std::string>>("text-column");
  columns.label = cl.get<std::string>("label-column");
  columns.header = cl.get<bool>("header");
  data::TokenizerTraining training;
  training.vocab_size = cl.get<std::int64_t>("vocab-size");
  require_range<std::int64_t>("--vocab-size", training.vocab_size, 8, 1 << 20);
  training.type = cl.get<std::string>("tokenizer-type");
  if (training.type != "unigram" && training.type != "bpe")
    SLIMTRAIN_THROW(ConfigError, "--tokenizer-type: '", training.type, "' is not unigram or bpe");
  training.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (cl.has("tokenizer") && (cl.has("vocab-size") || cl.has("tokenizer-type")))
    SLIMTRAIN_THROW(ConfigError,
                    "--vocab-size and --tokenizer-type train a tokenizer; with "
                    "--tokenizer the given one is used as it is");
  options.skip_bad = cl.get<bool>("skip-bad");
  check_class_options(options);
  check_output(control, options);

  std::unique_ptr<TextTable> train_table, test_table;
  auto table = [&](const std::string& option) {
    const std::string path = cl.get<std::string>(option);
    const data::TextFormat format = data::text_format_of(path, "--" + option);
    data::InputBytes bytes = open_input_shared(path, control, io_comm, options.io_timeout_s);
    std::unique_ptr<TextTable> t;
    comm::on_all_ranks(
        control, [&] { t = std::make_unique<TextTable>(std::move(bytes), path, format, columns); });
    return t;
  };
  train_table = table("train");
  if (cl.has("test")) test_table = table("test");

  std::vector<TextSplit> splits(1);
  splits[0].name = "train";
  splits[0].table = train_table.get();
  TextSplit val;
  val.name = "val";
  val.table = train_table.get();
  train_val_rows(train_table->size(), options, splits[0].rows, val.rows);
  if (!val.rows.empty()) splits.push_back(std::move(val));
  if (test_table) {
    TextSplit test;
    test.name = "test";
    test.table = test_table.get();
    for (std::int64_t i = 0; i < test_table->size(); ++i) test.rows.push_back(i);
    splits.push_back(std::move(test));
  }

  comm::OpOptions slow;  // rank 0 reads or trains the tokenizer meanwhile
  slow.timeout_s = options.io_timeout_s;
  const std::string model = comm::decide_on_root(
      control, 0,
      [&] {
        if (!cl.has("tokenizer")) return train_tokenizer(splits[0], training, options.skip_bad);
        const std::vector<std::uint8_t> bytes =
            data::read_input_file(cl.get<std::string>("tokenizer"));
        return std::string(bytes.begin(), bytes.end());
      },
      slow);
  std::unique_ptr<Tokenizer> tokenizer;
  comm::on_all_ranks(control, [&] {
    tokenizer = std::make_unique<Tokenizer>(Tokenizer::load(
        model, cl.has("tokenizer") ? "--tokenizer " + cl.get<std::string>("tokenizer")
                                   : "the trained tokenizer"));
    if (columns.text.size() == 2 && tokenizer->separator_id() < 0)
      SLIMTRAIN_THROW(ConfigError, "--tokenizer: ", cl.get<std::string>("tokenizer"),
                      " has no separator piece (<sep>, [SEP] or </s>) to join the two "
                      "--text-column texts of a pair");
  });

  comm::on_all_ranks(control, [&] {
    for (TextSplit& s : splits)
      tokenize(s, *tokenizer,
               data::eval_share(static_cast<std::int64_t>(s.rows.size()), control.rank(),
                                control.size()),
               options.skip_bad);
  });
  for (TextSplit& s : splits) place(control, s);
  PrepResult result;
  if (options.skip_bad) {
    std::string mine;
    for (const TextSplit& s : splits)
      for (const std::string& note : s.skipped) mine += note + "\n";
    result.skipped = gather_lines(control, mine);
  }
  for (const TextSplit& s : splits)
    if (s.total == 0)
      SLIMTRAIN_THROW(DataError, s.table->describe(), ": every record of /", s.name,
                      " was skipped as bad (--skip-bad); the first: ",
                      result.skipped.empty() ? "" : result.skipped.front());
  const std::vector<std::string> class_names =
      resolve_labels(control, splits, options, result.num_classes);
  for (const TextSplit& s : splits)
    (s.name == "train" ? result.train : s.name == "val" ? result.val : result.test) = s.total;

  write_output_atomically(control, io_comm, options, [&](hid_t file, const RowWriter& rows) {
    data::write_string_attribute(file, "format", {data::kFormatName}, true);
    data::write_int_attribute(file, "format_version", data::kNamedInputsVersion);
    data::write_int_attribute(file, "num_classes", result.num_classes);
    data::write_string_attribute(file, "class_names", class_names, false);
    Hid bytes = rows.create(file, "tokenizer", H5T_STD_U8LE, {model.size()}, 1);
    rows.write_rows(bytes, H5T_NATIVE_UINT8, 0,
                    control.rank() == 0 ? static_cast<std::int64_t>(model.size()) : 0,
                    model.data());
    data::write_string_attribute(bytes, "kind", {"sentencepiece"}, true);
    data::write_string_attribute(
        bytes, "trained",
        {cl.has("tokenizer") ? "given by --tokenizer" : training.type + " on /train"}, true);
    for (const TextSplit& s : splits) write_split(file, s, rows, *tokenizer, control.rank() == 0);
  });
  log::info_rank0("prep text: ", tokenizer->vocab_size(), " pieces; ", splits[0].total_tokens,
                  " tokens in /train");
  return result;
}

}  // namespace slimtrain::cli
