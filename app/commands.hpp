// Subcommands of the tilekit app. Each add_* registers its options on the CLI and returns a
// function to run after parsing (exit status: 0 ok, 1 failed check, 2 bad input).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace tilekit::app {

using Runner = std::function<int()>;

Runner add_matmul(CLI::App& app);
Runner add_info(CLI::App& app);
Runner add_tune(CLI::App& app);

}  // namespace tilekit::app
