#include "slimtrain/comm/bandwidth_probe.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "slimtrain/core/clock.hpp"

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

namespace {
// The slowest rank's time for one all-reduce of `elements` floats on `data`.
double timed_all_reduce(DataPlane& data, ControlPlane& control, std::int64_t elements) {
  OpOptions options;
  options.tag = "bandwidth-probe";
  torch::Tensor t =
      torch::ones({elements}, torch::TensorOptions().dtype(torch::kFloat32).device(data.device()));
  if (t.is_cuda()) torch::cuda::synchronize(t.device().index());
  const auto start = std::chrono::steady_clock::now();
  data.all_reduce(t, ReduceOp::sum, options);  // on a CPU, returns once it has finished
  // On a GPU the wait orders the stream only: the host waits here, at start-up, to time it.
  if (t.is_cuda()) torch::cuda::synchronize(t.device().index());
  const double mine = seconds_since(start);
  return control.all_reduce(std::vector<double>{mine}, ReduceOp::max)[0];
}
}  // namespace

BandwidthProbe measure_bandwidth(DataPlane& data, ControlPlane& control) {
  BandwidthProbe probe;
  if (data.size() == 1) return probe;
  auto timed = [&](std::int64_t elements) { return timed_all_reduce(data, control, elements); };
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

std::size_t fastest_plane(const std::vector<DataPlane*>& planes, ControlPlane& control,
                          std::size_t bytes, std::vector<double>& seconds) {
  const auto elements = static_cast<std::int64_t>(bytes / sizeof(float));
  seconds.assign(planes.size(), 0.0);
  for (DataPlane* plane : planes) timed_all_reduce(*plane, control, 64 << 10);  // connections
  for (int round = 0; round < 2; ++round) {
    for (std::size_t i = 0; i < planes.size(); ++i) {
      const double t = timed_all_reduce(*planes[i], control, elements);
      seconds[i] = round == 0 ? t : std::min(seconds[i], t);
    }
  }
  return pick_fastest(seconds);
}

std::size_t pick_fastest(const std::vector<double>& seconds) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < seconds.size(); ++i)
    if (seconds[i] < 0.9 * seconds[0] && seconds[i] < seconds[best]) best = i;
  return best;
}

}  // namespace slimtrain::comm
