#include "slimtrain/ckpt/torch_state.hpp"

#include <map>
#include <sstream>

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

}  // namespace

std::vector<TensorEntry> host_copy(const torch::nn::Module& module, const std::string& prefix) {
  torch::NoGradGuard no_grad;
  std::vector<TensorEntry> entries;
  for (const auto& [name, tensor] : module_tensors(module))
    if (tensor.defined()) entries.push_back({prefix + name, host_clone(tensor)});
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

std::string first_difference(const torch::nn::Module& module, const CheckpointState& state,
                             const std::string& prefix) {
  const auto saved = saved_tensors(state, prefix);
  const auto targets = module_tensors(module);
  for (const auto& [name, target] : targets) {
    if (!target.defined()) continue;
    const auto it = saved.find(name);
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

void load_into(torch::nn::Module& module, const CheckpointState& state, const std::string& prefix) {
  const std::string difference = first_difference(module, state, prefix);
  if (!difference.empty())
    SLIMTRAIN_THROW(DataError, "checkpoint of step ", state.step,
                    " does not fit this model: ", difference);
  const auto saved = saved_tensors(state, prefix);
  torch::NoGradGuard no_grad;
  for (const auto& [name, target] : module_tensors(module))
    if (target.defined()) target.copy_(*saved.at(name));
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
    optimizer.load(archive);
  } catch (const c10::Error& e) {
    SLIMTRAIN_THROW(DataError, "optimizer state in the checkpoint does not fit this optimizer: ",
                    e.what_without_backtrace());
  }
}

}  // namespace slimtrain::ckpt
