#include "slimtrain/model/hf_config.hpp"

#include <fstream>
#include <initializer_list>
#include <sstream>

#include "slimtrain/core/error.hpp"

namespace slimtrain::model {
namespace {

std::int64_t positive(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) SLIMTRAIN_THROW(ConfigError, where, ": has no \"", key, "\"");
  // 2^24: past every size a model has, short of sizes whose tensors could not be allocated.
  if (!j[key].is_number_integer() || j[key].get<std::int64_t>() < 1 ||
      j[key].get<std::int64_t>() > (std::int64_t{1} << 24))
    SLIMTRAIN_THROW(ConfigError, where, ": \"", key, "\" is ", j[key].dump(),
                    ", not a positive integer up to 2^24");
  return j[key].get<std::int64_t>();
}

// Positive integer sizes, each read under its config.json name, in order.
void read_sizes(const nlohmann::json& j, const std::string& where,
                std::initializer_list<std::pair<const char*, std::int64_t*>> sizes) {
  for (const auto& [key, field] : sizes) *field = positive(j, key, where);
}

double number_or(const nlohmann::json& j, const char* key, double fallback,
                 const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  if (!j[key].is_number())
    SLIMTRAIN_THROW(ConfigError, where, ": \"", key, "\" is ", j[key].dump(), ", not a number");
  return j[key].get<double>();
}

bool known_activation(const std::string& act) {
  return act == "gelu" || act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "relu" ||
         act == "silu" || act == "swish";
}

HfConfig parse_config(const nlohmann::json& j, const std::string& where);

nlohmann::json distilbert_as_bert(const nlohmann::json& in) {
  nlohmann::json j = in;
  const std::pair<const char*, const char*> names[] = {
      {"dim", "hidden_size"},
      {"n_layers", "num_hidden_layers"},
      {"n_heads", "num_attention_heads"},
      {"hidden_dim", "intermediate_size"},
      {"activation", "hidden_act"},
      {"dropout", "hidden_dropout_prob"},
      {"attention_dropout", "attention_probs_dropout_prob"},
      {"seq_classif_dropout", "classifier_dropout"}};
  for (const auto& [theirs, ours] : names)
    if (in.contains(theirs)) j[ours] = in[theirs];
  j["type_vocab_size"] = 1;  // none, but the checks want a size
  if (!in.contains("dropout")) j["hidden_dropout_prob"] = 0.1;
  return j;
}

double positive_number(const nlohmann::json& j, const char* key, const std::string& where) {
  const double v = number_or(j, key, 0.0, where);
  if (!(v > 0.0))
    SLIMTRAIN_THROW(ConfigError, where, ": rotary scaling needs \"", key, "\" above 0; it is ",
                    j.contains(key) ? j[key].dump() : std::string("missing"));
  return v;
}

// Rotary positions: transformers 5 keeps rope_theta and the scaling in rope_parameters; 4.x
// keeps rope_theta beside it and the scaling in rope_scaling ("type" in older files).
void read_rope(const nlohmann::json& j, const std::string& where, HfConfig& c) {
  nlohmann::json rope = j.value("rope_parameters", nlohmann::json());
  if (!rope.is_object()) rope = j.value("rope_scaling", nlohmann::json());
  if (!rope.is_object()) rope = nlohmann::json::object();
  c.rope_type = rope.value("rope_type", rope.value("type", std::string("default")));
  c.rope_theta = rope.contains("rope_theta") ? number_or(rope, "rope_theta", 10000.0, where)
                                             : number_or(j, "rope_theta", 10000.0, where);
  const double partial = rope.contains("partial_rotary_factor")
                             ? number_or(rope, "partial_rotary_factor", 1.0, where)
                             : number_or(j, "partial_rotary_factor", 1.0, where);
  if (partial != 1.0)
    SLIMTRAIN_THROW(ConfigError, where, ": partial_rotary_factor ", partial,
                    " is not implemented (rotary positions on the whole head)");
  if (c.rope_type == "default") return;
  if (c.rope_type != "linear" && c.rope_type != "llama3")
    SLIMTRAIN_THROW(ConfigError, where, ": rotary positions of type ", c.rope_type,
                    " are not implemented (default, linear and llama3)");
  c.rope_factor = positive_number(rope, "factor", where);
  if (c.rope_type == "linear") return;
  c.rope_low_freq_factor = positive_number(rope, "low_freq_factor", where);
  c.rope_high_freq_factor = positive_number(rope, "high_freq_factor", where);
  if (c.rope_high_freq_factor <= c.rope_low_freq_factor)
    SLIMTRAIN_THROW(ConfigError, where, ": rotary scaling's high_freq_factor ",
                    c.rope_high_freq_factor, " is not above its low_freq_factor ",
                    c.rope_low_freq_factor);
  // As transformers: the model's own length when the file does not say.
  c.rope_original_max_positions = rope.contains("original_max_position_embeddings")
                                      ? positive(rope, "original_max_position_embeddings", where)
                                      : c.max_position_embeddings;
}

// Qwen2 and Llama (their vocab_size and max_position_embeddings read already): grouped-query
// attention, RMSNorm, rotary positions (read_rope).
void read_decoder(const nlohmann::json& j, const std::string& where, HfConfig& c) {
  c.num_key_value_heads = j.contains("num_key_value_heads") && !j["num_key_value_heads"].is_null()
                              ? positive(j, "num_key_value_heads", where)
                              : c.num_attention_heads;
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    SLIMTRAIN_THROW(ConfigError, where, ": num_attention_heads ", c.num_attention_heads,
                    " is not a multiple of num_key_value_heads ", c.num_key_value_heads);
  c.head_dim = j.contains("head_dim") && !j["head_dim"].is_null()
                   ? positive(j, "head_dim", where)
                   : c.hidden_size / c.num_attention_heads;
  if (c.head_dim % 2 != 0)
    SLIMTRAIN_THROW(ConfigError, where, ": head_dim ", c.head_dim, " is odd (rotary pairs)");
  c.rms_norm_eps = number_or(j, "rms_norm_eps", 1e-6, where);
  read_rope(j, where, c);
  if (j.value("use_sliding_window", false))
    SLIMTRAIN_THROW(ConfigError, where, ": use_sliding_window is not implemented");
  c.attention_bias = c.model_type == "qwen2" || j.value("attention_bias", false);
  if (j.value("mlp_bias", false))
    SLIMTRAIN_THROW(ConfigError, where, ": mlp_bias is not implemented");
}

}  // namespace

std::string HfConfig::describe() const {
  std::ostringstream out;
  out << model_type << " hidden " << hidden_size << " layers " << num_hidden_layers << " heads "
      << num_attention_heads;
  if (is_vit())
    out << " image " << num_channels << "x" << image_size << "x" << image_size << " patch "
        << patch_size;
  else
    out << " vocab " << vocab_size;
  return out.str();
}

HfConfig parse_hf_config(const nlohmann::json& j, const std::string& where) {
  try {
    return parse_config(j, where);
  } catch (const nlohmann::json::exception& e) {  // a field of another type than it should be
    SLIMTRAIN_THROW(ConfigError, where, ": ", e.what());
  }
}

namespace {

HfConfig parse_config(const nlohmann::json& in, const std::string& where) {
  // DistilBERT names the same sizes its own way: read under BERT's names.
  const nlohmann::json j =
      in.is_object() && in.value("model_type", "") == "distilbert" ? distilbert_as_bert(in) : in;
  if (!j.is_object()) SLIMTRAIN_THROW(ConfigError, where, ": is not a JSON object");
  HfConfig c;
  if (!j.contains("model_type") || !j["model_type"].is_string())
    SLIMTRAIN_THROW(ConfigError, where, ": has no \"model_type\" string");
  c.model_type = j["model_type"].get<std::string>();
  if (c.model_type == "xlm-roberta") c.model_type = "roberta";  // the same model, its own name
  if (c.model_type != "bert" && c.model_type != "roberta" && c.model_type != "distilbert" &&
      c.model_type != "vit" && !c.is_decoder())
    SLIMTRAIN_THROW(
        ConfigError, where, ": model_type \"", c.model_type,
        "\" has no native module in slimtrain (it has bert, roberta, xlm-roberta, distilbert, "
        "vit, qwen2 and llama); train it through TorchScript (docs/models.md)");
  const bool vit = c.is_vit();
  if (j.contains("architectures") && j["architectures"].is_array())
    for (const auto& a : j["architectures"]) {
      const std::string arch = a.is_string() ? a.get<std::string>() : a.dump();
      // Any head of the same encoder loads: the encoder's weights are what is reused.
      const bool known = vit ? arch.rfind("ViT", 0) == 0
                         : c.is_decoder()
                             ? arch.rfind("Qwen2", 0) == 0 || arch.rfind("Llama", 0) == 0
                             : arch.rfind("Bert", 0) == 0 || arch.rfind("Roberta", 0) == 0 ||
                                   arch.rfind("XLMRoberta", 0) == 0 ||
                                   arch.rfind("DistilBert", 0) == 0;
      if (!known)
        SLIMTRAIN_THROW(ConfigError, where, ": architecture ", arch,
                        " has no native module in slimtrain (it has BERT, RoBERTa, XLM-RoBERTa, "
                        "DistilBERT, ViT, Qwen2 and Llama)");
    }
  if (j.contains("position_embedding_type") && j["position_embedding_type"] != "absolute")
    SLIMTRAIN_THROW(ConfigError, where, ": position_embedding_type ",
                    j["position_embedding_type"].dump(),
                    " is not implemented (slimtrain's BERT has absolute positions)");
  if (!c.is_decoder() && (j.value("is_decoder", false) || j.value("add_cross_attention", false)))
    SLIMTRAIN_THROW(ConfigError, where, ": a decoder BERT (is_decoder) is not implemented");
  read_sizes(j, where,
             {{"hidden_size", &c.hidden_size},
              {"num_hidden_layers", &c.num_hidden_layers},
              {"num_attention_heads", &c.num_attention_heads},
              {"intermediate_size", &c.intermediate_size}});
  if (vit) {
    read_sizes(j, where,
               {{"image_size", &c.image_size},
                {"patch_size", &c.patch_size},
                {"num_channels", &c.num_channels}});
    if (c.image_size % c.patch_size != 0)
      SLIMTRAIN_THROW(ConfigError, where, ": image_size ", c.image_size,
                      " is not a multiple of patch_size ", c.patch_size);
    if (!j.value("qkv_bias", true))
      SLIMTRAIN_THROW(ConfigError, where, ": qkv_bias false is not implemented");
  } else {  // text: the decoders and the encoders share these
    read_sizes(
        j, where,
        {{"vocab_size", &c.vocab_size}, {"max_position_embeddings", &c.max_position_embeddings}});
    if (c.is_decoder())
      read_decoder(j, where, c);
    else
      c.type_vocab_size = positive(j, "type_vocab_size", where);
  }
  if (c.hidden_size % c.num_attention_heads != 0)
    SLIMTRAIN_THROW(ConfigError, where, ": hidden_size ", c.hidden_size,
                    " is not a multiple of num_attention_heads ", c.num_attention_heads);
  c.hidden_act = j.value("hidden_act", std::string(c.is_decoder() ? "silu" : "gelu"));
  if (!known_activation(c.hidden_act))
    SLIMTRAIN_THROW(ConfigError, where, ": hidden_act \"", c.hidden_act,
                    "\" is not implemented (gelu, gelu_new, gelu_pytorch_tanh, relu, silu)");
  c.pad_token_id = j.contains("pad_token_id") && j["pad_token_id"].is_number_integer()
                       ? j["pad_token_id"].get<std::int64_t>()
                       : 0;
  c.layer_norm_eps = number_or(j, "layer_norm_eps", 1e-12, where);
  c.initializer_range = number_or(j, "initializer_range", 0.02, where);
  const double dropout = vit || c.is_decoder() ? 0.0 : 0.1;  // transformers' defaults
  c.hidden_dropout = number_or(j, "hidden_dropout_prob", dropout, where);
  c.attention_dropout = number_or(
      j, c.is_decoder() ? "attention_dropout" : "attention_probs_dropout_prob", dropout, where);
  c.classifier_dropout = number_or(j, "classifier_dropout", c.hidden_dropout, where);
  for (const double p : {c.hidden_dropout, c.attention_dropout, c.classifier_dropout})
    if (!(p >= 0.0 && p < 1.0))
      SLIMTRAIN_THROW(ConfigError, where, ": a dropout probability of ", p, " is outside [0, 1)");
  if (!vit && !c.is_decoder() && c.max_length() < 1)
    SLIMTRAIN_THROW(ConfigError, where, ": max_position_embeddings ", c.max_position_embeddings,
                    " leaves no position past pad_token_id ", c.pad_token_id);
  c.frozen_positions = c.model_type == "distilbert" && j.value("sinusoidal_pos_embds", false);
  if (j.contains("id2label") && j["id2label"].is_object() && !j["id2label"].empty())
    c.num_labels = static_cast<std::int64_t>(j["id2label"].size());
  else if (j.contains("num_labels") && j["num_labels"].is_number_integer())
    c.num_labels = j["num_labels"].get<std::int64_t>();
  return c;
}

}  // namespace

std::string load_hf_config(const std::string& dir) {
  const std::string path = dir + "/config.json";
  std::ifstream in(path);
  if (!in)
    SLIMTRAIN_THROW(DataError, "--model hf:", dir, ": ", path,
                    " cannot be read (a directory save_pretrained wrote holds config.json and "
                    "model.safetensors)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    SLIMTRAIN_THROW(DataError, path, ": is not JSON: ", e.what());
  }
  parse_hf_config(j, path);
  return j.dump();
}

}  // namespace slimtrain::model
