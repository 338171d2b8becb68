#include "slimtrain/model/hf/qwen2.hpp"

#include "slimtrain/model/hf/decoder.hpp"

namespace slimtrain::model::hf {

HfArchitecture qwen2_architecture() {
  return decoder_architecture("qwen2", "Qwen2", [](const ConfigReader& r) {
    r.refuse(r.flag_or("use_sliding_window", false), "use_sliding_window",
             "slimtrain attends to the whole causal context");
    std::shared_ptr<DecoderConfig> c = read_decoder_config(r);
    c->qkv_bias = true;
    return std::shared_ptr<const HfConfig>(c);
  });
}

}  // namespace slimtrain::model::hf
