#include "slimtrain/train/resume.hpp"

#include <cstring>
#include <mutex>
#include <set>
#include <unordered_map>

#include "slimtrain/ckpt/checkpoint_manager.hpp"
#include "slimtrain/ckpt/torch_state.hpp"
#include "slimtrain/comm/agreement.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/eval/pretrained_model.hpp"
#include "slimtrain/train/checkpointer.hpp"
#include "slimtrain/train/optimizer_state.hpp"
#include "slimtrain/train/weight_shards.hpp"

namespace slimtrain::train {
namespace {

void set_cpu_rng_state(const std::string& bytes, const std::string& checkpoint) {
  at::Generator gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  if (bytes.size() != static_cast<std::size_t>(gen.get_state().nbytes()))
    SLIMTRAIN_THROW(DataError, "--resume: checkpoint ", checkpoint, " holds a CPU RNG state of ",
                    bytes.size(), " bytes; this LibTorch's is ", gen.get_state().nbytes());
  torch::Tensor t = torch::empty({static_cast<std::int64_t>(bytes.size())}, torch::kUInt8);
  std::memcpy(t.data_ptr(), bytes.data(), bytes.size());
  gen.set_state(t);
}

// Rank 0's view of the file system decides which checkpoint, verified in full by rank 0 alone.
std::string choose_checkpoint(const TrainConfig& cfg) {
  if (cfg.resume == "none") return "";
  if (cfg.resume == "auto") return ckpt::CheckpointManager::find_latest_valid(cfg.out).value_or("");
  // A run directory (or its checkpoints/) means its newest valid checkpoint, as for eval.
  const std::string path = ckpt::CheckpointManager::resolve(cfg.resume, "--resume");
  const ckpt::VerifyReport report = ckpt::CheckpointManager::verify(path);
  if (!report.ok)
    SLIMTRAIN_THROW(DataError, "--resume ", cfg.resume,
                    ": checkpoint does not verify: ", report.problem);
  return path;
}

// This rank's part of the optimizer state, from the files that hold any of it: whatever world
// size and --shard mode wrote them.
void load_optimizer_shards(Session& s, const std::string& dir, const nlohmann::json& meta) {
  const std::vector<OptimizedSpan> spans = s.optimizer_spans();
  ckpt::FlatOptimizerState mine = empty_state(spans);
  const std::int64_t elements = meta.value("elements", std::int64_t{-1});
  if (elements != s.layout->numel())
    SLIMTRAIN_THROW(DataError, "--resume: checkpoint ", dir, " holds optimizer state for ",
                    elements, " elements; this model trains ", s.layout->numel());
  std::int64_t copied = 0;
  bool any_state = false;
  for (const nlohmann::json& f : meta.at("files")) {
    std::vector<ckpt::ElementRange> ranges;
    for (const nlohmann::json& r : f.at("ranges"))
      ranges.push_back({r.at(0).get<std::int64_t>(), r.at(1).get<std::int64_t>()});
    if (!ckpt::overlaps(ranges, mine.ranges)) continue;
    const std::string path = dir + "/" + f.at("file").get<std::string>();
    const ckpt::FilledFrom filled = ckpt::fill_from_file(mine, path);
    any_state = any_state || filled.has_state;
    copied += filled.elements;
  }
  if (any_state && copied != mine.elements())
    SLIMTRAIN_THROW(DataError, "--resume: checkpoint ", dir, "'s optimizer files hold ", copied,
                    " of the ", mine.elements(), " elements rank ", s.rt.rank(), " needs");
  load_flat_state(*s.optimizer, s.cfg.optim.name, spans, mine);
}

}  // namespace

Resumed resume_if_asked(Session& s) {
  const TrainConfig& cfg = s.cfg;
  comm::OpOptions io;
  io.timeout_s = s.io_deadline(s.checkpoint_bytes_estimate());
  io.tag = "resume";
  Resumed out;
  out.path = comm::decide_on_root(
      *s.control, 0, [&] { return choose_checkpoint(cfg); }, io);
  if (out.path.empty()) return out;

  // --shard parameters: the trained weights stay in the file, each rank reading its own elements
  // of them, so that no rank holds the model whole.
  const bool into_shards = s.shards && !s.shards->holds_weights();
  const std::vector<torch::Tensor> trained = s.model->trainable_parameters();
  std::unordered_map<std::string, std::size_t> trained_index;  // "model/NAME" -> trained[k]
  if (into_shards) trained_index = checkpoint_names(*s.model, trained);
  comm::on_all_ranks(
      *s.control,
      [&] {
        // Rank 0 hashed it a moment ago; the others check sizes and read.
        ckpt::CheckpointState state = ckpt::CheckpointManager::load(
            out.path, ckpt::VerifyDepth::sizes,
            [&](const std::string& name) { return trained_index.count(name) > 0; });
        const std::string theirs = state.meta.value("fingerprint", std::string());
        if (theirs != s.spec.fingerprint()) {
          model::ModelSpec written = s.spec;
          if (state.meta.contains("model"))
            written = model::ModelSpec::from_json(state.meta["model"]);
          const std::string difference = ckpt::first_difference(
              *s.model, state, "model/",
              state.meta.contains("lora_base") ? ckpt::frozen_parameter_names(*s.model)
                                               : std::set<std::string>{});
          SLIMTRAIN_THROW(ConfigError, "--resume: checkpoint ", out.path, " was written for ",
                          written.describe(), " but this run builds ", s.spec.describe(),
                          difference.empty() ? "" : "; first difference: ", difference,
                          "; use --resume none or a matching --model/--data");
        }
        if (s.shards && !into_shards) s.shards->wait_gathered();
        // A --lora checkpoint leaves the frozen base to the model it was trained on: loaded
        // already, and checked to be that one.
        std::set<std::string> from_base;
        if (state.meta.contains("lora_base")) {
          eval::check_lora_base(state.meta["lora_base"], s.spec.hf_dir, out.path);
          from_base = ckpt::frozen_parameter_names(*s.model);
        }
        // --weights bf16: into the float32 masters, the weights cast from them.
        const auto load = [&] { ckpt::load_into(*s.model, state, "model/", from_base); };
        if (s.masters)
          s.masters->as_float32(load);
        else
          load();  // --shard parameters: the rest
        if (into_shards) {
          std::vector<const ckpt::TensorEntry*> entry_of(trained.size(), nullptr);
          for (const ckpt::TensorEntry& e : state.tensors)
            if (e.deferred) entry_of[trained_index.at(e.name)] = &e;
          s.shards->refill([&](std::size_t k, std::int64_t from, std::int64_t count) {
            return ckpt::read_elements(state, *entry_of[k], from, count);
          });
        }
        // The weights are in the model now: their copy goes before the optimizer state comes.
        state.tensors.clear();
        const auto shards = state.meta.find("optimizer_shards");
        auto blob = state.blobs.find("optimizer");
        if (shards != state.meta.end()) {
          load_optimizer_shards(s, out.path, *shards);
        } else if (blob != state.blobs.end()) {
          if (s.shards)
            SLIMTRAIN_THROW(ConfigError, "--resume: checkpoint ", out.path,
                            " keeps its optimizer state in the format before --shard; resume "
                            "it once with --shard none, and checkpoint, to reshard from there");
          ckpt::deserialize_optimizer(*s.optimizer, blob->second);
        }
        blob = state.blobs.find("rng");
        if (blob != state.blobs.end()) set_cpu_rng_state(blob->second, out.path);
        out.at.step = state.step;
        out.at.epoch = state.epoch;
        out.at.epoch_step = state.epoch_step;
        out.best_metric = best_so_far(state.meta, best_metric_name(cfg));
        const int their_world = state.meta.value("world_size", s.rt.size());
        if (their_world != s.rt.size()) {
          // Keep the epoch and the samples already seen in it; the order of the rest changes.
          const std::int64_t seen =
              state.epoch_step * their_world * state.meta.value("batch_size", cfg.batch_size);
          out.at.epoch_step = seen / (static_cast<std::int64_t>(s.rt.size()) * cfg.batch_size);
          log::warn("resuming a ", their_world, "-rank checkpoint on ", s.rt.size(),
                    " ranks: the data order from here on differs from an uninterrupted run");
        }
      },
      io);
  // A checkpoint is taken between optimizer steps; a different --grad-accum (or world size) may
  // leave it inside a group of micro-batches: the group starts again from its first.
  out.at.epoch_step -= out.at.epoch_step % cfg.grad_accum;
  if (s.epoch_over(out.at.epoch_step)) {
    ++out.at.epoch;
    out.at.epoch_step = 0;
  }
  out.resumed = true;
  log::info_rank0("resumed from ", out.path, " at step ", out.at.step, " (epoch ", out.at.epoch,
                  ", step ", out.at.epoch_step, " in epoch)");
  return out;
}

}  // namespace slimtrain::train
