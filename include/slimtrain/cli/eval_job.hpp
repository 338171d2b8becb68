#pragma once
/** @brief `slimtrain eval`: a checkpoint evaluated on a split, under mpirun or alone. */
#include <cstdint>
#include <string>

namespace slimtrain::cli {

struct EvalJobConfig {
  std::string data;
  std::string checkpoint;
  std::string model;  ///< "torchscript:PATH": the module file of a torchscript checkpoint
  std::string split = "test";
  std::int64_t batch_size = 512;
  std::string device = "cpu";
  /** @brief fp32, or bf16: the weights held in bfloat16 and the forward under bf16 autocast. */
  std::string precision = "fp32";
  int threads = 0;
  double deadline_s = 300.0;
  double io_timeout_s = 600.0;  ///< resolving and loading the checkpoint
  bool json = false;
  std::int64_t confusion_max_classes = 100;  ///< --confusion-max-classes
  std::string per_class = "ends";            ///< --per-class: ends (worst and best 20) or all
  std::string predictions;  ///< --predictions OUT.h5: every sample's logits ("": none)
  bool force = false;       ///< --force: replace an existing --predictions file
};

/** @brief Prints the metrics on rank 0 (a table, or one JSON object); returns the exit code. */
int run_eval_job(const EvalJobConfig& config);

}  // namespace slimtrain::cli
