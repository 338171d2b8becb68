#include "slimtrain/comm/chunking.hpp"

#include <algorithm>

#include "slimtrain/core/error.hpp"

namespace slimtrain::comm {

std::vector<Piece> plan_pieces(std::size_t count, std::size_t element_size, std::size_t chunk_bytes,
                               std::size_t max_elements) {
  if (element_size == 0 || max_elements == 0) {
    SLIMTRAIN_THROW(ConfigError,
                    "plan_pieces: element size and max elements per call must be "
                    "positive (got ",
                    element_size, ", ", max_elements, ")");
  }
  std::size_t per_piece = max_elements;
  if (chunk_bytes > 0)
    per_piece = std::min(per_piece, std::max<std::size_t>(1, chunk_bytes / element_size));
  std::vector<Piece> pieces;
  pieces.reserve(count / per_piece + 1);
  for (std::size_t offset = 0; offset < count; offset += per_piece) {
    pieces.push_back({offset, std::min(per_piece, count - offset)});
  }
  return pieces;
}

}  // namespace slimtrain::comm
