#pragma once
/**
 * @brief --lora's value, parsed apart from the adapters themselves (lora.hpp), so that the option
 * table and its fuzz target need no LibTorch.
 */
#include <cstdint>
#include <string>
#include <vector>

namespace slimtrain::model {

/** @brief What --lora says: "r=16,alpha=32,dropout=0.05,targets=q_proj,v_proj". */
struct LoraOptions {
  std::int64_t r = 16;
  double alpha = 32.0;
  double dropout = 0.05;
  /** Module names (the last part of a linear layer's path, as PEFT matches them), or
   * {"all-linear"}: every linear layer of the body, not the head. */
  std::vector<std::string> targets{"all-linear"};

  /** @brief Parses `text` (keys r, alpha, dropout, targets; targets' names run to the end or
   * the next key); ConfigError naming `option` for anything else. */
  static LoraOptions parse(const std::string& text, const std::string& option = "--lora");
  /** @brief The canonical text parse() reads back (what a checkpoint's model spec stores). */
  std::string canonical() const;
  bool all_linear() const { return targets.size() == 1 && targets.front() == "all-linear"; }
  double scale() const { return alpha / static_cast<double>(r); }
};

}  // namespace slimtrain::model
