// bench_ragged: ragged batches (layout 2) with --group-by-length against without, on token
// sequences with a long tail of lengths (ragged_file.py): the fraction of each batch that is
// padding, and one epoch's samples/s through TrainLoader (the batches made and handed over, as
// the trainer receives them), both orders of the same rows, REPS epochs each, alternating.
//   bench_ragged [BATCH] [REPS]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "slimtrain/data/train_loader.hpp"

namespace sd = slimtrain::data;
namespace fs = std::filesystem;

namespace {

struct Epoch {
  double samples_per_s = 0, padding = 0;
};

Epoch run_epoch(const sd::DatasetInfo& info, std::int64_t batch, bool grouped, std::int64_t epoch) {
  sd::LoaderOptions options;
  options.batch_size = batch;
  options.seed = 11;
  options.group_by_length = grouped;
  sd::TrainLoader loader(info, "train", 0, 1, options);
  const std::vector<std::int64_t> rows = loader.epoch_rows(epoch);
  double padded = 0;
  std::int64_t batches = 0;
  for (std::size_t at = 0; at < rows.size(); at += static_cast<std::size_t>(batch), ++batches)
    padded += loader.named()->padding_fraction(
        rows.data() + at,
        std::min<std::int64_t>(batch, static_cast<std::int64_t>(rows.size() - at)));
  const auto start = std::chrono::steady_clock::now();
  loader.start_epoch(epoch);
  sd::Batch b;
  std::int64_t samples = 0;
  while (loader.next(b)) samples += b.size();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {static_cast<double>(samples) / seconds, padded / static_cast<double>(batches)};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t batch = argc > 1 ? std::atoll(argv[1]) : 32;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 3;
  torch::set_num_threads(1);
  const fs::path dir = fs::temp_directory_path() / ("bench-ragged-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string file = (dir / "ragged.h5").string();
  const std::string command =
      "/usr/bin/python3 " SLIMTRAIN_BENCH_DIR "/ragged_file.py " + file + " 20000";
  if (std::system(command.c_str()) != 0) {
    std::fprintf(stderr, "bench_ragged: python3 with h5py and numpy could not write %s\n",
                 file.c_str());
    fs::remove_all(dir);
    return 2;
  }
  const sd::DatasetInfo info = sd::read_dataset_info(file);
  std::vector<double> sps[2], padding[2];
  for (int r = 0; r < reps; ++r)
    for (int k = 0; k < 2; ++k) {
      const bool grouped = (k + r) % 2 == 1;  // alternating which goes first
      const Epoch e = run_epoch(info, batch, grouped, r);
      sps[grouped].push_back(e.samples_per_s);
      padding[grouped].push_back(e.padding);
    }
  std::printf(
      "ragged batches of %lld (20000 sequences, log-normal lengths, median 60, max 512), "
      "%d epochs each, medians\n",
      static_cast<long long>(batch), reps);
  std::printf("  %-18s %10s %12s\n", "order", "padding", "samples/s");
  for (int g = 0; g < 2; ++g)
    std::printf("  %-18s %10.3f %12.0f\n", g ? "--group-by-length" : "shuffled", median(padding[g]),
                median(sps[g]));
  for (int g = 0; g < 2; ++g)
    std::printf(
        "RESULT reader ragged batch=%lld group_by_length=%s padding=%.4f samples_per_s=%.0f\n",
        static_cast<long long>(batch), g ? "on" : "off", median(padding[g]), median(sps[g]));
  std::printf("RESULT reader ragged_gain batch=%lld padding_ratio=%.3f sps_ratio=%.3f\n",
              static_cast<long long>(batch), median(padding[1]) / median(padding[0]),
              median(sps[1]) / median(sps[0]));
  fs::remove_all(dir);
  return 0;
}
