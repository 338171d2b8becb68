#pragma once
/**
 * @brief The few lines a person reads at the end of a run (the demo prints them): the result,
 * the time and the rate, where the run directory, checkpoint and report are, and what to try
 * next. The JSON stays in metrics.jsonl.
 */
#include <string>

#include "slimtrain/report/run_data.hpp"

namespace slimtrain::report {

/** @brief `program`: the binary as the "next:" commands call it (cli::program_command()). */
std::string summary_text(const RunData& run, const std::string& report_path,
                         const std::string& program = "slimtrain");

}  // namespace slimtrain::report
