// A small SVG line chart (rate against problem size), written without dependencies so every
// build, GPU machines included, can draw its tuning report.
#pragma once

#include <string>
#include <vector>

namespace tilekit::app {

struct PlotSeries {
  std::string name;
  std::vector<double> x, y;  // points with y <= 0 are skipped (not measured)
};

/// Writes an SVG line chart to `path`; returns false if the file cannot be written.
bool write_svg_plot(const std::string& path, const std::string& title, const std::string& xlabel,
                    const std::string& ylabel, const std::vector<PlotSeries>& series);

}  // namespace tilekit::app
