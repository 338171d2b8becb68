#pragma once
/**
 * @brief The CPU data plane: host tensors over an MPI communicator of its own (chunked blocking
 * collectives on a communication thread, see mpi_communicator.hpp).
 */
#include <memory>
#include <string>

#include "slimtrain/comm/data_plane.hpp"

namespace slimtrain::comm {

/** @brief Collective over the world. */
std::unique_ptr<DataPlane> make_mpi_data_plane(const runtime::Runtime& runtime, std::string name,
                                               const CommConfig& config = {});

}  // namespace slimtrain::comm
