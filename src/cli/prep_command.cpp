#include <chrono>
#include <cmath>
#include <memory>
#include <set>
#include <sstream>

#include "slimtrain/cli/app.hpp"
#include "slimtrain/cli/command_line.hpp"
#include "slimtrain/cli/prep_images.hpp"
#include "slimtrain/cli/prep_job.hpp"
#include "slimtrain/cli/prep_output.hpp"
#include "slimtrain/cli/prep_text.hpp"
#include "slimtrain/cli/shared_input.hpp"
#include "slimtrain/comm/agreement.hpp"
#include "slimtrain/core/clock.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/data/csv_source.hpp"
#include "slimtrain/data/idx_source.hpp"
#include "slimtrain/data/npy_source.hpp"
#include "slimtrain/runtime/job_exit.hpp"
#include "slimtrain/runtime/runtime.hpp"

namespace slimtrain::cli {
namespace {

std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> names;
  std::stringstream in(text);
  std::string name;
  while (std::getline(in, name, ',')) {
    if (name.empty()) SLIMTRAIN_THROW(ConfigError, "--class-names: empty name in '", text, "'");
    names.push_back(name);
  }
  return names;
}

std::string required(const CommandLine& cl, const std::string& option, const std::string& format) {
  if (!cl.has(option))
    SLIMTRAIN_THROW(ConfigError, "--", option, " is required for 'prep ", format, "'");
  return cl.get<std::string>(option);
}

// Labels given as class names (iris's species): indices in the sorted names of both files, or
// in --class-names, which fixes the order; the names become the file's class_names.
void name_classes(data::CsvSource& train, data::CsvSource* test, PrepOptions& options) {
  const bool train_named = !train.label_names().empty();
  const bool test_named = test && !test->label_names().empty();
  if (!train_named && !test_named) return;
  if (test && train_named != test_named)
    SLIMTRAIN_THROW(DataError, (train_named ? train : *test).describe(),
                    " labels its classes by name but ", (train_named ? *test : train).describe(),
                    " by integer; use one or the other in both");
  std::vector<std::string> classes = options.class_names;
  if (classes.empty()) {
    std::set<std::string> names(train.label_names().begin(), train.label_names().end());
    if (test) names.insert(test->label_names().begin(), test->label_names().end());
    classes.assign(names.begin(), names.end());
  }
  train.use_class_names(classes);
  if (test) test->use_class_names(classes);
  options.class_names = classes;
}

}  // namespace

int run_prep(const std::vector<std::string>& args) {
  CommandLine cl(
      "prep", "slimtrain prep idx|csv|npy|images|text [options] -o OUT.h5",
      "Converts MNIST IDX files, numeric CSV, NumPy .npy arrays, folders of JPEG and "
      "PNG images, or text classification files (CSV, TSV or JSONL, tokenized with a "
      "SentencePiece model, trained or given, or a HuggingFace tokenizer.json) into slimtrain's "
      "HDF5 layout (data/README.md). Inputs may be "
      "gzipped (not images). Under mpirun the ranks convert (decode, resize) and write slices "
      "in parallel. The output appears atomically or not at all.");
  // clang-format off
  cl.add()
      ("format", po::value<std::string>(), "input format: idx, csv, npy, images or text (positional)")
      ("output,o", po::value<std::string>(), "output HDF5 file")
      ("train-images", po::value<std::string>(), "idx: training images (idx3, .gz or raw)")
      ("train-labels", po::value<std::string>(), "idx: training labels (idx1)")
      ("test-images", po::value<std::string>(), "idx: test images")
      ("test-labels", po::value<std::string>(), "idx: test labels")
      ("train", po::value<std::string>(), "csv: training rows; text: the training records (.csv, .tsv or .jsonl, optionally .gz); images: the training folder, one subfolder per class (sorted names are labels 0..C-1 and the class names; files found recursively, in sorted order; hidden ones skipped)")
      ("test", po::value<std::string>(), "csv, text: test rows; images: the test folder, class subfolders named as in --train")
      ("train-list", po::value<std::string>(), "images: instead of --train, a file of 'path,label' lines (paths relative to the list file; # comments)")
      ("test-list", po::value<std::string>(), "images: instead of --test, a list file")
      ("size", po::value<std::string>(), "images: HxW every image is brought to, e.g. 32x32 (required)")
      ("channels", po::value<int>()->default_value(3), "images: 3 (RGB; grayscale replicated) or 1 (grayscale; RGB by ITU-R 601-2 luma, as PIL's convert('L')). Alpha is dropped, palettes expanded, 16-bit reduced to its high byte")
      ("preprocessor", po::value<std::string>(), "images: a HuggingFace preprocessor_config.json (as a ViT checkpoint has it): its size is --size's default, and its rescale and image_mean/image_std become the file's mean and std, so a model reads pixel_values as the processor makes them; text with --image-column: a Qwen2-VL processor's preprocessor_config.json, where it is not beside the tokenizer.json")
      ("resize", po::value<std::string>()->default_value("fit"), "images: fit (stretch to HxW), crop (scale to cover HxW, cut the centre) or pad (scale to fit inside, centred on black); antialiased bilinear filter as PIL's Image.resize(BILINEAR)")
      ("skip-bad", po::bool_switch(), "images, text: leave out unreadable, truncated, corrupt or unsupported files (text: bad records) instead of failing; they are counted and listed in OUT.h5.skipped.txt")
      ("label-column", po::value<std::string>()->default_value("last"), "csv, text: last, first, a column index (counted from 0, as every column number in options and messages) (text: or a header name or JSONL key). csv: integer labels 0..C-1. text: every label is a class name; the classes are the labels present, integers (negative ones too) in numeric order, names in sorted order (--class-names or --num-classes fixes the set)")
      ("header", po::bool_switch(), "csv: the first non-blank line is a header; text: it is by default (as pandas reads a CSV)")
      ("no-header", po::bool_switch(), "text: the first row of a CSV or TSV is a record, not a header (columns are then given by index, counted from 0)")
      ("encoding", po::value<std::string>()->default_value("utf-8"), "text: the files' encoding, any name iconv knows (cp1252, latin1, gb18030, shift_jis, utf-16le...): records are re-encoded to UTF-8 before anything reads them. A byte order mark says UTF-8, UTF-16 or UTF-32 by itself; a file that looks like UTF-16 without one is an error naming it")
      ("delimiter", po::value<std::string>(), "csv, text: one-character field delimiter, or tab (also \\t). Default: ',' for csv; text: tab for .tsv, ',' otherwise")
      ("train-x", po::value<std::string>(), "npy: training features [N, ...] (u1, i8, f4, f8)")
      ("train-y", po::value<std::string>(), "npy: training labels [N] (any integer dtype)")
      ("test-x", po::value<std::string>(), "npy: test features")
      ("test-y", po::value<std::string>(), "npy: test labels")
      ("val-fraction", po::value<double>()->default_value(0.0), "fraction of train moved to /val (seeded)")
      ("seed", po::value<std::uint64_t>()->default_value(0), "seed of the validation split")
      ("class-names", po::value<std::string>(), "comma-separated class names; text: the labels these are, in this order (a label not among them is an error)")
      ("num-classes", po::value<std::int64_t>()->default_value(0), "number of classes (0: csv, npy, idx: max label + 1; text: the labels present). text: the classes are the labels 0..N-1")
      ("compress", po::value<int>()->default_value(0), "deflate level 0-9 with shuffle (0: off, fastest to read)")
      ("chunk-bytes", po::value<std::size_t>()->default_value(std::size_t(1) << 20), "target bytes per chunk along N")
      ("force", po::bool_switch(), "replace an existing output file")
      ("io-timeout", po::value<double>()->default_value(600.0), "seconds the collective HDF5 write may take before the job is ended (a rank failed or stalled inside it)")
      ("collective-timeout", po::value<double>()->default_value(120.0), "seconds each agreement between ranks may wait");
  // clang-format on
  add_text_options(cl);
  cl.positional().add("format", 1);
  cl.set_epilog(
      "examples:\n"
      "  slimtrain prep idx --train-images train-images-idx3-ubyte.gz --train-labels "
      "train-labels-idx1-ubyte.gz --test-images t10k-images-idx3-ubyte.gz --test-labels "
      "t10k-labels-idx1-ubyte.gz --val-fraction 0.1 -o fashion.h5\n"
      "  mpirun -np 2 slimtrain prep csv --train data.csv.gz --header -o data.h5\n"
      "  mpirun -np 4 slimtrain prep images --train photos/train --test photos/test --size 64x64 "
      "--resize crop --val-fraction 0.1 -o photos.h5\n"
      "  mpirun -np 2 slimtrain prep text --train reviews.csv.gz --test reviews-test.csv.gz "
      "--text-column review --label-column sentiment -o reviews.h5\n"
      "text files: UTF-8 unless --encoding names another (a byte order mark says UTF-8, UTF-16 "
      "or UTF-32 by itself); bytes that are not UTF-8 and NUL bytes, in texts and labels, are "
      "counted and the first record named, --strict refuses them; the first row of a CSV or TSV "
      "is its header unless --no-header; .csv is read with CSV quoting, .tsv literally "
      "(--quoting); a sample longer than --max-length tokens is cut and counted; a trained "
      "tokenizer's vocabulary is sized to the training texts unless --vocab-size says otherwise "
      "(data/README.md)\n"
      "exit codes: 0 written, 2 bad option or bad input (nothing is written), 1 other failure\n");
  if (!cl.parse(args)) return kExitOk;

  if (!cl.has("format"))
    SLIMTRAIN_THROW(ConfigError, "prep: give the input format: idx, csv, npy, images or text");
  if (!cl.has("output")) SLIMTRAIN_THROW(ConfigError, "-o/--output is required");
  const std::string format = cl.get<std::string>("format");
  cli::PrepOptions options;
  options.output = cl.get<std::string>("output");
  options.val_fraction = cl.get<double>("val-fraction");
  require_range("--val-fraction", options.val_fraction, 0.0, 0.99);
  options.seed = cl.get<std::uint64_t>("seed");
  if (cl.has("class-names")) options.class_names = split_names(cl.get<std::string>("class-names"));
  options.num_classes = cl.get<std::int64_t>("num-classes");
  require_range<std::int64_t>("--num-classes", options.num_classes, 0, 1 << 24);
  options.compress = cl.get<int>("compress");
  require_range("--compress", options.compress, 0, 9);
  options.chunk_bytes = cl.get<std::size_t>("chunk-bytes");
  require_range<std::size_t>("--chunk-bytes", options.chunk_bytes, 1, std::size_t(1) << 31);
  options.force = cl.get<bool>("force");
  options.io_timeout_s = cl.get<double>("io-timeout");
  require_range("--io-timeout", options.io_timeout_s, 0.01, 1e7);
  comm::CommConfig cc;
  cc.deadline.base_s = cl.get<double>("collective-timeout");
  require_range("--collective-timeout", cc.deadline.base_s, 0.01, 86400.0);

  runtime::Runtime runtime;
  std::unique_ptr<comm::ControlPlane> control;
  std::unique_ptr<data::RecordSource> train, test;
  // Raw inputs are mapped on every rank (each reads its records' pages); gzip ones are
  // decompressed once, on rank 0, and sent to the others.
  auto shared = [&](const std::string& path) {
    return cli::open_input_shared(path, *control, runtime.world(), options.io_timeout_s);
  };
  auto make_sources = [&] {
    if (format == "idx") {
      auto idx = [&](const std::string& images, const std::string& labels) {
        return std::make_unique<data::IdxSource>(shared(images), images, shared(labels), labels);
      };
      train = idx(required(cl, "train-images", format), required(cl, "train-labels", format));
      if (cl.has("test-images") || cl.has("test-labels"))
        test = idx(required(cl, "test-images", format), required(cl, "test-labels", format));
    } else if (format == "csv") {
      data::CsvOptions csv;
      csv.label_column = cl.get<std::string>("label-column");
      csv.header = cl.get<bool>("header");
      std::string delimiter = cl.has("delimiter") ? cl.get<std::string>("delimiter") : ",";
      if (delimiter == "tab" || delimiter == "\\t") delimiter = "\t";
      if (delimiter.size() != 1)
        SLIMTRAIN_THROW(ConfigError, "--delimiter: '", delimiter,
                        "' must be one character, or \\t (or tab) for a tab");
      csv.delimiter = delimiter[0];
      const std::string train_csv = required(cl, "train", format);
      auto train_source = std::make_unique<data::CsvSource>(shared(train_csv), train_csv, csv);
      std::unique_ptr<data::CsvSource> test_source;
      if (cl.has("test")) {
        const std::string test_csv = cl.get<std::string>("test");
        test_source = std::make_unique<data::CsvSource>(shared(test_csv), test_csv, csv);
      }
      name_classes(*train_source, test_source.get(), options);
      train = std::move(train_source);
      test = std::move(test_source);
    } else if (format == "npy") {
      auto npy = [&](const std::string& x, const std::string& y) {
        return std::make_unique<data::NpySource>(shared(x), x, shared(y), y);
      };
      train = npy(required(cl, "train-x", format), required(cl, "train-y", format));
      if (cl.has("test-x") || cl.has("test-y"))
        test = npy(required(cl, "test-x", format), required(cl, "test-y", format));
    } else if (format == "images") {
      make_image_sources(*control, cl, options, train, test);
    } else {
      SLIMTRAIN_THROW(ConfigError, "prep: unknown format '", format,
                      "' (use idx, csv, npy, images or text)");
    }
  };

  return runtime::run_guarded(runtime, [&] {
    control = std::make_unique<comm::ControlPlane>(runtime, "prep", cc);
    cli::check_output(*control, options);  // before any input is read
    const auto started = std::chrono::steady_clock::now();
    cli::PrepResult result;
    if (format == "text") {
      result = cli::prepare_text(*control, runtime.world(), cl, options);
    } else {
      comm::on_all_ranks(*control, make_sources);
      result = cli::prepare_dataset(*control, runtime.world(), *train, test.get(), options);
    }
    const double seconds = seconds_since(started);
    log::info_rank0("wrote ", options.output, ": train ", result.train, ", val ", result.val,
                    ", test ", result.test, " samples, ", result.num_classes, " classes, ",
                    runtime.size(), runtime.size() == 1 ? " rank" : " ranks", ", in ",
                    std::round(seconds * 1000) / 1000, " s");
    if (options.skip_bad) write_skip_report(*control, options, result);
    return kExitOk;
  });
}

}  // namespace slimtrain::cli
