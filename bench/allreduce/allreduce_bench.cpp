// nccl-tests style all-reduce benchmark: plain MPI_Allreduce against slimtrain's deadline-bounded
// chunked all-reduce through the Communicator API, in the same run, plus a chunk-size sweep.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "slimtrain/comm/communicator.hpp"
#include "slimtrain/runtime/runtime.hpp"

using namespace slimtrain;

namespace {
constexpr std::size_t KiB = 1024, MiB = 1024 * 1024;

// Seconds per call: median over `rounds` of the mean over `iters` calls, every rank in step.
double time_it(int rounds, int iters, const std::function<void()>& call) {
  call();  // warm-up
  std::vector<double> samples;
  for (int r = 0; r < rounds; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) call();
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    samples.push_back(t / iters);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

std::string human(std::size_t bytes) {
  return bytes >= MiB ? std::to_string(bytes / MiB) + "MiB" : std::to_string(bytes / KiB) + "KiB";
}
}  // namespace

int main(int argc, char** argv) {
  runtime::Runtime rt(&argc, &argv);
  const int n = rt.size();
  const double bus = 2.0 * (n - 1) / n;
  const std::size_t max_bytes = argc > 1 ? std::stoull(argv[1]) * MiB : 256 * MiB;
  // bench/cluster passes "nosweep": over a shaped link the sweep alone takes a minute.
  const bool sweep = !(argc > 2 && std::string(argv[2]) == "nosweep");
  std::vector<float> buffer(max_bytes / sizeof(float), 0.0f);
  auto comm = comm::make_mpi_communicator(rt, "bench");  // default chunk_bytes, default deadlines

  if (rt.rank() == 0) {
    std::printf(
        "# all-reduce float32 sum, np=%d, in place; slimtrain = Communicator::all_reduce "
        "with chunk_bytes=%zu and deadlines on\n",
        n, comm::CommConfig{}.chunk_bytes);
    std::printf("%10s %12s %10s %10s %12s %10s %10s %7s\n", "size", "plain_us", "algbw", "busbw",
                "chunked_us", "algbw", "busbw", "ratio");
  }
  double plain64 = 0, chunked64 = 0;
  for (std::size_t bytes = KiB; bytes <= max_bytes; bytes *= 4) {
    const std::size_t count = bytes / sizeof(float);
    const int iters = static_cast<int>(std::clamp<std::size_t>(256 * MiB / bytes, 2, 200));
    const double plain = time_it(5, iters, [&] {
      MPI_Allreduce(MPI_IN_PLACE, buffer.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                    MPI_COMM_WORLD);
    });
    const double chunked = time_it(5, iters, [&] {
      comm->all_reduce(buffer.data(), count, comm::DType::f32, comm::ReduceOp::sum);
    });
    const double a_plain = bytes / plain / 1e9, a_chunked = bytes / chunked / 1e9;
    if (rt.rank() == 0) {
      std::printf("%10s %12.1f %10.2f %10.2f %12.1f %10.2f %10.2f %7.2f\n", human(bytes).c_str(),
                  plain * 1e6, a_plain, a_plain * bus, chunked * 1e6, a_chunked, a_chunked * bus,
                  plain / chunked);
    }
    if (bytes == 64 * MiB) {
      plain64 = a_plain;
      chunked64 = a_chunked;
    }
  }

  const std::size_t sweep_bytes = std::min<std::size_t>(64 * MiB, max_bytes);
  if (sweep && rt.rank() == 0) {
    std::printf("\n# chunk_bytes sweep at %s (busbw GB/s)\n%10s %10s %10s\n",
                human(sweep_bytes).c_str(), "chunk", "algbw", "busbw");
  }
  for (std::size_t chunk : {1 * MiB, 2 * MiB, 4 * MiB, 8 * MiB}) {
    if (!sweep) break;
    comm::CommConfig config;
    config.chunk_bytes = chunk;
    auto swept = comm::make_mpi_communicator(rt, "sweep", config);
    const double t = time_it(5, 8, [&] {
      swept->all_reduce(buffer.data(), sweep_bytes / sizeof(float), comm::DType::f32,
                        comm::ReduceOp::sum);
    });
    if (rt.rank() == 0) {
      std::printf("%10s %10.2f %10.2f\n", human(chunk).c_str(), sweep_bytes / t / 1e9,
                  sweep_bytes / t / 1e9 * bus);
    }
  }
  if (rt.rank() == 0 && plain64 > 0) {
    std::printf("RESULT allreduce np=%d size=64MiB plain_GBps=%.2f chunked_GBps=%.2f ratio=%.2f\n",
                n, plain64, chunked64, chunked64 / plain64);
  }
  return 0;
}
