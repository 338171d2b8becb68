#pragma once
/**
 * @brief The `images` format of `slimtrain prep`: its options turned into image sources (rank 0
 * lists the folders or reads the list files; every rank gets the same listing over the control
 * plane), and the --skip-bad report written beside the output.
 */
#include <memory>

#include "slimtrain/cli/command_line.hpp"
#include "slimtrain/cli/prep_job.hpp"
#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/data/record_source.hpp"

namespace slimtrain::cli {

/** @brief Collective. Sets train (and test when asked for) and options' class names. */
void make_image_sources(comm::ControlPlane& control, const CommandLine& cl,
                        cli::PrepOptions& options, std::unique_ptr<data::RecordSource>& train,
                        std::unique_ptr<data::RecordSource>& test);

/** @brief OUT.h5.skipped.txt on rank 0: how many files were left out, then one per line. */
void write_skip_report(const comm::ControlPlane& control, const cli::PrepOptions& options,
                       const cli::PrepResult& result);

}  // namespace slimtrain::cli
