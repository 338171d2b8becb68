#pragma once
/**
 * @brief The slim boundary for a module whose forward returns what it likes (TorchScript): the
 * logits, and the module's own loss when asked for, are taken from a tensor, a tuple
 * (HuggingFace order: (loss, logits, ...) when labels were passed, (logits, ...) or
 * (None, logits, ...) otherwise) or a Dict[str, Tensor]; everything else is dropped here, only
 * described (name, dtype, shape, size) for the one warning that names it.
 */
#include <torch/script.h>

#include <cstdint>
#include <string>
#include <vector>

namespace slimtrain::model {

/** @brief What the caller knows of the call: who made it and what it expects back. */
struct SlimRequest {
  std::string who;            ///< "model torchscript:PATH", for messages
  std::string logits_output;  ///< --logits-output: a tuple index or a dict key ("": default)
  bool labels_passed = false;
  std::int64_t batch = 0, num_classes = 0;  ///< the logits' expected shape
  bool model_loss = false;                  ///< --model-loss: the module's own loss is kept too
  bool describe_dropped = false;            ///< fill SlimOutput::dropped
};

struct SlimOutput {
  torch::Tensor logits;
  torch::Tensor loss;                ///< the module's, with model_loss only
  std::vector<std::string> dropped;  ///< "[2] float32 [64,16,256] (1.0 MiB)", when asked for
};

/**
 * @brief Takes `returned` apart. DataError naming `who` when no output can be the logits or they
 * have the wrong shape; ConfigError for a --logits-output that does not fit, or --model-loss with
 * no loss returned.
 */
SlimOutput slim_boundary(c10::IValue returned, const SlimRequest& request);

/** @brief "[2] float32 [64,16,256] (1.0 MiB)": an output as the warning names it. */
std::string describe_output(const std::string& where, const c10::IValue& value);

}  // namespace slimtrain::model
