#include "slimtrain/model/hf/qwen2_vl_config.hpp"

#include "slimtrain/core/error.hpp"

namespace slimtrain::model::hf {
namespace {

VisionConfig read_vision(const ConfigReader& v, bool windowed) {
  VisionConfig c;
  c.windowed = windowed;
  c.depth = v.size("depth");
  c.heads = v.size("num_heads");
  // Older files name the channels in_chans.
  c.in_channels = v.size_or("in_channels", v.size_or("in_chans", 3));
  c.patch_size = v.size_or("patch_size", 14);
  c.temporal_patch_size = v.size_or("temporal_patch_size", 2);
  c.spatial_merge_size = v.size_or("spatial_merge_size", 2);
  c.rope_theta = v.child("rope_parameters").number_or("rope_theta", 10000.0);
  c.initializer_range = v.number_or("initializer_range", 0.02);
  if (windowed) {
    c.width = v.size("hidden_size");
    c.mlp_width = v.size("intermediate_size");
    c.out_width = v.size("out_hidden_size");
    c.window_size = v.size_or("window_size", 112);
    c.hidden_act = v.activation_or("hidden_act", "silu");
    if (v.has("fullatt_block_indexes"))
      for (const auto& i : v.json()["fullatt_block_indexes"]) {
        if (!i.is_number_integer() || i.get<std::int64_t>() < 0)
          SLIMTRAIN_THROW(ConfigError, v.where(), ": fullatt_block_indexes ",
                          v.json()["fullatt_block_indexes"].dump(),
                          " is not a list of block indexes");
        c.fullatt_block_indexes.push_back(i.get<std::int64_t>());
      }
    const std::int64_t cell = c.patch_size * c.spatial_merge_size;
    if (c.window_size % cell != 0)
      SLIMTRAIN_THROW(ConfigError, v.where(), ": window_size ", c.window_size,
                      " is not a multiple of patch_size x spatial_merge_size (", cell, ")");
  } else {
    c.width = v.size("embed_dim");
    c.mlp_width = c.width * v.size_or("mlp_ratio", 4);
    c.out_width = v.size("hidden_size");
    c.hidden_act = v.activation_or("hidden_act", "quick_gelu");
  }
  if (c.width % c.heads != 0 || (c.width / c.heads) % 4 != 0)
    SLIMTRAIN_THROW(ConfigError, v.where(), ": the vision width ", c.width, " over ", c.heads,
                    " heads is not a head width divisible by 4 (two rotary axes)");
  return c;
}

}  // namespace

std::string Qwen2VLConfig::describe_more() const {
  return " vocab " + std::to_string(vocab_size) + " vision " + std::to_string(vision.width) +
         " x " + std::to_string(vision.depth);
}

std::shared_ptr<const HfConfig> read_qwen2_vl_config(const ConfigReader& r, bool windowed) {
  // transformers 5 writes the language model's fields under text_config; the original
  // checkpoints keep them at the top level.
  const bool nested = r.json().contains("text_config") && r.json()["text_config"].is_object();
  const ConfigReader text = nested ? r.child("text_config") : r;
  text.refuse(text.flag_or("use_sliding_window", false), "use_sliding_window",
              "slimtrain attends to the whole causal context");
  const std::shared_ptr<DecoderConfig> decoder = read_decoder_config(text);
  auto c = std::make_shared<Qwen2VLConfig>();
  static_cast<DecoderConfig&>(*c) = *decoder;
  c->model_type = r.text_or("model_type", "");
  c->qkv_bias = true;  // Qwen2's q, k and v
  c->num_labels = r.num_labels();
  if (c->rope.mrope_section.empty())
    SLIMTRAIN_THROW(ConfigError, r.where(),
                    ": has no mrope_section (in rope_parameters or rope_scaling): a Qwen2-VL "
                    "language model turns its rotary frequencies by three positions");
  if (!r.json().contains("vision_config") || !r.json()["vision_config"].is_object())
    SLIMTRAIN_THROW(ConfigError, r.where(), ": has no vision_config");
  c->vision = read_vision(r.child("vision_config"), windowed);
  if (c->vision.out_width != c->hidden_size)
    SLIMTRAIN_THROW(ConfigError, r.where(), ": the vision tower gives features of ",
                    c->vision.out_width, " where the language model's hidden_size is ",
                    c->hidden_size);
  const auto token = [&](const char* key, std::int64_t fallback) {
    return r.has(key) ? r.integer_or(key, fallback) : text.integer_or(key, fallback);
  };
  c->image_token_id = token("image_token_id", 151655);
  c->vision_start_token_id = token("vision_start_token_id", 151652);
  c->vision_end_token_id = token("vision_end_token_id", 151653);
  return c;
}

}  // namespace slimtrain::model::hf
