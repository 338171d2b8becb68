#pragma once
// Byte-for-byte tensor equality for unit tests: -0.0 against +0.0 and NaN payloads count, which
// torch::equal does not see.
#include <torch/torch.h>

#include <cstring>

namespace slimtrain::testing {

inline bool same_bytes(const torch::Tensor& a, const torch::Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) return false;
  if (a.numel() == 0) return true;  // an empty tensor's data_ptr() is null: memcmp must not see it
  const torch::Tensor ca = a.contiguous(), cb = b.contiguous();
  return std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.numel() * ca.element_size()) == 0;
}

}  // namespace slimtrain::testing
