#include "slimtrain/comm/mpi_data_plane.hpp"

#include <utility>

#include "slimtrain/core/error.hpp"

namespace slimtrain::comm {
namespace {

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

 protected:
  std::shared_ptr<Work> start_all_reduce(const torch::Tensor& t, DType dtype, ReduceOp op,
                                         const OpOptions& options) override {
    return mpi_->all_reduce_async(t.data_ptr(), static_cast<std::size_t>(t.numel()), dtype, op,
                                  options, std::make_shared<torch::Tensor>(t));
  }

  std::shared_ptr<Work> start_broadcast(const torch::Tensor& t, DType dtype, int root,
                                        const OpOptions& options) override {
    return mpi_->broadcast_async(t.data_ptr(), static_cast<std::size_t>(t.numel()), dtype, root,
                                 options, std::make_shared<torch::Tensor>(t));
  }

  std::shared_ptr<Work> start_reduce_scatter(const torch::Tensor& input,
                                             const torch::Tensor& output, DType dtype, ReduceOp op,
                                             const OpOptions& options) override {
    return mpi_->reduce_scatter_async(
        input.data_ptr(), output.data_ptr(), static_cast<std::size_t>(output.numel()), dtype, op,
        options, std::make_shared<std::pair<torch::Tensor, torch::Tensor>>(input, output));
  }

  std::shared_ptr<Work> start_all_gather(const torch::Tensor& input, const torch::Tensor& output,
                                         DType dtype, const OpOptions& options) override {
    return mpi_->all_gather_async(
        input.data_ptr(), output.data_ptr(), static_cast<std::size_t>(input.numel()), dtype,
        options, std::make_shared<std::pair<torch::Tensor, torch::Tensor>>(input, output));
  }

 private:
  std::unique_ptr<Communicator> mpi_;
};

}  // namespace

std::unique_ptr<DataPlane> make_mpi_data_plane(const runtime::Runtime& runtime, std::string name,
                                               const CommConfig& config) {
  return std::make_unique<MpiDataPlane>(runtime, std::move(name), config);
}

}  // namespace slimtrain::comm
