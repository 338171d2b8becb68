#pragma once
/**
 * @brief The control plane: decisions and small host values, always over MPI whatever the device.
 *
 * Agreements, stop and checkpoint decisions, the logged loss, evaluation statistics, resume paths
 * and other metadata travel here, typed (flags, integers, reals, strings, mixed records), each
 * operation under a deadline. It takes no raw pointers and no tensors: nothing that lives in
 * device memory can reach it, and nothing it carries can reach NCCL (see data_plane.hpp).
 */
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "slimtrain/comm/communicator.hpp"
#include "slimtrain/comm/types.hpp"

namespace slimtrain::runtime {
class Runtime;
}

namespace slimtrain::comm {

class ControlPlane {
 public:
  /** @brief Collective over the world: its own MPI communicator and communication thread. */
  ControlPlane(const runtime::Runtime& runtime, std::string name, const CommConfig& config = {});
  ~ControlPlane();
  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;

  int rank() const;
  int size() const;
  const std::string& name() const;
  /** @brief The deadline policy operations use unless OpOptions gives a timeout. */
  const DeadlinePolicy& deadline() const { return config_.deadline; }

  /** @brief Logical AND over all ranks. */
  bool agree(bool mine, const OpOptions& options = {});
  void barrier(const OpOptions& options = {});
  std::vector<std::int64_t> all_reduce(std::vector<std::int64_t> values, ReduceOp op,
                                       const OpOptions& options = {});
  std::vector<double> all_reduce(std::vector<double> values, ReduceOp op,
                                 const OpOptions& options = {});
  /** @brief One reduction of a mixed record (see Field): the per-step control decision. */
  std::vector<Field> reduce_fields(std::vector<Field> fields, const OpOptions& options = {});
  /** @brief Every rank's `mine` (same length everywhere), concatenated in rank order. */
  std::vector<std::int64_t> all_gather(const std::vector<std::int64_t>& mine,
                                       const OpOptions& options = {});
  /** @brief `root`'s value on every rank. */
  std::int64_t broadcast(std::int64_t value, int root, const OpOptions& options = {});
  /** @brief `root`'s text (or bytes) on every rank: its length, then its bytes. */
  std::string broadcast(const std::string& text, int root, const OpOptions& options = {});

  /** @brief Payload bytes this rank has reduced or broadcast (evaluations report it). */
  std::uint64_t bytes_sent() const;
  void dump_flight_recorder() const;

 private:
  CommConfig config_;
  std::unique_ptr<Communicator> mpi_;
};

}  // namespace slimtrain::comm
