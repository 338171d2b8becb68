#pragma once
/**
 * @brief The report: one self-contained HTML file (inline SVG and CSS, no script, font or style
 * fetched from anywhere) over one or more runs, whose curves overlay for comparison.
 */
#include <string>
#include <vector>

#include "slimtrain/report/run_data.hpp"

namespace slimtrain::report {

std::string render_report(const std::vector<RunData>& runs);

}  // namespace slimtrain::report
