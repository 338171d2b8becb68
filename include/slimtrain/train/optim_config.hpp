#pragma once
/** @brief The optimiser options, torch-free: `slimtrain train`'s option table fills them. */
#include <string>

namespace slimtrain::train {

/** @brief The optimiser options; the trainer fills them from --optimizer, --lr, ... */
struct OptimConfig {
  std::string name = "sgd";  ///< sgd | adamw
  double lr = 0.05, momentum = 0.9, weight_decay = 0.0, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  bool nesterov = false;
};

}  // namespace slimtrain::train
