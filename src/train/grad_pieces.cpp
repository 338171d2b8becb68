// GradientSync as the built-in layers' gradient sink (model/grad_sink.hpp): a linear layer's
// weight gradient is formed where it belongs instead of whole beside it.
#include <algorithm>

#include "slimtrain/train/grad_sync.hpp"

namespace slimtrain::train {
namespace {

// One round of a weight's reduce-scatter moves about this much (every rank's piece together),
// or one block per rank where a block is larger: two rounds' buffers are what exists at once.
constexpr std::int64_t kRoundBytes = 1 << 20;
// A weight gradient is made in blocks of rows of about this size, one matrix product each,
// thickened towards kMinRows rows: each block reads the whole input, so thin blocks are slow (a
// 7B layer's 18944 x 3584 gradient from 128 tokens: 2.9x a whole product's time in blocks of 2
// rows, 1.3x in 16, 1.1x in 64; Debian's torch on the Xeon, one thread). A round holds a block of
// every rank's piece, so the thickening stops where a round would pass kRoundCapBytes (its two
// buffers last the run): at np 16, 16 rows of an 18944-wide weight.
constexpr std::int64_t kBlockBytes = 256 << 10;
constexpr std::int64_t kMinRows = 64;
constexpr std::int64_t kRoundCapBytes = 32 << 20;

// Rows per block: a power of two, so blocks line up with the ranks' pieces of a weight whose rows
// divide evenly. Every --shard mode makes a weight's gradient in these same blocks at a world
// size: a BLAS product's bits depend on its shape (a block of rows is not bit-identical to the
// same rows of a whole product), and --shard must not change the weights a run trains.
std::int64_t block_rows(std::int64_t in, std::int64_t world) {
  const std::int64_t row = in * static_cast<std::int64_t>(sizeof(float));
  std::int64_t rows = 1;
  while ((rows * 2) * row <= kBlockBytes) rows *= 2;
  while (rows < kMinRows && world * (rows * 2) * row <= kRoundCapBytes) rows *= 2;
  return rows;
}

// Block starting at row `first` of go^T x into `dest` ([rows, in], contiguous).
void block_product(torch::Tensor dest, const torch::Tensor& go, const torch::Tensor& x,
                   std::int64_t first) {
  at::mm_out(dest, go.narrow(1, first, dest.size(0)).t(), x);
}

// Elements [at, at + dest.numel()) of the weight gradient go^T x (row-major, [out, in]), zeros
// past its end, into dest, plus the same elements of `before` (what earlier micro-batches
// accumulated) when defined. A block wholly inside the run is made in place; one the run cuts is
// made aside in `scratch` and the run's part copied.
void weight_grad_run(const torch::Tensor& dest, const torch::Tensor& go, const torch::Tensor& x,
                     std::int64_t at, const torch::Tensor& before, torch::Tensor& scratch,
                     std::int64_t per) {
  const std::int64_t in = x.size(1), out = go.size(1);
  const std::int64_t valid = std::clamp<std::int64_t>(out * in - at, 0, dest.numel());
  if (valid < dest.numel()) dest.narrow(0, valid, dest.numel() - valid).zero_();
  if (valid == 0) return;
  for (std::int64_t first = at / in / per * per; first * in < at + valid; first += per) {
    const std::int64_t rows = std::min(per, out - first);
    const std::int64_t from = std::max(at, first * in),
                       to = std::min(at + valid, (first + rows) * in);
    if (from == first * in && to == (first + rows) * in) {
      block_product(dest.narrow(0, from - at, to - from).view({rows, in}), go, x, first);
      continue;
    }
    if (!scratch.defined() || scratch.numel() < per * in)
      scratch = torch::empty({per * in}, dest.options());
    const torch::Tensor block = scratch.narrow(0, 0, rows * in);
    block_product(block.view({rows, in}), go, x, first);
    dest.narrow(0, from - at, to - from).copy_(block.narrow(0, from - first * in, to - from));
  }
  if (before.defined()) dest.narrow(0, 0, valid).add_(before.reshape({-1}).narrow(0, at, valid));
}

// The whole weight gradient, block by block (`per` rows each): into `grad` when it holds nothing
// yet (`fresh`), else added to it.
void weight_grad_into(const torch::Tensor& grad, bool fresh, const torch::Tensor& go,
                      const torch::Tensor& x, torch::Tensor& scratch, std::int64_t per) {
  const std::int64_t in = x.size(1), out = go.size(1);
  for (std::int64_t first = 0; first < out; first += per) {
    const std::int64_t rows = std::min(per, out - first);
    const torch::Tensor into = grad.narrow(0, first, rows);
    if (fresh) {
      block_product(into, go, x, first);
      continue;
    }
    if (!scratch.defined() || scratch.numel() < per * in)
      scratch = torch::empty({per * in}, grad.options());
    const torch::Tensor block = scratch.narrow(0, 0, rows * in).view({rows, in});
    block_product(block, go, x, first);
    into.add_(block);
  }
}

class Sink : public model::GradSink {
 public:
  Sink(GradientSync* sync, std::shared_ptr<bool> alive) : sync_(sync), alive_(std::move(alive)) {}
  bool take_linear(const torch::Tensor& weight, const torch::Tensor& bias,
                   const torch::Tensor& grad_out, const torch::Tensor& input) override {
    return *alive_ && sync_->take_linear(weight, bias, grad_out, input);
  }

 private:
  GradientSync* sync_;
  std::shared_ptr<bool> alive_;
};

}  // namespace

std::shared_ptr<model::GradSink> GradientSync::sink() {
  return std::make_shared<Sink>(this, alive_);
}

bool GradientSync::take_linear(const torch::Tensor& weight, const torch::Tensor& bias,
                               const torch::Tensor& grad_out, const torch::Tensor& input) {
  const auto w = index_of_.find(weight.unsafeGetTensorImpl());
  if (w == index_of_.end() || grad_out.dim() != 2 || input.dim() != 2) return false;
  std::size_t b = 0;
  if (bias.defined()) {
    const auto found = index_of_.find(bias.unsafeGetTensorImpl());
    if (found == index_of_.end()) return false;  // a frozen bias: leave both to autograd
    b = found->second;
  }
  // A bf16 weight's gradient goes to its master's float32 bucket through move_in, not here.
  if (cast_[w->second] || (bias.defined() && cast_[b])) return false;
  torch::NoGradGuard no_grad;
  // Counted as they complete, as autograd's hooks would: the bias first (its bucket comes
  // first, parameters being bucketed in reverse), so a bucket it completes starts before the
  // weight's rounds, in bucket order.
  const bool counts = overlap_ && !accumulating_;
  if (bias.defined()) {
    torch::Tensor& grad = params_[b].mutable_grad();
    const torch::Tensor sum = grad_out.sum(0);
    if (grad.defined())
      grad.add_(sum);
    else
      grad = sum;
    if (counts) {
      sunk_[b] = 1;
      arrive(b);
    }
  }
  const std::size_t k = w->second;
  if (counts && in_pieces(k, grad_out, input)) {
    sunk_[k] = 1;
    scatter_in_pieces(k, grad_out, input);
    return true;
  }
  Bucket& bucket = buckets_[layout_.bucket_of(k)];
  if (shard_ != ShardMode::gradients && bucket.params.size() == 1) {
    // Made in place from now on, so a lasting bucket is better than adopting what autograd made
    // (which would be a new 64 MiB tensor every step for a 4096 x 4096 weight).
    if (bucket.adopts) {
      bucket.adopts = false;  // prepare() dropped its storage: storage() makes the lasting one
      grad_views_[k] = slice(k, storage(bucket));
      params_[k].mutable_grad() = grad_views_[k];
      fresh_[k] = 1;
    }
    bucket.sink_made = true;
  }
  // Into .grad in place: the bucket's slice (still zero, or holding earlier micro-batches'), or
  // a gradient of earlier micro-batches; else the gradient made here becomes .grad (an adopting
  // bucket, or --shard gradients' whole path).
  torch::Tensor& grad = params_[k].mutable_grad();
  const bool fresh = !grad.defined() || fresh_[k];
  if (!grad.defined()) grad = torch::empty(params_[k].sizes(), params_[k].options());
  weight_grad_into(grad, fresh, grad_out, input, block_scratch_,
                   block_rows(input.size(1), static_cast<std::int64_t>(plane_.size())));
  fresh_[k] = 0;
  if (counts) {
    sunk_[k] = 1;
    arrive(k);
  }
  return true;
}

bool GradientSync::in_pieces(std::size_t index, const torch::Tensor& grad_out,
                             const torch::Tensor& input) const {
  const std::size_t bi = layout_.bucket_of(index);
  const torch::Tensor& p = params_[index];
  // Alone in its bucket, and every bucket before it started: the rounds go out now, in order.
  return shard_ == ShardMode::gradients && buckets_[bi].params.size() == 1 &&
         next_launch_ < order_.size() && order_[next_launch_] == bi && p.dim() == 2 &&
         p.is_contiguous() && p.size(0) == grad_out.size(1) && p.size(1) == input.size(1);
}

// The bucket is this one weight, padded to a multiple of the world size W and cut into W pieces
// of L elements, rank r's the r-th. Round j makes, for every rank r, elements [r L + j c, +c) of
// the gradient into one send buffer (rank-major, as reduce-scatter takes it) and reduce-scatters
// it into this rank's shard at j c. So no more than two rounds' buffers exist, never the whole
// gradient; the sums are the same as a whole bucket's (each element is the sum over ranks of the
// same products).
void GradientSync::scatter_in_pieces(std::size_t index, const torch::Tensor& grad_out,
                                     const torch::Tensor& input) {
  const std::size_t bi = layout_.bucket_of(index);
  Bucket& b = buckets_[bi];
  const auto world = static_cast<std::int64_t>(plane_.size());
  const std::int64_t length = b.padded / world;
  const std::int64_t in = input.size(1);
  // Whole blocks per round, at least one, so runs that start on a block stay on blocks.
  const std::int64_t rows = block_rows(in, world), block = rows * in;
  const std::int64_t c =
      std::min(length, std::max<std::int64_t>(1, kRoundBytes / (world * 4) / block) * block);
  // What autograd would have added to (earlier micro-batches of --grad-accum), then dropped.
  torch::Tensor before = params_[index].mutable_grad();
  params_[index].mutable_grad() = torch::Tensor();
  wait_for_older(bi);
  const bool bf16 = compression_ == GradCompression::bf16;
  const torch::Tensor& out = bf16 ? shard_wire_[bi] : shard_grads_[bi];
  comm::OpOptions options;
  options.tag = "grad-bucket";
  for (std::int64_t j = 0; j * c < length; ++j) {
    const std::int64_t n = std::min(c, length - j * c);
    const std::size_t slot = rounds_++ % kInFlight;
    if (piece_work_[slot]) {
      piece_work_[slot]->wait();
      piece_work_[slot].reset();
    }
    torch::Tensor& send = piece_send_[slot];
    if (!send.defined() || send.numel() < world * c)
      send = torch::empty({world * c}, out.options().dtype(torch::kFloat32));
    for (std::int64_t r = 0; r < world; ++r)
      weight_grad_run(send.narrow(0, r * n, n), grad_out, input, r * length + j * c, before,
                      block_scratch_, rows);
    torch::Tensor sent = send.narrow(0, 0, world * n);
    if (bf16) {
      torch::Tensor& wire = piece_wire_[slot];
      if (!wire.defined() || wire.numel() < world * c)
        wire = torch::empty({world * c}, out.options());
      sent = wire.narrow(0, 0, world * n).copy_(sent);
    }
    piece_work_[slot] = plane_.reduce_scatter_async(
        sent, out.narrow(0, j * c, n), bf16 ? comm::ReduceOp::sum : comm::ReduceOp::avg, options);
    b.pieces.push_back(piece_work_[slot]);
  }
  arrived_[index] = 1;
  ++weights_in_pieces_;
  b.pending = 0;
  b.work = b.pieces.back();
  b.ready = true;
  ++next_launch_;
  launch_ready();
}

}  // namespace slimtrain::train
