#include "slimtrain/train/session.hpp"

#include <cstdio>

#include "slimtrain/comm/flight_recorder.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/data/normalisation.hpp"
#include "slimtrain/model/max_pool.hpp"
#include "slimtrain/runtime/blas_kernels.hpp"
#include "slimtrain/runtime/cpu_info.hpp"
#include "slimtrain/runtime/heap.hpp"
#include "slimtrain/train/autocast.hpp"
#include "slimtrain/train/evaluation.hpp"
#include "slimtrain/train/optim.hpp"
#include "slimtrain/train/stop_signal.hpp"

namespace slimtrain::train {
namespace {

data::AugmentOptions augment_of(const TrainConfig& c) {
  data::AugmentOptions a;
  a.crop_padding = c.augment_crop_padding;
  a.flip = c.augment_flip;
  a.rotate_deg = c.augment_rotate_deg;
  a.erase_probability = c.augment_erase;
  return a;
}

model::ModelSpec model_spec(const TrainConfig& c, const data::DatasetInfo& info) {
  model::ModelSpec spec;
  spec.set_model(c.model);
  spec.logits_output = c.logits_output;
  spec.model_loss = c.model_loss;
  spec.jit_optimize = c.jit_optimize;
  spec.input_shape = info.input_shape();
  spec.num_classes = info.num_classes;
  spec.mlp_widths = c.mlp_widths;
  spec.vit_patch = c.vit_patch;
  spec.vit_dim = c.vit_dim;
  spec.vit_depth = c.vit_depth;
  spec.vit_heads = c.vit_heads;
  spec.cnn_width = c.cnn_width;
  spec.cnn_layers = c.cnn_layers;
  spec.label_smoothing = c.label_smoothing;
  return spec;
}

// --chunk-mb 0 chooses between these by timing an all-reduce of kChunkProbeBytes with each.
constexpr std::size_t kLargeChunk = 4u << 20, kSmallChunk = 1u << 20, kChunkProbeBytes = 8u << 20;

comm::CommConfig comm_config(const TrainConfig& c) {
  comm::CommConfig cc;
  cc.deadline.base_s = c.collective_timeout_s;
  // 0: measured once the data plane exists; until then (the weight broadcast) the default.
  if (c.floor_bandwidth_mbps > 0) cc.deadline.floor_bytes_per_s = c.floor_bandwidth_mbps * 1e6;
  cc.chunk_bytes = c.chunk_bytes > 0 ? c.chunk_bytes : kLargeChunk;
  return cc;
}

// --chunk-mb 0 on the MPI data plane (more than one rank): a second plane with small pieces is
// timed against the first and carries the run if it is faster (fastest_plane). On NCCL the
// default stays: nothing has measured piece sizes there.
void choose_chunk(Session& s, runtime::Runtime& rt, comm::CommConfig cc) {
  s.chunk_bytes = cc.chunk_bytes;
  s.chunk_reason = "--chunk-mb";
  if (s.cfg.chunk_bytes != 0) return;
  if (rt.size() == 1 || s.device.kind == "cuda") {
    s.chunk_reason = rt.size() == 1 ? "default: one rank" : "default: NCCL";
    return;
  }
  cc.chunk_bytes = kSmallChunk;
  cc.deadline.floor_bytes_per_s = s.floor_bytes_per_s;
  auto small = comm::make_data_plane(rt, s.torch_device, "data", cc);
  std::vector<double> seconds;
  const std::size_t best =
      comm::fastest_plane({s.data_plane.get(), small.get()}, *s.control, kChunkProbeBytes, seconds);
  char text[160];
  std::snprintf(
      text, sizeof text,
      "measured: an %zu MiB all-reduce took %.1f ms in %zu MiB pieces, %.1f ms in %zu MiB ones",
      kChunkProbeBytes >> 20, seconds[0] * 1e3, kLargeChunk >> 20, seconds[1] * 1e3,
      kSmallChunk >> 20);
  s.chunk_reason = text;
  if (best == 1) {
    s.data_plane = std::move(small);
    s.chunk_bytes = kSmallChunk;
  }
}

}  // namespace

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

double Session::io_deadline(std::uint64_t bytes) const {
  return cfg.io_timeout_s + static_cast<double>(bytes) / (cfg.io_floor_bandwidth_mbps * 1e6);
}

std::uint64_t Session::checkpoint_bytes_estimate() const {
  std::uint64_t bytes = 1u << 20;
  for (const auto& p : model->parameters())
    bytes += 3 * static_cast<std::uint64_t>(p.numel()) * p.element_size();  // weights + 2 moments
  for (const auto& b : model->buffers())
    bytes += static_cast<std::uint64_t>(b.numel()) * b.element_size();
  return bytes;
}

std::unique_ptr<Session> open_session(const TrainConfig& cfg, runtime::Runtime& rt) {
  runtime::keep_freed_memory();
  install_stop_handlers();
  auto s = std::make_unique<Session>(cfg, rt);
  s->fault = FaultPlan::from_env();
  // A failure's full record goes here on every rank; the log keeps the last few lines.
  comm::set_flight_recorder_directory(cfg.out + "/flight_recorder", rt.rank(),
                                      rt.hostnames()[static_cast<std::size_t>(rt.rank())]);
  const comm::CommConfig cc = comm_config(cfg);
  s->control = std::make_unique<comm::ControlPlane>(rt, "control", cc);
  s->eval_control = std::make_unique<comm::ControlPlane>(rt, "eval", cc);
  s->device = runtime::bind_device(rt, *s->control, cfg.device, cfg.threads);
  s->placement = gather_placement(rt, *s->control, s->device.threads);
  s->precision = choose_precision(cfg.precision, model::parse_model_option(cfg.model).name,
                                  s->device.kind, runtime::cpu_info().native_bf16());

  s->info = data::read_dataset_info(cfg.data);
  if (!s->info.has_split("train"))
    SLIMTRAIN_THROW(DataError, cfg.data, ": no /train split to train on");
  choose_eval_splits(*s);
  {
    comm::OpOptions io;
    io.timeout_s = s->io_deadline(static_cast<std::uint64_t>(s->info.split_size("train")) *
                                  static_cast<std::uint64_t>(s->info.sample_elements()) * 4);
    io.tag = "normalisation";
    data::ensure_normalisation(s->info, s->control.get(), io);
  }

  torch::manual_seed(cfg.seed);
  s->model = model::make_model(model_spec(cfg, s->info));
  s->spec = s->model->spec();  // with what loading taught it (a script's signature)
  if (s->device.kind == "cuda")
    s->torch_device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(s->device.index));
  s->model->to(s->torch_device);
  // Before any collective: a JIT's slow first iterations, and a wrong output shape, here.
  s->model->probe(cfg.batch_size, s->torch_device);
  const std::vector<std::string> dropped = s->model->dropped_outputs();
  if (cfg.strict_slim && !dropped.empty())
    SLIMTRAIN_THROW(ConfigError, "--strict-slim: ", s->spec.model_option(), "'s forward returns ",
                    dropped.size(), " output", dropped.size() == 1 ? "" : "s",
                    " beside the logits: ", join(dropped),
                    "; return only the logits (and the loss), or drop --strict-slim");

  s->data_plane = comm::make_data_plane(rt, s->torch_device, "data", cc);
  {
    // Every replica starts from rank 0's weights, on the data plane (NCCL on GPU).
    torch::NoGradGuard no_grad;
    comm::OpOptions options;
    options.tag = "initial-weights";
    for (auto& p : s->model->parameters()) s->data_plane->broadcast(p.detach(), 0, options);
    for (auto& b : s->model->buffers()) s->data_plane->broadcast(b, 0, options);
  }
  s->model->apply_memory_format(cfg.memory_format, s->device.kind == "cpu");
  model::use_own_max_pool_loop(cfg.max_pool == "own");
  s->floor_bytes_per_s = cc.deadline.floor_bytes_per_s;
  if (cfg.floor_bandwidth_mbps == 0 && rt.size() > 1) {
    s->bandwidth = comm::measure_bandwidth(*s->data_plane, *s->control);
    s->floor_bytes_per_s = s->bandwidth.bytes_per_s() / comm::kFloorSafetyFactor;
    s->data_plane->set_floor_bandwidth(s->floor_bytes_per_s);
  }
  choose_chunk(*s, rt, cc);

  // Frozen parameters (requires_grad false) are neither optimised nor synchronised.
  s->optimizer = make_optimizer(cfg.optim, s->model->trainable_parameters());
  data::LoaderOptions lo;
  lo.batch_size = cfg.batch_size;
  lo.seed = cfg.seed;
  lo.mode = cfg.data_mode;
  lo.memory_budget_bytes = static_cast<std::size_t>(cfg.memory_budget_mb) << 20;
  lo.augment = augment_of(cfg);
  s->loader = std::make_unique<data::TrainLoader>(s->info, "train", rt.rank(), rt.size(), lo);
  if (s->loader->steps_per_epoch() == 0)
    SLIMTRAIN_THROW(ConfigError, "--batch-size: ", cfg.batch_size, " x ", rt.size(),
                    " ranks exceeds the ", s->info.split_size("train"),
                    " training samples: not one step per epoch");
  s->total_steps = cfg.max_steps > 0 ? cfg.max_steps : cfg.epochs * s->loader->steps_per_epoch();
  ScheduleConfig sc = cfg.schedule;
  sc.total_steps = s->total_steps;
  s->schedule = std::make_unique<LrSchedule>(cfg.optim.lr, sc);
  return s;
}

namespace {

// The OpenBLAS kernels loaded and how they were chosen, for scripts (bench/train reads them).
nlohmann::json kernels_json(const runtime::BlasInfo& blas) {
  const runtime::KernelChoice choice = runtime::current_kernel_choice();
  nlohmann::json rates = nlohmann::json::array();
  for (const runtime::KernelRate& r : choice.rates)
    rates.push_back({{"requested", r.requested}, {"kernels", r.kernels}, {"gflops", r.gflops}});
  return {{"loaded", blas.kernels},
          {"how", choice.how},
          {"rates", rates},
          {"chosen", choice.chosen() != nullptr ? choice.chosen()->kernels : blas.kernels},
          {"chosen_gflops", choice.chosen() != nullptr ? choice.chosen()->gflops : 0.0},
          {"own", choice.own() != nullptr ? choice.own()->kernels : ""},
          {"own_gflops", choice.own() != nullptr ? choice.own()->gflops : 0.0}};
}

}  // namespace

void start_session(Session& s, const Position& at, bool resumed, double resume_ms) {
  const TrainConfig& cfg = s.cfg;
  s.run_log = std::make_unique<RunLog>(cfg.out, s.rt.rank() == 0, resumed);
  std::vector<torch::Tensor> params = s.model->trainable_parameters();
  s.overlap = {cfg.overlap == "on", "--overlap " + cfg.overlap};
  if (cfg.overlap == "auto") {
    s.overlap = choose_overlap(GradientSync::count_buckets(params, cfg.bucket_bytes),
                               s.device.kind == "cuda");
    // Ranks bound differently (mixed hosts) still choose one way together.
    const bool mine = s.overlap.on;
    s.overlap.on = s.control->agree(mine);
    if (mine && !s.overlap.on) s.overlap.reason = "a rank on CPU chose off";
    s.overlap.reason = "--overlap auto: " + s.overlap.reason;
  }
  s.sync = std::make_unique<GradientSync>(params, *s.data_plane, cfg.bucket_bytes, s.overlap.on,
                                          parse_grad_compression(cfg.grad_compression));
  // From here on a step's data-plane operations run only once the step's control decision
  // found them equal on every rank (the MPI plane; NCCL runs them at once).
  s.data_plane->set_held(true);

  log::info_rank0(s.rt.size(), " rank", s.rt.size() == 1 ? "" : "s", " (",
                  describe_placement(s.placement), "), ", s.device.threads, " thread",
                  s.device.threads == 1 ? "" : "s", " per rank on rank 0");
  const std::int64_t n_params = model::parameter_count(*s.model);
  const std::int64_t n_trainable = model::parameter_count(*s.model, /*trainable_only=*/true);
  log::info_rank0(
      "model ", s.spec.describe(), ": ", n_params, " parameters",
      n_trainable == n_params ? std::string() : detail::concat(" (", n_trainable, " trainable)"));
  log::info_rank0("data ", cfg.data, ": ", s.info.split_size("train"), " train samples, ",
                  s.rt.size(), " ranks x batch ", cfg.batch_size, ", ", s.loader->steps_per_epoch(),
                  " steps/epoch (", s.loader->mode(), " mode), ", s.total_steps, " steps; ",
                  describe_eval_splits(s), "; augmentation: ", augment_of(cfg).describe());
  log::info_rank0("device ", s.device.describe(), ", precision ", s.precision.precision,
                  s.precision.reason.empty() ? "" : " (" + s.precision.reason + ")", ", memory ",
                  s.model->channels_last() ? "channels-last" : "contiguous",
                  cfg.max_pool == "own" ? "" : ", LibTorch's max pooling (--max-pool libtorch)",
                  "; gradient buckets: ", s.sync->bucket_count(), " (overlap ",
                  s.overlap.on ? "on" : "off", "; ", s.overlap.reason, "), ",
                  s.sync->wire_bytes_per_step() >> 10, " KiB per step as ",
                  to_string(s.sync->compression()), "; control plane MPI, data plane ",
                  s.device.kind == "cuda" ? "NCCL" : "MPI");
  log::info_rank0("BLAS: ", s.device.blas.describe(),
                  s.device.blas_threads > 0
                      ? detail::concat(", its thread pool sized to ", s.device.blas_threads)
                      : std::string(),
                  runtime::openblas_kernels_note());
  if (s.device.kind == "cpu" && s.device.blas.kind == runtime::BlasInfo::Kind::reference &&
      s.rt.rank() == 0)
    log::warn(runtime::BlasInfo::reference_warning());
  if (s.device.threads > s.device.cores && s.rt.rank() == 0)
    log::warn("--threads ", s.device.threads, " is more than the ", s.device.cores,
              " cores this rank's share of the node gives it: ranks will fight for cores "
              "(--threads 0 takes the share)");
  log::info_rank0("data plane deadlines: --collective-timeout ", cfg.collective_timeout_s,
                  " s + size / ", static_cast<std::int64_t>(s.floor_bytes_per_s / 1e6), " MB/s (",
                  s.bandwidth.bytes == 0 ? "--floor-bandwidth"
                                         : "a quarter of the measured " + s.bandwidth.describe(),
                  "); all-reduces in pieces of at most ", s.chunk_bytes >> 10, " KiB (",
                  s.chunk_reason, ")");
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
                             {"floor_bandwidth_mbps", s.floor_bytes_per_s / 1e6},
                             {"chunk_bytes", s.chunk_bytes},
                             {"batch_size", cfg.batch_size},
                             {"augment", augment_of(cfg).describe()},
                             {"grad_compression", cfg.grad_compression},
                             {"device", s.device.describe()},
                             {"precision", s.precision.precision},
                             {"precision_reason", s.precision.reason},
                             {"total_steps", s.total_steps},
                             {"resumed_at_step", at.step},
                             {"resume_ms", resume_ms}});
}

}  // namespace slimtrain::train
