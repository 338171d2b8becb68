#include "slimtrain/comm/mpi_data_plane.hpp"

#include <mutex>
#include <vector>

#include "slimtrain/core/error.hpp"

namespace slimtrain::comm {
namespace {

// An operation issued while the plane is held: it starts on release().
class HeldWork final : public Work {
 public:
  void wait() override {
    std::shared_ptr<Work> started;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      started = started_;
    }
    if (!started)
      SLIMTRAIN_THROW(CommError, "data plane: waiting for an operation that was never released");
    started->wait();
  }
  void start(std::shared_ptr<Work> work) {
    std::lock_guard<std::mutex> lock(mutex_);
    started_ = std::move(work);
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<Work> started_;
};

class MpiDataPlane final : public DataPlane {
 public:
  MpiDataPlane(const runtime::Runtime& runtime, std::string name, const CommConfig& config)
      : DataPlane(torch::Device(torch::kCPU)),
        mpi_(make_mpi_communicator(runtime, std::move(name), config)) {}

  const std::string& name() const override { return mpi_->name(); }
  int rank() const override { return mpi_->rank(); }
  int size() const override { return mpi_->size(); }
  std::uint64_t bytes_reduced() const override { return mpi_->bytes_reduced(); }
  void set_floor_bandwidth(double bytes_per_s) override { mpi_->set_floor_bandwidth(bytes_per_s); }
  void dump_flight_recorder() const override { mpi_->dump_flight_recorder(); }

  void set_held(bool held) override {
    std::lock_guard<std::mutex> lock(mutex_);
    held_ = held;
  }

  void release() override {
    std::vector<Held> ready;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ready.swap(pending_);
    }
    for (Held& h : ready) h.work->start(start_now(h.tensor, h.dtype, h.op, h.options, h.tag));
  }

 protected:
  std::shared_ptr<Work> start_all_reduce(const torch::Tensor& t, DType dtype, ReduceOp op,
                                         const OpOptions& options) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (held_) {
        auto work = std::make_shared<HeldWork>();
        pending_.push_back(Held{t, dtype, op, options, options.tag ? options.tag : "", work});
        return work;
      }
    }
    return start_now(t, dtype, op, options, options.tag ? options.tag : "");
  }

  std::shared_ptr<Work> start_broadcast(const torch::Tensor& t, DType dtype, int root,
                                        const OpOptions& options) override {
    release();  // in issue order after anything held
    return mpi_->broadcast_async(t.data_ptr(), static_cast<std::size_t>(t.numel()), dtype, root,
                                 options, std::make_shared<torch::Tensor>(t));
  }

 private:
  struct Held {
    torch::Tensor tensor;
    DType dtype;
    ReduceOp op;
    OpOptions options;
    std::string tag;  // options.tag may not outlive the call
    std::shared_ptr<HeldWork> work;
  };

  std::shared_ptr<Work> start_now(const torch::Tensor& t, DType dtype, ReduceOp op,
                                  OpOptions options, const std::string& tag) {
    options.tag = tag.c_str();  // copied by the communicator before this returns
    return mpi_->all_reduce_async(t.data_ptr(), static_cast<std::size_t>(t.numel()), dtype, op,
                                  options, std::make_shared<torch::Tensor>(t));
  }

  std::unique_ptr<Communicator> mpi_;
  std::mutex mutex_;
  bool held_ = false;
  std::vector<Held> pending_;
};

}  // namespace

std::unique_ptr<DataPlane> make_mpi_data_plane(const runtime::Runtime& runtime, std::string name,
                                               const CommConfig& config) {
  return std::make_unique<MpiDataPlane>(runtime, std::move(name), config);
}

}  // namespace slimtrain::comm
