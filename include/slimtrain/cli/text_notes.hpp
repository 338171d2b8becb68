#pragma once
/**
 * @brief What `prep text` says once for the job about the records it read: bytes the tokenizer
 * reads as <unk> (not UTF-8, NUL) and samples cut by --max-length, each with the first record.
 */
#include <cstdint>
#include <string>
#include <vector>

#include "slimtrain/comm/control_plane.hpp"

namespace slimtrain::cli {

// What a split's records held that the tokenizer reads as <unk>, or that was cut: counted over
// this rank's share, the first record of each kept ("" when none).
struct TextNotes {
  std::int64_t invalid_utf8 = 0, nul = 0, cut = 0, longest = 0;
  std::int64_t flawed_labels = 0;  ///< labels with bytes that are not UTF-8 or NUL bytes
  std::string first_invalid, first_nul, longest_at, first_flawed_label;
};

/** @brief Every rank's notes summed, the first records gathered, and logged by rank 0. */
void report_text_notes(comm::ControlPlane& control, const std::vector<TextNotes>& notes,
                       std::int64_t max_length);

}  // namespace slimtrain::cli
