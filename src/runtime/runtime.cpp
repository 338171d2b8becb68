#include "slimtrain/runtime/runtime.hpp"

#include <cstring>
#include <mutex>

#include "slimtrain/core/check_mpi.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/runtime/affinity.hpp"
#include "slimtrain/runtime/job_exit.hpp"

namespace slimtrain::runtime {
namespace {
std::mutex g_abort_mutex;
std::string g_abort_reason;

const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
  }
  return "unknown";
}
}  // namespace

Runtime::Runtime(int* argc, char*** argv) {
  int initialized = 0;
  SLIMTRAIN_CHECK_MPI(MPI_Initialized(&initialized));
  int provided = MPI_THREAD_SINGLE;
  if (initialized) {
    SLIMTRAIN_CHECK_MPI(MPI_Query_thread(&provided));
  } else {
    SLIMTRAIN_CHECK_MPI(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided));
    owns_mpi_ = true;
  }
  // Collectives run on a communication thread while other threads answer stall inquiries.
  if (provided < MPI_THREAD_MULTIPLE) {
    SLIMTRAIN_THROW(CommError, "the MPI library provides ", thread_level_name(provided),
                    " but slimtrain needs MPI_THREAD_MULTIPLE; use an MPI built with thread "
                    "support (Open MPI >= 3 and MPICH provide it by default)");
  }
  SLIMTRAIN_CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
  SLIMTRAIN_CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size_));
  set_process_rank(rank_);
  SLIMTRAIN_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &exit_comm_));

  MPI_Comm node = MPI_COMM_NULL;
  SLIMTRAIN_CHECK_MPI(
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node));
  SLIMTRAIN_CHECK_MPI(MPI_Comm_rank(node, &local_rank_));
  SLIMTRAIN_CHECK_MPI(MPI_Comm_size(node, &local_size_));
  // Cores come from the masks of this node's ranks, not from hardware_concurrency (affinity.hpp).
  const CpuMask mine = own_cpu_mask();
  std::vector<std::uint64_t> masks(static_cast<std::size_t>(local_size_) * kCpuMaskWords);
  SLIMTRAIN_CHECK_MPI(MPI_Allgather(mine.data(), static_cast<int>(kCpuMaskWords), MPI_UINT64_T,
                                    masks.data(), static_cast<int>(kCpuMaskWords), MPI_UINT64_T,
                                    node));
  SLIMTRAIN_CHECK_MPI(MPI_Comm_free(&node));
  std::vector<CpuMask> local_masks;
  for (int r = 0; r < local_size_; ++r) {
    const auto first = masks.begin() + static_cast<std::ptrdiff_t>(r * kCpuMaskWords);
    local_masks.emplace_back(first, first + static_cast<std::ptrdiff_t>(kCpuMaskWords));
  }
  cores_ = cores_for_rank(local_masks, local_rank_);

  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  SLIMTRAIN_CHECK_MPI(MPI_Get_processor_name(name, &length));
  hostname_.assign(name, static_cast<std::size_t>(length));
  std::vector<char> all(static_cast<std::size_t>(size_) * MPI_MAX_PROCESSOR_NAME, '\0');
  SLIMTRAIN_CHECK_MPI(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(),
                                    MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD));
  hostnames_.reserve(static_cast<std::size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    const char* p = all.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME;
    hostnames_.emplace_back(p, strnlen(p, MPI_MAX_PROCESSOR_NAME));
  }
  set_failure_identity(rank_, hostname_);
}

void abort_at_exit(const std::string& reason) {
  std::lock_guard<std::mutex> lock(g_abort_mutex);
  if (g_abort_reason.empty()) g_abort_reason = reason;
}

std::string abort_at_exit_reason() {
  std::lock_guard<std::mutex> lock(g_abort_mutex);
  return g_abort_reason;
}

Runtime::~Runtime() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!owns_mpi_ || finalized) return;
  const std::string reason = abort_at_exit_reason();
  if (!reason.empty()) {
    log::error("ending the job with MPI_Abort: ", reason);
    abort_job(kExitFailure, reason);
  }
  MPI_Comm_free(&exit_comm_);
  MPI_Finalize();
}

}  // namespace slimtrain::runtime
