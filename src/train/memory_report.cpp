#include "slimtrain/train/memory_report.hpp"

#include "slimtrain/runtime/process_memory.hpp"
#include "slimtrain/train/optim.hpp"

namespace slimtrain::train {
namespace {
std::uint64_t above(std::uint64_t bytes, std::uint64_t baseline) {
  return bytes > baseline ? bytes - baseline : 0;
}
}  // namespace

nlohmann::json memory_report(const Session& s) {
  // --shard parameters: the trained weights are this rank's shard (the gathered buffers come
  // and go), the frozen ones whole.
  const bool sharded = s.shards && !s.shards->holds_weights();
  std::uint64_t weights = 0;
  for (const auto& p : s.model->parameters())
    if (!sharded || !p.requires_grad())
      weights += static_cast<std::uint64_t>(p.numel()) * p.element_size();
  if (sharded)
    for (const torch::Tensor& piece : s.shards->shard())
      weights += static_cast<std::uint64_t>(piece.nbytes());
  const std::uint64_t gradients = s.sync->bucket_bytes_total();
  const std::uint64_t optimizer = optimizer_state_bytes(*s.optimizer);
  const std::uint64_t peak = runtime::peak_resident_bytes();
  const std::uint64_t baseline = s.baseline_resident_bytes;
  const std::uint64_t startup = s.startup_peak_resident_bytes;  // loading a checkpoint, say
  return {{"data_bytes", s.loader->resident_bytes()},
          {"weights_bytes", weights},
          {"gradient_bytes", gradients},
          {"optimizer_bytes", optimizer},
          {"state_bytes", weights + gradients + optimizer},
          {"baseline_resident_bytes", baseline},
          {"peak_resident_bytes", peak},
          {"peak_above_baseline_bytes", above(peak, baseline)},
          {"startup_peak_above_baseline_bytes", above(startup, baseline)},
          {"loading_peak_above_baseline_bytes", above(s.loading_peak_resident_bytes, baseline)},
          {"planned_bytes", s.memory_plan.total()}};
}

void add_checkpoint_peak(nlohmann::json& memory, const Session& s) {
  memory["checkpoint_peak_above_baseline_bytes"] =
      above(runtime::peak_resident_bytes(), s.baseline_resident_bytes);
}

}  // namespace slimtrain::train
