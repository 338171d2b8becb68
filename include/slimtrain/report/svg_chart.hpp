#pragma once
/**
 * @brief Inline SVG charts for the report: drawn from numbers by this file, nothing fetched.
 * Every plotted series is a <polyline class="series" data-points="N">, so a test can count what
 * was drawn without a browser.
 */
#include <string>
#include <utility>
#include <vector>

namespace slimtrain::report {

struct Series {
  std::string name;
  std::string color;  ///< CSS colour
  std::vector<std::pair<double, double>> points;
  bool dashed = false;
};

/** @brief A vertical line at x with a short label and a tooltip (an event on the timeline). */
struct Marker {
  double x = 0;
  std::string label;    ///< drawn beside the line ("skip", "ckpt", "resume")
  std::string tooltip;  ///< the reason, shown on hover
  std::string color;
};

struct ChartFrame {
  std::string title;
  std::string x_label = "step";
  std::string y_label;
  int width = 880, height = 260;
  bool y_from_zero = false;
};

/** @brief Lines (and their legend) with markers; "no data" text when no series has points. */
std::string line_chart(const ChartFrame& frame, const std::vector<Series>& series,
                       const std::vector<Marker>& markers = {});

/** @brief Layers stacked from the bottom (step-time phases): each a filled band over the last. */
std::string stacked_chart(const ChartFrame& frame, const std::vector<Series>& layers);

/** @brief C x C counts as coloured cells, row = true class, column = predicted, with counts. */
std::string heatmap(const std::string& title, const std::vector<std::vector<long long>>& counts,
                    const std::vector<std::string>& names);

/** @brief &, <, >, " escaped for HTML text and attributes. */
std::string escape(const std::string& text);

/** @brief A colour per index, distinct for the first ten. */
std::string palette(std::size_t index);

}  // namespace slimtrain::report
