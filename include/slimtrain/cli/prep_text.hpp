#pragma once
/**
 * @brief The `text` format of `slimtrain prep`: CSV, TSV or JSONL records (data/text_table)
 * tokenized with SentencePiece into a layout-version-2 file whose one input, `input_ids`, is a
 * ragged int32 sequence per sample; the tokenizer's model is stored beside it (/tokenizer).
 *
 * The tokenizer is the user's (--tokenizer) or trained by rank 0 on the training split only
 * (never on /val or /test). Each rank then tokenizes its share of every split and writes it
 * collectively: the file is the same at any number of ranks.
 */
#include <mpi.h>

#include "slimtrain/cli/command_line.hpp"
#include "slimtrain/cli/prep_job.hpp"
#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/data/text_table.hpp"

namespace slimtrain::cli {

/** @brief The options `prep text` adds to `prep`'s (--text-column, --tokenizer, ...). */
void add_text_options(CommandLine& cl);

/** @brief The columns, delimiter and quoting the options give; ConfigError naming a bad one. */
data::TextColumns text_columns(const CommandLine& cl);

/** @brief Collective over `control` and `io_comm` (the same ranks). */
PrepResult prepare_text(comm::ControlPlane& control, MPI_Comm io_comm, const CommandLine& cl,
                        PrepOptions& options);

}  // namespace slimtrain::cli
