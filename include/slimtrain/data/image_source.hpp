#pragma once
/**
 * @brief Image files as records for `slimtrain prep images`: a folder with one subfolder per
 * class (torchvision's ImageFolder: sorted folder names are labels 0..C-1, files found
 * recursively and taken in sorted order), or a list file of `path,label` lines. Each record is
 * decoded (image_decode.hpp) and resized (image_resize.hpp) when read, so each rank decodes only
 * its own slice.
 */
#include <cstdint>
#include <string>
#include <vector>

#include "slimtrain/data/image_resize.hpp"
#include "slimtrain/data/record_source.hpp"

namespace slimtrain::data {

/** @brief The files of one split and their labels, in record order. */
struct ImageListing {
  std::string origin;  ///< the folder or list file, for messages
  std::vector<std::string> paths;
  std::vector<std::int64_t> labels;
  std::vector<std::string> class_names;  ///< folders only: the sorted class folder names

  /** @brief One line per file ("label\tpath"), then the class names: what rank 0 sends. */
  std::string serialise() const;
  static ImageListing parse(const std::string& text);
};

/**
 * @brief The images under `dir`, one subfolder per class. With `classes` (the training split's
 * names) the folders must be among them and keep their labels. Hidden files and folders are
 * skipped. DataError naming the folder when it has no class folders or a class folder is empty.
 */
ImageListing list_image_folder(const std::string& dir, const std::vector<std::string>* classes);

/**
 * @brief `path,label` lines (the last comma separates; paths relative to the list's folder;
 * blank lines and lines starting with # are skipped). DataError naming the line.
 */
ImageListing read_image_list(const std::string& file);

struct ImageShape {
  int height = 0, width = 0, channels = 3;
  ResizeMode mode = ResizeMode::fit;
};

class ImageSource final : public RecordSource {
 public:
  ImageSource(ImageListing listing, const ImageShape& shape);
  std::int64_t size() const override { return static_cast<std::int64_t>(listing_.paths.size()); }
  const std::vector<std::int64_t>& sample_shape() const override { return shape_; }
  ElementType element_type() const override { return ElementType::kUint8; }
  /** @brief Decodes and resizes file `i` into x as [C, H, W]. */
  std::int64_t read(std::int64_t i, void* x) const override;
  std::string describe() const override { return listing_.origin; }
  std::string describe_record(std::int64_t i) const override;
  const ImageListing& listing() const { return listing_; }

 private:
  ImageListing listing_;
  ImageShape image_;
  std::vector<std::int64_t> shape_;
};

}  // namespace slimtrain::data
