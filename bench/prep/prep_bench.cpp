// bench_prep: Fashion-MNIST IDX (gzipped) to slimtrain HDF5, in-process, against `zcat` of the
// same four inputs (the floor: any converter must at least decompress them). Run at np 1 and 2.
//   bench_prep [DATA_DIR] [REPEATS] [SUFFIX]   (SUFFIX "" for uncompressed copies; default .gz)
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "slimtrain/cli/prep_job.hpp"
#include "slimtrain/cli/shared_input.hpp"
#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/data/idx_source.hpp"
#include "slimtrain/runtime/runtime.hpp"

namespace sd = slimtrain::data;

namespace {
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

int main(int argc, char** argv) {
  slimtrain::runtime::Runtime runtime(&argc, &argv);
  slimtrain::comm::ControlPlane control(runtime, "bench");
  const std::string dir = argc > 1 ? argv[1] : "/usr/share/datasets/fashion-mnist";
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 3;
  const std::string gz = argc > 3 ? argv[3] : ".gz";
  const std::string files[4] = {
      dir + "/train-images-idx3-ubyte" + gz, dir + "/train-labels-idx1-ubyte" + gz,
      dir + "/t10k-images-idx3-ubyte" + gz, dir + "/t10k-labels-idx1-ubyte" + gz};
  if (!std::filesystem::exists(files[0])) {
    if (runtime.rank() == 0)
      std::fprintf(stderr, "bench_prep: %s missing (install dataset-fashion-mnist)\n",
                   files[0].c_str());
    return 77;
  }
  const std::string output =
      (std::filesystem::temp_directory_path() / ("bench-prep-" + std::to_string(getpid()) + ".h5"))
          .string();
  std::string out_name = output;
  out_name.resize(512);
  MPI_Bcast(out_name.data(), 512, MPI_CHAR, 0, MPI_COMM_WORLD);
  out_name = out_name.c_str();

  double best_zcat = 1e30, best_prep = 1e30, best_read = 1e30;
  for (int r = 0; r < repeats; ++r) {
    if (runtime.rank() == 0) {
      const auto start = std::chrono::steady_clock::now();
      const std::string command =
          "zcat -f " + files[0] + " " + files[1] + " " + files[2] + " " + files[3] + " > /dev/null";
      if (std::system(command.c_str()) != 0) return 1;
      best_zcat = std::min(best_zcat, seconds_since(start));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = std::chrono::steady_clock::now();
    // As `slimtrain prep idx` opens them: rank 0 gunzips, the others receive the bytes.
    auto open = [&](const std::string& path) {
      return slimtrain::cli::open_input_shared(path, control, MPI_COMM_WORLD, 600.0);
    };
    sd::IdxSource train(open(files[0]), files[0], open(files[1]), files[1]);
    sd::IdxSource test(open(files[2]), files[2], open(files[3]), files[3]);
    const double read = seconds_since(start);
    slimtrain::cli::PrepOptions options;
    options.output = out_name;
    options.force = true;
    options.val_fraction = 0.1;
    slimtrain::cli::prepare_dataset(control, MPI_COMM_WORLD, train, &test, options);
    MPI_Barrier(MPI_COMM_WORLD);
    best_prep = std::min(best_prep, seconds_since(start));
    best_read = std::min(best_read, read);
  }
  if (runtime.rank() == 0) {
    std::filesystem::remove(out_name);
    const double ratio = best_prep / best_zcat;
    std::printf(
        "bench_prep: Fashion-MNIST 60000+10000 28x28 uint8, %s IDX -> HDF5, %d rank(s), best "
        "of %d\n",
        gz.empty() ? "raw" : "gzipped", runtime.size(), repeats);
    std::printf("%-34s %10s\n", "step", "seconds");
    std::printf("%-34s %10.3f\n", "zcat of the 4 inputs (peer)", best_zcat);
    std::printf("%-34s %10.3f\n", "  prep: read + gunzip + parse", best_read);
    std::printf("%-34s %10.3f\n", "  prep: total (incl. HDF5 write)", best_prep);
    std::printf("%-34s %10.2fx %s\n", "prep / zcat", ratio,
                gz.empty() ? "(zcat -f of raw files is cat: no target)" : "(target <= 1.5x)");
    std::printf(
        "RESULT prep input=%s ranks=%d prep_s=%.3f gunzip_parse_s=%.3f zcat_s=%.3f ratio=%.2f\n",
        gz.empty() ? "raw" : "gzip", runtime.size(), best_prep, best_read, best_zcat, ratio);
  }
  return 0;
}
