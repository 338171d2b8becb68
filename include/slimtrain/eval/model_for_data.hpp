#pragma once
/**
 * @brief The model spec for a data file, built one way for train, eval and export: --model and
 * the model's options, the data's input shape, classes and vocabulary, and an hf:DIR's
 * config.json read and parsed once (model/hf/config.hpp); and the check that the file holds
 * what that kind of model takes, before anything is built.
 */
#include <string>

#include "slimtrain/data/dataset_info.hpp"
#include "slimtrain/model/model_spec.hpp"

namespace slimtrain::eval {

/**
 * @brief `options` (a spec holding the model options given, mlp widths and the like) for the
 * model `model_option` names and the data in `info`; its inputs checked (check_takes).
 */
model::ModelSpec model_for_data(const model::ModelSpec& options, const std::string& model_option,
                                const data::DatasetInfo& info);

/**
 * @brief ConfigError naming --model and the file when `info`'s inputs are not what the model
 * takes: one input x for the image and feature models and a ViT, input_ids of a layout-2 file for
 * the text models and the HuggingFace text models.
 */
void check_takes(const model::ModelSpec& spec, const data::DatasetInfo& info);

}  // namespace slimtrain::eval
