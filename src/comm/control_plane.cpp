#include "slimtrain/comm/control_plane.hpp"

#include "slimtrain/comm/words.hpp"
#include "slimtrain/core/error.hpp"

namespace slimtrain::comm {

ControlPlane::ControlPlane(const runtime::Runtime& runtime, std::string name,
                           const CommConfig& config)
    : config_(config), mpi_(make_mpi_communicator(runtime, std::move(name), config)) {}

ControlPlane::~ControlPlane() = default;

int ControlPlane::rank() const {
  return mpi_->rank();
}
int ControlPlane::size() const {
  return mpi_->size();
}
const std::string& ControlPlane::name() const {
  return mpi_->name();
}

bool ControlPlane::agree(bool mine, const OpOptions& options) {
  return mpi_->agree(mine, options);
}

void ControlPlane::barrier(const OpOptions& options) {
  mpi_->barrier(options);
}

namespace {
// The operation owns its buffer: a caller that timed out leaves nothing the draining operation
// still writes to, whatever the size.
template <typename T>
std::vector<T> reduce_owned(Communicator& mpi, std::vector<T> values, DType dtype, ReduceOp op,
                            const OpOptions& options) {
  auto owned = std::make_shared<std::vector<T>>(std::move(values));
  mpi.all_reduce_async(owned->data(), owned->size(), dtype, op, options, owned)->wait();
  return *owned;
}
}  // namespace

std::vector<std::int64_t> ControlPlane::all_reduce(std::vector<std::int64_t> values, ReduceOp op,
                                                   const OpOptions& options) {
  return reduce_owned(*mpi_, std::move(values), DType::i64, op, options);
}

std::vector<double> ControlPlane::all_reduce(std::vector<double> values, ReduceOp op,
                                             const OpOptions& options) {
  return reduce_owned(*mpi_, std::move(values), DType::f64, op, options);
}

std::vector<Field> ControlPlane::reduce_fields(std::vector<Field> fields,
                                               const OpOptions& options) {
  return mpi_->all_reduce_fields(std::move(fields), options);
}

std::vector<std::int64_t> ControlPlane::all_gather(const std::vector<std::int64_t>& mine,
                                                   const OpOptions& options) {
  return mpi_->all_gather(mine, options);
}

std::int64_t ControlPlane::broadcast(std::int64_t value, int root, const OpOptions& options) {
  mpi_->broadcast(&value, 1, DType::i64, root, options);
  return value;
}

std::string ControlPlane::broadcast(const std::string& text, int root, const OpOptions& options) {
  std::int64_t length = broadcast(static_cast<std::int64_t>(text.size()), root, options);
  if (length < 0) SLIMTRAIN_THROW(CommError, name(), " broadcast: negative length ", length);
  // Eight bytes per element: i64 is the narrowest type the communicator moves.
  auto words =
      std::make_shared<std::vector<std::int64_t>>(static_cast<std::size_t>((length + 7) / 8));
  if (rank() == root) pack_bytes(text, words->data(), words->size());
  if (!words->empty())
    mpi_->broadcast_async(words->data(), words->size(), DType::i64, root, options, words)->wait();
  return std::string(reinterpret_cast<const char*>(words->data()),
                     static_cast<std::size_t>(length));
}

std::uint64_t ControlPlane::bytes_sent() const {
  return mpi_->bytes_reduced();
}

void ControlPlane::dump_flight_recorder() const {
  mpi_->dump_flight_recorder();
}

}  // namespace slimtrain::comm
