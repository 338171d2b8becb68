// libFuzzer target: the header of a safetensors file (the 8-byte length, the JSON header, every
// tensor's dtype, shape and offsets against the file's size), as `inspect`, `export` and a
// model's loading read it.
#include <cstddef>
#include <cstdint>

#include "slimtrain/ckpt/safetensors_header.hpp"
#include "slimtrain/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const slimtrain::ckpt::SafetensorsHeader h =
        slimtrain::ckpt::parse_safetensors_header(data, size, size, "fuzz.safetensors");
    for (const auto& e : h.tensors) h.find(e.name);
  } catch (const slimtrain::Error&) {
  }
  return 0;
}
