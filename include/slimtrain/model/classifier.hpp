#pragma once
/**
 * @brief The slim-output classifier interface and the factory for the built-in models.
 *
 * A classifier's forward returns logits and, when labels are given, the loss: nothing else.
 * Hidden states (the [B, T, H] tokens of vit-tiny, the feature maps of cnn-small) exist only
 * inside forward, so nothing of the model's hidden size can reach an evaluation reduction.
 * Features leave the model only through the explicit embed() call used by `export --embeddings`.
 */
#include <torch/torch.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "slimtrain/model/grad_sink.hpp"
#include "slimtrain/model/model_spec.hpp"
#include "slimtrain/model/recompute.hpp"

namespace slimtrain::model {

/** @brief Slim output: logits, and the loss when labels were given. Nothing else ever leaves
 * forward. */
struct Output {
  torch::Tensor logits;  ///< [B, num_classes]
  torch::Tensor
      loss;  ///< scalar mean cross-entropy (with label smoothing); undefined without labels
};

/** @brief A batch's inputs by name (layout 2): data::NamedTensors, seen from here. */
using NamedInputs = std::vector<std::pair<std::string, torch::Tensor>>;

/** @brief Base of every classifier. */
class ClassifierImpl : public torch::nn::Module {
 public:
  /** @brief x: [B, ...input_shape] float; y: [B] int64 or undefined. */
  virtual Output forward(const torch::Tensor& x, const torch::Tensor& y = {}) = 0;
  /**
   * @brief The inputs of a batch of named inputs (layout 2), matched to forward's arguments by
   * name. Built-in models read the one named "x"; DataError when there is none.
   */
  virtual Output forward_named(const NamedInputs& inputs, const torch::Tensor& y = {});
  /** @brief The inputs forward takes by name: {"x"} for built-in models. */
  virtual std::vector<std::string> input_names() const { return {"x"}; }
  /** @brief Inputs read when a file has them (BERT's token_type_ids), else done without. */
  virtual std::vector<std::string> optional_input_names() const { return {}; }
  /**
   * @brief Layout 2: "" when forward's arguments are all among `available` (the file's inputs and
   * the masks the batcher adds) and every one of `required` (the file's inputs) is an argument,
   * optional ones included; else the difference, naming both lists.
   */
  std::string input_mismatch(const std::vector<std::string>& required,
                             const std::vector<std::string>& available) const;
  /** @brief Layout 2: probe() runs on these (one batch of each input, zeros) instead of x. */
  void set_probe_inputs(NamedInputs inputs) { probe_inputs_ = std::move(inputs); }
  /** @brief Explicit pre-head features [B, F], for `export --embeddings` only. */
  virtual torch::Tensor embed(const torch::Tensor& x) = 0;
  /** @brief Width F of embed()'s output. */
  virtual std::int64_t embedding_dim() const = 0;
  const ModelSpec& spec() const { return spec_; }

  /**
   * @brief What forward returned beside the logits (and the chosen loss) on its last call, each
   * dropped at the slim boundary: "[2] float32 [64, 16, 256] (1.0 MiB)". Built-ins: none.
   */
  virtual std::vector<std::string> dropped_outputs() const { return {}; }
  /**
   * @brief Before training, on `device`: runs forward and backward on a zero batch of this size
   * and an evaluation-mode forward, so a JIT's slow first iterations never run inside a
   * deadline and a wrong output shape stops the job before any collective; leaves parameters,
   * buffers and the RNG as they were. Built-ins: nothing to do.
   */
  virtual void probe(std::int64_t batch_size, const torch::Device& device) {
    (void)batch_size;
    (void)device;
  }
  /** @brief export --torchscript: the module with the current weights, in eval mode. */
  virtual void save_script(const std::string& path);
  /** @brief The parameters that train (requires_grad): what the optimiser and the sync take. */
  std::vector<torch::Tensor> trainable_parameters() const;
  /**
   * @brief Whether channels-last (NHWC) memory speeds this model up on CPU: oneDNN's
   * convolutions run faster in it (measured per model). Built-ins: cnn-bn.
   */
  virtual bool prefers_channels_last() const { return false; }
  /**
   * @brief Keeps the 4-D parameters and buffers, and every input batch (as_images), in
   * channels-last memory from now on: the same values in another layout, so results, checkpoints
   * (written contiguous) and the flattened features are unchanged. Call after the initial
   * broadcast: the data plane moves only contiguous tensors.
   */
  void use_channels_last();
  /**
   * @brief --memory-format: "channels-last" calls use_channels_last(), "auto" does so on CPU for
   * a model that prefers_channels_last(), "contiguous" leaves the layout as it is.
   */
  void apply_memory_format(const std::string& format, bool on_cpu);
  bool channels_last() const { return channels_last_; }

  /**
   * @brief Called with a layer's weights before forward first reads them (in the order forward
   * uses them), and the layer's input where forward knows it (undefined otherwise): --shard
   * parameters hooks its backward there. Token ids (an integer input) say more: the layer is a
   * lookup whose backward reads no weight of it, so none is gathered again.
   */
  using WeightGate =
      std::function<void(const std::vector<torch::Tensor>& weights, const torch::Tensor& x)>;
  /**
   * @brief --overlap-gather: weights still arriving (all-gathered after a sharded optimizer
   * step) are waited for layer by layer, each just before forward uses it, so the next layers'
   * weights travel while the first compute. A model whose forward calls await_weights() for
   * every layer says so with gates_weights(); any other model is waited for whole before its
   * forward. An empty gate (the default) waits for nothing.
   */
  void set_weight_gate(WeightGate gate) { gate_ = std::move(gate); }
  /** @brief Whether forward calls await_weights() before each layer. Built-ins: yes. */
  virtual bool gates_weights() const { return false; }
  /**
   * @brief The trainer's gradient buckets: layers that support it (the mlp's, the hf decoders'
   * projections) hand their weight gradients to the sink in backward instead of to autograd
   * (grad_sink.hpp). Null: autograd.
   */
  void set_grad_sink(std::shared_ptr<GradSink> sink) {
    // A graph built with the one replaced may still run backward: it stays alive with the model.
    if (sink_) retired_sinks_.push_back(std::move(sink_));
    sink_ = std::move(sink);
  }

  /**
   * @brief --activation-checkpointing layers: each transformer layer's activations dropped after
   * forward and recomputed in backward (recompute.hpp). Models with such layers say so with
   * recomputes_layers(); the others ignore it.
   */
  void set_layer_recompute(bool on) { recompute_layers_ = on; }
  virtual bool recomputes_layers() const { return false; }

 protected:
  explicit ClassifierImpl(ModelSpec spec) : spec_(std::move(spec)) {}
  /** @brief Logits plus, when y is defined, the smoothed mean cross-entropy. */
  Output make_output(torch::Tensor logits, const torch::Tensor& y) const;
  /** @brief spec_ with the fields a loaded model learns (a script's signature). */
  ModelSpec& mutable_spec() { return spec_; }
  const NamedInputs& probe_inputs() const { return probe_inputs_; }
  /** @brief x as [B, C, H, W] for image models (accepts [B,H,W] when C == 1); DataError otherwise.
   */
  torch::Tensor as_images(const torch::Tensor& x) const;
  /** @brief Waits (through the weight gate) until `layer`'s weights are all here. */
  void await_weights(const torch::nn::Module& layer) const {
    if (gate_) gate_(layer.parameters(), torch::Tensor());
  }
  /** @brief The same for a layer whose input is `x` (a layer boundary for --shard parameters). */
  void await_weights(const torch::nn::Module& layer, const torch::Tensor& x) const {
    if (gate_) gate_(layer.parameters(), x);
  }
  /** @brief The gate, for a model's parts that gate their own layers (hf's decoder body). */
  const WeightGate& weight_gate() const { return gate_; }
  /** @brief The grad sink set, for a model's parts that make their own linear layers. */
  GradSink* grad_sink() const { return sink_.get(); }
  /** @brief `layer` applied to x, its gradients offered to the grad sink in backward. */
  torch::Tensor linear(const torch::Tensor& x, const torch::nn::LinearImpl& layer) const {
    return model::linear(x, layer, sink_.get());
  }
  /** @brief layer(x), recomputed in backward under --activation-checkpointing layers. */
  torch::Tensor run_layer(LayerFunction layer, const torch::Tensor& x) const {
    return model::run_layer(std::move(layer), x, recompute_layers_);
  }
  bool layer_recompute() const { return recompute_layers_; }
  /** @brief The same for a parameter of the model's own (vit-tiny's positions). */
  void await_weights(const torch::Tensor& weight) const {
    if (gate_) gate_({weight}, torch::Tensor());
  }

 private:
  ModelSpec spec_;
  NamedInputs probe_inputs_;
  bool channels_last_ = false;
  bool recompute_layers_ = false;
  WeightGate gate_;
  std::shared_ptr<GradSink> sink_;
  std::vector<std::shared_ptr<GradSink>> retired_sinks_;
};

/** @brief Builds the model; ConfigError naming --model for unknown names or unusable shapes. */
std::shared_ptr<ClassifierImpl> make_model(const ModelSpec& spec);

/**
 * @brief The {C,H,W} of an image spec ({H,W} reads as one channel); ConfigError naming --model
 * and the shape when the input is not an image.
 */
std::array<std::int64_t, 3> image_shape(const ModelSpec& spec);
/** @brief image_shape, and ConfigError naming --model when H or W is below 4 (two 2x2 poolings). */
std::array<std::int64_t, 3> pooled_image_shape(const ModelSpec& spec);

/** @brief "[64,16,256]" */
std::string format_shape(c10::IntArrayRef sizes);

/** @brief Number of scalar parameters, recursively (trainable ones only when asked). */
std::int64_t parameter_count(const torch::nn::Module& module, bool trainable_only = false);

}  // namespace slimtrain::model
