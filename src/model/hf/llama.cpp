#include "slimtrain/model/hf/llama.hpp"

#include "slimtrain/model/hf/decoder.hpp"

namespace slimtrain::model::hf {

HfArchitecture llama_architecture() {
  return decoder_architecture("llama", "Llama", [](const ConfigReader& r) {
    std::shared_ptr<DecoderConfig> c = read_decoder_config(r);
    c->qkv_bias = c->o_bias = r.flag_or("attention_bias", false);
    c->mlp_bias = r.flag_or("mlp_bias", false);
    return std::shared_ptr<const HfConfig>(c);
  });
}

}  // namespace slimtrain::model::hf
