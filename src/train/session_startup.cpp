// open_session: the start-up order of a training run, stated once, and its stages.
#include <torch/version.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "slimtrain/comm/flight_recorder.hpp"
#include "slimtrain/core/clock.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/eval/model_for_data.hpp"
#include "slimtrain/eval/model_inputs.hpp"
#include "slimtrain/eval/pretrained_model.hpp"
#include "slimtrain/model/deferred_weights.hpp"
#include "slimtrain/model/hf/registry.hpp"
#include "slimtrain/model/lora.hpp"
#include "slimtrain/model/max_pool.hpp"
#include "slimtrain/runtime/cpu_info.hpp"
#include "slimtrain/runtime/heap.hpp"
#include "slimtrain/runtime/process_memory.hpp"
#include "slimtrain/train/device_batches.hpp"
#include "slimtrain/train/device_setup.hpp"
#include "slimtrain/train/evaluation.hpp"
#include "slimtrain/train/memory_check.hpp"
#include "slimtrain/train/normalisation_setup.hpp"
#include "slimtrain/train/optim.hpp"
#include "slimtrain/train/optimizers.hpp"
#include "slimtrain/train/session.hpp"
#include "slimtrain/train/stop_signal.hpp"
#include "slimtrain/train/sync_choice.hpp"

namespace slimtrain::train {
namespace {

// --chunk-mb 0 chooses between these by timing an all-reduce of kChunkProbeBytes with each.
constexpr std::size_t kLargeChunk = 4u << 20, kSmallChunk = 1u << 20, kChunkProbeBytes = 8u << 20;
constexpr std::size_t kNcclChunk = std::size_t{1} << 40;  // no piece smaller than a bucket

comm::CommConfig comm_config(const TrainConfig& c) {
  comm::CommConfig cc;
  cc.deadline.base_s = c.collective_timeout_s;
  // 0: measured once the data plane exists; until then (the weight broadcast) the default.
  if (c.floor_bandwidth_mbps > 0) cc.deadline.floor_bytes_per_s = c.floor_bandwidth_mbps * 1e6;
  cc.chunk_bytes = c.chunk_bytes > 0 ? c.chunk_bytes : kLargeChunk;
  return cc;
}

// --chunk-mb 0 on the MPI data plane (more than one rank): a second plane with small pieces is
// timed against the first and carries the run if it is faster (fastest_plane). On NCCL a bucket
// is one call.
void choose_chunk(Session& s, runtime::Runtime& rt, comm::CommConfig cc) {
  s.chunk_bytes = cc.chunk_bytes;
  s.chunk_reason = "--chunk-mb";
  if (s.cfg.chunk_bytes != 0) return;
  if (s.device.kind == "cuda") {
    s.chunk_bytes = kNcclChunk;  // as open_data_plane gave the plane
    s.chunk_reason = "default: NCCL pipelines a bucket in one call";
    return;
  }
  if (rt.size() == 1) {
    s.chunk_reason = "default: one rank";
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

void prepare_process(Session& s) {
  install_stop_handlers();
  s.fault = FaultPlan::from_env();
  // A failure's full record goes here on every rank; the log keeps the last few lines.
  comm::set_flight_recorder_directory(s.cfg.out + "/flight_recorder", s.rt.rank(),
                                      s.rt.hostnames()[static_cast<std::size_t>(s.rt.rank())]);
}

void open_control_planes(Session& s) {
  const comm::CommConfig cc = comm_config(s.cfg);
  s.control = std::make_unique<comm::ControlPlane>(s.rt, "control", cc);
  s.eval_control = std::make_unique<comm::ControlPlane>(s.rt, "eval", cc);
}

void bind_devices(Session& s) {
  const TrainConfig& cfg = s.cfg;
  s.device = bind_device(s.rt, *s.control, cfg.device, cfg.threads);
  s.placement = gather_placement(s.rt, *s.control, s.device.threads);
  if (s.device.kind == "cuda") {
    // What a PyTorch user sets first on a GPU: cuDNN times its convolution algorithms for each
    // new shape and keeps the fastest, and float32 products run on TF32 tensor cores.
    at::globalContext().setBenchmarkCuDNN(true);
    at::globalContext().setAllowTF32CuBLAS(cfg.tf32 == "on");
    at::globalContext().setAllowTF32CuDNN(cfg.tf32 == "on");
  }
}

void read_data_layout(Session& s) {
  const TrainConfig& cfg = s.cfg;
  s.info = data::read_dataset_info(cfg.data);
  s.info.max_length = cfg.max_length;
  if (!s.info.has_split("train"))
    SLIMTRAIN_THROW(DataError, cfg.data, ": no /train split to train on");
  choose_eval_splits(s);
  comm::OpOptions io;
  io.timeout_s = s.io_deadline(static_cast<std::uint64_t>(s.info.split_size("train")) *
                               static_cast<std::uint64_t>(s.info.sample_elements()) * 4);
  io.tag = "normalisation";
  share_normalisation(s.info, *s.control, io);
}

// Layout 2: a batch of zeros of every input (a ragged one 8 long, its mask all ones), for probe().
model::NamedInputs probe_inputs(const data::DatasetInfo& info, std::int64_t batch) {
  model::NamedInputs out;
  for (const data::InputInfo& in : info.inputs) {
    const auto type = in.integer() ? torch::kInt64 : torch::kFloat32;
    if (in.ragged) {
      out.emplace_back(in.name, torch::full({batch, 8}, in.integer() ? in.pad_id : 0,
                                            torch::TensorOptions(type)));
      out.emplace_back(data::mask_name(in.name), torch::ones({batch, 8}, torch::kInt64));
      continue;
    }
    std::vector<std::int64_t> shape{batch};
    shape.insert(shape.end(), in.shape.begin(), in.shape.end());
    out.emplace_back(in.name, torch::zeros(shape, torch::TensorOptions(type)));
  }
  return out;
}

// Layout 2: the model takes the file's inputs by name, each of them, before anything trains.
void match_inputs(Session& s) {
  const data::DatasetInfo& info = s.info;
  if (!info.named()) {
    if (s.cfg.max_length > 0)
      SLIMTRAIN_THROW(ConfigError, "--max-length: ", info.path,
                      " has one input of fixed shape (layout 1): nothing to cut");
    return;
  }
  eval::check_model_inputs(*s.model, info);
  s.model->set_probe_inputs(probe_inputs(info, s.cfg.batch_size));
}

// --lora freezes what it does not train: a tensor the base lacks (a BERT saved without its
// pooler) would stay at random values all run and be left out of every checkpoint.
void refuse_frozen_and_new(const model::ClassifierImpl& model,
                           const model::hf::PretrainedLoad& load, const model::ModelSpec& spec) {
  std::string frozen;
  for (const auto& p : model.named_parameters(true))
    if (!p.value().requires_grad() &&
        std::find(load.created.begin(), load.created.end(), p.key()) != load.created.end())
      frozen += (frozen.empty() ? "" : ", ") + p.key();
  if (!frozen.empty())
    SLIMTRAIN_THROW(ConfigError, "--lora: ", spec.model_option(), " has no ", frozen,
                    ", which --lora would keep frozen at random values; train them with "
                    "--lora-train (their module's name or path)");
}

void build_model(Session& s) {
  const TrainConfig& cfg = s.cfg;
  // Checked before anything is built: the file holds what this kind of model takes.
  const model::ModelSpec spec = eval::model_for_data(cfg.arch, cfg.model, s.info);
  // The precision before the plan counts its bytes; a checkpoint's row is its model_type's.
  const runtime::CpuInfo& cpu = runtime::cpu_info();
  const Bf16Support bf16 = cpu.amx_bf16()      ? Bf16Support::amx
                           : cpu.native_bf16() ? Bf16Support::avx512
                                               : Bf16Support::none;
  const std::string measured_as =
      spec.name == "hf" ? "hf:" + model::hf::config_of(spec).model_type : spec.name;
  s.precision = choose_precision(cfg.precision, measured_as, s.device.kind, bf16);
  // A checkpoint's plan before any of its weights exists; a built-in or script model is small.
  if (spec.name == "hf") check_memory_plan(s, hf_model_size(spec, s.info));
  if (s.device.kind == "cuda")
    s.torch_device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(s.device.index));
  torch::manual_seed(cfg.seed);
  const bool into_shards = loads_into_shards(spec, parse_shard_mode(cfg.shard));
  // A CPU rank's layers come and go in host memory; a GPU rank's in the GPU's allocator.
  if (parse_shard_mode(cfg.shard) == ShardMode::parameters && s.device.kind != "cuda")
    runtime::return_freed_memory();
  // --lora in bf16: the frozen base held in bf16, never whole in float32 (a 7B decoder's layers
  // are made empty one by one and get bf16 memory before the load fills them).
  const bool frozen_bf16 = !spec.lora.empty() && s.precision.bf16();
  {
    std::optional<model::DeferredWeights> deferred;  // the decoders' weights made empty
    if (into_shards) deferred.emplace(s.torch_device);
    if (frozen_bf16) deferred.emplace(torch::Device(torch::kCPU));
    s.model = model::make_model(spec);
  }
  // The layers made and freed one by one left their memory in the heap (below glibc's mmap
  // threshold): given back, or it would sit beside the shard (135 MB of 250 in e2e_shard_loading).
  if (into_shards || frozen_bf16) runtime::release_freed_memory();
  if (!spec.lora.empty()) s.lora_base = eval::lora_base_record(spec.hf_dir);
  if (frozen_bf16)
    log::info("--lora with bf16: ", model::hold_frozen_in_bf16(*s.model),
              " frozen values held in bfloat16 (no float32 master: they never change)");
  s.spec = s.model->spec();  // with what loading taught it (a script's signature)
  if (s.model->trainable_parameters().empty())
    SLIMTRAIN_THROW(ConfigError, "--model ", s.spec.model_option(),
                    ": the module has no trainable parameter (", model::parameter_count(*s.model),
                    " parameter values, none with "
                    "requires_grad): a frozen or mobile-optimised module (torch.jit.freeze, "
                    "optimize_for_mobile, .ptl) keeps its weights as constants; save the module "
                    "itself with torch.jit.script(model).save(path)");
  if (spec.name != "hf") check_memory_plan(s, built_model_size(*s.model));
  if (into_shards) {
    // Every rank checks the headers; each reads its own slices when the shards are made.
    s.shard_loading.emplace();
    s.shard_loading->source = eval::hf_weight_source(s.spec.hf_dir);
    model::hf::PretrainedMatch match =
        model::hf::match_pretrained(*s.model, s.shard_loading->source);
    s.shard_loading->stored = std::move(match.stored);
    if (s.rt.rank() == 0) s.hf_load = match.load;
  } else if (s.spec.name == "hf" && s.rt.rank() == 0) {  // the initial broadcast gives the others
    s.hf_load = eval::load_hf_weights(*s.model, s.spec.hf_dir);
    if (!spec.lora.empty()) refuse_frozen_and_new(*s.model, *s.hf_load, s.spec);
  }
  if (cfg.activation_checkpointing == "layers") {
    if (!s.model->recomputes_layers())
      SLIMTRAIN_THROW(ConfigError, "--activation-checkpointing layers: --model ",
                      s.spec.model_option(),
                      " has no transformer layers to recompute (the hf models, vit-tiny and "
                      "text-transformer have)");
    s.model->set_layer_recompute(true);
  }
  match_inputs(s);
  s.model->to(s.torch_device);
  s.model->probe(cfg.batch_size, s.torch_device);
  const std::vector<std::string> dropped = s.model->dropped_outputs();
  if (cfg.strict_slim && !dropped.empty())
    SLIMTRAIN_THROW(ConfigError, "--strict-slim: ", s.spec.model_option(), "'s forward returns ",
                    dropped.size(), " output", dropped.size() == 1 ? "" : "s",
                    " beside the logits: ", join(dropped),
                    "; return only the logits (and the loss), or drop --strict-slim");
}

void open_data_plane(Session& s) {
  comm::CommConfig cc = comm_config(s.cfg);
  // NCCL pipelines a bucket itself: one call each (ViT-B's 4 MiB pieces were 133 calls a step).
  if (s.device.kind == "cuda" && s.cfg.chunk_bytes == 0) cc.chunk_bytes = kNcclChunk;
  s.data_plane = comm::make_data_plane(s.rt, s.torch_device, "data", cc);
  torch::NoGradGuard no_grad;
  comm::OpOptions options;
  options.tag = "initial-weights";
  // Weights made without memory are read from the checkpoint by every rank (shard_loading.hpp).
  for (auto& p : s.model->parameters())
    if (model::has_memory(p)) s.data_plane->broadcast(p.detach(), 0, options);
  for (auto& b : s.model->buffers()) s.data_plane->broadcast(b, 0, options);
}

void set_memory_format(Session& s) {
  s.model->apply_memory_format(s.cfg.memory_format, s.device.kind == "cpu");
  model::use_own_max_pool_loop(s.cfg.max_pool == "own");
}

void measure_link(Session& s) {
  const comm::CommConfig cc = comm_config(s.cfg);
  s.floor_bytes_per_s = cc.deadline.floor_bytes_per_s;
  if (s.cfg.floor_bandwidth_mbps == 0 && s.rt.size() > 1) {
    s.bandwidth = comm::measure_bandwidth(*s.data_plane, *s.control);
    s.floor_bytes_per_s = s.bandwidth.bytes_per_s() / comm::kFloorSafetyFactor;
    s.data_plane->set_floor_bandwidth(s.floor_bytes_per_s);
  }
  choose_chunk(s, s.rt, cc);
}

// The GPU step where it can run: a CUDA device and LibTorch's fused optimizers (2.4 on). A CUDA
// LibTorch older than that steps as a CPU does, reading the loss every step (said at start-up).
bool choose_device_step(const Session& s) {
  const char* test = std::getenv("SLIMTRAIN_TEST_DEVICE_STEP");  // tests: on a CPU
  const bool wanted = s.device.kind == "cuda" || (test != nullptr && std::string(test) == "1");
  if (wanted && !fused_optimizers_available() && s.rt.rank() == 0)
    log::warn("LibTorch ", TORCH_VERSION,
              " has no fused optimizers (2.4 on): the step reads its "
              "loss back every step, as on a CPU");
  return wanted && fused_optimizers_available();
}

void make_optimizer_and_loader(Session& s) {
  const TrainConfig& cfg = s.cfg;
  // Frozen parameters (requires_grad false) are neither optimised nor synchronised.
  const std::vector<torch::Tensor> params = s.model->trainable_parameters();
  std::vector<std::int64_t> numels;
  for (const torch::Tensor& p : params) numels.push_back(p.numel());
  s.shard = parse_shard_mode(cfg.shard);
  const std::size_t bucket_bytes = gradient_bucket_bytes(cfg.bucket_bytes, s.device.kind == "cuda");
  s.layout = std::make_unique<FlatLayout>(numels, bucket_bytes,
                                          s.shard == ShardMode::none ? 1 : s.rt.size());
  if (s.shard != ShardMode::none)
    s.shards = std::make_unique<ShardedParams>(
        params, *s.layout, s.rt.rank(),
        s.shard == ShardMode::parameters ? s.data_plane.get() : nullptr,
        s.shard_loading ? checkpoint_slices(params, *s.shard_loading) : PieceSource());
  s.shard_loading.reset();  // its files closed: the checkpoint is in the shards
  if (cfg.weights == "bf16") s.masters = make_master_weights(s, params);
  s.optimizer = make_optimizer(cfg.optim, s.shards    ? s.shards->shard()
                                          : s.masters ? s.masters->masters()
                                                      : params);
  s.device_step = choose_device_step(s);
  if (s.device_step) dynamic_cast<SteppedOptimizer&>(*s.optimizer).use_fused(true);
  data::LoaderOptions lo;
  lo.batch_size = cfg.batch_size;
  lo.seed = cfg.seed;
  lo.mode = cfg.data_mode;
  lo.memory_budget_bytes = static_cast<std::size_t>(cfg.memory_budget_mb) << 20;
  lo.augment = augment_options(cfg);
  lo.group_by_length = cfg.group_by_length;
  lo.form = batch_form(s.torch_device);  // as stored and pinned for a GPU's step
  lo.wait_timeout_s = s.io_deadline(0);  // a stalled read ends the job, at np 1 too
  s.loader = std::make_unique<data::TrainLoader>(s.info, "train", s.rt.rank(), s.rt.size(), lo);
  if (s.loader->steps_per_epoch() == 0)
    SLIMTRAIN_THROW(ConfigError, "--batch-size: ", cfg.batch_size, " x ", s.rt.size(),
                    " ranks exceeds the ", s.info.split_size("train"),
                    " training samples: not one step per epoch");
  s.steps_per_epoch = s.loader->steps_per_epoch() / cfg.grad_accum;
  if (s.steps_per_epoch == 0)
    SLIMTRAIN_THROW(ConfigError, "--grad-accum ", cfg.grad_accum, ": an epoch has ",
                    s.loader->steps_per_epoch(), " batches of ", cfg.batch_size, " per rank (",
                    s.info.split_size("train"), " training samples, ", s.rt.size(),
                    " ranks): not one optimizer step per epoch");
  s.total_steps = cfg.max_steps > 0 ? cfg.max_steps : cfg.epochs * s.steps_per_epoch;
  ScheduleConfig sc = cfg.schedule;
  sc.total_steps = s.total_steps;
  s.schedule = std::make_unique<LrSchedule>(cfg.optim.lr, sc);
}

}  // namespace

data::AugmentOptions augment_options(const TrainConfig& c) {
  data::AugmentOptions a;
  a.crop_padding = c.augment_crop_padding;
  a.flip = c.augment_flip;
  a.rotate_deg = c.augment_rotate_deg;
  a.erase_probability = c.augment_erase;
  return a;
}

// The start-up order, stated once. Every stage runs on every rank in this order; the stages that
// communicate are collective, so this is also the order of their collectives on every rank.
std::unique_ptr<Session> open_session(const TrainConfig& cfg, runtime::Runtime& rt) {
  auto s = std::make_unique<Session>(cfg, rt);
  // Each stage's seconds, for the start line: a relaunch's time to its first step is mostly here.
  auto stage = [&s](const char* name, auto&& run) {
    const auto from = Clock::now();
    run(*s);
    s->startup_seconds.emplace_back(name, seconds_since(from));
  };
  // Stop handlers, the fault plan and the flight recorder's directory: before
  // anything can fail or be signalled.
  stage("process", prepare_process);
  // The control and evaluation planes: every later agreement and report runs on them.
  stage("control planes", open_control_planes);
  // A GPU or a share of the cores per rank, checked across ranks before anything allocates on
  // a device; where every rank runs; the precision, which depends on the device kind.
  stage("devices", bind_devices);
  // The file's splits and the evaluation splits (options checked before any heavy work), then
  // normalisation statistics from rank 0 when the file has none: every reader needs them.
  stage("data layout", read_data_layout);
  // The model on its device, probed with one batch: a JIT's slow first calls and a wrong output
  // shape show here, before any collective of the data plane could wait on them. What the process
  // held before it is the baseline the done event's memory figures are counted from.
  s->baseline_resident_bytes = runtime::resident_bytes();
  stage("model", build_model);
  // The data plane (NCCL needs the device set) and rank 0's weights to every replica.
  stage("data plane", open_data_plane);
  // Channels-last after the broadcast: the data plane moves contiguous tensors only.
  set_memory_format(*s);
  // The link measured on the data plane: deadlines scale with it, and the piece size is chosen.
  stage("link", measure_link);
  // The optimizer over the parameters in their final layout (with --shard, moved into the flat
  // buffer after the broadcast, which moves each tensor on its own), the training shard (it reads
  // normalised samples), its steps per epoch and the schedule that counts them.
  stage("optimizer and loader", make_optimizer_and_loader);
  s->loading_peak_resident_bytes = runtime::peak_resident_bytes();
  return s;
}

}  // namespace slimtrain::train
