// The control plane at scale: what one training step costs on it, and how long a stopped rank
// takes to be named. Runs the trainer's own StepControl (train/step_control.hpp) with nothing on
// the data plane, so each step is exactly its two control reductions: the check before backward
// and the decision.
//   bench_control steps [STEPS]   every rank: STEPS steps; rank 0 prints
//       CONTROL np=N step_us_p50=... step_us_p99=... cpu_us_per_rank=... bytes_per_step=...
//       (per rank, both reductions)
//   bench_control stall [DEADLINE] the last rank stops answering at step 10; rank 0 prints
//       STALL np=N named_s=... deadline_s=... message_bytes=... message=...
//   and every rank leaves without MPI_Finalize (the stopped rank can never join).
#include <mpi.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/comm/data_plane.hpp"
#include "slimtrain/runtime/runtime.hpp"
#include "slimtrain/train/step_control.hpp"

using namespace slimtrain;

namespace {

// This process's CPU time, all threads: what a rank spends, whoever else shares its core.
double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

double seconds(std::chrono::steady_clock::time_point from) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
}

// One training step's control traffic, as the trainer issues it.
void one_step(train::StepControl& control, std::int64_t step) {
  control.check_before_backward(step);
  train::StepVote vote;
  vote.step = step;
  vote.loss = 1.0;  // a log step: the largest record
  control.decide(vote);
}

int steps_mode(runtime::Runtime& rt, train::StepControl& control, comm::ControlPlane& plane,
               int steps) {
  for (int s = 1; s <= 20; ++s) one_step(control, s);  // warm-up
  const std::uint64_t bytes_before = plane.bytes_sent();
  const double cpu_before = cpu_seconds();
  std::vector<double> us;
  for (int s = 21; s < 21 + steps; ++s) {
    const auto from = std::chrono::steady_clock::now();
    one_step(control, s);
    us.push_back(seconds(from) * 1e6);
  }
  const double bytes = static_cast<double>(plane.bytes_sent() - bytes_before) / steps;
  double cpu = (cpu_seconds() - cpu_before) / steps * 1e6;
  MPI_Allreduce(MPI_IN_PLACE, &cpu, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  std::sort(us.begin(), us.end());
  if (rt.rank() == 0)
    std::printf(
        "CONTROL np=%d step_us_p50=%.1f step_us_p99=%.1f cpu_us_per_rank=%.1f "
        "bytes_per_step=%.0f\n",
        rt.size(), us[us.size() / 2], us[us.size() * 99 / 100], cpu / rt.size(), bytes);
  return 0;
}

[[noreturn]] void stall_mode(runtime::Runtime& rt, train::StepControl& control, double deadline) {
  const int victim = rt.size() - 1;
  for (int s = 1; s < 10; ++s) one_step(control, s);
  if (rt.rank() == victim) {
    std::this_thread::sleep_for(std::chrono::duration<double>(deadline * 3 + 10));
    std::_Exit(0);
  }
  const auto from = std::chrono::steady_clock::now();
  std::string message = "(nothing thrown)";
  try {
    one_step(control, 10);
  } catch (const Error& e) {
    message = e.what();
  }
  const double named = seconds(from);
  if (rt.rank() == 0) {
    std::printf("STALL np=%d named_s=%.2f deadline_s=%.1f message_bytes=%zu message=%s\n",
                rt.size(), named, deadline, message.size(), message.c_str());
    std::fflush(stdout);
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));  // rank 0's line out first
  std::_Exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  runtime::Runtime rt(&argc, &argv);
  const std::string mode = argc > 1 ? argv[1] : "steps";
  comm::CommConfig config;
  config.deadline.base_s = mode == "stall" && argc > 2 ? std::atof(argv[2]) : 60.0;
  comm::ControlPlane plane(rt, "control", config);
  auto data = comm::make_data_plane(rt, torch::Device(torch::kCPU), "data", config);
  train::StepControl control(plane, *data, rt.hostnames());
  if (mode == "stall") stall_mode(rt, control, config.deadline.base_s);
  return steps_mode(rt, control, plane, argc > 2 ? std::atoi(argv[2]) : 500);
}
