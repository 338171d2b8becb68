#pragma once
/** @brief Which checkpoints to keep: the newest N, the best by a metric, and whatever `latest`
 * names. */
#include <string>
#include <vector>

namespace slimtrain::ckpt {

struct RetentionPolicy {
  int keep_last = 3;
  std::string best_metric;  ///< "" = none, e.g. "accuracy"; only saves given a metric count
  bool higher_is_better = true;
};

/** @brief Throws ConfigError naming --keep-last when the policy cannot be honoured. */
void validate(const RetentionPolicy& policy);

/**
 * @brief Deletes complete step directories (those with a manifest) the policy does not keep; each
 * is first renamed to a .tmp- name, so a crash mid-delete leaves nothing that looks like a
 * checkpoint. Directories without a manifest are left for inspection. Returns the deleted paths.
 */
std::vector<std::string> apply_retention(const std::string& checkpoints_dir,
                                         const RetentionPolicy& policy);

}  // namespace slimtrain::ckpt
