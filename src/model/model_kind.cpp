#include "slimtrain/model/model_kind.hpp"

#include <ostream>

#include "slimtrain/core/error.hpp"
#include "slimtrain/model/hf/config.hpp"
#include "slimtrain/model/model_option.hpp"
#include "slimtrain/model/model_spec.hpp"

namespace slimtrain::model {
namespace {

void widths(const ModelSpec& s, std::ostream& out) {
  out << " widths " << shape_text(s.mlp_widths);
}
void cnn_bn(const ModelSpec& s, std::ostream& out) {
  out << " width " << s.cnn_width << " layers " << s.cnn_layers;
}
void vit(const ModelSpec& s, std::ostream& out) {
  out << " patch " << s.vit_patch << " dim " << s.vit_dim << " depth " << s.vit_depth << " heads "
      << s.vit_heads;
}
void text_bow(const ModelSpec& s, std::ostream& out) {
  out << " vocab " << s.vocab_size << " dim " << s.text_dim;
  if (s.text_bigrams > 0) out << " bigram-buckets " << s.text_bigrams;
}
void text_transformer(const ModelSpec& s, std::ostream& out) {
  out << " vocab " << s.vocab_size << " dim " << s.text_dim << " depth " << s.text_depth
      << " heads " << s.text_heads;
}
void hf_describe(const ModelSpec& s, std::ostream& out) {
  // Read from the parsed config when there is one: the spec's kept text is not parsed here.
  if (s.hf)
    out << " " << s.hf->model_type << " hidden " << s.hf->hidden_size << " layers "
        << s.hf->num_hidden_layers;
}

void mlp_shape(const ModelSpec& s, nlohmann::json& arch) {
  arch["mlp_widths"] = s.mlp_widths;
}
void cnn_bn_shape(const ModelSpec& s, nlohmann::json& arch) {
  arch["cnn_width"] = s.cnn_width;
  // Only when not 5, so checkpoints written before the option existed keep their fingerprint.
  if (s.cnn_layers != kCnnLayersMin) arch["cnn_layers"] = s.cnn_layers;
}
void vit_shape(const ModelSpec& s, nlohmann::json& arch) {
  arch["vit"] = {s.vit_patch, s.vit_dim, s.vit_depth, s.vit_heads};
}
void bow_shape(const ModelSpec& s, nlohmann::json& arch) {
  arch["text"] = {s.vocab_size, s.text_dim, s.text_bigrams};
}
void transformer_shape(const ModelSpec& s, nlohmann::json& arch) {
  arch["text"] = {s.vocab_size, s.text_dim, s.text_depth, s.text_heads};
}
// Not the path, nor the directory: files move.
void script_shape(const ModelSpec& s, nlohmann::json& arch) {
  arch["script"] = s.script_signature;
}
void hf_shape(const ModelSpec& s, nlohmann::json& arch) {
  arch["hf"] = s.hf_config;
}

}  // namespace

const std::vector<ModelKind>& model_kinds() {
  static const std::vector<ModelKind> kinds = {
      {"mlp", Takes::x, true, widths, mlp_shape},
      {"cnn-small", Takes::x, true, nullptr, nullptr},
      {"cnn-bn", Takes::x, true, cnn_bn, cnn_bn_shape},
      {"vit-tiny", Takes::x, true, vit, vit_shape},
      {"text-bow", Takes::tokens, true, text_bow, bow_shape},
      {"text-transformer", Takes::tokens, true, text_transformer, transformer_shape},
      {"torchscript", Takes::named, false, nullptr, script_shape},
      {"hf", Takes::config, false, hf_describe, hf_shape},
  };
  return kinds;
}

const ModelKind* find_model_kind(const std::string& name) {
  for (const ModelKind& k : model_kinds())
    if (k.name == name) return &k;
  return nullptr;
}

const ModelKind& model_kind(const std::string& name) {
  if (const ModelKind* k = find_model_kind(name)) return *k;
  SLIMTRAIN_THROW(ConfigError, "--model: unknown model '", name,
                  "' (choose mlp, cnn-small, cnn-bn, vit-tiny, text-bow, text-transformer, "
                  "torchscript:PATH.pt or hf:DIR)");
}

}  // namespace slimtrain::model
