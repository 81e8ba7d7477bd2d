// The parsers a user's text reaches on the command line: sizes, size lists, shapes and numbers.
// Plain text in, values or a message out; no Kokkos, so that fuzz/ can run them on their own.
// Each returns "" when the text is valid, else a message that quotes the text and says what is
// allowed (the app prints it and exits with status 2).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tilekit::app {

/// Largest size (and element count) the app accepts: 2^40.
constexpr int64_t kMaxSize = int64_t(1) << 40;

/// A size: a whole number from 0 to 2^40, digits only.
std::string check_size(const std::string& s, int64_t& value);
/// A whole number in [min, max], digits only (a leading '-' when min < 0); `what` names it.
std::string check_whole(const std::string& s, int64_t min, int64_t max, const std::string& what, int64_t& value);
/// An unsigned 64-bit whole number (seeds): digits only, at most 2^64 - 1.
std::string check_seed(const std::string& s, uint64_t& value);
/// A finite decimal number (no nan, inf, empty text or trailing characters), within [min, max].
std::string check_finite(const std::string& s, double min, double max, double& value);

/// Any text but the empty one; the message says what is `allowed`.
std::string check_nonempty(const std::string& s, const std::string& allowed);
/// The value of `flag` given as --flag=VALUE: true/false, 1/0, yes/no, on/off (CLI11 itself
/// passes "true" for the flag alone).
std::string check_flag_value(const std::string& s, const std::string& flag);
/// A word value of an option (a type, an op, a config name): not empty and not an option's name
/// (`--dtype --reps 2` would take "--reps" as the type); the message says what is `allowed`.
std::string check_word(const std::string& s, const std::string& allowed);
/// A path: not empty and not starting with '-' (an option's name taken as the value).
std::string check_path(const std::string& s);

/// --sizes of the tuner: "N", "MxNxK" (rank 3) or "MxN" (rank 2), "first:last:step" (squares), or
/// a comma list of them. Every dimension is at least 1 (a 0 shape has nothing to tune); at most
/// 10000 shapes; each matrix at most 2^34 elements. Fills `out` ({M, N, K}; K = 1 for rank 2).
std::string parse_sizes(const std::string& s, int rank, std::vector<std::array<int64_t, 3>>& out);

/// A shape "RxC" (--last-shape), each a size as check_size takes it, R x C at most 2^40.
std::string parse_shape(const std::string& s, int64_t& rows, int64_t& cols);

}  // namespace tilekit::app
