#pragma once
/**
 * @brief Layout 2: a model and a data file agree on the inputs by name before anything runs:
 * what train and eval both check, so neither drops an input a file holds without a word.
 */
#include "slimtrain/data/dataset_info.hpp"
#include "slimtrain/model/classifier.hpp"

namespace slimtrain::eval {

/**
 * @brief ConfigError naming --model when forward takes an input the file lacks (its masks count
 * as inputs), or the file holds one forward does not read; nothing for a layout-1 file.
 */
void check_model_inputs(const model::ClassifierImpl& model, const data::DatasetInfo& info);

}  // namespace slimtrain::eval
