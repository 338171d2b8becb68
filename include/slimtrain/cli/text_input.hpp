#pragma once
/**
 * @brief A text file as `prep text` reads it: opened on every rank (shared_input), re-encoded to
 * UTF-8 from --encoding or its byte order mark before anything reads it, indexed (TextTable),
 * and its header said where the columns were given by index; and each record's bytes checked,
 * texts and label alike.
 */
#include <mpi.h>

#include <memory>
#include <string>

#include "slimtrain/cli/text_notes.hpp"
#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/data/text_table.hpp"

namespace slimtrain::cli {

/**
 * @brief Collective: `path` (given as `option`) as a table of records; one error on every rank
 * (a directory, an unknown extension or encoding, bytes not in it, a bad header).
 */
std::unique_ptr<data::TextTable> open_text_table(comm::ControlPlane& control, MPI_Comm io_comm,
                                                 const std::string& path, const std::string& option,
                                                 const data::TextColumns& columns,
                                                 const std::string& encoding, double io_timeout_s);

/**
 * @brief Bytes no tokenizer reads as meant (not UTF-8, NUL), in the texts and the label: counted
 * in `notes`, the first record named; with `strict` DataError naming the record. A label's are
 * replaced by U+FFFD, so its class stays apart and its name is UTF-8.
 */
void check_record(data::TextRecord& record, bool strict, TextNotes& notes,
                  const std::string& where);

}  // namespace slimtrain::cli
