#include "slimtrain/cli/prep_images.hpp"

#include <fstream>

#include "slimtrain/cli/image_preprocessor.hpp"
#include "slimtrain/comm/agreement.hpp"
#include "slimtrain/core/file_io.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/data/image_source.hpp"

namespace slimtrain::cli {
namespace {

data::ImageShape parse_shape(const CommandLine& cl, PrepOptions& options, bool first_rank) {
  data::ImageShape shape;
  std::unique_ptr<ImagePreprocessor> processor;
  if (cl.has("preprocessor")) {
    processor = std::make_unique<ImagePreprocessor>(
        read_image_preprocessor(cl.get<std::string>("preprocessor"), cl.get<int>("channels")));
    options.fixed_mean = processor->mean;
    options.fixed_std = processor->std;
    if (processor->resample != 2 && first_rank)
      log::warn("--preprocessor: resample ", processor->resample,
                " (PIL's filter number); prep images resizes with an antialiased bilinear "
                "filter (2): images not already of the size differ slightly");
  }
  if (!cl.has("size") && processor && processor->height > 0) {
    shape.height = processor->height;
    shape.width = processor->width;
  } else {
    if (!cl.has("size"))
      SLIMTRAIN_THROW(ConfigError, "--size HxW is required for 'prep images' (e.g. --size 32x32)");
    const std::string text = cl.get<std::string>("size");
    char x = 0, extra = 0;
    if (std::sscanf(text.c_str(), "%d%c%d%c", &shape.height, &x, &shape.width, &extra) != 3 ||
        (x != 'x' && x != 'X'))
      SLIMTRAIN_THROW(ConfigError, "--size: '", text, "' is not HxW (e.g. 32x32)");
    if (processor && processor->height > 0 &&
        (processor->height != shape.height || processor->width != shape.width))
      SLIMTRAIN_THROW(ConfigError, "--size ", text, ": --preprocessor ",
                      cl.get<std::string>("preprocessor"), " brings images to ", processor->height,
                      "x", processor->width, "; give one or the other");
  }
  require_range("--size height", shape.height, 1, 65535);
  require_range("--size width", shape.width, 1, 65535);
  shape.channels = cl.get<int>("channels");
  if (shape.channels != 1 && shape.channels != 3)
    SLIMTRAIN_THROW(ConfigError, "--channels: ", shape.channels, " must be 1 or 3");
  shape.mode = data::parse_resize_mode(cl.get<std::string>("resize"));
  return shape;
}

// One split's listing, made on rank 0 and sent to every rank (one view of the file system).
data::ImageListing shared_listing(comm::ControlPlane& control, const std::string& folder,
                                  const std::string& list,
                                  const std::vector<std::string>* classes) {
  const std::string text = comm::decide_on_root(control, 0, [&] {
    return (folder.empty() ? data::read_image_list(list) : data::list_image_folder(folder, classes))
        .serialise();
  });
  return data::ImageListing::parse(text);
}

}  // namespace

void make_image_sources(comm::ControlPlane& control, const CommandLine& cl, PrepOptions& options,
                        std::unique_ptr<data::RecordSource>& train,
                        std::unique_ptr<data::RecordSource>& test) {
  const data::ImageShape shape = parse_shape(cl, options, control.rank() == 0);
  auto either = [&](const char* folder, const char* list, bool required) {
    if (cl.has(folder) && cl.has(list))
      SLIMTRAIN_THROW(ConfigError, "--", folder, " and --", list, ": give one of them");
    if (required && !cl.has(folder) && !cl.has(list))
      SLIMTRAIN_THROW(ConfigError, "--", folder, " (a folder) or --", list,
                      " (a list file) is required for 'prep images'");
    return std::make_pair(cl.has(folder) ? cl.get<std::string>(folder) : std::string(),
                          cl.has(list) ? cl.get<std::string>(list) : std::string());
  };
  const auto [train_dir, train_list] = either("train", "train-list", true);
  const auto [test_dir, test_list] = either("test", "test-list", false);
  if (!train_dir.empty() && cl.has("class-names"))
    SLIMTRAIN_THROW(ConfigError, "--class-names: the class folders of --train name the classes");
  options.skip_bad = cl.get<bool>("skip-bad");

  data::ImageListing train_files = shared_listing(control, train_dir, train_list, nullptr);
  const std::vector<std::string> classes = train_files.class_names;
  if (!train_dir.empty()) options.class_names = classes;
  train = std::make_unique<data::ImageSource>(std::move(train_files), shape);
  if (!test_dir.empty() || !test_list.empty()) {
    test = std::make_unique<data::ImageSource>(
        shared_listing(control, test_dir, test_list, train_dir.empty() ? nullptr : &classes),
        shape);
  }
  log::info_rank0(
      "images: ", train->size(), " training", test ? " and " : "",
      test ? std::to_string(test->size()) + " test" : std::string(), " files, ",
      classes.empty() ? "labels from the list" : std::to_string(classes.size()) + " classes",
      "; each becomes ", shape.channels, " x ", shape.height, " x ", shape.width,
      " uint8 (--resize ", cl.get<std::string>("resize"), ")");
}

void write_skip_report(const comm::ControlPlane& control, const PrepOptions& options,
                       const PrepResult& result) {
  if (control.rank() != 0) return;
  const std::string report = options.output + ".skipped.txt";
  files::write_file_atomically(report, true, "-o", [&](const std::string& tmp) {
    std::ofstream out(tmp);
    out << result.skipped.size() << " " << result.skipped_noun
        << (result.skipped.size() == 1 ? "" : "s") << " left out of " << options.output
        << " by --skip-bad\n";
    for (const std::string& line : result.skipped) out << line << "\n";
    if (!out.flush()) SLIMTRAIN_THROW(DataError, report, ": cannot write");
  });
  if (result.skipped.empty())
    log::info("--skip-bad: no ", result.skipped_noun, " was left out (", report, ")");
  else
    log::warn("--skip-bad: ", result.skipped.size(), " ", result.skipped_noun,
              result.skipped.size() == 1 ? "" : "s", " left out, listed in ", report,
              "; the first: ", result.skipped.front());
}

}  // namespace slimtrain::cli
