#pragma once
/**
 * @brief What the checkpoint beside a tokenizer.json decides for `prep text`: the default
 * --max-length (tokenizer_config.json's, else the model registry's limit for its config.json:
 * model/hf/config.hpp's token_limit) and whether pairs get token_type_ids (its type_vocab_size).
 */
#include <cstdint>
#include <string>

namespace slimtrain::cli {

struct HfTextDefaults {
  std::int64_t max_length = 0;  ///< 0: none given beside it (or --max-length was given)
  bool token_types = false;
};

/** @brief For `tokenizer_json`; `max_length_given`: --max-length was on the command line; a pair
 * (two text columns) whose template gives `type_count` token types. Logged on rank 0. */
HfTextDefaults hf_text_defaults(const std::string& tokenizer_json, bool max_length_given, bool pair,
                                std::int64_t type_count);

}  // namespace slimtrain::cli
