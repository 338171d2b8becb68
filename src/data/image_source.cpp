#include "slimtrain/data/image_source.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>

#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"

namespace slimtrain::data {
namespace {

namespace fs = std::filesystem;

bool hidden(const fs::path& p) {
  const std::string name = p.filename().string();
  return !name.empty() && name[0] == '.';
}

// Regular files under `dir`, recursively, hidden ones skipped, sorted by path.
std::vector<std::string> files_under(const fs::path& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::follow_directory_symlink, ec);
  if (ec) SLIMTRAIN_THROW(DataError, dir.string(), ": cannot list: ", ec.message());
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) SLIMTRAIN_THROW(DataError, dir.string(), ": cannot list: ", ec.message());
    if (hidden(it->path())) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    // A broken link is kept: reading it then names it, instead of it silently going missing.
    if (!it->is_directory() && (it->is_regular_file() || it->is_symlink()))
      files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::string ImageListing::serialise() const {
  std::string out = origin + "\n" + std::to_string(paths.size()) + "\n";
  for (std::size_t i = 0; i < paths.size(); ++i)
    out += std::to_string(labels[i]) + "\t" + paths[i] + "\n";
  for (const std::string& name : class_names) out += name + "\n";
  return out;
}

ImageListing ImageListing::parse(const std::string& text) {
  ImageListing l;
  std::istringstream in(text);
  std::string line;
  std::getline(in, l.origin);
  std::getline(in, line);
  const std::size_t n = std::stoull(line);
  for (std::size_t i = 0; i < n && std::getline(in, line); ++i) {
    const std::size_t tab = line.find('\t');
    l.labels.push_back(std::stoll(line.substr(0, tab)));
    l.paths.push_back(line.substr(tab + 1));
  }
  while (std::getline(in, line)) l.class_names.push_back(line);
  return l;
}

ImageListing list_image_folder(const std::string& dir, const std::vector<std::string>* classes) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    SLIMTRAIN_THROW(ConfigError, dir,
                    ": not a directory (give the folder holding one subfolder "
                    "per class)");
  std::vector<std::string> folders;
  std::size_t loose = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (hidden(e.path())) continue;
    if (e.is_directory())
      folders.push_back(e.path().filename().string());
    else
      ++loose;
  }
  if (ec) SLIMTRAIN_THROW(DataError, dir, ": cannot list: ", ec.message());
  std::sort(folders.begin(), folders.end());
  if (folders.empty())
    SLIMTRAIN_THROW(DataError, dir,
                    ": no class folders (expected one subfolder per class, "
                    "holding that class's images)");
  if (loose > 0)
    log::warn(dir, ": ", loose, " file", loose == 1 ? "" : "s",
              " beside the class folders ignored (images belong in a class folder)");
  ImageListing l;
  l.origin = dir;
  l.class_names = classes ? *classes : folders;
  for (const std::string& folder : folders) {
    const auto at = std::find(l.class_names.begin(), l.class_names.end(), folder);
    if (at == l.class_names.end())
      SLIMTRAIN_THROW(DataError, (fs::path(dir) / folder).string(), ": class '", folder,
                      "' is not among the training folder's classes");
    const std::vector<std::string> files = files_under(fs::path(dir) / folder);
    if (files.empty())
      SLIMTRAIN_THROW(DataError, (fs::path(dir) / folder).string(),
                      ": empty class folder (no files; remove it or add its images)");
    for (const std::string& f : files) {
      l.paths.push_back(f);
      l.labels.push_back(at - l.class_names.begin());
    }
  }
  return l;
}

ImageListing read_image_list(const std::string& file) {
  std::ifstream in(file);
  if (!in) SLIMTRAIN_THROW(DataError, file, ": cannot open the list file");
  const fs::path base = fs::path(file).parent_path();
  ImageListing l;
  l.origin = file;
  std::string line;
  for (std::int64_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos || line[0] == '#') continue;
    const std::size_t comma = line.rfind(',');
    if (comma == std::string::npos || comma == 0)
      SLIMTRAIN_THROW(DataError, file, ": line ", number, ": expected 'path,label', got '", line,
                      "'");
    const std::string label = line.substr(comma + 1);
    std::size_t used = 0;
    long long value = -1;
    try {
      value = std::stoll(label, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != label.size() || value < 0)
      SLIMTRAIN_THROW(DataError, file, ": line ", number, ": label '", label,
                      "' is not an integer >= 0");
    const fs::path path = line.substr(0, comma);
    l.paths.push_back((path.is_absolute() ? path : base / path).string());
    l.labels.push_back(value);
  }
  if (l.paths.empty()) SLIMTRAIN_THROW(DataError, file, ": no 'path,label' lines");
  return l;
}

ImageSource::ImageSource(ImageListing listing, const ImageShape& shape)
    : listing_(std::move(listing)),
      image_(shape),
      shape_{shape.channels, shape.height, shape.width} {}

std::int64_t ImageSource::read(std::int64_t i, void* x) const {
  const auto k = static_cast<std::size_t>(i);
  const Image decoded = load_image(listing_.paths[k], image_.channels);
  const Image sized = resize_image(decoded, image_.height, image_.width, image_.mode);
  // HWC -> CHW
  auto* out = static_cast<std::uint8_t*>(x);
  const std::size_t plane = static_cast<std::size_t>(sized.width) * sized.height;
  const auto c = static_cast<std::size_t>(sized.channels);
  for (std::size_t p = 0; p < plane; ++p)
    for (std::size_t ch = 0; ch < c; ++ch) out[ch * plane + p] = sized.pixels[p * c + ch];
  return listing_.labels[k];
}

std::string ImageSource::describe_record(std::int64_t i) const {
  return listing_.paths[static_cast<std::size_t>(i)];
}

}  // namespace slimtrain::data
