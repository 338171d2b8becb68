#include "slimtrain/train/session.hpp"

#include <cstdlib>

#include "slimtrain/comm/flight_recorder.hpp"
#include "slimtrain/core/detail/fixed.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/eval/pretrained_model.hpp"
#include "slimtrain/model/autocast.hpp"
#include "slimtrain/model/max_pool.hpp"
#include "slimtrain/runtime/blas_kernels.hpp"
#include "slimtrain/runtime/cpu_info.hpp"
#include "slimtrain/runtime/heap.hpp"
#include "slimtrain/train/device_setup.hpp"
#include "slimtrain/train/evaluation.hpp"
#include "slimtrain/train/memory_check.hpp"
#include "slimtrain/train/normalisation_setup.hpp"
#include "slimtrain/train/optim.hpp"
#include "slimtrain/train/shard_loading.hpp"
#include "slimtrain/train/stop_signal.hpp"

namespace slimtrain::train {
std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

void Session::sync_buffers() {
  comm::OpOptions options;
  options.tag = "buffers";
  for (auto& b : model->buffers()) data_plane->broadcast(b, 0, options);
}

void Session::settle_weights(bool whole) {
  if (shards && whole) shards->wait_gathered();
  if (shards && !whole) shards->finish_in_flight();
  sync_buffers();
}

double Session::io_deadline(std::uint64_t bytes) const {
  return cfg.io_timeout_s + static_cast<double>(bytes) / (cfg.io_floor_bandwidth_mbps * 1e6);
}

std::vector<torch::Tensor> Session::optimized_parameters() const {
  return masters ? masters->masters() : model->trainable_parameters();
}

std::vector<OptimizedSpan> Session::optimizer_spans() const {
  return shards ? shards->spans() : parameter_spans(optimized_parameters(), *layout);
}

std::uint64_t Session::checkpoint_bytes_estimate() const {
  std::uint64_t bytes = 1u << 20;
  for (const auto& p : model->parameters())
    bytes += 3 * static_cast<std::uint64_t>(p.numel()) * p.element_size();  // weights + 2 moments
  for (const auto& b : model->buffers())
    bytes += static_cast<std::uint64_t>(b.numel()) * b.element_size();
  return bytes;
}

namespace {

// The OpenBLAS kernels loaded and how they were chosen, for scripts (bench/train reads them).
nlohmann::json kernels_json(const runtime::BlasInfo& blas) {
  const runtime::KernelChoice choice = runtime::current_kernel_choice();
  nlohmann::json rates = nlohmann::json::array();
  for (const runtime::KernelRate& r : choice.rates)
    rates.push_back({{"requested", r.requested}, {"kernels", r.kernels}, {"gflops", r.gflops}});
  // With the user's OPENBLAS_CORETYPE, theirs is what runs: "chosen" names it, "fastest" the best.
  const runtime::KernelRate* chosen =
      choice.yours.empty() ? choice.chosen() : choice.rate_of(choice.yours);
  const runtime::KernelRate* fastest = choice.fastest();
  return {{"loaded", blas.kernels},
          {"how", choice.how},
          {"rates", rates},
          {"set_by_you", choice.yours},
          {"chosen", choice.yours.empty() && chosen != nullptr ? chosen->kernels : blas.kernels},
          {"chosen_gflops", chosen != nullptr ? chosen->gflops : 0.0},
          {"fastest", fastest != nullptr ? fastest->kernels : ""},
          {"fastest_gflops", fastest != nullptr ? fastest->gflops : 0.0},
          {"own", choice.own() != nullptr ? choice.own()->kernels : ""},
          {"own_gflops", choice.own() != nullptr ? choice.own()->gflops : 0.0}};
}

// "adamw (lr 5e-05, betas 0.9/0.999, eps 1e-08, weight decay 0.01); learning rate: 10 warm-up
// steps, then cosine to 0 at step 304": what the run optimises with, said at its start.
std::string describe_optimizer(const TrainConfig& cfg, std::int64_t total_steps) {
  const OptimConfig& o = cfg.optim;
  const ScheduleConfig& k = cfg.schedule;
  std::string text =
      o.name == "adamw"
          ? detail::concat(o.name, " (lr ", o.lr, ", betas ", o.beta1, "/", o.beta2, ", eps ",
                           o.eps, ", weight decay ", o.weight_decay, ")")
          : detail::concat(o.name, " (lr ", o.lr, ", momentum ", o.momentum,
                           o.nesterov ? ", Nesterov" : "", ", weight decay ", o.weight_decay, ")");
  text += "; learning rate: ";
  if (k.warmup_steps > 0) text += detail::concat(k.warmup_steps, " warm-up steps, then ");
  if (k.kind == "cosine")
    text += detail::concat("cosine to ", o.lr * k.min_lr_ratio, " at step ", total_steps);
  else if (k.kind == "step")
    text += detail::concat("x", k.step_gamma, " every ", k.step_every, " steps");
  else
    text += k.kind;
  return text;
}

}  // namespace

void start_session(Session& s, const Position& at, bool resumed, double resume_ms) {
  const TrainConfig& cfg = s.cfg;
  // --resume auto that found nothing to resume still appends: the log of a launch that failed
  // before its first checkpoint (the job script relaunches it) is the story of the run too.
  s.run_log = std::make_unique<RunLog>(cfg.out, s.rt.rank() == 0, resumed || cfg.resume == "auto");
  if (s.fault.phase == FaultPhase::log && s.fault.rank == s.rt.rank())  // test only
    s.run_log->fail_writes_for_testing(s.fault.step, s.fault.times);
  s.run_log->set_run_shape(s.steps_per_epoch, cfg.batch_size * cfg.grad_accum * s.rt.size(),
                           at.step);
  std::vector<torch::Tensor> params = s.model->trainable_parameters();
  s.overlap = {cfg.overlap == "on", "--overlap " + cfg.overlap};
  if (cfg.overlap == "auto") {
    s.overlap = choose_overlap(s.layout->buckets().size(), s.device.kind == "cuda", s.shard);
    // Ranks bound differently (mixed hosts) still choose one way together.
    const bool mine = s.overlap.on;
    s.overlap.on = s.control->agree(mine);
    if (mine && !s.overlap.on) s.overlap.reason = "a rank on CPU chose off";
    s.overlap.reason = "--overlap auto: " + s.overlap.reason;
  }
  // --shard parameters treats gradients as --shard gradients does: reduce-scattered as made.
  const ShardMode grad_mode = s.shard == ShardMode::parameters ? ShardMode::gradients : s.shard;
  s.sync = std::make_unique<GradientSync>(params, *s.data_plane, *s.layout, grad_mode, s.overlap.on,
                                          parse_grad_compression(cfg.grad_compression));
  if (s.shards) s.shards->attach_grads(s.sync->shard_grads());
  if (s.masters) s.sync->set_master_grads(s.masters->masters());
  // Linear layers (the mlp's, the hf decoders') form their weight gradients in the buckets
  // (grad_pieces.cpp), on CPU.
  s.grad_sink = choose_grad_sink(s.device.kind == "cuda", std::getenv("SLIMTRAIN_GRAD_SINK"));
  if (s.grad_sink.on) s.model->set_grad_sink(s.sync->sink());
  if (s.shards) {
    s.gather_overlap = choose_gather_overlap(cfg.overlap_gather, s.device.kind == "cuda", s.shard);
    if (s.shard == ShardMode::parameters && s.model->gates_weights()) {
      // Each layer gathers its weights as it runs; with --overlap-gather the next one's too.
      s.layer_gate = std::make_unique<LayerGate>(*s.shards, s.gather_overlap.on);
      LayerGate* gate = s.layer_gate.get();
      s.model->set_weight_gate([gate](const std::vector<torch::Tensor>& weights,
                                      const torch::Tensor& x) { gate->before_layer(weights, x); });
    } else if (s.shard == ShardMode::parameters) {
      s.gather_overlap = {false, "--shard parameters: " + s.spec.model_option() +
                                     " does not gate its layers, so its weights are gathered "
                                     "whole before each forward and freed after each step"};
    } else if (s.gather_overlap.on && s.model->gates_weights()) {
      // Built-in models wait layer by layer; any other model waits for all before its forward.
      ShardedParams* shards = s.shards.get();
      s.model->set_weight_gate([shards](const std::vector<torch::Tensor>& weights,
                                        const torch::Tensor&) { shards->await(weights); });
    }
  }

  log::info_rank0(s.rt.size(), " rank", s.rt.size() == 1 ? "" : "s", " (",
                  describe_placement(s.placement), "), ", s.device.threads, " thread",
                  s.device.threads == 1 ? "" : "s", " per rank on rank 0");
  const std::int64_t n_params = model::parameter_count(*s.model);
  const std::int64_t n_trainable = model::parameter_count(*s.model, /*trainable_only=*/true);
  log::info_rank0(
      "model ", s.spec.describe(), ": ", n_params, " parameters",
      n_trainable == n_params ? std::string() : detail::concat(" (", n_trainable, " trainable)"));
  if (s.hf_load && !resumed)
    eval::log_hf_load(*s.hf_load, s.spec, loads_into_shards(s.spec, s.shard));
  if (s.hf_load && resumed)
    log::info("hf:", s.spec.hf_dir, ": its weights replaced by the checkpoint of step ", at.step);
  if (cfg.activation_checkpointing == "layers")
    log::info_rank0(
        "activation checkpointing: each layer keeps its input alone and computes its "
        "activations again in backward (--activation-checkpointing layers)");
  log::info_rank0("optimizer ", describe_optimizer(cfg, s.total_steps));
  if (resumed && at.step >= s.total_steps)
    log::info_rank0("the run in ", cfg.out, " is already finished: step ", at.step, " of ",
                    s.total_steps,
                    ", nothing left to train (more --epochs or --max-steps train "
                    "on; another --out starts afresh); its final evaluation runs again");
  log::info_rank0(
      "data ", cfg.data, ": ", s.info.split_size("train"), " train samples, ", s.rt.size(),
      " ranks x batch ", cfg.batch_size,
      cfg.grad_accum > 1 ? detail::concat(" x ", cfg.grad_accum, " accumulated") : std::string(),
      ", ", s.steps_per_epoch, " steps/epoch (", s.loader->mode(), " mode), ", s.total_steps,
      " steps; ", describe_eval_splits(s), "; augmentation: ", augment_options(cfg).describe());
  log::info_rank0(
      "device ", s.device.describe(),
      s.device.kind == "cuda" ? detail::concat(" (cuDNN benchmark, TF32 ", cfg.tf32, ")") : "",
      ", precision ", s.precision.precision,
      s.precision.reason.empty() ? "" : " (" + s.precision.reason + ")",
      s.device_step ? ", the step on the device (fused optimizer, no read-back)" : "", ", memory ",
      s.model->channels_last() ? "channels-last" : "contiguous",
      cfg.max_pool == "own" ? "" : ", LibTorch's max pooling (--max-pool libtorch)",
      "; gradient buckets: ", s.sync->bucket_count(), " (overlap ", s.overlap.on ? "on" : "off",
      "; ", s.overlap.reason, "), ", s.sync->wire_bytes_per_step() >> 10, " KiB per step as ",
      to_string(s.sync->compression()), "; --shard ", to_string(s.shard),
      s.shards ? detail::concat(" (this rank updates ", s.layout->padded_numel() / s.rt.size(),
                                " of ", s.layout->numel(), " elements; weights gathered ",
                                s.shard == ShardMode::parameters ? "as each layer runs"
                                : s.gather_overlap.on            ? "during the next forward"
                                                                 : "after the step",
                                ": ", s.gather_overlap.reason, ")")
               : std::string(),
      "; control plane MPI, data plane ", s.device.kind == "cuda" ? "NCCL" : "MPI");
  log::info_rank0("BLAS: ", s.device.blas.describe(),
                  s.device.blas_threads > 0
                      ? detail::concat(", its thread pool sized to ", s.device.blas_threads)
                      : std::string(),
                  runtime::openblas_kernels_note());
  if (s.device.kind == "cpu" && s.device.blas.kind == runtime::BlasInfo::Kind::reference &&
      s.rt.rank() == 0)
    log::warn(runtime::BlasInfo::reference_warning());
  if (const std::string slow = runtime::current_kernel_choice().slower_than_best_warning();
      s.device.kind == "cpu" && !slow.empty() && s.rt.rank() == 0)
    log::warn(slow);
  if (s.device.threads > s.device.cores && s.rt.rank() == 0)
    log::warn("--threads ", s.device.threads, " is more than the ", s.device.cores,
              " cores this rank's share of the node gives it: ranks will fight for cores "
              "(--threads 0 takes the share)");
  std::string stages;
  nlohmann::json startup = nlohmann::json::object();
  double total = resume_ms / 1e3;
  for (const auto& [name, seconds] : s.startup_seconds) {
    stages += detail::concat(stages.empty() ? "" : ", ", name, " ", detail::fixed(seconds, 2));
    startup[name] = seconds;
    total += seconds;
  }
  startup["resume"] = resume_ms / 1e3;
  log::info_rank0("start-up on rank 0: ", detail::fixed(total, 2), " s (", stages, ", resume ",
                  detail::fixed(resume_ms / 1e3, 2), ")");
  log::info_rank0(
      "data plane deadlines: --collective-timeout ", cfg.collective_timeout_s, " s + size / ",
      static_cast<std::int64_t>(s.floor_bytes_per_s / 1e6), " MB/s (",
      s.bandwidth.bytes == 0 ? "--floor-bandwidth"
                             : "a quarter of the measured " + s.bandwidth.describe(),
      "); ",
      s.chunk_bytes >= (std::size_t{1} << 40)
          ? std::string("all-reduces in one piece each")
          : detail::concat("all-reduces in pieces of at most ", s.chunk_bytes >> 10, " KiB"),
      " (", s.chunk_reason, ")");
  if (s.fault.phase != FaultPhase::none)
    log::warn("SLIMTRAIN_INJECT is set (test only): ", s.fault.describe());
  nlohmann::json settings = nlohmann::json::object();
  for (const auto& [name, value] : cfg.settings) settings[name] = value;
  s.run_log->event("start", {{"model", s.spec.to_json()},
                             {"config", settings},
                             {"parameters", n_params},
                             {"trainable_parameters", n_trainable},
                             {"dropped_outputs", s.model->dropped_outputs()},
                             {"world_size", s.rt.size()},
                             {"placement", placement_json(s.placement)},
                             {"blas", s.device.blas.describe()},
                             {"blas_kernels", kernels_json(s.device.blas)},
                             {"measured_bandwidth_mbps", s.bandwidth.bytes_per_s() / 1e6},
                             {"measured_bandwidth_bytes", s.bandwidth.bytes},
                             {"floor_bandwidth_mbps", s.floor_bytes_per_s / 1e6},
                             {"chunk_bytes", s.chunk_bytes},
                             {"batch_size", cfg.batch_size},
                             {"grad_accum", cfg.grad_accum},
                             {"augment", augment_options(cfg).describe()},
                             {"grad_compression", cfg.grad_compression},
                             {"shard", to_string(s.shard)},
                             {"overlap_gather", s.gather_overlap.on},
                             {"activation_checkpointing", cfg.activation_checkpointing},
                             {"grad_sink", s.grad_sink.on},
                             {"device", s.device.describe()},
                             {"precision", s.precision.precision},
                             {"device_step", s.device_step},
                             {"precision_reason", s.precision.reason},
                             {"total_steps", s.total_steps},
                             {"resumed_at_step", at.step},
                             {"resume_ms", resume_ms},
                             {"startup_seconds", startup},
                             {"memory_plan", memory_plan_json(s)}});
}

}  // namespace slimtrain::train
