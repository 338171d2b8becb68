#include "slimtrain/train/memory_check.hpp"

#include <algorithm>
#include <cstdlib>

#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/data/longest_sample.hpp"
#include "slimtrain/data/named_split.hpp"
#include "slimtrain/eval/pretrained_model.hpp"
#include "slimtrain/model/attention.hpp"
#include "slimtrain/model/hf/config.hpp"
#include "slimtrain/model/hf/registry.hpp"
#include "slimtrain/runtime/device.hpp"
#include "slimtrain/runtime/process_memory.hpp"
#include "slimtrain/train/sync_choice.hpp"

namespace slimtrain::train {
namespace {

PlanSettings settings_of(const Session& s) {
  const TrainConfig& cfg = s.cfg;
  PlanSettings p;
  p.world = s.rt.size();
  p.shard = parse_shard_mode(cfg.shard);
  p.optimizer = cfg.optim.name;
  p.momentum = cfg.optim.momentum;
  p.bf16 = s.precision.bf16();
  p.frozen_bf16 = p.bf16 && !cfg.arch.lora.empty();
  p.lora = !cfg.arch.lora.empty();
  p.bf16_wire = parse_grad_compression(cfg.grad_compression) == GradCompression::bf16;
  p.fused_attention = model::fused_attention_available();
  p.overlap = cfg.overlap != "off";
  p.gather_ahead = p.shard == ShardMode::parameters &&
                   choose_gather_overlap(cfg.overlap_gather, s.device.kind == "cuda", p.shard).on;
  p.batch = cfg.batch_size;
  p.recompute_layers = cfg.activation_checkpointing == "layers";
  p.bucket_bytes = gradient_bucket_bytes(cfg.bucket_bytes, s.device.kind == "cuda");
  // bf16's autocast leaves the linear layers' gradients to autograd (model::linear): whole.
  p.gradients_in_pieces =
      p.overlap && !p.bf16 &&
      choose_grad_sink(s.device.kind == "cuda", std::getenv("SLIMTRAIN_GRAD_SINK")).on;
  p.grad_accum = cfg.grad_accum;
  // A GPU's budget is its free memory, which the process's host memory does not come out of.
  p.process_bytes = s.device.kind == "cuda" ? 0 : runtime::resident_bytes();
  return p;
}

// This rank's budget: --memory-per-rank, the GPU's free memory, or the host's available memory
// shared among the ranks on it (each also keeps what it holds already).
MemoryBudget own_budget(const Session& s) {
  MemoryBudget b;
  b.rank = s.rt.rank();
  if (s.cfg.memory_per_rank_gb > 0) {
    b.bytes = static_cast<std::uint64_t>(s.cfg.memory_per_rank_gb * 1e9);
    b.source = "--memory-per-rank";
  } else if (s.device.kind == "cuda") {
    b.bytes = runtime::gpu_free_bytes(s.device.index);
    b.source = "its GPU's free memory";
  } else if (const std::uint64_t available = runtime::available_memory_bytes(); available > 0) {
    const int local = std::max(1, s.rt.local_size());
    b.bytes = runtime::resident_bytes() + available / static_cast<std::uint64_t>(local);
    b.source = "its host's available memory shared among " + std::to_string(local) + " local rank" +
               (local == 1 ? "" : "s") + ", and what it holds already";
  }
  return b;
}

}  // namespace

ModelSize hf_model_size(const model::ModelSpec& spec, const data::DatasetInfo& info) {
  const model::hf::HfConfig& c = model::hf::config_of(spec);
  ModelSize m;
  const eval::CheckpointCount count = eval::hf_checkpoint_parameters(spec.hf_dir, &spec);
  m.parameters = count.values;
  m.trainable = count.trainable;  // --lora: the adapters, the head, --lora-train's modules
  m.largest = count.largest;
  m.source = "the safetensors headers of " + spec.hf_dir;
  m.layers = c.num_hidden_layers;
  // Embeddings, the layers, the final norm and the head, each gathered on its own.
  // A gated model gathers each layer's attention, its feed-forward's norm with the gate and up
  // projections, and its down projection apart (decoder_body), its embeddings and head alone.
  if (c.architecture().gates_layers)
    m.largest_group = std::max<std::int64_t>(
        (c.gated_ffn() ? 2 : 1) * c.hidden_size * c.ffn_width() + c.hidden_size, m.largest);
  m.hidden = c.hidden_size;
  m.heads = c.num_attention_heads;
  m.ffn = c.ffn_width();
  m.gated_ffn = c.gated_ffn();
  m.tokens = c.image_tokens() > 0
                 ? c.image_tokens()
                 : data::padded_length(data::longest_sample(info, "train"), info.max_length);
  return m;
}

ModelSize built_model_size(model::ClassifierImpl& model) {
  ModelSize m;
  for (const torch::Tensor& p : model.parameters()) {
    m.parameters += p.numel();
    if (!p.requires_grad()) continue;
    m.trainable += p.numel();
    m.largest = std::max(m.largest, p.numel());
  }
  m.source = "the model as built";
  return m;
}

void check_memory_plan(Session& s, const ModelSize& model) {
  const PlanSettings settings = settings_of(s);
  s.memory_plan = plan_memory(model, settings);
  // The smallest budget of any rank decides, so that every rank refuses alike.
  MemoryBudget mine = own_budget(s);
  comm::OpOptions options;
  options.tag = "memory-plan";
  const std::vector<std::int64_t> all =
      s.control->all_gather({static_cast<std::int64_t>(mine.bytes)}, options);
  int smallest = -1;
  for (std::size_t r = 0; r < all.size(); ++r)
    if (all[r] > 0 && (smallest < 0 || all[r] < all[static_cast<std::size_t>(smallest)]))
      smallest = static_cast<int>(r);
  MemoryBudget agreed;
  if (smallest >= 0) {
    agreed.bytes = static_cast<std::uint64_t>(all[static_cast<std::size_t>(smallest)]);
    agreed.rank = smallest;
    agreed.source = mine.source;  // every rank measures by the same rule
  }
  s.memory_budget = agreed;
  log::info_rank0("memory plan: ", s.memory_plan.describe(), ", counted from ", model.source,
                  agreed.bytes > 0 ? "; budget " + gigabytes(agreed.bytes) + " (rank " +
                                         std::to_string(agreed.rank) + ": " + agreed.source + ")"
                                   : std::string("; budget unknown, not checked"));
  const std::string refusal = refuse_unless_fits(model, settings, agreed);
  if (!refusal.empty()) SLIMTRAIN_THROW(ConfigError, "--shard ", s.cfg.shard, ": ", refusal);
}

nlohmann::json memory_plan_json(const Session& s) {
  const MemoryPlan& p = s.memory_plan;
  return {{"weights_bytes", p.weights},
          {"gradient_bytes", p.gradients},
          {"optimizer_bytes", p.optimizer},
          {"activation_bytes", p.activations_estimated ? nlohmann::json(p.activations) : nullptr},
          {"process_bytes", p.process},
          {"total_bytes", p.total()},
          {"budget_bytes", s.memory_budget.bytes},
          {"budget_rank", s.memory_budget.rank},
          {"budget_source", s.memory_budget.source}};
}

}  // namespace slimtrain::train
