#pragma once
/**
 * @brief What every model that reads token sequences (text_models.hpp, hf/bert.hpp,
 * hf/decoder.hpp) takes from a batch of named inputs, and how it refuses the two calls that give
 * it no sequences: forward(x) and export --embeddings.
 */
#include <string>

#include "slimtrain/model/classifier.hpp"

namespace slimtrain::model {

/** @brief A text batch as prep text writes it (layout 2) and the batcher pads it. */
struct TokenInputs {
  torch::Tensor ids;          ///< input_ids [B, T] int64
  torch::Tensor mask;         ///< attention_mask [B, T]: 1 on tokens, 0 on padding
  torch::Tensor token_types;  ///< token_type_ids [B, T], or undefined when the batch has none
};

/** @brief The batch's input_ids and attention_mask; DataError naming `model` and the missing one.
 */
TokenInputs token_inputs(const NamedInputs& inputs, const std::string& model);
/** @brief forward(x) on a token model: ConfigError saying it reads a layout-2 file by name. */
[[noreturn]] void refuse_single_input(const std::string& model);
/** @brief embed() on a token model: ConfigError for --embeddings. */
[[noreturn]] void refuse_embeddings(const std::string& model);

}  // namespace slimtrain::model
