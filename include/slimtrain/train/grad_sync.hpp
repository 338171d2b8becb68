#pragma once
/**
 * @brief Gradient averaging across ranks in buckets, overlapped with backward.
 *
 * Parameters are packed into buckets as the FlatLayout says (reverse registration order, about
 * `bucket_bytes` each). Each parameter's .grad is its slice of the bucket, laid out with the
 * parameter's strides (DDP's gradient_as_bucket_view): autograd adds every gradient into the
 * bucket in place, so a step holds its gradients once, not once in .grad and again in the bucket.
 *
 * --shard optimizer (ZeRO-1): the padded buckets are all-reduced as above, and shard_grads() are
 * this rank's pieces of them. --shard gradients (ZeRO-2): a bucket exists only from its first
 * gradient until its reduce-scatter has started: each arriving gradient is moved into it and
 * autograd's tensor dropped, and its average lands in this rank's shard, the one gradient memory
 * that lasts; with overlap, a step never holds all its gradients at once. Layers that give their
 * gradients to sink() (the built-in mlp's) do not even make a weight's gradient whole: it is made
 * in its bucket, or reduce-scattered in row runs as it is made (grad_pieces.cpp). With overlap, a
 * hook after each parameter's accumulation counts it; a full bucket starts its all-reduce at once,
 * while backward goes on. Buckets always start in one launch order on every rank (index order, or
 * set_launch_order's), so the collective sequence is the same everywhere. launch() starts what
 * backward has not; wait() waits under the data plane's deadline, after which the bucket, and so
 * .grad, holds the average. With gradient accumulation only the step's last backward starts
 * buckets; the earlier ones add up in them. Between the two the trainer runs its per-step control
 * reduction, so a desync (ranks in different collectives) is caught while the buckets are still in
 * flight.
 *
 * With bf16 compression (DDP's bf16_compress_hook, for slow links) a bucket travels as bfloat16:
 * half the bytes. The sum is formed in float32 at every reduction step and rounded once per step
 * (the data plane's bf16 operator; NCCL's bf16 sum on GPU), and the division by the world size
 * happens after it is widened back to float32.
 */
#include <torch/torch.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "slimtrain/comm/data_plane.hpp"
#include "slimtrain/model/grad_sink.hpp"
#include "slimtrain/train/flat_layout.hpp"
#include "slimtrain/train/sync_choice.hpp"

namespace slimtrain::train {

class GradientSync {
 public:
  /**
   * @brief Buckets live on the parameters' device, which must be the data plane's. `layout`
   * (over these parameters; its world size 1 for ShardMode::none) must outlive this.
   */
  GradientSync(std::vector<torch::Tensor> params, comm::DataPlane& plane, const FlatLayout& layout,
               ShardMode shard, bool overlap, GradCompression compression = GradCompression::none);
  ~GradientSync();
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;

  /**
   * @brief Call before every step's first backward: zeroes the buckets, points every .grad at
   * its slice (so Optimizer::zero_grad() is not needed) and resets the per-step bookkeeping.
   * Without --shard, a bucket of one contiguous parameter has no slice: its .grad is dropped
   * here, and the gradient autograd makes in backward becomes the bucket (reduced in place).
   */
  void prepare();
  /**
   * @brief Before each backward of a step: true while it only accumulates (the first N-1
   * micro-batches of --grad-accum N, DDP's no_sync): autograd adds the gradients up in the
   * buckets and none starts. The last backward (false, the default after prepare()) starts them.
   */
  void set_accumulating(bool on) { accumulating_ = on; }
  /** @brief Call after backward: starts every bucket that has not started. */
  void launch();
  /**
   * @brief Waits for every bucket: every .grad then holds the average (until prepare()); with
   * --shard gradients, the parameters have no .grad and shard_grads() hold this rank's averages.
   */
  void wait();
  /** @brief launch() then wait(). */
  void finish() {
    launch();
    wait();
  }

  std::size_t bucket_count() const { return buckets_.size(); }
  /**
   * @brief The order buckets start in from the next step: a permutation of the bucket indices,
   * the same on every rank (LayerGate::launch_order: the reverse of first use in forward, so that
   * a bucket holding a layer's norm, used first and so complete last, does not hold back the
   * layer's large weights). Index order until called; ConfigError for what is no permutation.
   */
  void set_launch_order(std::vector<std::size_t> order);
  const std::vector<std::size_t>& launch_order() const { return order_; }
  /**
   * @brief With --shard: this rank's piece of each bucket's averaged gradient, in bucket order
   * (the FlatLayout's shard), valid after wait(); the same tensors every step.
   */
  const std::vector<torch::Tensor>& shard_grads() const { return shard_grads_; }
  /**
   * @brief --weights bf16 (--shard none): `masters[k]` is bf16 parameter k's float32 master; its
   * .grad is the parameter's slice of the float32 bucket (the average after wait()), from now
   * and after every prepare(). Other entries are ignored.
   */
  void set_master_grads(std::vector<torch::Tensor> masters);
  /** @brief The number of buckets these parameters would make (no allocation). */
  static std::size_t count_buckets(const std::vector<torch::Tensor>& params,
                                   std::size_t bucket_bytes);
  std::size_t bucket_bytes_max() const;
  /**
   * @brief Bytes of gradient memory that lasts between steps: the buckets (and their bf16 wire
   * copies), or with --shard gradients this rank's shard of them.
   */
  std::size_t bucket_bytes_total() const;
  /** @brief Bytes of gradient one step hands the data plane (per rank). */
  std::size_t wire_bytes_per_step() const;
  GradCompression compression() const { return compression_; }

  /**
   * @brief For ClassifierImpl::set_grad_sink (grad_pieces.cpp): a built-in linear layer's weight
   * gradient is then added into its bucket in place (no whole gradient beside the bucket) and,
   * with --shard gradients and overlap, made a few rows at a time and reduce-scattered as it is
   * made, so no whole weight gradient exists at all. Inert once this is destroyed.
   */
  std::shared_ptr<model::GradSink> sink();
  /** @brief Weights the last step made and reduce-scattered in pieces (through the sink). */
  std::size_t weights_in_pieces() const { return weights_in_pieces_; }
  /** @brief What the sink does; false leaves the gradients to autograd (unknown parameters). */
  bool take_linear(const torch::Tensor& weight, const torch::Tensor& bias,
                   const torch::Tensor& grad_out, const torch::Tensor& input);

 private:
  // --shard gradients: reduce-scatters in flight at once (DeepSpeed's ZeRO-2 double-buffers too).
  static constexpr std::size_t kInFlight = 2;

  struct Bucket {
    std::vector<std::size_t> params;
    std::int64_t offset = 0;  // in the layout's flat buffer
    std::int64_t padded = 0;
    torch::Tensor flat;  // --shard gradients: from the first gradient until started
    // --shard none, one contiguous parameter: its .grad, autograd's own tensor, is the bucket
    // (no slice to accumulate into: autograd would make the gradient and then add it in).
    bool adopts = false;
    // One weight whose gradient the sink makes in place: prepare() leaves it unzeroed (the sink
    // overwrites it; adopt() zeroes it when backward did not reach it). Never with adopts.
    bool sink_made = false;
    torch::Tensor wire;  // bf16 copy of flat that travels (compression only)
    std::size_t pending = 0;
    bool ready = false;
    std::shared_ptr<comm::Work> work;                 // the last operation it issued
    std::vector<std::shared_ptr<comm::Work>> pieces;  // made in pieces: every round's
  };

  void on_accumulated(std::size_t index);
  void move_in(std::size_t index);
  /** @brief Parameter `index`'s gradient is complete: its bucket may start (overlap only). */
  void arrive(std::size_t index);
  /** @brief Whether weight `index`'s gradient may be made and reduce-scattered in pieces now. */
  bool in_pieces(std::size_t index, const torch::Tensor& grad_out,
                 const torch::Tensor& input) const;
  void scatter_in_pieces(std::size_t index, const torch::Tensor& grad_out,
                         const torch::Tensor& input);
  void adopt(std::size_t index);
  void mark_ready(std::size_t bucket);
  void launch_ready();
  void start(Bucket& b, std::size_t index);
  /** @brief --shard gradients: waits for the reduce-scatter of the bucket kInFlight places
   * before bucket `index` in the launch order. */
  void wait_for_older(std::size_t index);
  /** @brief The bucket's storage for this step when autograd gave it none (zeros). */
  torch::Tensor& storage(Bucket& b);
  /** @brief parameter `index`'s slice of its bucket, with the parameter's strides. */
  torch::Tensor slice(std::size_t index, const torch::Tensor& flat) const;

  std::vector<torch::Tensor> params_;
  comm::DataPlane& plane_;
  const FlatLayout& layout_;
  ShardMode shard_;
  bool overlap_;
  GradCompression compression_;
  std::vector<torch::Tensor> shard_grads_;
  std::vector<torch::Tensor> shard_wire_;  // --shard gradients with bf16: what arrives
  std::vector<Bucket> buckets_;
  std::vector<torch::Tensor> grad_views_;
  std::vector<char> cast_;              ///< per parameter: bf16, with a float32 master
  std::vector<torch::Tensor> masters_;  ///< set_master_grads'
  std::vector<char> arrived_;
  std::vector<char> sunk_;  // arrived through the sink: autograd's hook finds nothing to do
  // .grad still holds the zeros prepare() left (the sink writes instead of adding). Built-in
  // layers share no weight, so nothing but the sink adds to a weight it takes; the hook clears it.
  std::vector<char> fresh_;
  torch::Tensor block_scratch_;  // a block of a weight gradient that a run or an add needs aside
  std::unordered_map<const c10::TensorImpl*, std::size_t> index_of_;
  // Rounds of a weight reduce-scattered in pieces: send buffers (and bf16 copies), each reused
  // once the round that last used it has finished.
  std::array<torch::Tensor, kInFlight> piece_send_, piece_wire_;
  std::array<std::shared_ptr<comm::Work>, kInFlight> piece_work_;
  std::size_t rounds_ = 0;
  std::size_t weights_in_pieces_ = 0;
  /** @brief Held so the hooks on them live as long as this (a variable keeps a weak pointer). */
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;
  std::vector<std::uintptr_t> hook_keys_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::vector<std::size_t> order_;     ///< buckets in launch order
  std::vector<std::size_t> position_;  ///< a bucket's place in order_
  std::size_t next_launch_ = 0;        ///< order_'s first bucket not started
  bool accumulating_ = false;
};

}  // namespace slimtrain::train
