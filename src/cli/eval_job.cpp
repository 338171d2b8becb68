#include "slimtrain/cli/eval_job.hpp"

#include <cstdio>
#include <iostream>

#include "slimtrain/cli/eval_table.hpp"
#include "slimtrain/cli/predictions_file.hpp"
#include "slimtrain/comm/agreement.hpp"
#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/core/clock.hpp"
#include "slimtrain/core/detail/fixed.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/fault_injection.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/data/dataset_info.hpp"
#include "slimtrain/eval/checkpoint_model.hpp"
#include "slimtrain/eval/model_inputs.hpp"
#include "slimtrain/eval/pretrained_model.hpp"
#include "slimtrain/eval/split_evaluation.hpp"
#include "slimtrain/runtime/cpu_info.hpp"
#include "slimtrain/runtime/device.hpp"
#include "slimtrain/runtime/job_exit.hpp"
#include "slimtrain/runtime/process_memory.hpp"
#include "slimtrain/runtime/runtime.hpp"
#include "slimtrain/train/device_setup.hpp"
#include "slimtrain/train/model_process.hpp"
#include "slimtrain/train/normalisation_setup.hpp"
#include "slimtrain/train/precision.hpp"

namespace slimtrain::cli {
namespace {

void print_table(const eval::EvalOutcome& o, const eval::CheckpointModel& loaded,
                 const EvalJobConfig& c, int ranks) {
  if (c.json) {
    nlohmann::json out = o.metrics.to_json();
    out["checkpoint"] = loaded.checkpoint;
    out["split"] = c.split;
    out["step"] = loaded.step;
    out["confusion"] = o.metrics.confusion_json();
    std::cout << out.dump() << std::endl;
    return;
  }
  std::printf("checkpoint %s (step %lld), split '%s', %lld samples on %d ranks\n",
              loaded.checkpoint.c_str(), static_cast<long long>(loaded.step), c.split.c_str(),
              static_cast<long long>(o.metrics.count), ranks);
  std::printf("accuracy %.4f  macro-F1 %.4f  mean loss %.4f\n", o.metrics.accuracy,
              o.metrics.macro_f1, o.metrics.mean_loss);
  const auto classes = static_cast<long long>(o.metrics.per_class.size());
  if (o.metrics.classes_present < classes)
    std::printf("macro-F1 is over the %lld of %lld classes this split holds; over all %lld: %.4f\n",
                static_cast<long long>(o.metrics.classes_present), classes, classes,
                o.metrics.macro_f1_all);
  std::fputs(per_class_table(o.metrics, c.per_class == "all").c_str(), stdout);
  std::fflush(stdout);
}

int evaluate_checkpoint(const runtime::Runtime& rt, comm::ControlPlane& control,
                        const EvalJobConfig& c) {
  const runtime::DeviceBinding device = train::bind_device(rt, control, c.device, c.threads);
  // bf16 where it is computed natively (the trainer's rule); ConfigError naming --precision.
  const runtime::CpuInfo& cpu = runtime::cpu_info();
  const bool bf16 = train::choose_precision(c.precision, "", device.kind,
                                            cpu.amx_bf16()      ? train::Bf16Support::amx
                                            : cpu.native_bf16() ? train::Bf16Support::avx512
                                                                : train::Bf16Support::none)
                        .bf16();
  FaultPlan fault = FaultPlan::from_env();
  if (fault.armed(rt.rank(), FaultPhase::eval, 0)) fault.fire();
  data::DatasetInfo info = data::read_dataset_info(c.data);
  if (!info.has_split(c.split))
    SLIMTRAIN_THROW(ConfigError, "--split: ", c.data, " has no split '", c.split, "'");
  PredictionsFile predictions;
  predictions.path = c.predictions;
  predictions.force = c.force;
  predictions.io_timeout_s = c.io_timeout_s;
  if (!c.predictions.empty()) check_predictions_output(control, predictions);  // before the work

  comm::OpOptions io;
  io.timeout_s = c.io_timeout_s;
  io.tag = "resolve-checkpoint";
  eval::CheckpointModel loaded;
  if (c.checkpoint.empty()) {  // --model hf:DIR alone: the pretrained checkpoint as it is
    io.tag = "load-pretrained";
    comm::on_all_ranks(
        control, [&] { loaded = eval::load_pretrained_model(c.model, info, rt.rank() == 0, bf16); },
        io);
  } else {
    // Rank 0 resolves (a run still writing checkpoints could give each rank another one) and
    // verifies in full; the others wait with the I/O deadline and check sizes only.
    const std::string path = comm::decide_on_root(
        control, 0,
        [&] {
          const std::string dir = eval::resolve_checkpoint(c.checkpoint);
          log::info("rank 0 resolved --checkpoint ", c.checkpoint, " to ", dir);
          return dir;
        },
        io);
    comm::on_all_ranks(
        control,
        [&] {
          loaded = eval::load_checkpoint_model(
              path, info, rt.rank() == 0 ? ckpt::VerifyDepth::checksums : ckpt::VerifyDepth::sizes,
              c.model, bf16);
        },
        io);
  }
  comm::on_all_ranks(control, [&] { eval::check_model_inputs(*loaded.model, info); });
  comm::OpOptions stats_io = io;
  stats_io.tag = "normalisation";
  train::share_normalisation(info, control, stats_io);
  log::info("evaluating checkpoint ", loaded.checkpoint, " (step ", loaded.step, ")",
            bf16 ? " with its weights in bfloat16 and the forward under bf16 autocast" : "");
  if (device.kind == "cuda")
    loaded.model->to(torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(device.index)));
  loaded.model->apply_memory_format("auto", device.kind == "cpu");  // as the trainer's default

  eval::SplitEvaluation what;
  what.model = loaded.model.get();
  what.info = &info;
  what.split = c.split;
  what.shard.batch_size = c.batch_size;
  what.shard.bf16 = bf16;
  what.shard.confusion_max_classes = c.confusion_max_classes;
  what.policy.deadline_s = c.deadline_s;
  what.policy.agree_timeout_s = c.deadline_s;
  eval::ShardPredictions mine;
  if (!c.predictions.empty()) what.predictions = &mine;
  const auto started = Clock::now();
  const eval::EvalOutcome o = eval::evaluate_split(what, control);
  const double seconds = seconds_since(started);
  if (!o.ok && o.input_error) {
    // Bad input: exit 2 on every rank, printed by the ranks that saw it.
    DataError error(o.input_error_message.empty() ? "another rank's evaluation input failed"
                                                  : o.input_error_message,
                    __FILE__, __LINE__);
    if (o.input_error_message.empty()) error.mark_told_by_peer();
    throw error;
  }
  if (!o.ok) SLIMTRAIN_THROW(CommError, "evaluation failed: ", o.reason);
  // What an evaluation costs: its time, and rank 0's memory (statistics linear in the classes).
  log::info_rank0("evaluated ", o.metrics.count, " samples of '", c.split, "' (",
                  o.metrics.per_class.size(), " classes) on ", rt.size(),
                  rt.size() == 1 ? " rank" : " ranks", " in ", detail::fixed(seconds, 2), " s (",
                  detail::fixed(seconds > 0 ? o.metrics.count / seconds : 0.0, 0),
                  " samples/s); peak ", detail::fixed(runtime::peak_resident_bytes() / 1e9, 2),
                  " GB resident on rank 0, ", o.bytes_sent, " bytes reduced");
  if (!c.predictions.empty()) {
    predictions.split = c.split;
    predictions.checkpoint = loaded.checkpoint;
    predictions.step = loaded.step;
    predictions.rows = info.split_size(c.split);
    predictions.class_names = info.class_names;
    write_predictions(control, rt.world(), predictions, mine);
    log::info_rank0("wrote ", c.predictions, ": logits, predicted class and label of ",
                    predictions.rows, " samples of '", c.split, "'");
  }
  if (rt.rank() == 0) print_table(o, loaded, c, rt.size());
  return kExitOk;
}

}  // namespace

int run_eval_job(const EvalJobConfig& c) {
  train::start_model_process(c.data, c.io_timeout_s);  // before MPI starts
  runtime::Runtime rt;
  comm::CommConfig cc;
  cc.deadline.base_s = c.deadline_s;
  std::unique_ptr<comm::ControlPlane> control;
  return runtime::run_guarded(rt, [&] {
    control = std::make_unique<comm::ControlPlane>(rt, "eval", cc);
    return evaluate_checkpoint(rt, *control, c);
  });
}

}  // namespace slimtrain::cli
