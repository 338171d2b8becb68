#include "slimtrain/train/sync_choice.hpp"

#include "slimtrain/core/error.hpp"

namespace slimtrain::train {

GradCompression parse_grad_compression(const std::string& name) {
  if (name == "none") return GradCompression::none;
  if (name == "bf16") return GradCompression::bf16;
  SLIMTRAIN_THROW(ConfigError, "--grad-compression must be none or bf16, not '", name, "'");
}

const char* to_string(GradCompression c) {
  return c == GradCompression::bf16 ? "bf16" : "fp32";
}

OverlapChoice choose_gather_overlap(const std::string& option, bool gpu, ShardMode shard) {
  if (option != "auto") return {option == "on", "--overlap-gather " + option};
  if (shard == ShardMode::parameters)
    return gpu ? OverlapChoice{true,
                               "--overlap-gather auto: the next layer's while one computes, "
                               "with NCCL"}
               : OverlapChoice{false,
                               "--overlap-gather auto: one layer at a time on CPU, where the "
                               "gather's thread competes with forward for the core and a layer "
                               "gathered ahead is memory held"};
  return gpu ? OverlapChoice{true, "--overlap-gather auto: on with NCCL"}
             : OverlapChoice{false,
                             "--overlap-gather auto: off on CPU, where the gather's thread "
                             "competes with forward for the core"};
}

OverlapChoice choose_overlap(std::size_t buckets, bool gpu, ShardMode shard) {
  if (shard == ShardMode::gradients || shard == ShardMode::parameters)
    return {true, std::string("--shard ") + to_string(shard) +
                      ": each bucket is reduce-scattered and freed as soon as backward has "
                      "filled it, so a step never holds all its gradients"};
  if (!gpu)
    return {false,
            "on CPU the MPI plane's polling communication thread takes a core from backward "
            "(a 4-bucket mlp on 2 cores was 0.74-0.93x as fast with it)"};
  if (buckets < 2)
    return {true,
            "one gradient bucket: it starts with backward's last gradient, no backward left "
            "to slow"};
  return {true, "GPU compute leaves the CPU to issue NCCL work during backward"};
}

std::size_t gradient_bucket_bytes(std::size_t option, bool gpu) {
  return option != 0 ? option : gpu ? 25u << 20 : 4u << 20;
}

OverlapChoice choose_grad_sink(bool gpu, const char* forced) {
  const std::string force = forced ? forced : "";
  if (force == "on") return {true, "SLIMTRAIN_GRAD_SINK=on"};
  if (force == "off") return {false, "SLIMTRAIN_GRAD_SINK=off"};
  if (!force.empty())
    SLIMTRAIN_THROW(ConfigError, "SLIMTRAIN_GRAD_SINK must be on or off, not '", force, "'");
  if (gpu)
    return {false, "on a GPU autograd's one weight-gradient product per layer (not row blocks)"};
  return {true, "on a CPU weight gradients are made in row blocks where they belong"};
}

}  // namespace slimtrain::train
