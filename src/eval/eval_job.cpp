#include "slimtrain/eval/eval_job.hpp"

#include <cstdio>
#include <iostream>

#include "slimtrain/comm/communicator.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/data/dataset_info.hpp"
#include "slimtrain/eval/checkpoint_model.hpp"
#include "slimtrain/eval/evaluator.hpp"
#include "slimtrain/eval/shard_pass.hpp"
#include "slimtrain/runtime/device.hpp"
#include "slimtrain/runtime/runtime.hpp"

namespace slimtrain::eval {

int run_eval_job(const EvalJobConfig& c) {
  runtime::Runtime rt;
  const runtime::DeviceBinding device = runtime::bind_device(rt, c.device, c.threads);
  const data::DatasetInfo info = data::read_dataset_info(c.data);
  if (!info.has_split(c.split))
    SLIMTRAIN_THROW(ConfigError, "--split: ", c.data, " has no split '", c.split, "'");

  const CheckpointModel loaded = load_checkpoint_model(c.checkpoint, info);
  const auto& model = loaded.model;
  if (device.kind == "cuda")
    model->to(torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(device.index)));

  auto comm = comm::make_communicator(rt, "eval", device.kind);
  EvalPolicy policy;
  policy.deadline_s = c.deadline_s;
  policy.agree_timeout_s = c.deadline_s;
  auto local = [&](std::int64_t batch) {
    return evaluate_shard(*model, c.data, c.split, rt.rank(), rt.size(), batch, info.num_classes);
  };
  const EvalOutcome o =
      evaluate(local, *comm, info.num_classes, info.class_names, c.batch_size, policy);
  if (!o.ok) SLIMTRAIN_THROW(CommError, "evaluation failed: ", o.reason);
  if (rt.rank() == 0) {
    if (c.json) {
      nlohmann::json out = o.metrics.to_json();
      out["checkpoint"] = loaded.checkpoint;
      out["split"] = c.split;
      out["step"] = loaded.step;
      std::cout << out.dump() << std::endl;
    } else {
      std::printf("checkpoint %s (step %lld), split '%s', %lld samples on %d ranks\n",
                  loaded.checkpoint.c_str(), static_cast<long long>(loaded.step), c.split.c_str(),
                  static_cast<long long>(o.metrics.count), rt.size());
      std::printf("accuracy %.4f  macro-F1 %.4f  mean loss %.4f\n", o.metrics.accuracy,
                  o.metrics.macro_f1, o.metrics.mean_loss);
      std::printf("%-20s %9s %9s %9s %8s\n", "class", "precision", "recall", "f1", "support");
      for (const ClassMetrics& m : o.metrics.per_class)
        std::printf("%-20s %9.4f %9.4f %9.4f %8lld\n", m.name.c_str(), m.precision, m.recall, m.f1,
                    static_cast<long long>(m.support));
      std::fflush(stdout);
    }
  }
  return kExitOk;
}

}  // namespace slimtrain::eval
