// Subcommands of the tilekit app. Each add_* registers its options on the CLI and returns a
// function to run after parsing (exit status: 0 ok, 1 failed check, 2 bad input).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <string>

namespace tilekit::app {

using Runner = std::function<int()>;

Runner add_matmul(CLI::App& app);
Runner add_elementwise(CLI::App& app);
Runner add_info(CLI::App& app);
Runner add_tune(CLI::App& app);

/// Checks a size argument as text, so the message quotes what was typed (CLI11 would clamp an
/// out-of-range number before any check could see it): a whole number from 0 to 2^40.
inline CLI::Validator size_validator() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        const bool digits = !s.empty() && s.size() <= 13 && s.find_first_not_of("0123456789") == std::string::npos;
        if (!digits || std::stoll(s) > (int64_t(1) << 40))
          return "'" + s + "' is not a size (allowed: a whole number from 0 to 2^40)";
        return "";
      },
      "SIZE");
}

}  // namespace tilekit::app
