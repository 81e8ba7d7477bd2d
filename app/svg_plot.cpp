#include "app/svg_plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>

namespace tilekit::app {

bool write_svg_plot(const std::string& path, const std::string& title, const std::string& xlabel,
                    const std::string& ylabel, const std::vector<PlotSeries>& series) {
  const double W = 760, H = 440, left = 70, right = 190, top = 40, bottom = 60;
  double xmin = 1e300, xmax = -1e300, ymax = 0;
  for (const auto& s : series)
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (s.y[i] <= 0) continue;
      xmin = std::min(xmin, s.x[i]);
      xmax = std::max(xmax, s.x[i]);
      ymax = std::max(ymax, s.y[i]);
    }
  if (xmin > xmax) xmin = 0, xmax = 1;
  if (xmax == xmin) xmax = xmin + 1;
  if (ymax <= 0) ymax = 1;
  // round the y axis up to 1, 2 or 5 x 10^k
  const double mag = std::pow(10.0, std::floor(std::log10(ymax)));
  const double ytop = (ymax <= mag ? 1 : ymax <= 2 * mag ? 2 : ymax <= 5 * mag ? 5 : 10) * mag;
  auto px = [&](double x) { return left + (x - xmin) / (xmax - xmin) * (W - left - right); };
  auto py = [&](double y) { return H - bottom - y / ytop * (H - top - bottom); };
  static const char* colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"};

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" "
      "font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{}\" y=\"22\" font-size=\"15\">{}</text>\n",
      W, H, left, title);
  for (int i = 0; i <= 5; ++i) {  // horizontal grid lines and y ticks
    const double y = ytop * i / 5;
    svg += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>"
                       "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:g}</text>\n",
                       left, py(y), W - right, py(y), left - 6, py(y) + 4, y);
  }
  for (int i = 0; i <= 5; ++i) {  // x ticks
    const double x = xmin + (xmax - xmin) * i / 5;
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:.0f}</text>\n", px(x), H - bottom + 18, x);
  }
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"black\"/>"
                     "<line x1=\"{0}\" y1=\"{3}\" x2=\"{0}\" y2=\"{1}\" stroke=\"black\"/>\n",
                     left, H - bottom, W - right, top);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", (left + W - right) / 2, H - 15, xlabel);
  svg += fmt::format("<text x=\"18\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {})\">{}</text>\n",
                     (top + H - bottom) / 2, (top + H - bottom) / 2, ylabel);
  for (std::size_t k = 0; k < series.size(); ++k) {
    const auto& s = series[k];
    const char* color = colors[k % 6];
    std::string pts;
    for (std::size_t i = 0; i < s.x.size(); ++i)
      if (s.y[i] > 0) pts += fmt::format("{:.1f},{:.1f} ", px(s.x[i]), py(s.y[i]));
    if (!pts.empty()) {
      svg += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n", color, pts);
      for (std::size_t i = 0; i < s.x.size(); ++i)
        if (s.y[i] > 0)
          svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", px(s.x[i]), py(s.y[i]), color);
    }
    const double ly = top + 10 + 20 * double(k);
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"3\"/>"
                       "<text x=\"{4}\" y=\"{5}\">{6}</text>\n",
                       W - right + 15, ly, W - right + 40, color, W - right + 46, ly + 4, s.name);
  }
  svg += "</svg>\n";
  std::ofstream f(path);
  f << svg;
  return static_cast<bool>(f);
}

}  // namespace tilekit::app
