#pragma once
/** @brief Splits a long buffer into bounded pieces for sequential collectives. */
#include <cstddef>
#include <vector>

namespace slimtrain::comm {

/** @brief One piece of a chunked collective, in elements. */
struct Piece {
  std::size_t offset = 0;
  std::size_t count = 0;
  bool operator==(const Piece& other) const {
    return offset == other.offset && count == other.count;
  }
};

/**
 * @brief Pieces covering `count` elements in order, each at most `chunk_bytes` (0: unbounded)
 * and at most `max_elements` elements, never empty; a piece holds at least one element even when
 * one element exceeds chunk_bytes. An empty buffer has no pieces.
 */
std::vector<Piece> plan_pieces(std::size_t count, std::size_t element_size, std::size_t chunk_bytes,
                               std::size_t max_elements);

}  // namespace slimtrain::comm
