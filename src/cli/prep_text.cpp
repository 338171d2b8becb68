#include "slimtrain/cli/prep_text.hpp"

#include <algorithm>
#include <thread>

#include "slimtrain/cli/hf_text_defaults.hpp"
#include "slimtrain/cli/prep_output.hpp"
#include "slimtrain/cli/prep_ragged.hpp"
#include "slimtrain/cli/prep_vl.hpp"
#include "slimtrain/cli/shared_input.hpp"
#include "slimtrain/cli/text_input.hpp"
#include "slimtrain/cli/text_labels.hpp"
#include "slimtrain/cli/text_notes.hpp"
#include "slimtrain/comm/agreement.hpp"
#include "slimtrain/core/check_hdf5.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/data/dataset_info.hpp"
#include "slimtrain/data/hdf5_attributes.hpp"
#include "slimtrain/data/shard.hpp"
#include "slimtrain/data/text_check.hpp"
#include "slimtrain/data/text_table.hpp"
#include "slimtrain/tokenize/tokenizer.hpp"

namespace slimtrain::cli {
namespace {

using data::Hid;
using data::TextTable;
using tokenize::Tokenizer;

// One output split: its source rows, and this rank's tokenized share of them.
struct TextSplit {
  std::string name;
  const TextTable* table = nullptr;
  std::vector<std::int64_t> rows;
  std::vector<std::int32_t> ids;      // this rank's sequences, end to end
  std::vector<std::int32_t> types;    // their token types, when the file gets token_type_ids
  std::vector<std::int64_t> lengths;  // one per kept sample
  std::vector<std::string> labels;    // as written in the file
  std::vector<std::int64_t> source;   // the source row of each kept sample
  std::vector<std::string> skipped;   // --skip-bad: "record: why"
  RaggedValues<float> pixels;         // --image-column: pixel_values and image_grid_thw
  RaggedValues<std::int64_t> grids;
  TextNotes notes;
  data::Range mine{0, 0}, tokens{0, 0};
  std::int64_t total = 0, total_tokens = 0;
  SplitLabels classes;  // filled by resolve_text_labels
};

struct TextOptions {
  bool strict = false;          // --strict: invalid UTF-8 or a NUL byte is exit 2
  std::int64_t max_length = 0;  // --max-length: tokens kept of a sample (0: all)
  bool token_types = false;     // write token_type_ids: pairs for a model that reads them
};

// One sample's ids: its text, or a pair joined by the tokenizer's separator (or template);
// cut to max_length.
void encode(const Tokenizer& tokenizer, const data::TextRecord& record, const TextOptions& options,
            TextSplit& split, const std::string& where) {
  const std::int64_t length = tokenizer.encode_record(record.texts, options.max_length, split.ids,
                                                      options.token_types ? &split.types : nullptr);
  if (length == 0) SLIMTRAIN_THROW(DataError, where, ": the text encodes to no tokens");
  if (options.max_length > 0 && length > options.max_length) ++split.notes.cut;
  if (length > split.notes.longest) {
    split.notes.longest = length;
    split.notes.longest_at = where;
  }
}

void tokenize(TextSplit& split, const Tokenizer& tokenizer, const data::Range& share, bool skip_bad,
              const TextOptions& options, const VlSamples* vl) {
  for (std::int64_t i = share.begin; i < share.end; ++i) {
    const std::int64_t row = split.rows[static_cast<std::size_t>(i)];
    const std::size_t before = split.ids.size(), samples = split.pixels.lengths.size();
    const std::size_t pixels = split.pixels.values.size(), grids = split.grids.values.size();
    const std::string where = split.table->describe_record(row);
    try {
      data::TextRecord record = split.table->read(row);
      check_record(record, options.strict, split.notes, where);
      if (vl)  // its images made into patches, its text given their tokens
        record.texts = {
            vl->prepare(record, split.table->folder(), split.pixels, split.grids, where)};
      encode(tokenizer, record, options, split, where);
      split.lengths.push_back(static_cast<std::int64_t>(split.ids.size() - before));
      split.labels.push_back(record.label);
      split.source.push_back(row);
    } catch (const DataError& e) {
      split.ids.resize(before);
      if (options.token_types) split.types.resize(before);
      split.pixels.truncate(pixels, samples);
      split.grids.truncate(grids, samples);
      if (!skip_bad) throw;
      split.skipped.push_back(e.what());
    }
  }
}

// Rank 0 trains on the training rows (the ones --skip-bad would keep) and sends the bytes.
std::string train_tokenizer(const TextSplit& train, const tokenize::TokenizerTraining& training,
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
  std::size_t bytes = 0;
  for (const std::string& text : texts) bytes += text.size();
  if (bytes > tokenize::kTrainingSampleBytes)
    log::info("prep text: the training texts hold ", bytes >> 20,
              " MiB: the tokenizer learns from an even sample of ",
              tokenize::kTrainingSampleBytes >> 20, " MiB of them");
  log::info("prep text: training a ", training.type, " tokenizer of ",
            training.vocab_size > 0
                ? std::to_string(training.vocab_size) + " pieces"
                : "as many pieces as they fill, up to " + std::to_string(tokenize::kAutoVocabulary),
            " on ", texts.size(), " training texts");
  return Tokenizer::train(texts, training).bytes();
}

// Where this rank's samples, tokens and image values go, and each split's totals.
void place(comm::ControlPlane& control, TextSplit& split) {
  std::int64_t tokens = 0;
  for (std::int64_t n : split.lengths) tokens += n;
  std::vector<data::Range> mine;
  std::vector<std::int64_t> totals;
  place_counts(control,
               {static_cast<std::int64_t>(split.lengths.size()), tokens,
                static_cast<std::int64_t>(split.pixels.values.size()),
                static_cast<std::int64_t>(split.grids.values.size())},
               mine, totals);
  split.mine = mine[0];
  split.tokens = mine[1];
  split.pixels.mine = mine[2];
  split.grids.mine = mine[3];
  split.total = totals[0];
  split.total_tokens = totals[1];
  split.pixels.total = totals[2];
  split.grids.total = totals[3];
}

// A ragged token input: this rank's `values` (split.tokens of them) and offsets.
Hid write_tokens(hid_t inputs, const char* name, const TextSplit& split,
                 const std::vector<std::int32_t>& values, const RowWriter& rows, bool first_rank) {
  return write_ragged(inputs, name, H5T_STD_I32LE, H5T_NATIVE_INT32, sizeof(std::int32_t),
                      values.data(), split.tokens, split.total_tokens, split.lengths, split.mine,
                      split.total, rows, first_rank);
}

void write_split(hid_t file, const TextSplit& split, const RowWriter& rows,
                 const Tokenizer& tokenizer, const TextOptions& options, const VlSamples* vl,
                 bool first_rank) {
  const std::string& where = rows.where();
  Hid group(SLIMTRAIN_CHECK_HDF5(
      H5Gcreate2(file, split.name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), where));
  Hid inputs(SLIMTRAIN_CHECK_HDF5(
      H5Gcreate2(group, "inputs", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), where));
  Hid ids(write_tokens(inputs, "input_ids", split, split.ids, rows, first_rank));
  data::write_int_attribute(ids, "vocab_size", tokenizer.vocab_size());
  data::write_int_attribute(ids, "pad_id", tokenizer.pad_id());
  data::write_string_attribute(ids, "tokenizer", {"/tokenizer"}, true);
  if (options.token_types) {
    Hid types(write_tokens(inputs, "token_type_ids", split, split.types, rows, first_rank));
    data::write_int_attribute(types, "vocab_size", tokenizer.type_count());
    data::write_int_attribute(types, "pad_id", 0);
  }
  if (vl) {  // each sample's patches and grids, whole rows each
    Hid pixels(write_ragged(inputs, "pixel_values", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, sizeof(float),
                            split.pixels.values.data(), split.pixels.mine, split.pixels.total,
                            split.pixels.lengths, split.mine, split.total, rows, first_rank));
    data::write_int_attribute(pixels, "row_size", vl->row_size());
    Hid grids(write_ragged(inputs, "image_grid_thw", H5T_STD_I64LE, H5T_NATIVE_INT64,
                           sizeof(std::int64_t), split.grids.values.data(), split.grids.mine,
                           split.grids.total, split.grids.lengths, split.mine, split.total, rows,
                           first_rank));
    data::write_int_attribute(grids, "row_size", 3);
  }
  Hid y = rows.create(group, "y", H5T_STD_I64LE, {static_cast<hsize_t>(split.total)},
                      sizeof(std::int64_t));
  rows.write_rows(y, H5T_NATIVE_INT64, split.mine.begin, split.mine.end - split.mine.begin,
                  split.classes.y.data());
}

}  // namespace

PrepResult prepare_text(comm::ControlPlane& control, MPI_Comm io_comm, const CommandLine& cl,
                        PrepOptions& options) {
  if (!cl.has("train")) SLIMTRAIN_THROW(ConfigError, "--train is required for 'prep text'");
  if (!cl.has("text-column"))
    SLIMTRAIN_THROW(ConfigError, "--text-column is required for 'prep text'");
  const data::TextColumns columns = text_columns(cl);
  std::unique_ptr<VlSamples> vl;  // --image-column: a vision-language checkpoint's samples
  if (!columns.images.empty()) {
    if (!cl.has("tokenizer") || cl.get<std::string>("tokenizer").find(".json") == std::string::npos)
      SLIMTRAIN_THROW(ConfigError,
                      "--image-column: give the vision-language checkpoint's "
                      "tokenizer.json as --tokenizer (its processor settings lie "
                      "beside it)");
    vl = std::make_unique<VlSamples>(cl, cl.get<std::string>("tokenizer"));
    log::info_rank0("prep text: ", vl->describe());
  }
  tokenize::TokenizerTraining training;
  training.vocab_size = cl.get<std::int64_t>("vocab-size");
  if (training.vocab_size != 0)
    require_range<std::int64_t>("--vocab-size", training.vocab_size, 8, 1 << 20);
  training.type = cl.get<std::string>("tokenizer-type");
  if (training.type != "unigram" && training.type != "bpe")
    SLIMTRAIN_THROW(ConfigError, "--tokenizer-type: '", training.type, "' is not unigram or bpe");
  training.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (cl.has("tokenizer") && (cl.has("vocab-size") || cl.has("tokenizer-type")))
    SLIMTRAIN_THROW(ConfigError,
                    "--vocab-size and --tokenizer-type train a tokenizer; with "
                    "--tokenizer the given one is used as it is");
  if (cl.get<bool>("header") && cl.get<bool>("no-header"))
    SLIMTRAIN_THROW(ConfigError,
                    "--header and --no-header: give one (the first row of a CSV or "
                    "TSV is its header by default)");
  const std::string encoding = cl.get<std::string>("encoding");
  TextOptions text;
  text.strict = cl.get<bool>("strict");
  text.max_length = cl.get<std::int64_t>("max-length");
  require_range<std::int64_t>("--max-length", text.max_length, 0, std::int64_t{1} << 40);
  options.skip_bad = cl.get<bool>("skip-bad");
  check_class_options(options);
  check_output(control, options);

  std::unique_ptr<TextTable> train_table, test_table;
  auto table = [&](const std::string& option) {
    return open_text_table(control, io_comm, cl.get<std::string>(option), "--" + option, columns,
                           encoding, options.io_timeout_s);
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
    if (columns.text.size() == 2 && !tokenizer->joins_pairs())
      SLIMTRAIN_THROW(ConfigError, "--tokenizer: ", cl.get<std::string>("tokenizer"),
                      " has no separator piece (<sep>, [SEP] or </s>) to join the two "
                      "--text-column texts of a pair");
  });
  if (tokenizer->kind() == "huggingface") {
    const HfTextDefaults defaults =
        hf_text_defaults(cl.get<std::string>("tokenizer"), cl.has("max-length"),
                         columns.text.size() == 2, tokenizer->type_count());
    if (defaults.max_length > 0) text.max_length = defaults.max_length;
    text.token_types = defaults.token_types;
  }

  comm::on_all_ranks(control, [&] {
    for (TextSplit& s : splits)
      tokenize(s, *tokenizer,
               data::eval_share(static_cast<std::int64_t>(s.rows.size()), control.rank(),
                                control.size()),
               options.skip_bad, text, vl.get());
  });
  for (TextSplit& s : splits) place(control, s);
  std::vector<TextNotes> notes;
  for (const TextSplit& s : splits) notes.push_back(s.notes);
  report_text_notes(control, notes, text.max_length);
  PrepResult result;
  result.skipped_noun = "record";
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
  std::vector<SplitLabels> labels;
  for (TextSplit& s : splits) {
    s.classes.labels = &s.labels;
    s.classes.where = [&s](std::size_t i) { return s.table->describe_record(s.source[i]); };
    labels.push_back(s.classes);
  }
  const std::vector<std::string> class_names =
      resolve_text_labels(control, labels, options, result.num_classes);
  if (result.num_classes == 1)
    if (control.rank() == 0)
      log::warn("prep text: every label is '", data::printable(class_names.front()),
                "': a file of one class, which training refuses (a classifier needs two); "
                "the wrong --label-column?");
  for (std::size_t i = 0; i < splits.size(); ++i) splits[i].classes.y = std::move(labels[i].y);
  for (const TextSplit& s : splits)
    (s.name == "train" ? result.train : s.name == "val" ? result.val : result.test) = s.total;

  write_output_atomically(control, io_comm, options, [&](hid_t file, const RowWriter& rows) {
    data::write_string_attribute(file, "format", {data::kFormatName}, true);
    data::write_int_attribute(file, "format_version", data::kNamedInputsVersion);
    data::write_int_attribute(file, "num_classes", result.num_classes);
    data::write_class_names(file, class_names, control.rank() == 0);
    Hid bytes = rows.create(file, "tokenizer", H5T_STD_U8LE, {model.size()}, 1);
    rows.write_rows(bytes, H5T_NATIVE_UINT8, 0,
                    control.rank() == 0 ? static_cast<std::int64_t>(model.size()) : 0,
                    model.data());
    data::write_string_attribute(bytes, "kind", {tokenizer->kind()}, true);
    data::write_string_attribute(
        bytes, "trained",
        {cl.has("tokenizer") ? "given by --tokenizer" : training.type + " on /train"}, true);
    for (const TextSplit& s : splits)
      write_split(file, s, rows, *tokenizer, text, vl.get(), control.rank() == 0);
  });
  log::info_rank0("prep text: ", tokenizer->vocab_size(), " pieces",
                  !cl.has("tokenizer") && training.vocab_size == 0
                      ? " (sized to the training texts; --vocab-size sets another)"
                      : "",
                  "; ", splits[0].total_tokens, " tokens in /train; ", result.num_classes,
                  " classes");
  return result;
}

}  // namespace slimtrain::cli
