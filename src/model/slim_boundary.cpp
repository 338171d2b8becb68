#include "slimtrain/model/slim_boundary.hpp"

#include "slimtrain/core/dtype_name.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/model/classifier.hpp"

namespace slimtrain::model {
namespace {

// One output of forward, named as the warning shows it: "[1]" for a tuple, "'logits'" for a dict.
struct Named {
  std::string name;
  c10::IValue value;
};

}  // namespace

std::string describe_output(const std::string& where, const c10::IValue& value) {
  if (!value.isTensor()) return where + " " + value.tagKind();
  const torch::Tensor& t = value.toTensor();
  const std::string type = dtype_name(t.scalar_type());
  return where + " " + (type.empty() ? std::string(c10::toString(t.scalar_type())) : type) + " " +
         format_shape(t.sizes()) + " (" +
         format_bytes(static_cast<std::uint64_t>(t.numel()) * t.element_size()) + ")";
}

SlimOutput slim_boundary(c10::IValue returned, const SlimRequest& r) {
  // Everything forward returned, then which of it is the logits and which the loss.
  std::vector<Named> outputs;
  int logits_at = -1, loss_at = -1;
  const std::string& choice = r.logits_output;
  if (returned.isTensor()) {
    outputs.push_back({"[0]", returned});
    logits_at = 0;
  } else if (returned.isTuple()) {
    const auto& elements = returned.toTupleRef().elements();
    for (std::size_t i = 0; i < elements.size(); ++i)
      outputs.push_back({"[" + std::to_string(i) + "]", elements[i]});
    if (!choice.empty()) {
      try {
        logits_at = std::stoi(choice);
      } catch (const std::exception&) {
        SLIMTRAIN_THROW(ConfigError, "--logits-output: '", choice,
                        "' is not an index, and forward returned a tuple");
      }
      if (logits_at != 0 && r.labels_passed) loss_at = 0;
    } else if (r.labels_passed) {
      loss_at = 0;  // HuggingFace order: (loss, logits, ...)
      logits_at = 1;
    } else {
      logits_at = !elements.empty() && elements[0].isNone() ? 1 : 0;  // (None, logits, ...)
    }
  } else if (returned.isGenericDict()) {
    const std::string key = choice.empty() ? "logits" : choice;
    for (const auto& item : returned.toGenericDict()) {
      if (!item.key().isString()) continue;
      const std::string name = item.key().toStringRef();
      if (name == key) logits_at = static_cast<int>(outputs.size());
      if (name == "loss") loss_at = static_cast<int>(outputs.size());
      outputs.push_back({"'" + name + "'", item.value()});
    }
    if (logits_at < 0)
      SLIMTRAIN_THROW(DataError, r.who, ": forward returned a dict without '", key,
                      "' (--logits-output names the key of the logits)");
  } else {
    SLIMTRAIN_THROW(DataError, r.who, ": forward returned ", returned.tagKind(),
                    "; expected a Tensor (the logits), a tuple or a Dict[str, Tensor]");
  }
  if (logits_at < 0 || logits_at >= static_cast<int>(outputs.size()) ||
      !outputs[static_cast<std::size_t>(logits_at)].value.isTensor())
    SLIMTRAIN_THROW(DataError, r.who, ": output ",
                    logits_at < static_cast<int>(outputs.size()) && logits_at >= 0
                        ? outputs[static_cast<std::size_t>(logits_at)].name
                        : "[" + std::to_string(logits_at) + "]",
                    " is not a tensor, so it cannot be the logits (--logits-output picks another)");

  torch::Tensor logits = outputs[static_cast<std::size_t>(logits_at)].value.toTensor();
  if (logits.dim() != 2 || logits.size(0) != r.batch || logits.size(1) != r.num_classes)
    SLIMTRAIN_THROW(DataError, r.who, ": logits (output ",
                    outputs[static_cast<std::size_t>(logits_at)].name, ") of shape ",
                    format_shape(logits.sizes()), " for a batch of ", r.batch, " and ",
                    r.num_classes, " classes; expected [", r.batch, ",", r.num_classes,
                    "] (--logits-output picks another output)");

  torch::Tensor loss;
  const bool loss_returned =
      loss_at >= 0 && outputs[static_cast<std::size_t>(loss_at)].value.isTensor();
  if (r.model_loss) {
    if (!loss_returned)
      SLIMTRAIN_THROW(ConfigError, "--model-loss: ", r.who,
                      " returned no loss (a tuple (loss, logits, ...) when given labels, or a "
                      "dict with 'loss')");
    loss = outputs[static_cast<std::size_t>(loss_at)].value.toTensor();
  }
  SlimOutput slim;
  slim.logits = std::move(logits);
  slim.loss = std::move(loss);
  // The slim boundary: nothing else leaves this function.
  if (r.describe_dropped) {
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const bool kept =
          static_cast<int>(i) == logits_at || (r.model_loss && static_cast<int>(i) == loss_at);
      if (!kept && !outputs[i].value.isNone())
        slim.dropped.push_back(describe_output(outputs[i].name, outputs[i].value));
    }
  }
  return slim;
}

}  // namespace slimtrain::model
