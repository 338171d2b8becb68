#include "slimtrain/comm/bandwidth_probe.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace slimtrain::comm {
namespace {
constexpr double kLongEnough = 0.05;  // seconds: above timer and scheduling noise
}  // namespace

std::string BandwidthProbe::describe() const {
  char text[128];
  std::snprintf(text, sizeof text, "%.0f MB/s: a %.2g MiB all-reduce in %.1f ms",
                bytes_per_s() / 1e6, static_cast<double>(bytes) / (1 << 20), seconds * 1e3);
  return text;
}

BandwidthProbe measure_bandwidth(DataPlane& data, ControlPlane& control) {
  BandwidthProbe probe;
  if (data.size() == 1) return probe;
  OpOptions options;
  options.tag = "bandwidth-probe";
  const auto on = torch::TensorOptions().dtype(torch::kFloat32).device(data.device());
  // The slowest rank's time for one all-reduce of `elements` floats.
  auto timed = [&](std::int64_t elements) {
    torch::Tensor t = torch::ones({elements}, on);
    if (t.is_cuda()) torch::cuda::synchronize(t.device().index());
    const auto start = std::chrono::steady_clock::now();
    data.all_reduce(t, ReduceOp::sum, options);  // returns once the reduction has finished
    const double mine =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return control.all_reduce(std::vector<double>{mine}, ReduceOp::max)[0];
  };
  // Untimed: the first transfer of this size opens the connections (TCP: ~100 ms over a
  // simulated link where the warm one takes 2 ms).
  timed(64 << 10);
  for (std::int64_t elements : {64 << 10, 256 << 10, 1 << 20, 4 << 20}) {
    probe.bytes = static_cast<std::uint64_t>(elements) * 4;
    probe.seconds = timed(elements);
    if (probe.seconds >= kLongEnough) {
      probe.seconds = std::min(probe.seconds, timed(elements));  // one hiccup is not the link
      break;
    }
  }
  return probe;
}

}  // namespace slimtrain::comm
