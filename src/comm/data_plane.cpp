#include "slimtrain/comm/data_plane.hpp"

#include <algorithm>
#include <atomic>
#include <optional>

#include "slimtrain/comm/mpi_data_plane.hpp"
#include "slimtrain/core/error.hpp"
#ifdef SLIMTRAIN_HAVE_NCCL
#include "slimtrain/comm/nccl_data_plane.hpp"
#endif

namespace slimtrain::comm {
namespace {
// splitmix64's finaliser: every field of an operation moves every bit of the fingerprint.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
std::optional<DType> collective_dtype(c10::ScalarType type) {
  switch (type) {
    case torch::kFloat:
      return DType::f32;
    case torch::kDouble:
      return DType::f64;
    case torch::kLong:
      return DType::i64;
    case torch::kHalf:
      return DType::f16;
    case torch::kBFloat16:
      return DType::bf16;
    case torch::kByte:
      return DType::u8;
    default:
      return std::nullopt;
  }
}

// A broadcast needs no arithmetic, so a tensor of any other element type (a bool causal mask,
// int32 position ids) travels as its bytes, as DDP broadcasts every buffer. The view shares the
// tensor's storage; anything that check() refuses is returned as it is, to be named there.
torch::Tensor broadcastable(const torch::Tensor& t) {
  if (!t.defined() || !t.is_contiguous() || collective_dtype(t.scalar_type())) return t;
  return t.reshape({-1}).view(torch::kByte);
}

}  // namespace

// The first failure of any of the plane's operations, shared with their handles.
struct PlaneFailure {
  std::mutex mutex;
  std::exception_ptr error;
  void keep(std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!error) error = std::move(e);
  }
  std::exception_ptr get() {
    std::lock_guard<std::mutex> lock(mutex);
    return error;
  }
};

class DataPlane::TrackedWork final : public Work {
 public:
  TrackedWork(std::shared_ptr<Work> inner, std::shared_ptr<PlaneFailure> failure)
      : inner_(std::move(inner)), failure_(std::move(failure)) {}
  void wait() override {
    try {
      inner_->wait();
    } catch (const CommError&) {
      failure_->keep(std::current_exception());
      throw;
    }
    waited_.store(true);
  }
  bool waited() const { return waited_.load(); }

 private:
  std::shared_ptr<Work> inner_;
  std::shared_ptr<PlaneFailure> failure_;
  std::atomic<bool> waited_{false};
};

DataPlane::DataPlane(torch::Device device)
    : device_(device), failure_(std::make_shared<PlaneFailure>()) {}

DType dtype_of(const torch::Tensor& t) {
  if (const auto dtype = collective_dtype(t.scalar_type())) return *dtype;
  SLIMTRAIN_THROW(ConfigError, "tensor dtype ", t.scalar_type(),
                  " is not supported by reductions (use float32, float64, int64, float16, "
                  "bfloat16 or uint8; a broadcast takes any type)");
}

DType DataPlane::check(const torch::Tensor& t, const char* what) const {
  if (!t.defined()) SLIMTRAIN_THROW(ConfigError, name(), " ", what, ": undefined tensor");
  if (t.device() != device_) {
    SLIMTRAIN_THROW(ConfigError, name(), " ", what, ": tensor on ", t.device(),
                    " but this data plane moves ", device_,
                    " memory (host values belong on the control plane)");
  }
  if (!t.is_contiguous()) {
    SLIMTRAIN_THROW(ConfigError, name(), " ", what, ": tensor of shape ", t.sizes(),
                    " is not contiguous (call .contiguous() first)");
  }
  return dtype_of(t);
}

void DataPlane::throw_if_failed() const {
  if (const std::exception_ptr kept = failure_->get()) std::rethrow_exception(kept);
  try {
    throw_if_backend_failed();
  } catch (const CommError&) {
    failure_->keep(std::current_exception());
    throw;
  }
}

std::shared_ptr<Work> DataPlane::track(std::shared_ptr<Work> work) {
  auto tracked = std::make_shared<TrackedWork>(std::move(work), failure_);
  std::lock_guard<std::mutex> lock(mutex_);
  // Operations are waited in a step: what was waited needs no settling.
  unsettled_.erase(std::remove_if(unsettled_.begin(), unsettled_.end(),
                                  [](const auto& w) { return w->waited(); }),
                   unsettled_.end());
  unsettled_.push_back(tracked);
  return tracked;
}

void DataPlane::settle() {
  throw_if_failed();
  std::vector<std::shared_ptr<TrackedWork>> waits;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    waits.swap(unsettled_);
  }
  for (const auto& w : waits) w->wait();  // in issue order, each under its deadline
  try {
    settle_issued();
  } catch (const CommError&) {
    failure_->keep(std::current_exception());
    throw;
  }
  throw_if_failed();
}

void DataPlane::record(OpKind kind, DType dtype, std::uint64_t count, const char* tag) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++issued_;
  std::uint64_t h = fingerprint_;
  h = mix(h ^ issued_);
  h = mix(h ^ static_cast<std::uint64_t>(kind));
  h = mix(h ^ static_cast<std::uint64_t>(dtype));
  h = mix(h ^ count);
  fingerprint_ = h;
  log_.push_back(IssuedOp{issued_, kind, dtype, count, tag ? tag : ""});
  if (log_.size() > kLogSize) log_.pop_front();
}

std::shared_ptr<Work> DataPlane::all_reduce_async(const torch::Tensor& t, ReduceOp op,
                                                  const OpOptions& options) {
  const DType dtype = check(t, "all_reduce");
  if (op == ReduceOp::avg && !is_floating(dtype)) {
    SLIMTRAIN_THROW(ConfigError, name(), " all_reduce: avg needs a floating type, got ",
                    to_string(dtype));
  }
  record(OpKind::all_reduce, dtype, static_cast<std::uint64_t>(t.numel()), options.tag);
  return track(start_all_reduce(t, dtype, op, options));
}

void DataPlane::all_reduce(const torch::Tensor& t, ReduceOp op, const OpOptions& options) {
  all_reduce_async(t, op, options)->wait();
}

void DataPlane::broadcast(const torch::Tensor& tensor, int root, const OpOptions& options) {
  const torch::Tensor t = broadcastable(tensor);
  const DType dtype = check(t, "broadcast");
  if (root < 0 || root >= size()) {
    SLIMTRAIN_THROW(ConfigError, name(), " broadcast: root ", root, " is not a rank (size ", size(),
                    ")");
  }
  record(OpKind::broadcast, dtype, static_cast<std::uint64_t>(t.numel()), options.tag);
  track(start_broadcast(t, dtype, root, options))->wait();
}

DType DataPlane::check_blocks(const torch::Tensor& blocks, const torch::Tensor& block,
                              const char* what) const {
  const DType dtype = check(blocks, what);
  if (check(block, what) != dtype)
    SLIMTRAIN_THROW(ConfigError, name(), " ", what, ": blocks of ", blocks.scalar_type(),
                    " but a block of ", block.scalar_type());
  if (blocks.numel() != block.numel() * size())
    SLIMTRAIN_THROW(ConfigError, name(), " ", what, ": ", blocks.numel(), " elements are not ",
                    size(), " blocks of ", block.numel());
  return dtype;
}

std::shared_ptr<Work> DataPlane::reduce_scatter_async(const torch::Tensor& input,
                                                      const torch::Tensor& output, ReduceOp op,
                                                      const OpOptions& options) {
  const DType dtype = check_blocks(input, output, "reduce_scatter");
  const auto* a = static_cast<const char*>(input.data_ptr());
  const auto* b = static_cast<const char*>(output.data_ptr());
  if (output.numel() > 0 && a < b + output.nbytes() && b < a + input.nbytes())
    SLIMTRAIN_THROW(ConfigError, name(), " reduce_scatter: the output overlaps the input");
  if (op == ReduceOp::avg && !is_floating(dtype))
    SLIMTRAIN_THROW(ConfigError, name(), " reduce_scatter: avg needs a floating type, got ",
                    to_string(dtype));
  record(OpKind::reduce_scatter, dtype, static_cast<std::uint64_t>(input.numel()), options.tag);
  return track(start_reduce_scatter(input, output, dtype, op, options));
}

std::shared_ptr<Work> DataPlane::all_gather_async(const torch::Tensor& input,
                                                  const torch::Tensor& output,
                                                  const OpOptions& options) {
  const DType dtype = check_blocks(output, input, "all_gather");
  record(OpKind::all_gather, dtype, static_cast<std::uint64_t>(output.numel()), options.tag);
  return track(start_all_gather(input, output, dtype, options));
}

std::uint64_t DataPlane::fingerprint() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return fingerprint_;
}

std::uint64_t DataPlane::ops_issued() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return issued_;
}

std::vector<IssuedOp> DataPlane::issued_after(std::uint64_t seq) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<IssuedOp> out;
  for (const IssuedOp& op : log_)
    if (op.seq > seq) out.push_back(op);
  return out;
}

std::unique_ptr<DataPlane> make_data_plane(const runtime::Runtime& runtime,
                                           const torch::Device& device, std::string name,
                                           const CommConfig& config) {
  if (device.is_cpu()) return make_mpi_data_plane(runtime, std::move(name), config);
  if (device.is_cuda()) {
#ifdef SLIMTRAIN_HAVE_NCCL
    return make_nccl_data_plane(runtime, device, std::move(name), config);
#else
    SLIMTRAIN_THROW(ConfigError,
                    "--device cuda: this slimtrain was built without CUDA/NCCL "
                    "(configure with -DSLIMTRAIN_WITH_NCCL=ON on a CUDA machine)");
#endif
  }
  SLIMTRAIN_THROW(ConfigError, "data plane: no backend for device ", device,
                  " (cpu uses MPI, cuda uses NCCL)");
}

}  // namespace slimtrain::comm
