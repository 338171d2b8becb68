#pragma once
/**
 * @brief `slimtrain eval --predictions OUT.h5`: every sample's logits and predicted class, in the
 * split's row order, what HuggingFace's Trainer.predict gives. Each rank writes the rows of its
 * share with collective MPI-IO; the file appears whole or not at all (prep_output.hpp).
 *
 *   /logits     float32 [N, C]
 *   /predicted  int64 [N]      argmax of the logits
 *   /labels     int64 [N]      the split's labels
 *   attributes: split, checkpoint, step, num_classes, class_names (as in data files)
 */
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/eval/shard_pass.hpp"

namespace slimtrain::cli {

struct PredictionsFile {
  std::string path;
  bool force = false;
  double io_timeout_s = 600.0;
  std::string split, checkpoint;
  std::int64_t step = 0;
  std::int64_t rows = 0;  ///< N, the split's size
  std::vector<std::string> class_names;
};

/** @brief Collective: ConfigError on every rank when the file exists (without force). */
void check_predictions_output(comm::ControlPlane& control, const PredictionsFile& file);

/** @brief Collective over `control` and `io_comm`: writes `mine`, this rank's rows. */
void write_predictions(comm::ControlPlane& control, MPI_Comm io_comm, const PredictionsFile& file,
                       const eval::ShardPredictions& mine);

}  // namespace slimtrain::cli
