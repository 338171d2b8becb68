#include "slimtrain/model/classifier.hpp"

#include <algorithm>
#include <map>

#include "slimtrain/core/error.hpp"
#include "slimtrain/model/cnn_bn.hpp"
#include "slimtrain/model/cnn_small.hpp"
#include "slimtrain/model/hf/registry.hpp"
#include "slimtrain/model/mlp.hpp"
#include "slimtrain/model/text_models.hpp"
#include "slimtrain/model/torchscript.hpp"
#include "slimtrain/model/vit_tiny.hpp"

namespace slimtrain::model {

std::string format_shape(c10::IntArrayRef sizes) {
  std::string out = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) out += (i ? "," : "") + std::to_string(sizes[i]);
  return out + "]";
}

Output ClassifierImpl::make_output(torch::Tensor logits, const torch::Tensor& y) const {
  Output out;
  // Under bf16 autocast the head's logits come out bf16: the loss and what crosses the slim
  // boundary are float32.
  if (logits.scalar_type() != torch::kFloat32) logits = logits.to(torch::kFloat32);
  if (y.defined()) {
    if (y.dim() != 1 || y.size(0) != logits.size(0)) {
      SLIMTRAIN_THROW(DataError, "model ", spec_.name, ": labels of shape ",
                      format_shape(y.sizes()), " do not match a batch of ", logits.size(0));
    }
    namespace F = torch::nn::functional;
    out.loss = F::cross_entropy(
        logits, y, F::CrossEntropyFuncOptions().label_smoothing(spec_.label_smoothing));
  }
  out.logits = std::move(logits);
  return out;
}

void ClassifierImpl::use_channels_last() {
  torch::NoGradGuard no_grad;
  for (auto& p : parameters())
    if (p.dim() == 4) p.set_data(p.contiguous(torch::MemoryFormat::ChannelsLast));
  for (auto& b : buffers())
    if (b.dim() == 4) b.set_data(b.contiguous(torch::MemoryFormat::ChannelsLast));
  channels_last_ = true;
}

void ClassifierImpl::apply_memory_format(const std::string& format, bool on_cpu) {
  if (format == "channels-last" || (format == "auto" && on_cpu && prefers_channels_last()))
    use_channels_last();
}

torch::Tensor ClassifierImpl::as_images(const torch::Tensor& x) const {
  const auto [c, h, w] = image_shape(spec_);
  const auto layout = [this](const torch::Tensor& t) {
    return channels_last_ ? t.contiguous(torch::MemoryFormat::ChannelsLast) : t;
  };
  if (x.dim() == 4 && x.size(1) == c && x.size(2) == h && x.size(3) == w) return layout(x);
  if (x.dim() == 3 && c == 1 && x.size(1) == h && x.size(2) == w) return layout(x.unsqueeze(1));
  SLIMTRAIN_THROW(DataError, "model ", spec_.name, " expects a batch of shape [B,", c, ",", h, ",",
                  w, "], got ", format_shape(x.sizes()));
}

std::array<std::int64_t, 3> image_shape(const ModelSpec& spec) {
  const auto& s = spec.input_shape;
  if (s.size() == 3) return {s[0], s[1], s[2]};
  if (s.size() == 2) return {1, s[0], s[1]};
  SLIMTRAIN_THROW(ConfigError, "--model ", spec.name, " needs image samples [C,H,W] or [H,W], but ",
                  "the data has samples of shape ", format_shape(s),
                  "; use --model mlp for feature vectors");
}

std::array<std::int64_t, 3> pooled_image_shape(const ModelSpec& spec) {
  const auto shape = image_shape(spec);
  if (shape[1] < 4 || shape[2] < 4) {
    SLIMTRAIN_THROW(ConfigError, "--model ", spec.name, ": images of ", shape[1], "x", shape[2],
                    " are too small for two 2x2 poolings (need at least 4x4)");
  }
  return shape;
}

namespace {
template <class Model>
std::shared_ptr<ClassifierImpl> build(const ModelSpec& spec) {
  return std::make_shared<Model>(spec);
}
}  // namespace

std::shared_ptr<ClassifierImpl> make_model(const ModelSpec& spec) {
  const ModelKind& kind = model_kind(spec.name);
  if (spec.input_shape.empty() && kind.takes == Takes::x)  // named inputs have none
    SLIMTRAIN_THROW(ConfigError, "--model ", spec.name, ": the input shape is empty");
  for (const auto d : spec.input_shape) {
    if (d <= 0) {
      SLIMTRAIN_THROW(ConfigError, "--model ", spec.name, ": input shape ",
                      format_shape(spec.input_shape), " has a non-positive dimension");
    }
  }
  if (spec.num_classes < 2) {
    SLIMTRAIN_THROW(ConfigError, "--model ", spec.name, ": needs at least 2 classes, the data has ",
                    spec.num_classes);
  }
  if (!(spec.label_smoothing >= 0.0 && spec.label_smoothing < 1.0)) {
    SLIMTRAIN_THROW(ConfigError, "--label-smoothing: ", spec.label_smoothing, " is outside [0, 1)");
  }
  // The builder of each kind in model_kind.hpp's table (which is free of LibTorch).
  using Builder = std::shared_ptr<ClassifierImpl> (*)(const ModelSpec&);
  static const std::map<std::string, Builder> builders = {
      {"mlp", build<MlpImpl>},
      {"cnn-small", build<CnnSmallImpl>},
      {"cnn-bn", build<CnnBnImpl>},
      {"vit-tiny", build<VitTinyImpl>},
      {"text-bow", build<TextBowImpl>},
      {"text-transformer", build<TextTransformerImpl>},
      {"torchscript", build<TorchScriptClassifierImpl>},
      {"hf", hf::build_model},
  };
  return builders.at(kind.name)(spec);
}

void ClassifierImpl::save_script(const std::string& path) {
  SLIMTRAIN_THROW(ConfigError, "export --torchscript: ", path, ": model ", spec_.name,
                  " is built in, not a TorchScript module (export its weights to HDF5 instead)");
}

std::vector<torch::Tensor> ClassifierImpl::trainable_parameters() const {
  std::vector<torch::Tensor> out;
  for (const auto& p : parameters(/*recurse=*/true))
    if (p.requires_grad()) out.push_back(p);
  return out;
}

std::int64_t parameter_count(const torch::nn::Module& module, bool trainable_only) {
  std::int64_t count = 0;
  for (const auto& p : module.parameters(/*recurse=*/true))
    if (!trainable_only || p.requires_grad()) count += p.numel();
  return count;
}

Output ClassifierImpl::forward_named(const NamedInputs& inputs, const torch::Tensor& y) {
  std::string names;
  for (const auto& [name, tensor] : inputs) {
    if (name == "x") return forward(tensor, y);
    names += (names.empty() ? "" : ", ") + name;
  }
  SLIMTRAIN_THROW(ConfigError, "model ", spec_.model_option(),
                  " reads one input named x; this file's inputs are ", names,
                  " (train a TorchScript model whose forward takes them by name)");
}

std::string ClassifierImpl::input_mismatch(const std::vector<std::string>& required,
                                           const std::vector<std::string>& available) const {
  const std::vector<std::string> takes = input_names();
  std::vector<std::string> reads = takes;
  for (const std::string& name : optional_input_names()) reads.push_back(name);
  auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
    return out;
  };
  auto has = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  const std::string lists =
      "forward takes (" + join(reads) + "); the batches hold (" + join(available) + ")";
  for (const std::string& name : takes)
    if (!has(available, name)) return "forward's argument '" + name + "' is not an input: " + lists;
  for (const std::string& name : required)
    if (!has(reads, name))
      return "the file's input '" + name + "' is not an argument of forward: " + lists;
  return "";
}

}  // namespace slimtrain::model
