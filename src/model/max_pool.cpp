#include "slimtrain/model/max_pool.hpp"

#include <ATen/Parallel.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <utility>

namespace slimtrain::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct Planes {
  std::int64_t count, height, width;  // input planes (N*C) and their size
  std::int64_t out_h() const { return height / 2; }
  std::int64_t out_w() const { return width / 2; }
};

Planes planes_of(const torch::Tensor& x) {
  return {x.size(0) * x.size(1), x.size(2), x.size(3)};
}

// Each output's window position (0..3, raster order) is kept as one byte for the backward pass.
void pool_forward(const float* in, float* out, std::uint8_t* where, const Planes& p) {
  const std::int64_t oh = p.out_h(), ow = p.out_w(), plane_in = p.height * p.width;
  at::parallel_for(0, p.count, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t plane = begin; plane < end; ++plane) {
      const float* src = in + plane * plane_in;
      float* dst = out + plane * oh * ow;
      std::uint8_t* arg = where + plane * oh * ow;
      for (std::int64_t i = 0; i < oh; ++i) {
        const float* top = src + 2 * i * p.width;
        const float* bottom = top + p.width;
        float* out_row = dst + i * ow;
        std::uint8_t* arg_row = arg + i * ow;
        for (std::int64_t j = 0; j < ow; ++j) {
          // Selects, not branches: the compiler vectorises this loop (2.7 ms for the first
          // pooling above, against 7 ms for the same rule written with if and ||).
          float best = top[2 * j];
          std::uint8_t at = 0;
          const float rest[3] = {top[2 * j + 1], bottom[2 * j], bottom[2 * j + 1]};
          for (std::uint8_t k = 0; k < 3; ++k) {
            const bool wins = (rest[k] > best) | (rest[k] != rest[k]);  // LibTorch's rule, NaN too
            best = wins ? rest[k] : best;
            at = wins ? static_cast<std::uint8_t>(k + 1) : at;
          }
          out_row[j] = best;
          arg_row[j] = at;
        }
      }
    }
  });
}

void pool_backward(const float* grad_out, const std::uint8_t* where, float* grad_in,
                   const Planes& p) {
  const std::int64_t oh = p.out_h(), ow = p.out_w(), plane_in = p.height * p.width;
  at::parallel_for(0, p.count, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t plane = begin; plane < end; ++plane) {
      const float* g = grad_out + plane * oh * ow;
      const std::uint8_t* arg = where + plane * oh * ow;
      float* dst = grad_in + plane * plane_in;
      for (std::int64_t i = 0; i < oh; ++i) {
        for (std::int64_t j = 0; j < ow; ++j) {
          const std::uint8_t k = arg[i * ow + j];
          // Added to zero as LibTorch does, so a -0.0 gradient arrives as +0.0 there too.
          dst[(2 * i + k / 2) * p.width + 2 * j + k % 2] += g[i * ow + j];
        }
      }
    }
  });
}

// The pooled tensor, and where each maximum was (for the backward pass).
std::pair<torch::Tensor, torch::Tensor> pool(const torch::Tensor& x) {
  const Planes p = planes_of(x);
  auto out = torch::empty({x.size(0), x.size(1), p.out_h(), p.out_w()}, x.options());
  auto where = torch::empty(out.sizes(), x.options().dtype(torch::kUInt8));
  pool_forward(x.data_ptr<float>(), out.data_ptr<float>(), where.data_ptr<std::uint8_t>(), p);
  return {out, where};
}

class MaxPool2x2 : public torch::autograd::Function<MaxPool2x2> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x) {
    auto [out, where] = pool(x);
    ctx->save_for_backward({where});
    ctx->saved_data["sizes"] = x.sizes().vec();
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto where = ctx->get_saved_variables()[0];
    const auto sizes = ctx->saved_data["sizes"].toIntVector();
    const auto grad_out = grads[0].contiguous();
    auto grad_in = torch::zeros(sizes, grad_out.options());
    pool_backward(grad_out.data_ptr<float>(), where.data_ptr<std::uint8_t>(),
                  grad_in.data_ptr<float>(), planes_of(grad_in));
    return {grad_in};
  }
};

std::atomic<bool> own_loop_on{true};

}  // namespace

void use_own_max_pool_loop(bool on) {
  own_loop_on = on;
}

bool max_pool_2x2_own_loop(const torch::Tensor& x) {
  return own_loop_on && x.dim() == 4 && x.device().is_cpu() && x.scalar_type() == torch::kFloat &&
         x.size(2) >= 2 && x.size(3) >= 2 && x.numel() > 0 && x.is_contiguous();
}

torch::Tensor max_pool_2x2(const torch::Tensor& x) {
  if (!max_pool_2x2_own_loop(x)) return torch::max_pool2d(x, 2);
  if (torch::GradMode::is_enabled() && x.requires_grad()) return MaxPool2x2::apply(x);
  return pool(x).first;  // evaluation: no graph to keep the positions for
}

}  // namespace slimtrain::model
