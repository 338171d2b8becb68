// Parallel prep and the sharded readers at any world size: shards disjoint and covering,
// evaluation exactly once, reproducible order, resume, and failures agreed on every rank.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "mpi_runtime.hpp"
#include "slimtrain/cli/prep_job.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/data/eval_loader.hpp"
#include "slimtrain/data/normalisation.hpp"
#include "slimtrain/data/split_reader.hpp"
#include "slimtrain/data/train_loader.hpp"
#include "slimtrain/train/normalisation_setup.hpp"

namespace sd = slimtrain::data;
namespace fs = std::filesystem;

namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// Sample i is {i, -2i}: its row can be recovered from the normalised batch.
class CountingSource : public sd::RecordSource {
 public:
  CountingSource(std::int64_t n, std::int64_t bad = -1) : n_(n), bad_(bad) {}
  std::int64_t size() const override { return n_; }
  const std::vector<std::int64_t>& sample_shape() const override { return shape_; }
  sd::ElementType element_type() const override { return sd::ElementType::kFloat32; }
  std::int64_t read(std::int64_t i, void* x) const override {
    if (i == bad_) SLIMTRAIN_THROW(slimtrain::DataError, "counting.csv: line ", i + 1, ": bad row");
    float* f = static_cast<float*>(x);
    f[0] = static_cast<float>(i);
    f[1] = -2.0f * static_cast<float>(i);
    return i % 5;
  }
  std::string describe() const override { return "counting.csv"; }

 private:
  std::int64_t n_, bad_;
  std::vector<std::int64_t> shape_{2};
};

// A directory shared by all ranks, removed at the end.
class DataLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[256] = {};
    if (world_rank() == 0) {
      std::string pattern = (fs::temp_directory_path() / "slimtrain-data-XXXXXX").string();
      std::strncpy(name, mkdtemp(pattern.data()), sizeof(name) - 1);
    }
    MPI_Bcast(name, sizeof(name), MPI_CHAR, 0, MPI_COMM_WORLD);
    dir_ = name;
  }
  // What a failed conversion left in dir_, for the failure message.
  std::string left() const {
    std::string names;
    for (const auto& e : fs::directory_iterator(dir_)) names += e.path().filename().string() + " ";
    return names;
  }
  void TearDown() override {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) fs::remove_all(dir_);
  }
  std::string make_file(std::int64_t n_train, std::int64_t n_test, std::size_t chunk_bytes = 64) {
    slimtrain::cli::PrepOptions options;
    options.output = dir_ + "/d.h5";
    options.chunk_bytes = chunk_bytes;
    CountingSource train(n_train), test(n_test);
    slimtrain::cli::prepare_dataset(slimtrain_test::control(), MPI_COMM_WORLD, train, &test,
                                    options);
    return options.output;
  }
  // Rows of a batch, recovered from x[:, 0] = (row - mean) / std.
  static std::vector<std::int64_t> rows_of(const sd::Batch& b, const sd::DatasetInfo& info) {
    std::vector<std::int64_t> rows;
    auto x = b.x.accessor<float, 2>();
    for (std::int64_t i = 0; i < b.x.size(0); ++i) {
      rows.push_back(std::llround(x[i][0] * info.std[0] + info.mean[0]));
      EXPECT_EQ(b.y[i].item<std::int64_t>(), rows.back() % 5);
    }
    return rows;
  }
  static std::vector<std::int64_t> gather(const std::vector<std::int64_t>& mine) {
    const int size = world_size();
    int count = static_cast<int>(mine.size());
    std::vector<int> counts(static_cast<std::size_t>(size)),
        offsets(static_cast<std::size_t>(size), 0);
    MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 1; r < size; ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
    std::vector<std::int64_t> all(static_cast<std::size_t>(offsets.back() + counts.back()));
    MPI_Allgatherv(mine.data(), count, MPI_INT64_T, all.data(), counts.data(), offsets.data(),
                   MPI_INT64_T, MPI_COMM_WORLD);
    return all;
  }
  std::string dir_;
};

}  // namespace

TEST_F(DataLoaderTest, LoadTimeStatisticsEqualPrepsAndReachEveryRank) {
  // A file without mean/std gets what prep would have written: one pass on rank 0, sent over
  // the control plane (a non-root rank cannot have computed them: it never read the split).
  const std::string path = make_file(103, 37);
  const sd::DatasetInfo written = sd::read_dataset_info(path);
  sd::DatasetInfo info = written;
  info.mean.clear();
  info.std.clear();
  EXPECT_THROW(sd::SplitReader(info, "train"), slimtrain::Error);
  slimtrain::train::share_normalisation(info, slimtrain_test::control());
  ASSERT_EQ(info.mean.size(), 2u);
  for (std::size_t c = 0; c < 2; ++c) {
    EXPECT_NEAR(info.mean[c], written.mean[c], 1e-4 * std::abs(written.mean[c]) + 1e-6);
    EXPECT_NEAR(info.std[c], written.std[c], 1e-4 * written.std[c]);
  }
  sd::DatasetInfo again = info;
  // Known: nothing recomputed, nothing sent.
  slimtrain::train::share_normalisation(again, slimtrain_test::control());
  EXPECT_EQ(again.mean, info.mean);
}

TEST_F(DataLoaderTest, ParallelPrepWritesEverySampleAndTrainStatistics) {
  const std::int64_t n = 103;
  const std::string path = make_file(n, 37);
  const sd::DatasetInfo info = sd::read_dataset_info(path);
  EXPECT_EQ(info.num_classes, 5);
  EXPECT_EQ(info.split_size("train"), n);
  EXPECT_EQ(info.split_size("test"), 37);
  EXPECT_NEAR(info.mean[0], (n - 1) / 2.0, 1e-3);
  EXPECT_NEAR(info.mean[1], -(n - 1.0), 1e-3);
  EXPECT_NEAR(info.std[0], std::sqrt((n * n - 1) / 12.0), 1e-3);
  sd::SplitReader reader(info, "train");
  std::vector<float> x(static_cast<std::size_t>(2 * n));
  std::vector<std::int64_t> y(static_cast<std::size_t>(n));
  reader.read_x(0, n, x.data());
  reader.read_y(0, n, y.data());
  for (std::int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(x[2 * i], float(i));
    ASSERT_EQ(x[2 * i + 1], -2.0f * i);
    ASSERT_EQ(y[i], i % 5);
  }
  // A reader whose rows are all in memory lets go of the file; reading then is a bug, said.
  reader.close_file();
  try {
    reader.read_x(0, 1, x.data());
    ADD_FAILURE() << "read_x after close_file did not throw";
  } catch (const slimtrain::Error& e) {
    EXPECT_NE(std::string(e.what()).find("closed"), std::string::npos) << e.what();
  }
}

TEST_F(DataLoaderTest, TrainShardsAreDisjointEqualAndReproducible) {
  const std::int64_t n = 103;
  const std::string path = make_file(n, 11);
  for (const char* mode : {"memory", "stream"}) {
    sd::LoaderOptions options;
    options.batch_size = 4;
    options.seed = 7;
    options.mode = mode;
    options.shuffle_blocks = 2;
    const ssize_t files_open = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_FILE);
    sd::TrainLoader loader(path, "train", world_rank(), world_size(), options);
    EXPECT_EQ(loader.mode(), mode);
    // In memory the file is closed once read (its HDF5 caches are 2 MB held all run otherwise).
    EXPECT_EQ(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_FILE), files_open + (loader.mode() == "stream"))
        << mode;
    const std::int64_t per_rank = n / world_size();
    EXPECT_EQ(loader.steps_per_epoch(), (per_rank + 3) / 4);
    for (std::int64_t epoch : {0, 1}) {
      loader.start_epoch(epoch);
      std::vector<std::int64_t> rows;
      sd::Batch b;
      std::int64_t steps = 0;
      while (loader.next(b)) {
        const auto r = rows_of(b, loader.info());
        rows.insert(rows.end(), r.begin(), r.end());
        ++steps;
      }
      EXPECT_EQ(steps, loader.steps_per_epoch()) << mode;
      EXPECT_EQ(rows, loader.epoch_rows(epoch)) << mode << ": batches follow the declared order";
      std::vector<std::int64_t> all = gather(rows);
      EXPECT_EQ(static_cast<std::int64_t>(all.size()), per_rank * world_size());
      std::sort(all.begin(), all.end());
      EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end())
          << mode << ": a row on two ranks";
      EXPECT_TRUE(all.front() >= 0 && all.back() < n);
    }
    EXPECT_EQ(loader.epoch_rows(3), loader.epoch_rows(3));
    EXPECT_NE(loader.epoch_rows(3), loader.epoch_rows(4)) << mode;
    sd::TrainLoader twin(path, "train", world_rank(), world_size(), options);
    EXPECT_EQ(twin.epoch_rows(5), loader.epoch_rows(5)) << mode << ": same seed, same order";
    options.seed = 8;
    sd::TrainLoader other(path, "train", world_rank(), world_size(), options);
    EXPECT_NE(other.epoch_rows(5), loader.epoch_rows(5)) << mode;
  }
}

TEST_F(DataLoaderTest, ResumeMidEpochContinuesTheSameOrder) {
  const std::string path = make_file(90, 5);
  for (const char* mode : {"memory", "stream"}) {
    sd::LoaderOptions options;
    options.batch_size = 3;
    options.mode = mode;
    sd::TrainLoader loader(path, "train", world_rank(), world_size(), options);
    const std::vector<std::int64_t> order = loader.epoch_rows(2);
    loader.start_epoch(2, 4);
    std::vector<std::int64_t> rows;
    sd::Batch b;
    while (loader.next(b)) {
      const auto r = rows_of(b, loader.info());
      rows.insert(rows.end(), r.begin(), r.end());
    }
    EXPECT_EQ(rows, std::vector<std::int64_t>(order.begin() + 12, order.end())) << mode;
    // Abandoning an epoch early (stream: the prefetch thread is stopped) must be safe.
    loader.start_epoch(3);
    ASSERT_TRUE(loader.next(b));
    loader.start_epoch(4);
  }
}

TEST_F(DataLoaderTest, EvaluationSeesEverySampleExactlyOnce) {
  for (std::int64_t n : {37, 4, 1}) {
    const std::string path = make_file(50, n);
    sd::EvalLoader loader(path, "test", world_rank(), world_size(), 4);
    EXPECT_EQ(loader.global_count(), n);
    std::vector<std::int64_t> rows;
    sd::Batch b;
    for (int pass = 0; pass < 2; ++pass) {
      rows.clear();
      loader.reset();
      while (loader.next(b)) {
        const auto r = rows_of(b, loader.info());
        rows.insert(rows.end(), r.begin(), r.end());
      }
    }
    EXPECT_EQ(static_cast<std::int64_t>(rows.size()), loader.local_count());
    std::vector<std::int64_t> all = gather(rows);
    std::sort(all.begin(), all.end());
    std::vector<std::int64_t> expected(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) expected[static_cast<std::size_t>(i)] = i;
    EXPECT_EQ(all, expected) << "n=" << n;
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) fs::remove(path);
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

TEST_F(DataLoaderTest, ABadRowOnTheLastRankFailsEveryRankAndLeavesNothing) {
  slimtrain::cli::PrepOptions options;
  options.output = dir_ + "/bad.h5";
  const std::int64_t n = 41;
  CountingSource train(n, n - 1);  // the last row: converted by the last rank
  std::string message;
  try {
    slimtrain::cli::prepare_dataset(slimtrain_test::control(), MPI_COMM_WORLD, train, nullptr,
                                    options);
  } catch (const slimtrain::DataError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("counting.csv: line 41"), std::string::npos) << "'" << message << "'";
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_TRUE(fs::is_empty(dir_)) << "no output and no temporary file may remain: " << left();
  // Every rank has looked before rank 0 probes the directory for the next conversion.
  MPI_Barrier(MPI_COMM_WORLD);

  // Labels past --num-classes are found by whichever rank holds them, and agreed on.
  options.num_classes = 3;
  CountingSource labelled(n);
  EXPECT_THROW(slimtrain::cli::prepare_dataset(slimtrain_test::control(), MPI_COMM_WORLD, labelled,
                                               nullptr, options),
               slimtrain::DataError);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_TRUE(fs::is_empty(dir_)) << left();
  MPI_Barrier(MPI_COMM_WORLD);

  // An existing output without --force: refused on every rank, file untouched.
  options.num_classes = 0;
  slimtrain::cli::prepare_dataset(slimtrain_test::control(), MPI_COMM_WORLD, labelled, nullptr,
                                  options);
  EXPECT_THROW(slimtrain::cli::prepare_dataset(slimtrain_test::control(), MPI_COMM_WORLD, labelled,
                                               nullptr, options),
               slimtrain::ConfigError);
  options.force = true;
  EXPECT_NO_THROW(slimtrain::cli::prepare_dataset(slimtrain_test::control(), MPI_COMM_WORLD,
                                                  labelled, nullptr, options));
}

TEST_F(DataLoaderTest, LoaderRejectsTooFewSamplesAndMissingSplits) {
  const std::string path = make_file(world_size() > 1 ? world_size() - 1 : 0 + 1, 3);
  if (world_size() > 1) {
    EXPECT_THROW(sd::TrainLoader(path, "train", world_rank(), world_size(), {}),
                 slimtrain::DataError);
  }
  EXPECT_THROW(sd::EvalLoader(path, "val", world_rank(), world_size(), 8), slimtrain::DataError);
}
