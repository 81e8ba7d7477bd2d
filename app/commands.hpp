// Subcommands of the tilekit app. Each add_* registers its options on the CLI and returns a
// function to run after parsing (exit status: 0 ok, 1 failed check, 2 bad input; main.cpp maps
// the exceptions it throws to the statuses of the README).
#pragma once

#include "app/parse.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>

namespace tilekit::app {

using Runner = std::function<int()>;

Runner add_matmul(CLI::App& app);
Runner add_elementwise(CLI::App& app);
Runner add_info(CLI::App& app);
Runner add_tune(CLI::App& app);

// Validators of option text, checked before CLI11 converts it (so the message quotes what was typed:
// CLI11 would clamp an out-of-range number, take "nan" or take an empty string as 0). One place
// for the messages: app/parse.cpp.

/// A size: a whole number from 0 to 2^40.
inline CLI::Validator size_validator() {
  return CLI::Validator([](std::string& s) { int64_t v; return check_size(s, v); }, "SIZE");
}
/// A leading dimension: a whole number from 0 (tight) to 2^40.
inline CLI::Validator ld_validator() {
  return CLI::Validator([](std::string& s) { int64_t v; return check_whole(s, 0, kMaxSize, "a leading dimension (0 = tight)", v); },
                        "LD");
}
/// A whole number in [min, max]; `what` names it in the message ("a repetition count").
inline CLI::Validator whole_validator(int64_t min, int64_t max, const std::string& what) {
  return CLI::Validator([=](std::string& s) { int64_t v; return check_whole(s, min, max, what, v); },
                        fmt::format("INT in [{} - {}]", min, max));
}
/// A seed: a whole number from 0 to 2^64-1.
inline CLI::Validator seed_validator() {
  return CLI::Validator([](std::string& s) { uint64_t v; return check_seed(s, v); }, "SEED");
}
/// A finite number (no nan, inf or empty text), optionally within [min, max].
inline CLI::Validator finite_validator(double min = -std::numeric_limits<double>::infinity(),
                                       double max = std::numeric_limits<double>::infinity()) {
  return CLI::Validator([=](std::string& s) { double v; return check_finite(s, min, max, v); }, "NUMBER");
}

/// Any text but the empty one; `allowed` says what is (an empty value would silently mean the default).
inline CLI::Validator nonempty_validator(const std::string& allowed) {
  return CLI::Validator([=](std::string& s) { return check_nonempty(s, allowed); }, "TEXT");
}
/// The value of a flag given as --flag=VALUE: true or false (also 1/0, yes/no, on/off).
inline CLI::Validator flag_validator(const std::string& flag) {
  return CLI::Validator([=](std::string& s) { return check_flag_value(s, flag); }, "");
}
/// A word value (a type, an op, a config name): not empty, not an option's name.
inline CLI::Validator word_validator(const std::string& allowed) {
  return CLI::Validator([=](std::string& s) { return check_word(s, allowed); }, "");
}
/// A path: not empty, and not an option's name (`--out --frob` would write a file named --frob).
inline CLI::Validator path_validator() {
  return CLI::Validator([](std::string& s) { return check_path(s); }, "PATH");
}

/// The thread count the app gave Kokkos because the user chose none and the machine has more
/// hardware threads than Kokkos' OpenMP pool holds (app/main.cpp); "" when it gave none.
inline std::string& thread_cap_note() {
  static std::string note;
  return note;
}

/// Under -v: the thread binding (and count) the app chose because the user set none (app/main.cpp).
inline void print_binding_note() {
  if (const char* b = std::getenv("TILEKIT_BIND_CHOSEN"))
    fmt::print(stderr, "threads   bound with {} (chosen by tilekit: neither OMP_PROC_BIND nor OMP_PLACES was set)\n", b);
  if (!thread_cap_note().empty()) fmt::print(stderr, "threads   {}\n", thread_cap_note());
}

/// Throws InvalidArgument unless `dir` exists or can be created, and a file can be written in it.
/// `option` names where the path came from ("--out").
void require_writable_directory(const std::string& option, const std::string& dir);

}  // namespace tilekit::app
