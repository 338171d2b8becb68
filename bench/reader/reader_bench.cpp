// bench_reader: one training epoch through TrainLoader in memory and stream mode (samples/s and
// MB/s of stored bytes, the memory mode's load included), each against the python3-h5py loop a
// careful user would write for it, reading the same rows in the same order and batches
// (h5py_peer.py: a whole-split load, or chunk-aligned block reads with a shuffle window). With no
// file given, converts Fashion-MNIST first.
//   bench_reader [FILE.h5] [BATCH]
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "slimtrain/cli/prep_job.hpp"
#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/data/idx_source.hpp"
#include "slimtrain/data/train_loader.hpp"
#include "slimtrain/runtime/runtime.hpp"

namespace sd = slimtrain::data;
namespace fs = std::filesystem;

namespace {

double peer_rate(const std::string& file, const std::string& order, std::int64_t batch,
                 const std::string& mode, std::int64_t window, double* mb_per_s) {
  const std::string command = "/usr/bin/python3 " SLIMTRAIN_BENCH_DIR "/h5py_peer.py " + file +
                              " " + order + " " + std::to_string(batch) + " " + mode + " " +
                              std::to_string(window);
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return 0;
  char line[256] = {};
  double sps = 0;
  while (std::fgets(line, sizeof(line), pipe))
    std::sscanf(line, "PEER samples_per_s=%lf mb_per_s=%lf", &sps, mb_per_s);
  pclose(pipe);
  return sps;
}

}  // namespace

int main(int argc, char** argv) {
  slimtrain::runtime::Runtime runtime(&argc, &argv);
  torch::set_num_threads(1);
  std::string file = argc > 1 ? argv[1] : "";
  const std::int64_t batch = argc > 2 ? std::atoll(argv[2]) : 64;
  const fs::path temp = fs::temp_directory_path() / ("bench-reader-" + std::to_string(getpid()));
  fs::create_directories(temp);
  if (file.empty()) {
    const std::string dir = "/usr/share/datasets/fashion-mnist";
    sd::IdxSource train(dir + "/train-images-idx3-ubyte.gz", dir + "/train-labels-idx1-ubyte.gz");
    slimtrain::cli::PrepOptions options;
    options.output = (temp / "fashion.h5").string();
    slimtrain::comm::ControlPlane control(runtime, "bench");
    slimtrain::cli::prepare_dataset(control, runtime.world(), train, nullptr, options);
    file = options.output;
  }
  std::printf(
      "bench_reader: %s /train, batch %lld, 1 rank, 1 thread, one epoch; peer: python3-h5py, same "
      "rows, same order and batches (memory: load included in samples/s)\n",
      file.c_str(), static_cast<long long>(batch));
  std::printf("%-8s %10s %12s %10s %14s %12s %8s\n", "mode", "load_s", "samples/s", "MB/s",
              "peer samples/s", "peer MB/s", "ratio");
  std::string result = "RESULT reader batch=" + std::to_string(batch);
  for (const char* mode : {"memory", "stream"}) {
    sd::LoaderOptions options;
    options.batch_size = batch;
    options.seed = 1;
    options.mode = mode;
    auto start = std::chrono::steady_clock::now();
    sd::TrainLoader loader(file, "train", 0, 1, options);
    const double load =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::vector<std::int64_t> order = loader.epoch_rows(0);
    const std::string order_file = (temp / (std::string(mode) + ".order")).string();
    std::ofstream(order_file, std::ios::binary)
        .write(reinterpret_cast<const char*>(order.data()),
               static_cast<std::streamsize>(order.size() * 8));

    start = std::chrono::steady_clock::now();
    loader.start_epoch(0);
    sd::Batch b;
    std::int64_t samples = 0;
    while (loader.next(b)) samples += b.y.size(0);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double row_bytes =
        static_cast<double>(loader.info().sample_elements()) *
        (loader.info().split("train").x_type == sd::ElementType::kUint8 ? 1 : 4);
    // The memory mode pays its load once per run: counted, as the peer's whole-split read is.
    const double total = seconds + (std::string(mode) == "memory" ? load : 0.0);
    const double sps = samples / total, mbps = samples * row_bytes / total / 1e6;
    const sd::SplitInfo& split = loader.info().split("train");
    const std::int64_t block = split.chunk_rows > 0 ? split.chunk_rows : 1024;
    double peer_mbps = 0;
    const double peer =
        peer_rate(file, order_file, batch, mode, block * options.shuffle_blocks, &peer_mbps);
    std::printf("%-8s %10.3f %12.0f %10.1f %14.0f %12.1f %7.1fx\n", mode, load, sps, mbps, peer,
                peer_mbps, peer > 0 ? sps / peer : 0.0);
    char part[256];
    std::snprintf(part, sizeof(part),
                  " %s_sps=%.0f %s_mbps=%.1f %s_load_s=%.3f peer_%s_sps=%.0f %s_ratio=%.2f", mode,
                  sps, mode, mbps, mode, load, mode, peer, mode, peer > 0 ? sps / peer : 0.0);
    result += part;
  }
  fs::remove_all(temp);
  std::printf("%s\n", result.c_str());
  return 0;
}
