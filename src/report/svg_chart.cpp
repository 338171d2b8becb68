#include "slimtrain/report/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace slimtrain::report {
namespace {

constexpr int kLeft = 64, kRight = 150, kTop = 28, kBottom = 40;  // margins; legend on the right

std::string num(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", v);
  return text;
}

// Tick text: as short as the spacing allows ("0.25", "1.5k", "20000" -> "20k").
std::string tick_text(double v, double step) {
  char text[32];
  const double a = std::fabs(v);
  if (a >= 10000) {
    std::snprintf(text, sizeof text, "%gk", v / 1000);
  } else {
    const int decimals =
        step >= 1 ? 0 : std::min(6, static_cast<int>(std::ceil(-std::log10(step))));
    std::snprintf(text, sizeof text, "%.*f", decimals, v);
  }
  return text;
}

// 1-2-5 spacing giving about `count` ticks over [lo, hi].
double nice_step(double lo, double hi, int count) {
  const double raw = (hi - lo) / std::max(1, count);
  if (!(raw > 0)) return 1.0;
  const double base = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * base) return m * base;
  return 10 * base;
}

struct Scale {
  double x0, x1, y0, y1;
  int w, h;
  double x(double v) const { return kLeft + (v - x0) / (x1 - x0) * (w - kLeft - kRight); }
  double y(double v) const { return kTop + (y1 - v) / (y1 - y0) * (h - kTop - kBottom); }
};

Scale fit(const ChartFrame& f, const std::vector<Series>& series) {
  Scale s{1e300, -1e300, 1e300, -1e300, f.width, f.height};
  for (const Series& ser : series)
    for (const auto& [x, y] : ser.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      s.x0 = std::min(s.x0, x), s.x1 = std::max(s.x1, x);
      s.y0 = std::min(s.y0, y), s.y1 = std::max(s.y1, y);
    }
  if (f.y_from_zero) s.y0 = std::min(s.y0, 0.0);
  if (s.x1 <= s.x0) s.x0 -= 1, s.x1 += 1;
  if (s.y1 <= s.y0) s.y0 -= 0.5, s.y1 += 0.5;
  const double pad = 0.05 * (s.y1 - s.y0);
  s.y1 += pad;
  if (!f.y_from_zero || s.y0 < 0) s.y0 -= pad;
  return s;
}

void open_svg(std::ostringstream& out, const ChartFrame& f) {
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"" << f.width
      << "\" height=\"" << f.height << "\" viewBox=\"0 0 " << f.width << ' ' << f.height
      << "\" role=\"img\" aria-label=\"" << escape(f.title) << "\">\n"
      << "<text x=\"" << kLeft << "\" y=\"18\" class=\"title\">" << escape(f.title) << "</text>\n";
}

void axes(std::ostringstream& out, const ChartFrame& f, const Scale& s) {
  const double ys = nice_step(s.y0, s.y1, 5), xs = nice_step(s.x0, s.x1, 8);
  for (double v = std::ceil(s.y0 / ys) * ys; v <= s.y1 + 1e-9 * ys; v += ys) {
    out << "<line class=\"grid\" x1=\"" << kLeft << "\" x2=\"" << f.width - kRight << "\" y1=\""
        << num(s.y(v)) << "\" y2=\"" << num(s.y(v)) << "\"/><text class=\"tick\" x=\"" << kLeft - 6
        << "\" y=\"" << num(s.y(v) + 4) << "\" text-anchor=\"end\">" << tick_text(v, ys)
        << "</text>\n";
  }
  for (double v = std::ceil(s.x0 / xs) * xs; v <= s.x1 + 1e-9 * xs; v += xs) {
    out << "<text class=\"tick\" x=\"" << num(s.x(v)) << "\" y=\"" << f.height - kBottom + 16
        << "\" text-anchor=\"middle\">" << tick_text(v, xs) << "</text>\n";
  }
  out << "<rect class=\"frame\" x=\"" << kLeft << "\" y=\"" << kTop << "\" width=\""
      << f.width - kLeft - kRight << "\" height=\"" << f.height - kTop - kBottom << "\"/>\n"
      << "<text class=\"axis\" x=\"" << (kLeft + f.width - kRight) / 2 << "\" y=\"" << f.height - 6
      << "\" text-anchor=\"middle\">" << escape(f.x_label) << "</text>\n"
      << "<text class=\"axis\" transform=\"translate(14," << (kTop + f.height - kBottom) / 2
      << ") rotate(-90)\" text-anchor=\"middle\">" << escape(f.y_label) << "</text>\n";
}

void legend(std::ostringstream& out, const ChartFrame& f, const std::vector<Series>& series) {
  int row = 0;
  for (const Series& ser : series) {
    const int y = kTop + 10 + 16 * row++;
    const int x = f.width - kRight + 12;
    out << "<line x1=\"" << x << "\" x2=\"" << x + 18 << "\" y1=\"" << y - 4 << "\" y2=\"" << y - 4
        << "\" stroke=\"" << ser.color << "\" stroke-width=\"3\""
        << (ser.dashed ? " stroke-dasharray=\"5 3\"" : "") << "/><text class=\"legend\" x=\""
        << x + 24 << "\" y=\"" << y << "\">" << escape(ser.name) << "</text>\n";
  }
}

}  // namespace

std::string escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string palette(std::size_t index) {
  static const char* colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return colours[index % 10];
}

std::string line_chart(const ChartFrame& f, const std::vector<Series>& series,
                       const std::vector<Marker>& markers) {
  std::ostringstream out;
  open_svg(out, f);
  bool any = false;
  for (const Series& s : series) any = any || !s.points.empty();
  if (!any) {
    out << "<text class=\"empty\" x=\"" << f.width / 2 << "\" y=\"" << f.height / 2
        << "\" text-anchor=\"middle\">no data yet</text>\n</svg>\n";
    return out.str();
  }
  Scale s = fit(f, series);
  // A failure after the last logged step still gets its line: the axis reaches the markers.
  for (const Marker& m : markers)
    if (std::isfinite(m.x)) s.x0 = std::min(s.x0, m.x), s.x1 = std::max(s.x1, m.x);
  axes(out, f, s);
  for (const Marker& m : markers) {
    if (m.x < s.x0 || m.x > s.x1) continue;
    const std::string x = num(s.x(m.x));
    out << "<g class=\"marker\"><title>" << escape(m.tooltip) << "</title><line x1=\"" << x
        << "\" x2=\"" << x << "\" y1=\"" << kTop << "\" y2=\"" << f.height - kBottom
        << "\" stroke=\"" << m.color << "\" stroke-dasharray=\"3 3\"/><text class=\"mark\" x=\""
        << x << "\" y=\"" << kTop - 3 << "\" fill=\"" << m.color << "\" text-anchor=\"middle\">"
        << escape(m.label) << "</text></g>\n";
  }
  for (const Series& ser : series) {
    std::ostringstream pts;
    std::size_t n = 0;
    for (const auto& [x, y] : ser.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      pts << (n++ ? " " : "") << num(s.x(x)) << ',' << num(s.y(y));
    }
    out << "<polyline class=\"series\" data-series=\"" << escape(ser.name) << "\" data-points=\""
        << n << "\" fill=\"none\" stroke=\"" << ser.color << "\" stroke-width=\"2\""
        << (ser.dashed ? " stroke-dasharray=\"6 3\"" : "") << " points=\"" << pts.str() << "\"/>\n";
    // A lone point (one evaluation) is a dot, not an invisible line.
    if (n == 1)
      out << "<circle cx=\"" << num(s.x(ser.points[0].first)) << "\" cy=\""
          << num(s.y(ser.points[0].second)) << "\" r=\"3\" fill=\"" << ser.color << "\"/>\n";
  }
  legend(out, f, series);
  out << "</svg>\n";
  return out.str();
}

std::string stacked_chart(const ChartFrame& f, const std::vector<Series>& layers) {
  // Cumulative sums at each x of the first layer (all layers share the steps of one run).
  std::vector<Series> tops = layers;
  for (std::size_t l = 1; l < tops.size(); ++l)
    for (std::size_t i = 0; i < tops[l].points.size() && i < tops[l - 1].points.size(); ++i)
      tops[l].points[i].second += tops[l - 1].points[i].second;
  ChartFrame frame = f;
  frame.y_from_zero = true;
  std::ostringstream out;
  open_svg(out, frame);
  if (tops.empty() || tops[0].points.empty()) {
    out << "<text class=\"empty\" x=\"" << f.width / 2 << "\" y=\"" << f.height / 2
        << "\" text-anchor=\"middle\">no data yet</text>\n</svg>\n";
    return out.str();
  }
  const Scale s = fit(frame, tops);
  axes(out, frame, s);
  for (std::size_t l = tops.size(); l-- > 0;) {
    if (tops[l].points.empty()) continue;  // a phase an older run did not record
    std::ostringstream pts;
    for (const auto& [x, y] : tops[l].points) pts << num(s.x(x)) << ',' << num(s.y(y)) << ' ';
    pts << num(s.x(tops[l].points.back().first)) << ',' << num(s.y(0)) << ' '
        << num(s.x(tops[l].points.front().first)) << ',' << num(s.y(0));
    out << "<polygon class=\"layer\" data-series=\"" << escape(layers[l].name)
        << "\" data-points=\"" << tops[l].points.size() << "\" fill=\"" << layers[l].color
        << "\" fill-opacity=\"0.75\" stroke=\"none\" points=\"" << pts.str() << "\"/>\n";
  }
  legend(out, frame, layers);
  out << "</svg>\n";
  return out.str();
}

std::string heatmap(const std::string& title, const std::vector<std::vector<long long>>& counts,
                    const std::vector<std::string>& names) {
  const int c = static_cast<int>(counts.size());
  const int cell = c <= 12 ? 44 : std::max(6, 520 / std::max(1, c));
  const int left = 130, top = 40;
  const int size = left + cell * c + 20;
  long long most = 1;
  for (const auto& row : counts)
    for (const long long v : row) most = std::max(most, v);
  std::ostringstream out;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart heatmap\" width=\"" << size
      << "\" height=\"" << top + cell * c + 40 << "\">\n<text x=\"4\" y=\"18\" class=\"title\">"
      << escape(title) << "</text>\n";
  for (int r = 0; r < c; ++r) {
    const std::string name = r < static_cast<int>(names.size()) ? names[r] : std::to_string(r);
    out << "<text class=\"tick\" x=\"" << left - 6 << "\" y=\"" << top + r * cell + cell / 2 + 4
        << "\" text-anchor=\"end\">" << escape(name) << "</text>\n";
    for (int k = 0; k < c && k < static_cast<int>(counts[r].size()); ++k) {
      const long long v = counts[r][k];
      // Square root keeps small confusions visible beside a large diagonal.
      const double t = std::sqrt(static_cast<double>(v) / static_cast<double>(most));
      const int shade = 255 - static_cast<int>(std::lround(t * 200));
      out << "<rect class=\"cell\" x=\"" << left + k * cell << "\" y=\"" << top + r * cell
          << "\" width=\"" << cell << "\" height=\"" << cell << "\" fill=\"rgb(" << shade << ','
          << shade << ",255)\"><title>true " << escape(name) << ", predicted "
          << escape(k < static_cast<int>(names.size()) ? names[k] : std::to_string(k)) << ": " << v
          << "</title></rect>\n";
      if (cell >= 30)
        out << "<text class=\"count\" x=\"" << left + k * cell + cell / 2 << "\" y=\""
            << top + r * cell + cell / 2 + 4 << "\" text-anchor=\"middle\""
            << (t > 0.6 ? " fill=\"#fff\"" : "") << ">" << v << "</text>\n";
    }
  }
  out << "<text class=\"axis\" x=\"" << left + cell * c / 2 << "\" y=\"" << top + cell * c + 20
      << "\" text-anchor=\"middle\">predicted class (columns, in the order of the rows)</text>\n"
      << "<text class=\"axis\" x=\"" << left << "\" y=\"" << top - 8
      << "\">rows: true class</text>\n</svg>\n";
  return out.str();
}

}  // namespace slimtrain::report
