#pragma once
/**
 * @brief Layout version 2 (data/README.md): a sample is several named inputs. Per split,
 * /SPLIT/inputs/NAME is either a dataset [N, ...] of uint8, int32, int64 or float32 (one fixed
 * shape per sample), or a group of `values` (1-D int32, int64 or float32) and `offsets` (int64
 * [N+1]) for sequences of varying length; /SPLIT/y as in version 1. What the layout says of each
 * input, read and checked once (read_dataset_info).
 */
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

namespace slimtrain::data {

enum class InputType { u8, i32, i64, f32 };
const char* input_type_name(InputType type);
std::size_t input_type_size(InputType type);

struct InputInfo {
  std::string name;
  bool ragged = false;
  InputType type = InputType::f32;  ///< of the samples, or of a ragged input's values
  std::vector<std::int64_t> shape;  ///< per sample (fixed inputs only)
  /** @brief (value - mean) / std, per channel or one for all; float and uint8 inputs only. */
  std::vector<float> mean, std;
  std::int64_t pad_id = 0;      ///< what pads a ragged input of integers
  std::int64_t vocab_size = 0;  ///< integer inputs: ids must lie in [0, vocab_size); 0: undeclared
  /** @brief A ragged input of rows (an image's patches, a grid's 3 numbers): the values of one
   * row; a sample holds whole rows, and --max-length never cuts it. 1: a token sequence. */
  std::int64_t row_size = 1;
  bool integer() const { return type == InputType::i32 || type == InputType::i64; }
  std::int64_t sample_elements() const;
};

/**
 * @brief The inputs of /SPLIT/inputs with `rows` samples each; DataError naming file, dataset and
 * problem (a wrong dtype or shape, offsets of the wrong length, a mean on token ids).
 */
std::vector<InputInfo> read_split_inputs(hid_t file, const std::string& path,
                                         const std::string& split, std::int64_t rows);

/** @brief "pixel_values uint8 [3, 32, 32], input_ids int64 ragged": for messages. */
std::string describe_inputs(const std::vector<InputInfo>& inputs);

/** @brief The mask the batcher adds beside a ragged input: attention_mask for input_ids. */
std::string mask_name(const std::string& input);

}  // namespace slimtrain::data
