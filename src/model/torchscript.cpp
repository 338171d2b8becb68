#include "slimtrain/model/torchscript.hpp"

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <unordered_set>

#include "slimtrain/core/dtype_name.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/model/script_archive.hpp"
#include "slimtrain/model/slim_boundary.hpp"

namespace slimtrain::model {
namespace {

// The line of a LibTorch error that says what went wrong: its message, or for the interpreter's
// traceback the last line ("RuntimeError: Given groups=1, weight of size ...").
std::string essence(const std::string& text) {
  std::string last;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find_first_not_of(" \t") != std::string::npos) last = line;
  if (text.find("Traceback") != std::string::npos) return last;
  std::istringstream again(text);  // else the first line that says something (a compiler's
  for (std::string line; std::getline(again, line);)  // report starts with an empty one)
    if (line.find_first_not_of(" \t") != std::string::npos) return line;
  return text;
}

// The element type as checkpoints name it, or LibTorch's own name for the rare others.
std::string type_name(torch::ScalarType type) {
  const std::string name = dtype_name(type);
  return name.empty() ? std::string(c10::toString(type)) : name;
}

torch::jit::Module load_module(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    SLIMTRAIN_THROW(DataError, "--model torchscript:", path, ": no such file");
  try {
    return torch::jit::load(path, torch::Device(torch::kCPU));
  } catch (const c10::Error& e) {
    log::debug("--model torchscript:", path, ": LibTorch says:\n", e.what_without_backtrace());
    throw_unloadable(path, essence(e.what_without_backtrace()));
  } catch (
      const std::exception& e) {  // the TorchScript compiler's report (torch::jit::ErrorReport)
    log::debug("--model torchscript:", path, ": LibTorch says:\n", e.what());
    throw_unloadable(path, essence(e.what()));
  }
}

}  // namespace

TorchScriptClassifierImpl::TorchScriptClassifierImpl(const ModelSpec& spec)
    : ClassifierImpl(spec), script_(load_module(spec.script_path)) {
  // Off by default: the graph runs op by op and autograd records it as in eager PyTorch. The
  // profiling executor's own autodiff made cnn-small's backward ~15% slower here (40 vs 34 ms),
  // and its optimisation passes are what make the first iterations slow.
  torch::jit::setGraphExecutorOptimize(spec.jit_optimize);
  const auto forward = script_.find_method("forward");
  if (!forward)
    SLIMTRAIN_THROW(ConfigError, "--model torchscript:", spec.script_path,
                    ": the module has no forward method");
  // The schema's arguments are self, the inputs and optionally the labels: the last argument
  // when named so, or the second of forward(x, ...), as before inputs had names.
  const auto& arguments = forward->function().getSchema().arguments();
  if (arguments.size() < 2)
    SLIMTRAIN_THROW(ConfigError, "--model torchscript:", spec.script_path,
                    ": forward takes no argument; slimtrain calls forward(x) or forward(x, labels)"
                    ", or forward(<input names>[, labels]) for named inputs");
  static const std::unordered_set<std::string> label_names = {"labels", "label", "y", "target",
                                                              "targets"};
  takes_labels_ = label_names.count(arguments.back().name()) > 0 ||
                  (arguments.size() == 3 && arguments[1].name() == "x");
  for (std::size_t i = 1; i + (takes_labels_ ? 1 : 0) < arguments.size(); ++i)
    inputs_.push_back(arguments[i].name());
  // A tied tensor (shared embeddings, an encoder and decoder with one weight) is listed under
  // each of its names; it is mirrored once, under the first, so it is counted, reduced and
  // updated once, as PyTorch's named_parameters() does.
  std::unordered_set<const c10::TensorImpl*> seen;
  for (const auto& p : script_.named_parameters(/*recurse=*/true))
    if (seen.insert(p.value.unsafeGetTensorImpl()).second) mirror(p.name, p.value, false);
  for (const auto& b : script_.named_buffers(/*recurse=*/true))
    if (seen.insert(b.value.unsafeGetTensorImpl()).second) mirror(b.name, b.value, true);
  mutable_spec().script_signature = signature(script_);
  train(true);
}

std::string TorchScriptClassifierImpl::signature(const torch::jit::Module& module) {
  std::ostringstream out;
  for (const auto& p : module.named_parameters(true))
    out << "p " << p.name << ' ' << type_name(p.value.scalar_type()) << ' '
        << format_shape(p.value.sizes()) << ';';
  for (const auto& b : module.named_buffers(true))
    out << "b " << b.name << ' ' << type_name(b.value.scalar_type()) << ' '
        << format_shape(b.value.sizes()) << ';';
  return out.str();
}

// The module's tensor under its dotted name, as a child-module path of this nn::Module: the same
// storage, so a checkpoint load, a device move or a broadcast reaches the scripted module too.
void TorchScriptClassifierImpl::mirror(const std::string& dotted, const torch::Tensor& tensor,
                                       bool buffer) {
  std::vector<std::string> parts;
  std::stringstream in(dotted);
  for (std::string part; std::getline(in, part, '.');) parts.push_back(part);
  torch::nn::Module* node = this;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    auto children = node->named_children();
    const auto* found = children.find(parts[i]);
    node = found ? found->get()
                 : node->register_module(parts[i], std::make_shared<torch::nn::Module>()).get();
  }
  if (buffer)
    node->register_buffer(parts.back(), tensor);
  else
    node->register_parameter(parts.back(), tensor, tensor.requires_grad());
}

void TorchScriptClassifierImpl::train(bool on) {
  torch::nn::Module::train(on);
  script_.train(on);
}

Output TorchScriptClassifierImpl::forward(const torch::Tensor& x, const torch::Tensor& y) {
  return call(x, y, dropped_.empty());
}

Output TorchScriptClassifierImpl::call(const torch::Tensor& x, const torch::Tensor& y,
                                       bool record) {
  if (inputs_.size() != 1)
    SLIMTRAIN_THROW(ConfigError, "model torchscript:", spec().script_path, ": forward takes ",
                    inputs_.size(), " inputs by name; a file of layout 1 has one, x");
  return call({x}, x.size(0), y, record, "of shape " + format_shape(x.sizes()));
}

Output TorchScriptClassifierImpl::forward_named(const NamedInputs& inputs, const torch::Tensor& y) {
  return call_named(inputs, y, dropped_.empty());
}

Output TorchScriptClassifierImpl::call_named(const NamedInputs& inputs, const torch::Tensor& y,
                                             bool record) {
  std::vector<c10::IValue> args;
  std::string shapes;
  std::int64_t batch = y.defined() ? y.size(0) : -1;
  for (const std::string& name : inputs_) {
    const auto it = std::find_if(inputs.begin(), inputs.end(),
                                 [&](const auto& named) { return named.first == name; });
    if (it == inputs.end())
      SLIMTRAIN_THROW(DataError, "model torchscript:", spec().script_path, ": forward's input '",
                      name, "' is not in the batch");
    args.emplace_back(it->second);
    shapes += (shapes.empty() ? "" : ", ") + name + " " + format_shape(it->second.sizes());
    if (batch < 0) batch = it->second.size(0);
  }
  return call(std::move(args), batch, y, record, "of " + shapes);
}

Output TorchScriptClassifierImpl::call(std::vector<c10::IValue> inputs, std::int64_t batch,
                                       const torch::Tensor& y, bool record,
                                       const std::string& shapes) {
  const ModelSpec& s = spec();
  const std::string who = "model torchscript:" + s.script_path;
  const bool labels_passed = takes_labels_ && y.defined();
  if (takes_labels_) inputs.emplace_back(labels_passed ? c10::IValue(y) : c10::IValue());
  c10::IValue out;
  try {
    out = script_.forward(std::move(inputs));
  } catch (const c10::Error& e) {
    SLIMTRAIN_THROW(DataError, who, ": forward failed on a batch ", shapes, ": ",
                    essence(e.what_without_backtrace()));
  } catch (const std::exception& e) {  // the interpreter's JITException
    SLIMTRAIN_THROW(DataError, who, ": forward failed on a batch ", shapes, ": ",
                    essence(e.what()));
  }

  SlimRequest request;
  request.who = who;
  request.logits_output = s.logits_output;
  request.labels_passed = labels_passed;
  request.batch = batch;
  request.num_classes = s.num_classes;
  request.model_loss = s.model_loss;
  request.describe_dropped = record;
  SlimOutput slim = slim_boundary(std::move(out), request);
  if (record) dropped_ = std::move(slim.dropped);
  if (s.model_loss) {
    Output o;
    o.logits = std::move(slim.logits);
    o.loss = y.defined() ? slim.loss : torch::Tensor();
    return o;
  }
  return make_output(std::move(slim.logits), y);
}

torch::Tensor TorchScriptClassifierImpl::embed(const torch::Tensor& x) {
  const auto method = script_.find_method("embed");
  if (!method)
    SLIMTRAIN_THROW(ConfigError, "--embeddings: model torchscript:", spec().script_path,
                    " has no embed method; add `def embed(self, x) -> Tensor` returning [B, F] "
                    "features to export embeddings");
  c10::IValue out;
  try {
    out = (*method)({x});
  } catch (const std::exception& e) {
    SLIMTRAIN_THROW(DataError, "--embeddings: model torchscript:", spec().script_path,
                    ": embed failed on a batch of shape ", format_shape(x.sizes()), ": ",
                    essence(e.what()));
  }
  if (!out.isTensor() || out.toTensor().dim() != 2 || out.toTensor().size(0) != x.size(0))
    SLIMTRAIN_THROW(DataError, "--embeddings: model torchscript:", spec().script_path,
                    ": embed returned ", describe_output("", out), ", expected [", x.size(0),
                    ", F]");
  return out.toTensor();
}

std::int64_t TorchScriptClassifierImpl::embedding_dim() const {
  torch::NoGradGuard no_grad;
  std::vector<std::int64_t> shape{1};
  shape.insert(shape.end(), spec().input_shape.begin(), spec().input_shape.end());
  const torch::Device device =
      parameters().empty() ? torch::Device(torch::kCPU) : parameters().front().device();
  auto* self = const_cast<TorchScriptClassifierImpl*>(this);
  return self->embed(torch::zeros(shape, torch::TensorOptions().device(device))).size(1);
}

void TorchScriptClassifierImpl::probe(std::int64_t batch_size, const torch::Device& device) {
  // Side effects undone afterwards: the RNG (Dropout draws), the buffers (BatchNorm statistics
  // of a zero batch), the gradients, the mode.
  at::Generator cpu = at::detail::getDefaultCPUGenerator();
  torch::Tensor cpu_state;
  {
    std::lock_guard<std::mutex> lock(cpu.mutex());
    cpu_state = cpu.get_state();
  }
  at::Generator device_gen;
  torch::Tensor device_state;
  if (device.is_cuda()) {
    device_gen = at::globalContext().defaultGenerator(device);
    std::lock_guard<std::mutex> lock(device_gen.mutex());
    device_state = device_gen.get_state();
  }
  std::vector<torch::Tensor> saved;
  for (const auto& b : buffers()) saved.push_back(b.detach().clone());
  const bool was_training = is_training();

  // Layout 2: the session's batch of zeros of every input; else x of the input shape.
  NamedInputs named;
  for (const auto& [name, tensor] : probe_inputs()) named.emplace_back(name, tensor.to(device));
  const std::int64_t rows = named.empty() ? batch_size : named.front().second.size(0);
  std::vector<std::int64_t> shape{batch_size};
  shape.insert(shape.end(), spec().input_shape.begin(), spec().input_shape.end());
  const torch::Tensor x =
      named.empty() ? torch::zeros(shape, torch::TensorOptions().device(device)) : torch::Tensor();
  const torch::Tensor y = torch::zeros({rows}, torch::TensorOptions(torch::kLong).device(device));
  auto run = [&](bool record) {
    return named.empty() ? call(x, y, record) : call_named(named, y, record);
  };
  // A few iterations: LibTorch's profiling executor optimises the graph after the first runs.
  train(true);
  for (int i = 0; i < 3; ++i) {
    Output out = run(i == 0);
    if (out.loss.requires_grad()) out.loss.backward();
  }
  const std::vector<std::string> dropped = dropped_;
  {
    torch::NoGradGuard no_grad;
    train(false);
    for (int i = 0; i < 3; ++i) run(false);
  }
  train(was_training);
  for (auto& p : parameters()) p.mutable_grad().reset();
  {
    torch::NoGradGuard no_grad;
    std::size_t k = 0;
    for (auto& b : buffers()) b.copy_(saved[k++]);
  }
  {
    std::lock_guard<std::mutex> lock(cpu.mutex());
    cpu.set_state(cpu_state);
  }
  if (device_state.defined()) {
    std::lock_guard<std::mutex> lock(device_gen.mutex());
    device_gen.set_state(device_state);
  }
  dropped_ = dropped;
}

void TorchScriptClassifierImpl::save_script(const std::string& path) {
  const bool was_training = is_training();
  train(false);
  try {
    script_.save(path);
  } catch (const c10::Error& e) {
    train(was_training);
    SLIMTRAIN_THROW(Error, "writing ", path, ": ", essence(e.what_without_backtrace()));
  }
  train(was_training);
}

}  // namespace slimtrain::model
