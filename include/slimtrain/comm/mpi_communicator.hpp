#pragma once
/**
 * @brief MPI backend. Each communicator duplicates MPI_COMM_WORLD (so "train" and "eval" can never
 * consume each other's collectives) and owns one communication thread that runs the operations
 * strictly in enqueue order with the fast blocking calls: MPI_Allreduce over sequential pieces of
 * chunk_bytes, MPI_Bcast, MPI_Barrier, MPI_Allgather. The caller waits on a condition variable
 * until the deadline; Open MPI's nonblocking collectives are slower here and may not be cancelled
 * anyway.
 *
 * Destruction waits for queued operations until their deadlines plus grace. Operations still
 * stuck after that (a peer never arrived) cannot be cancelled: the thread is left detached, the
 * problem logged, and runtime::abort_at_exit() makes the Runtime end the job with MPI_Abort
 * instead of hanging in MPI_Finalize.
 */
#include <memory>
#include <string>

#include "slimtrain/comm/communicator.hpp"

namespace slimtrain::comm {

class MpiCommunicator final : public Communicator {
 public:
  /** @brief Collective over the world: duplicates it and starts the communication thread. */
  MpiCommunicator(const runtime::Runtime& runtime, std::string name, const CommConfig& config);
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override;
  int size() const override;
  const std::string& name() const override;
  void set_floor_bandwidth(double bytes_per_s) override;
  std::shared_ptr<Work> all_reduce_async(void* data, std::size_t count, DType dtype, ReduceOp op,
                                         const OpOptions& options = {},
                                         std::shared_ptr<void> keep_alive = nullptr) override;
  std::shared_ptr<Work> broadcast_async(void* data, std::size_t count, DType dtype, int root,
                                        const OpOptions& options = {},
                                        std::shared_ptr<void> keep_alive = nullptr) override;
  std::shared_ptr<Work> reduce_scatter_async(const void* in, void* out, std::size_t count,
                                             DType dtype, ReduceOp op,
                                             const OpOptions& options = {},
                                             std::shared_ptr<void> keep_alive = nullptr) override;
  std::shared_ptr<Work> all_gather_async(const void* in, void* out, std::size_t count, DType dtype,
                                         const OpOptions& options = {},
                                         std::shared_ptr<void> keep_alive = nullptr) override;
  void barrier(const OpOptions& options = {}) override;
  bool agree(bool mine, const OpOptions& options = {}) override;
  std::vector<Field> all_reduce_fields(std::vector<Field> fields,
                                       const OpOptions& options = {}) override;
  std::vector<std::int64_t> all_gather(const std::vector<std::int64_t>& mine,
                                       const OpOptions& options = {}) override;
  std::uint64_t bytes_reduced() const override;
  void dump_flight_recorder() const override;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace slimtrain::comm
