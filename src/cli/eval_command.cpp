#include "slimtrain/cli/app.hpp"
#include "slimtrain/cli/command_line.hpp"
#include "slimtrain/cli/eval_job.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/eval/eval_stats.hpp"
#include "slimtrain/model/model_option.hpp"

namespace slimtrain::cli {

int run_eval(const std::vector<std::string>& args) {
  EvalJobConfig c;
  CommandLine cl(
      "eval",
      "[mpirun -np N] slimtrain eval --data F.h5 (--checkpoint PATH | --model hf:DIR) "
      "[--split test] [--json] [--predictions OUT.h5]",
      "Evaluates a checkpoint: each rank scores its exact share of the split (every sample\n"
      "once, no padding), then one reduction of the loss sum, the count and per class its\n"
      "true positives, predictions and samples (the C x C matrix too up to\n"
      "--confusion-max-classes).\n"
      "With --predictions, also writes every sample's logits, predicted class and label.\n"
      "--model hf:DIR without --checkpoint evaluates a HuggingFace checkpoint as it is.");
  // clang-format off
  cl.add()
    ("data", po::value(&c.data)->required(), "HDF5 data file")
    ("checkpoint", po::value(&c.checkpoint), "a checkpoint directory (RUN_DIR/checkpoints/step-NNNNNNNN), or a run directory for its newest checkpoint that verifies (resolved once, on rank 0)")
    ("model", po::value(&c.model)->default_value(""), "hf:DIR, without --checkpoint: a HuggingFace checkpoint as save_pretrained wrote it (config.json, model.safetensors), evaluated as it is; torchscript:PATH.pt, with --checkpoint: where the TorchScript file of a torchscript checkpoint is now (default: the path it was trained from)")
    ("split", bound(c.split), "train, val or test")
    ("batch-size", bound(c.batch_size), "evaluation batch per rank")
    ("device", bound(c.device), "cpu or cuda")
    ("precision", bound(c.precision), "fp32, or bf16: every weight held in bfloat16 (half the memory: a 7B --lora checkpoint's base in 15 GB, never whole in float32 on the way) and the forward under bf16 autocast, on cuda or on a CPU with native bf16 (avx512_bf16 or amx_bf16; refused elsewhere). The logits then differ from fp32's by bf16's rounding")
    ("threads", bound(c.threads), kThreadsHelp)
    ("deadline", bound(c.deadline_s), "seconds the reduction may wait for a late rank")
    ("io-timeout", bound(c.io_timeout_s), "seconds resolving and loading the checkpoint may take")
    ("json", po::bool_switch(&c.json), "print one JSON object instead of the table")
    ("per-class", bound(c.per_class), "the table's classes: ends (the 20 of lowest F1 and the 20 of highest, where there are more than 40) or all (every class, in class order)")
    ("confusion-max-classes", bound(c.confusion_max_classes), kConfusionMaxClassesHelp)
    ("predictions", po::value(&c.predictions), "also write OUT.h5: /logits float32 [N, C], /predicted int64 [N] (the argmax) and /labels int64 [N], in the split's row order, with the split, checkpoint, step and class_names as attributes (Trainer.predict's output); written by every rank with MPI-IO, whole or not at all")
    ("force", po::bool_switch(&c.force), "replace an existing --predictions file");
  // clang-format on
  if (!cl.parse(args)) return kExitOk;
  const bool hf = c.model.rfind(model::kHfModelPrefix, 0) == 0;
  if (c.checkpoint.empty() && !hf)
    SLIMTRAIN_THROW(ConfigError,
                    "--checkpoint: required (or --model hf:DIR to evaluate a "
                    "HuggingFace checkpoint as it is)");
  if (!c.checkpoint.empty() && hf)
    SLIMTRAIN_THROW(ConfigError, "--model ", c.model,
                    ": give it without --checkpoint (a "
                    "checkpoint of a run from it knows its model)");
  require_range<std::int64_t>("--batch-size", c.batch_size, 1, 1 << 20);
  require_range<std::int64_t>("--confusion-max-classes", c.confusion_max_classes, 0,
                              eval::kMaxConfusionMaxClasses);
  if (c.per_class != "ends" && c.per_class != "all")
    SLIMTRAIN_THROW(ConfigError, "--per-class: '", c.per_class, "' must be ends or all");
  if (c.precision != "fp32" && c.precision != "bf16")
    SLIMTRAIN_THROW(ConfigError, "--precision: '", c.precision, "' must be fp32 or bf16");
  require_range<int>("--threads", c.threads, 0, 4096);
  require_range<double>("--deadline", c.deadline_s, 0.001, 86400.0);
  require_range<double>("--io-timeout", c.io_timeout_s, 0.01, 1e7);
  return run_eval_job(c);
}

}  // namespace slimtrain::cli
