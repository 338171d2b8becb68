#include "slimtrain/model/hf/pretrained.hpp"

#include <algorithm>
#include <set>

#include "slimtrain/core/error.hpp"
#include "slimtrain/model/hf/hf_model.hpp"
#include "slimtrain/model/lora.hpp"

namespace slimtrain::model::hf {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

bool ignorable(const std::string& name) {
  return starts_with(name, "cls.") || starts_with(name, "lm_head.") ||
         ends_with(name, ".position_ids") || ends_with(name, ".token_type_ids");
}

PretrainedMatch match_pretrained(ClassifierImpl& net, const WeightSource& source) {
  auto* hf = dynamic_cast<HfModel*>(&net);
  if (hf == nullptr)
    SLIMTRAIN_THROW(Error, "load_pretrained: ", net.spec().model_option(),
                    " is not a HuggingFace model");
  const std::vector<std::string> heads = hf->head_names();
  const std::string optional = hf->optional_prefix();
  const auto is_head = [&](const std::string& n) {
    return std::find(heads.begin(), heads.end(), n) != heads.end() ||
           (!optional.empty() && starts_with(n, optional));
  };
  PretrainedMatch match;
  PretrainedLoad& out = match.load;
  std::set<std::string> used;
  for (auto& item : net.named_parameters(true)) {
    const std::string& name = item.key();
    torch::Tensor& param = item.value();
    if (is_adapter_name(name)) continue;  // --lora's adapters start as LoRA starts them
    // The name, or where a base model's checkpoint or the other key layout keeps it.
    std::string stored = name;
    for (const std::string& candidate : hf->stored_names(name))
      if (source.has(candidate)) {
        stored = candidate;
        break;
      }
    if (!source.has(stored)) {
      if (!is_head(name))
        SLIMTRAIN_THROW(DataError, source.where, ": has no tensor ", name, " (",
                        format_shape(param.sizes()), "), which ", net.spec().model_option(),
                        " needs");
      out.created.push_back(name);
      if (out.created_reason.empty()) out.created_reason = "missing";
      continue;
    }
    used.insert(stored);
    const std::vector<std::int64_t> shape = source.shape(stored);
    if (shape != param.sizes().vec()) {
      if (!is_head(name))
        SLIMTRAIN_THROW(DataError, source.where, ": tensor ", stored, " is ", format_shape(shape),
                        ", where ", net.spec().model_option(), " needs ",
                        format_shape(param.sizes()));
      out.created.push_back(name);
      if (out.created_reason.empty() || out.created_reason == "missing")
        out.created_reason = format_shape(shape) + " where the data has " +
                             std::to_string(net.spec().num_classes) + " classes";
      continue;
    }
    match.stored.emplace(param.unsafeGetTensorImpl(), stored);
    ++out.loaded;
  }
  for (const std::string& name : source.names()) {
    if (used.count(name) > 0) continue;
    if (ignorable(name)) {
      out.ignored.push_back(name);
      continue;
    }
    SLIMTRAIN_THROW(DataError, source.where, ": holds tensor ", name, " (",
                    format_shape(source.shape(name)), "), which no part of ",
                    net.spec().model_option(), " (", hf->config().describe(), ") has");
  }
  return match;
}

PretrainedLoad load_pretrained(ClassifierImpl& net, const WeightSource& source) {
  const PretrainedMatch match = match_pretrained(net, source);
  torch::NoGradGuard no_grad;
  for (torch::Tensor& param : net.parameters(true)) {
    const auto found = match.stored.find(param.unsafeGetTensorImpl());
    if (found != match.stored.end())
      param.copy_(source.read(found->second).to(param.scalar_type()));
  }
  return match.load;
}

std::string describe_created(const PretrainedLoad& load, const std::string& dir) {
  if (load.created.empty()) return "";
  std::string names;
  for (const std::string& n : load.created) names += (names.empty() ? "" : ", ") + n;
  return "hf:" + dir + ": " + names +
         " newly initialised (in the checkpoint: " + load.created_reason +
         "); train the model before its predictions mean anything";
}

}  // namespace slimtrain::model::hf
