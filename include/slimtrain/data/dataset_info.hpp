#pragma once
/**
 * @brief The description of a slimtrain HDF5 file (layout version 1: one input /SPLIT/x; version
 * 2: named inputs, see named_inputs.hpp and data/README.md), read and checked once; the loaders,
 * the trainer and `slimtrain inspect` share it.
 */
#include <cstdint>
#include <string>
#include <vector>

#include "slimtrain/data/named_inputs.hpp"
#include "slimtrain/data/record_source.hpp"

namespace slimtrain::data {

inline constexpr const char* kFormatName = "slimtrain";
inline constexpr std::int64_t kFormatVersion = 1;
/** @brief Named inputs, fixed or ragged (named_inputs.hpp). */
inline constexpr std::int64_t kNamedInputsVersion = 2;
/**
 * @brief The most classes a file may declare: a num_classes of 2^40 without class_names (found by
 * fuzz_hdf5) otherwise spent minutes and all memory naming them "0", "1", ...
 */
inline constexpr std::int64_t kMaxClasses = std::int64_t{1} << 20;
/** @brief The most elements one sample may have (2^31: 8 GiB as float32). */
inline constexpr std::int64_t kMaxSampleElements = std::int64_t{1} << 31;

struct SplitInfo {
  std::string name;
  std::int64_t size;
  ElementType x_type = ElementType::kUint8;
  std::int64_t chunk_rows = 0;  ///< rows per chunk of x (0 when contiguous)
  bool compressed = false;
};

struct DatasetInfo {
  std::string path;
  std::int64_t version = kFormatVersion;
  /** @brief Version 2: the inputs of a sample (the same in every split); empty in version 1. */
  std::vector<InputInfo> inputs;
  bool named() const { return version == kNamedInputsVersion; }
  /** @brief --max-length: the run cuts ragged inputs to this many elements (0: never). */
  std::int64_t max_length = 0;
  /** @brief The inputs' names; {"x"} for version 1. */
  std::vector<std::string> input_names() const;
  std::int64_t num_classes = 0;
  std::vector<std::string> class_names;
  /** @brief Per-sample shape as stored, e.g. {28, 28} or {3, 32, 32} or {D}. */
  std::vector<std::int64_t> sample_shape;
  /** @brief Channels-first for images ({1,28,28} for [H,W] samples); {D} for features. */
  std::vector<std::int64_t> input_shape() const;
  /** @brief Splits in layout order: train, val (if present), test (if present). */
  std::vector<SplitInfo> splits;
  /**
   * @brief Per channel (images) or per feature, over train, in stored units (0..255 for uint8):
   * /train/x's attributes; empty when it has none (ensure_normalisation computes them).
   */
  std::vector<float> mean, std;

  bool has_split(const std::string& name) const;
  /** @brief "train, val, test": the splits present, for messages. */
  std::string split_list() const;
  std::int64_t split_size(const std::string& name) const;
  const SplitInfo& split(const std::string& name) const;
  /** @brief Number of normalisation channels: C for [C,H,W], 1 for [H,W], D for [D]. */
  std::int64_t channels() const;
  std::int64_t sample_elements() const;
};

/** @brief Channels of a per-sample shape (see DatasetInfo::channels). */
std::int64_t channels_of(const std::vector<std::int64_t>& sample_shape);

/**
 * @brief Opens `path` read-only and validates the layout: attributes, splits, shapes, dtypes,
 * mean/std lengths. Throws DataError naming the file, the dataset and the problem.
 */
DatasetInfo read_dataset_info(const std::string& path);

}  // namespace slimtrain::data
