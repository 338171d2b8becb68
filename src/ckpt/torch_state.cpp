#include "slimtrain/ckpt/torch_state.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <utility>

#include "slimtrain/core/error.hpp"

namespace slimtrain::ckpt {
namespace {

torch::Tensor host_clone(const torch::Tensor& t) {
  return t.detach().to(torch::kCPU, /*non_blocking=*/false, /*copy=*/true).contiguous();
}

std::vector<std::pair<std::string, torch::Tensor>> module_tensors(const torch::nn::Module& module) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& p : module.named_parameters(true)) out.emplace_back(p.key(), p.value());
  for (const auto& b : module.named_buffers(true)) out.emplace_back(b.key(), b.value());
  return out;
}

// Optimizer::load's own reading of an archive that Optimizer::save wrote, for the state alone.
// The archive files each parameter's state under a key, the parameter's TensorImpl address as
// text, and lists each group's keys in parameter order. LibTorch 1.x wrote that address in
// hexadecimal ("0x55d0c2a1b2c0"); LibTorch 2.x writes it in decimal and reads it back with
// std::stoull, which takes every 1.x key for 0: a checkpoint written under 1.x would give the
// first parameter some parameter's state and every other one a null state. Keys are matched as
// text here, whichever LibTorch wrote them. As LibTorch 1.x did, the options saved with the groups
// (learning rate, momentum, ...) are not restored: this run's options hold.
template <typename State>
void load_param_states(torch::serialize::InputArchive& archive,
                       torch::optim::Optimizer& optimizer) {
  c10::IValue version;
  archive.read("pytorch_version", version);
  if (!version.isString() || version.toStringRef() != "1.5.0")
    SLIMTRAIN_THROW(DataError, "optimizer state in the checkpoint is of an unknown layout");
  torch::serialize::InputArchive state_archive;
  archive.read("state", state_archive);
  std::map<std::string, std::unique_ptr<State>> saved;
  for (const std::string& key : state_archive.keys()) {
    torch::serialize::InputArchive one;
    state_archive.read(key, one);
    auto state = std::make_unique<State>();
    state->serialize(one);
    saved[key] = std::move(state);
  }
  torch::serialize::InputArchive groups_archive;
  archive.read("param_groups", groups_archive);
  torch::Tensor group_count;
  groups_archive.read("param_groups/size", group_count);
  auto& groups = optimizer.param_groups();
  if (group_count.item<std::int64_t>() != static_cast<std::int64_t>(groups.size()))
    SLIMTRAIN_THROW(DataError, "optimizer state in the checkpoint has ",
                    group_count.item<std::int64_t>(), " parameter groups; this optimizer has ",
                    groups.size());
  std::vector<std::pair<OptimizerStateKey, std::unique_ptr<State>>> restored;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    torch::serialize::InputArchive group;
    groups_archive.read("param_groups/" + std::to_string(g), group);
    torch::Tensor param_count;
    group.read("params/size", param_count);
    const std::vector<torch::Tensor>& params = groups[g].params();
    if (param_count.item<std::int64_t>() != static_cast<std::int64_t>(params.size()))
      SLIMTRAIN_THROW(DataError, "optimizer state in the checkpoint has ",
                      param_count.item<std::int64_t>(), " parameters in group ", g,
                      "; this optimizer has ", params.size());
    for (std::size_t i = 0; i < params.size(); ++i) {
      c10::IValue key;
      group.read("params/" + std::to_string(i), key);
      if (!key.isString())
        SLIMTRAIN_THROW(DataError, "optimizer state in the checkpoint is of an unknown layout");
      const auto found = saved.find(key.toStringRef());
      if (found != saved.end() && found->second)
        restored.emplace_back(optimizer_state_key(params[i]), std::move(found->second));
    }
  }
  // Nothing changes unless the whole archive was read.
  for (auto& [key, state] : restored) optimizer.state()[key] = std::move(state);
}

}  // namespace

std::vector<TensorEntry> host_copy(const torch::nn::Module& module, const std::string& prefix,
                                   const std::unordered_map<const void*, torch::Tensor>& copied,
                                   const std::set<std::string>& left_out) {
  torch::NoGradGuard no_grad;
  std::vector<TensorEntry> entries;
  for (const auto& [name, tensor] : module_tensors(module)) {
    if (!tensor.defined() || left_out.count(name) != 0) continue;
    const auto ready = copied.find(tensor.unsafeGetTensorImpl());
    entries.push_back({prefix + name, ready != copied.end() ? ready->second : host_clone(tensor)});
  }
  return entries;
}

namespace {
std::map<std::string, const torch::Tensor*> saved_tensors(const CheckpointState& state,
                                                          const std::string& prefix) {
  std::map<std::string, const torch::Tensor*> saved;
  for (const TensorEntry& e : state.tensors)
    if (e.name.compare(0, prefix.size(), prefix) == 0)
      saved[e.name.substr(prefix.size())] = &e.tensor;
  return saved;
}
}  // namespace

std::set<std::string> frozen_parameter_names(const torch::nn::Module& module) {
  std::set<std::string> names;
  for (const auto& p : module.named_parameters(true))
    if (!p.value().requires_grad()) names.insert(p.key());
  return names;
}

std::string first_difference(const torch::nn::Module& module, const CheckpointState& state,
                             const std::string& prefix, const std::set<std::string>& may_lack) {
  const auto saved = saved_tensors(state, prefix);
  const auto targets = module_tensors(module);
  for (const auto& [name, target] : targets) {
    if (!target.defined()) continue;
    const auto it = saved.find(name);
    if (it == saved.end() && may_lack.count(name) != 0) continue;  // the base model's
    if (it == saved.end())
      return detail::concat("the checkpoint (step ", state.step, ") has no tensor '", prefix, name,
                            "' for the model's '", name, "' of shape ", target.sizes());
    const torch::Tensor& source = *it->second;
    if (source.sizes() != target.sizes())
      return detail::concat("'", name, "' has shape ", source.sizes(), " in the checkpoint and ",
                            target.sizes(), " in the model");
    if (source.scalar_type() != target.scalar_type())
      return detail::concat("'", name, "' is ", source.scalar_type(), " in the checkpoint and ",
                            target.scalar_type(), " in the model");
  }
  for (const auto& [name, tensor] : saved) {
    bool found = false;
    for (const auto& t : targets) found = found || t.first == name;
    if (!found)
      return detail::concat("the checkpoint's '", prefix, name, "' (shape ", tensor->sizes(),
                            ") has no counterpart in the model");
  }
  return "";
}

void load_into(torch::nn::Module& module, const CheckpointState& state, const std::string& prefix,
               const std::set<std::string>& may_lack) {
  const std::string difference = first_difference(module, state, prefix, may_lack);
  if (!difference.empty())
    SLIMTRAIN_THROW(DataError, "checkpoint of step ", state.step,
                    " does not fit this model: ", difference);
  const auto saved = saved_tensors(state, prefix);
  std::set<std::string> deferred;  // the caller reads those itself
  for (const TensorEntry& e : state.tensors)
    if (e.deferred) deferred.insert(e.name);
  torch::NoGradGuard no_grad;
  for (const auto& [name, target] : module_tensors(module))
    if (target.defined() && deferred.count(prefix + name) == 0 && saved.count(name) != 0)
      target.copy_(*saved.at(name));
}

std::string serialize_optimizer(const torch::optim::Optimizer& optimizer) {
  torch::serialize::OutputArchive archive;
  optimizer.save(archive);
  std::ostringstream out;
  archive.save_to(out);
  return out.str();
}

void deserialize_optimizer(torch::optim::Optimizer& optimizer, const std::string& bytes) {
  // The state goes where the parameters are: LibTorch's optimizers do not move it themselves,
  // and the archive remembers the writer's device (rank 0's cuda:0, or a GPU run resumed on CPU).
  torch::Device device(torch::kCPU);
  for (const auto& group : optimizer.param_groups())
    if (!group.params().empty()) device = group.params().front().device();
  try {
    torch::serialize::InputArchive archive;
    std::istringstream in(bytes);
    archive.load_from(in, device);
    if (auto* sgd = dynamic_cast<torch::optim::SGD*>(&optimizer))
      load_param_states<torch::optim::SGDParamState>(archive, *sgd);
    else if (auto* adamw = dynamic_cast<torch::optim::AdamW*>(&optimizer))
      load_param_states<torch::optim::AdamWParamState>(archive, *adamw);
    else if (auto* adam = dynamic_cast<torch::optim::Adam*>(&optimizer))
      load_param_states<torch::optim::AdamParamState>(archive, *adam);
    else
      optimizer.load(archive);
  } catch (const c10::Error& e) {
    SLIMTRAIN_THROW(DataError, "optimizer state in the checkpoint does not fit this optimizer: ",
                    e.what_without_backtrace());
  }
}

}  // namespace slimtrain::ckpt
