#include "slimtrain/cli/hf_text_defaults.hpp"

#include "slimtrain/core/log.hpp"
#include "slimtrain/model/hf/config.hpp"
#include "slimtrain/tokenize/hf_tokenizer.hpp"

namespace slimtrain::cli {

HfTextDefaults hf_text_defaults(const std::string& tokenizer_json, bool max_length_given, bool pair,
                                std::int64_t type_count) {
  HfTextDefaults out;
  if (!max_length_given) {
    std::string source;  // the model's own limit, as transformers' truncation=True
    out.max_length =
        tokenize::hf_default_max_length(tokenizer_json, source, model::hf::token_limit);
    if (out.max_length > 0)
      log::info_rank0("prep text: --max-length ", out.max_length, " from ", source);
  }
  if (pair) out.token_types = tokenize::hf_pair_types(tokenizer_json, type_count);
  return out;
}

}  // namespace slimtrain::cli
