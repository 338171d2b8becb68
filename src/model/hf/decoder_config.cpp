// Qwen2's and Llama's config.json as the decoder reads them (decoder.hpp).
#include "slimtrain/model/hf/decoder_config.hpp"

#include "slimtrain/core/error.hpp"

namespace slimtrain::model::hf {
namespace {

double positive_number(const ConfigReader& r, const char* key) {
  const double v = r.number_or(key, 0.0);
  if (!(v > 0.0))
    SLIMTRAIN_THROW(ConfigError, r.where(), ": rotary scaling needs \"", key, "\" above 0; it is ",
                    r.has(key) ? r.json()[key].dump() : "missing");
  return v;
}

// Rotary positions: transformers 5 keeps rope_theta and the scaling in rope_parameters; 4.x
// keeps rope_theta beside it and the scaling in rope_scaling ("type" in older files).
RopeConfig read_rope(const ConfigReader& r, std::int64_t max_positions) {
  const ConfigReader rope =
      r.child(r.json().value("rope_parameters", nlohmann::json()).is_object() ? "rope_parameters"
                                                                              : "rope_scaling");
  RopeConfig c;
  c.rope_type = rope.text_or("rope_type", rope.text_or("type", "default"));
  c.rope_theta = rope.has("rope_theta") ? rope.number_or("rope_theta", 10000.0)
                                        : r.number_or("rope_theta", 10000.0);
  const double partial = rope.has("partial_rotary_factor")
                             ? rope.number_or("partial_rotary_factor", 1.0)
                             : r.number_or("partial_rotary_factor", 1.0);
  if (partial != 1.0)
    SLIMTRAIN_THROW(ConfigError, r.where(), ": partial_rotary_factor ", partial,
                    " is not implemented (rotary positions on the whole head)");
  // Qwen2-VL's multimodal rotary positions: the frequencies split into temporal, height and width
  // sections (mrope_section), each turned by its own position; older files call the type mrope.
  if (rope.has("mrope_section")) {
    for (const auto& s : rope.json()["mrope_section"]) {
      if (!s.is_number_integer() || s.get<std::int64_t>() < 1)
        SLIMTRAIN_THROW(ConfigError, r.where(), ": mrope_section ",
                        rope.json()["mrope_section"].dump(), " is not a list of positive integers");
      c.mrope_section.push_back(s.get<std::int64_t>());
    }
  }
  if (c.rope_type == "mrope") c.rope_type = "default";
  if (c.rope_type == "default") return c;
  if (c.rope_type != "linear" && c.rope_type != "llama3")
    SLIMTRAIN_THROW(ConfigError, r.where(), ": rotary positions of type ", c.rope_type,
                    " are not implemented (default, linear and llama3)");
  c.factor = positive_number(rope, "factor");
  if (c.rope_type == "linear") return c;
  c.low_freq_factor = positive_number(rope, "low_freq_factor");
  c.high_freq_factor = positive_number(rope, "high_freq_factor");
  if (c.high_freq_factor <= c.low_freq_factor)
    SLIMTRAIN_THROW(ConfigError, r.where(), ": rotary scaling's high_freq_factor ",
                    c.high_freq_factor, " is not above its low_freq_factor ", c.low_freq_factor);
  // As transformers: the model's own length when the file does not say.
  c.original_max_position_embeddings =
      rope.size_or("original_max_position_embeddings", max_positions);
  return c;
}

}  // namespace

std::shared_ptr<DecoderConfig> read_decoder_config(const ConfigReader& r) {
  auto c = std::make_shared<DecoderConfig>();
  read_base(r, *c);
  c->intermediate_size = r.size("intermediate_size");
  c->vocab_size = r.size("vocab_size");
  c->max_position_embeddings = r.size("max_position_embeddings");
  c->num_key_value_heads = r.size_or("num_key_value_heads", c->num_attention_heads);
  if (c->num_attention_heads % c->num_key_value_heads != 0)
    SLIMTRAIN_THROW(ConfigError, r.where(), ": num_attention_heads ", c->num_attention_heads,
                    " is not a multiple of num_key_value_heads ", c->num_key_value_heads);
  c->head_dim = r.size_or("head_dim", c->hidden_size / c->num_attention_heads);
  if (c->head_dim % 2 != 0)
    SLIMTRAIN_THROW(ConfigError, r.where(), ": head_dim ", c->head_dim, " is odd (rotary pairs)");
  c->hidden_act = r.activation_or("hidden_act", "silu");
  c->rms_norm_eps = r.number_or("rms_norm_eps", 1e-6);
  c->attention_dropout = r.probability_or("attention_dropout", 0.0);
  c->rope = read_rope(r, c->max_position_embeddings);
  std::int64_t sections = 0;
  for (const std::int64_t s : c->rope.mrope_section) sections += s;
  if (!c->rope.mrope_section.empty() && sections * 2 != c->head_dim)
    SLIMTRAIN_THROW(ConfigError, r.where(), ": mrope_section adds up to ", sections,
                    " frequencies where head_dim ", c->head_dim, " has ", c->head_dim / 2);
  return c;
}

}  // namespace slimtrain::model::hf
