#pragma once
/**
 * @brief --resume: rank 0 resolves and verifies the checkpoint (one rank hashes, under the I/O
 * deadline, while the others wait on the control plane with that same deadline), every rank
 * loads it (checking sizes only) and they agree it loaded everywhere.
 */
#include <cstdint>
#include <optional>
#include <string>

#include "slimtrain/train/session.hpp"

namespace slimtrain::train {

struct Resumed {
  bool resumed = false;
  Position at;
  std::string path;                   ///< the checkpoint loaded ("" when none)
  std::optional<double> best_metric;  ///< the run's best evaluation by --best-metric so far
};

/**
 * @brief Loads model, optimiser and RNG state as --resume says (auto: the newest checkpoint in
 * --out that verifies; none; or a path). Collective; a bad path or a checkpoint of another model
 * throws the same ConfigError or DataError on every rank.
 */
Resumed resume_if_asked(Session& s);

}  // namespace slimtrain::train
