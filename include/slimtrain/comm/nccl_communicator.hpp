#pragma once
/**
 * @brief NCCL backend for CUDA buffers (compiled only with SLIMTRAIN_HAVE_NCCL).
 *
 * NCCL has no timeout of its own, so this backend puts a CPU-side deadline around it, as
 * nccl-tests and torchft do: a non-blocking communicator (config.blocking = 0), its own stream
 * ordered after the compute stream with an event, an event after each collective, and wait()
 * polling cudaEventQuery + ncclCommGetAsyncError with short sleeps. Past the deadline it runs the
 * same stall inspection as the MPI backend (over MPI), calls ncclCommAbort and throws
 * TimeoutError. Unlike MPI, an aborted NCCL communicator is unusable afterwards: every later
 * operation on it throws CommError.
 */
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <memory>
#include <string>

#include "slimtrain/comm/communicator.hpp"

namespace slimtrain::comm {

/**
 * @brief The bootstrap id: `root` calls ncclGetUniqueId and MPI_Bcast's its bytes over `comm`.
 * Needs no device; collective over `comm`.
 */
ncclUniqueId nccl_bootstrap_id(MPI_Comm comm, int root = 0);

class NcclCommunicator final : public Communicator {
 public:
  /** @brief Collective: uses the current CUDA device (runtime::bind_device sets it). */
  NcclCommunicator(const runtime::Runtime& runtime, std::string name, const CommConfig& config);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  /** @brief The stream producing the buffers (default: the legacy default stream). */
  void set_compute_stream(cudaStream_t stream);

  int rank() const override;
  int size() const override;
  const std::string& name() const override;
  const char* device_kind() const override { return "cuda"; }
  std::shared_ptr<Work> all_reduce_async(void* data, std::size_t count, DType dtype, ReduceOp op,
                                         const OpOptions& options = {},
                                         std::shared_ptr<void> keep_alive = nullptr) override;
  std::shared_ptr<Work> broadcast_async(void* data, std::size_t count, DType dtype, int root,
                                        const OpOptions& options = {},
                                        std::shared_ptr<void> keep_alive = nullptr) override;
  void barrier(const OpOptions& options = {}) override;
  bool agree(bool mine, const OpOptions& options = {}) override;
  std::uint64_t bytes_reduced() const override;
  void dump_flight_recorder() const override;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

std::unique_ptr<Communicator> make_nccl_communicator(const runtime::Runtime& runtime,
                                                     std::string name, const CommConfig& config);

}  // namespace slimtrain::comm
