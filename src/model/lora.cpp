#include "slimtrain/model/lora.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "slimtrain/core/detail/joined.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/model/deferred_weights.hpp"

namespace slimtrain::model {

namespace nn = torch::nn;

namespace {

// --lora-train NAME: a module's name anywhere in a path ("embed_tokens") or a path prefix.
bool names_module(const std::string& parameter, const std::string& module) {
  return parameter.compare(0, module.size() + 1, module + ".") == 0 ||
         parameter.find("." + module + ".") != std::string::npos;
}

}  // namespace

LoraAImpl::LoraAImpl(std::int64_t in, std::int64_t r, double scale_, double dropout_)
    : scale(scale_), dropout(dropout_) {
  weight = register_parameter("weight", torch::empty({r, in}));
  // PEFT's default: kaiming_uniform_(a=sqrt(5)), uniform in +-1/sqrt(in).
  torch::NoGradGuard no_grad;
  nn::init::kaiming_uniform_(weight, std::sqrt(5.0));
}

torch::Tensor lora_linear(nn::Linear layer, const torch::Tensor& x, GradSink* sink) {
  torch::Tensor y = linear(x, *layer, sink);
  const auto children = layer->named_children();
  if (children.is_empty()) return y;
  const auto* a = children.find("lora_A");
  const auto* b = children.find("lora_B");
  if (a == nullptr || b == nullptr) return y;
  const auto* adapter = dynamic_cast<const LoraAImpl*>(a->get());
  const auto* up = dynamic_cast<const nn::LinearImpl*>(b->get());
  if (adapter == nullptr || up == nullptr) return y;
  const torch::Tensor h =
      adapter->dropout > 0 ? torch::dropout(x, adapter->dropout, layer->is_training()) : x;
  return y + torch::linear(torch::linear(h, adapter->weight), up->weight) * adapter->scale;
}

bool is_adapter_name(const std::string& name) {
  return name.find(".lora_A.") != std::string::npos || name.find(".lora_B.") != std::string::npos;
}

std::vector<std::string> attach_lora(nn::Module& model, const LoraOptions& options,
                                     const std::vector<std::string>& head,
                                     const std::vector<std::string>& train) {
  const std::set<std::string> heads(head.begin(), head.end());
  std::vector<std::string> targeted, names;
  for (const auto& item : model.named_modules("", false)) {
    auto* linear = dynamic_cast<nn::LinearImpl*>(item.value().get());
    if (linear == nullptr || heads.count(item.key() + ".weight") != 0) continue;
    const std::string& path = item.key();
    const std::string last = path.substr(path.rfind('.') + 1);
    if (std::find(names.begin(), names.end(), last) == names.end()) names.push_back(last);
    const bool hit =
        options.all_linear() ||
        std::find(options.targets.begin(), options.targets.end(), last) != options.targets.end() ||
        std::find(options.targets.begin(), options.targets.end(), path) != options.targets.end();
    if (!hit) continue;
    const std::int64_t in = linear->weight.size(1), out = linear->weight.size(0);
    linear->register_module("lora_A", LoraA(in, options.r, options.scale(), options.dropout));
    auto up = linear->register_module("lora_B",
                                      nn::Linear(nn::LinearOptions(options.r, out).bias(false)));
    torch::NoGradGuard no_grad;
    up->weight.zero_();
    targeted.push_back(path);
  }
  if (targeted.empty())
    SLIMTRAIN_THROW(ConfigError, "--lora: targets=", detail::joined(options.targets),
                    " match no linear layer of the model's body (its linear layers: ",
                    detail::joined(names), ")");
  // Each name must match something: a typo would leave its layers without adapters, unsaid.
  for (const std::string& t : options.all_linear() ? std::vector<std::string>{} : options.targets)
    if (std::none_of(targeted.begin(), targeted.end(), [&](const std::string& path) {
          return path == t || path.substr(path.rfind('.') + 1) == t;
        }))
      SLIMTRAIN_THROW(ConfigError, "--lora: targets=", t,
                      " matches no linear layer of the model's body (its linear layers: ",
                      detail::joined(names), ")");
  std::vector<bool> used(train.size(), false);
  for (auto& item : model.named_parameters(true)) {
    const std::string& name = item.key();
    const bool adapter = is_adapter_name(name);
    bool trains = adapter || heads.count(name) != 0;
    for (std::size_t i = 0; i < train.size(); ++i) {
      if (!names_module(name, train[i])) continue;
      trains = used[i] = true;
      // PEFT keeps a targeted layer's base frozen; a modules_to_save over it would not load.
      const std::string owner = name.substr(0, name.rfind('.'));
      if (!adapter && std::find(targeted.begin(), targeted.end(), owner) != targeted.end())
        SLIMTRAIN_THROW(ConfigError, "--lora-train: '", train[i], "' would train ", name,
                        ", the base of a layer --lora targets (PEFT keeps those frozen and its "
                        "adapter format cannot hold it): name modules outside targets=");
    }
    item.value().set_requires_grad(trains);
  }
  for (std::size_t i = 0; i < train.size(); ++i)
    if (!used[i])
      SLIMTRAIN_THROW(ConfigError, "--lora-train: '", train[i],
                      "' names no module of the model (a name such as embed_tokens, or a path "
                      "prefix such as model.norm)");
  return targeted;
}

std::int64_t lora_adapter_values(const std::string& name, const std::vector<std::int64_t>& shape,
                                 const LoraOptions& options) {
  const std::string suffix = ".weight";
  if (shape.size() != 2 || name.size() <= suffix.size() ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0 ||
      lora_trains_in_full(name, {}))
    return 0;
  const std::string path = name.substr(0, name.size() - suffix.size());
  const std::string last = path.substr(path.rfind('.') + 1);
  const bool hit = options.all_linear()
                       ? last.find("embed") == std::string::npos
                       : std::find(options.targets.begin(), options.targets.end(), last) !=
                                 options.targets.end() ||
                             std::find(options.targets.begin(), options.targets.end(), path) !=
                                 options.targets.end();
  return hit ? options.r * (shape[0] + shape[1]) : 0;
}

bool lora_trains_in_full(const std::string& name, const std::vector<std::string>& train) {
  for (const char* head : {"classifier.", "pre_classifier.", "score."})
    if (name.rfind(head, 0) == 0) return true;
  return std::any_of(train.begin(), train.end(),
                     [&](const std::string& m) { return names_module(name, m); });
}

std::int64_t hold_frozen_in_bf16(nn::Module& model) {
  torch::NoGradGuard no_grad;
  std::int64_t values = 0;
  for (torch::Tensor p : model.parameters()) {
    const bool frozen = !p.requires_grad() && p.is_floating_point();
    const torch::ScalarType dtype = frozen ? torch::kBFloat16 : p.scalar_type();
    if (!has_memory(p))
      p.set_data(torch::empty(p.sizes(), p.options().dtype(dtype)));
    else if (p.scalar_type() != dtype)
      p.set_data(p.to(dtype));
    if (frozen) values += p.numel();
  }
  return values;
}

void merge_lora(nn::Module& model) {
  torch::NoGradGuard no_grad;
  for (const auto& item : model.named_modules("", false)) {
    auto* linear = dynamic_cast<nn::LinearImpl*>(item.value().get());
    if (linear == nullptr) continue;
    const auto children = linear->named_children();
    const auto* a = children.find("lora_A");
    const auto* b = children.find("lora_B");
    if (a == nullptr || b == nullptr) continue;
    const auto* adapter = dynamic_cast<const LoraAImpl*>(a->get());
    const auto* up = dynamic_cast<const nn::LinearImpl*>(b->get());
    if (adapter == nullptr || up == nullptr) continue;
    linear->weight.add_(torch::matmul(up->weight, adapter->weight).to(linear->weight.dtype()),
                        adapter->scale);
  }
}

}  // namespace slimtrain::model
