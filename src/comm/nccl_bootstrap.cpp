// The NCCL bootstrap as nccl-tests and Aluminum write it: rank 0's unique id, broadcast over MPI.
#include <cstring>

#include "slimtrain/comm/nccl_data_plane.hpp"
#include "slimtrain/core/check_gpu.hpp"

namespace slimtrain::comm {

ncclUniqueId nccl_bootstrap_id(ControlPlane& control, int root) {
  ncclUniqueId id;
  std::memset(&id, 0, sizeof id);
  std::string bytes;
  if (control.rank() == root) {
    SLIMTRAIN_CHECK_NCCL(ncclGetUniqueId(&id));
    bytes.assign(reinterpret_cast<const char*>(&id), sizeof id);
  }
  OpOptions options;
  options.tag = "nccl-unique-id";
  bytes = control.broadcast(bytes, root, options);
  if (bytes.size() != sizeof id)
    SLIMTRAIN_THROW(CommError, control.name(), ": NCCL unique id of ", bytes.size(),
                    " bytes from rank ", root, ", expected ", sizeof id);
  std::memcpy(&id, bytes.data(), sizeof id);
  return id;
}

}  // namespace slimtrain::comm
