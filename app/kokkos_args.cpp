#include "app/kokkos_args.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>

namespace tilekit::app {

namespace {

// Text as typed, quoted, control characters escaped and long text cut (as app/parse.cpp does).
std::string quoted(const std::string& s) {
  std::string q;
  for (unsigned char c : s.substr(0, 64)) q += (c < 0x20 || c == 0x7f) ? fmt::format("\\x{:02x}", c) : std::string(1, char(c));
  return "'" + q + (s.size() > 64 ? "...'" : "'");
}

// Digits only, at most 9 of them (Kokkos converts with stoi/strtol into an int).
bool whole(const std::string& s, long& v) {
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  v = std::stol(s);
  return true;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The spellings of a boolean Kokkos 4 takes after '=' and in its variables.
bool boolean(const std::string& s, bool& v) {
  const std::string l = lower(s);
  if (l == "1" || l == "true" || l == "on" || l == "yes") return v = true, true;
  if (l == "0" || l == "false" || l == "off" || l == "no") return v = false, true;
  return false;
}

// The option of a thread count in this Kokkos.
const char* thread_option(const KokkosLimits& l) {
  return l.kokkos_major >= 4 ? "--kokkos-num-threads" : "--kokkos-threads";
}

enum class Kind { integer, device_count, text, library, flag, choice };

struct Option {
  const char* name;
  Kind kind;
  long min, max;           // integer: the allowed range
  const char* env;         // the variable Kokkos reads for the same setting ("" for none)
  int since;               // first Kokkos version that reads it, as major * 100 + minor (304: 3.4)
  int until;               // last Kokkos version that reads it, likewise
  const char* instead;     // for a spelling this Kokkos does not take: the one to use
  const char* choices;     // choice: allowed values, comma separated
};

std::vector<Option> options(const KokkosLimits& l) {
  const long devices = l.gpu ? 1024 : 1;
  return {
      // Kokkos 4.3 removed --kokkos-threads, --kokkos-num-devices and KOKKOS_NUM_DEVICES /
      // KOKKOS_RAND_DEVICES / KOKKOS_SKIP_DEVICE (core/src/impl/Kokkos_Core.cpp of 4.2 and 4.3).
      {"--kokkos-threads", Kind::integer, 1, l.max_threads, "KOKKOS_NUM_THREADS", 300, 402, "--kokkos-num-threads", ""},
      {"--kokkos-num-threads", Kind::integer, 1, l.max_threads, "KOKKOS_NUM_THREADS", 400, 9999, "--kokkos-threads", ""},
      {"--kokkos-numa", Kind::integer, 1, 1024, "KOKKOS_NUMA", 300, 399, "", ""},
      {"--kokkos-device-id", Kind::integer, 0, devices - 1, "KOKKOS_DEVICE_ID", 300, 9999, "", ""},
      {"--kokkos-device", Kind::integer, 0, devices - 1, "", 0, -1, "--kokkos-device-id", ""},
      {"--kokkos-num-devices", Kind::device_count, 1, devices, "KOKKOS_NUM_DEVICES", 300, 402, "", ""},
      {"--kokkos-ndevices", Kind::device_count, 1, devices, "", 0, -1, "--kokkos-num-devices", ""},
      {"--kokkos-map-device-id-by", Kind::choice, 0, 0, "KOKKOS_MAP_DEVICE_ID_BY", 400, 9999, "", "random, mpi_rank"},
      {"--kokkos-tools-library", Kind::library, 0, 0, l.kokkos_major >= 4 ? "KOKKOS_TOOLS_LIBS" : "KOKKOS_PROFILE_LIBRARY",
       300, 9999, "", ""},
      {"--kokkos-tools-libs", Kind::library, 0, 0, "KOKKOS_TOOLS_LIBS", 400, 9999, "--kokkos-tools-library", ""},
      {"--kokkos-tools-args", Kind::text, 0, 0, "", 300, 9999, "", ""},
      {"--kokkos-tools-help", Kind::flag, 0, 0, "", 300, 9999, "", ""},
      {"--kokkos-help", Kind::flag, 0, 0, "", 300, 9999, "", ""},
      {"--kokkos-disable-warnings", Kind::flag, 0, 0, "KOKKOS_DISABLE_WARNINGS", 300, 9999, "", ""},
      {"--kokkos-tune-internals", Kind::flag, 0, 0, "KOKKOS_TUNE_INTERNALS", 300, 9999, "", ""},
      {"--kokkos-print-configuration", Kind::flag, 0, 0, "KOKKOS_PRINT_CONFIGURATION", 400, 9999, "", ""},
  };
}

std::string allowed_names(const std::vector<Option>& all, int version) {
  std::string s;
  for (const Option& o : all)
    if (version >= o.since && version <= o.until) s += (s.empty() ? "" : ", ") + std::string(o.name);
  return s;
}

std::string range_text(const Option& o, const char* what) {
  return o.min == o.max ? fmt::format("only {}", o.min) : fmt::format("{} from {} to {}", what, o.min, o.max);
}

// A value of `o` as text (from the command line or its variable): "" when Kokkos can take it.
std::string check_value(const Option& o, const std::string& shown, const std::string& v, const KokkosLimits& l,
                        long& number) {
  switch (o.kind) {
    case Kind::integer:
      if (!whole(v, number) || number < o.min || number > o.max)
        return fmt::format("{} is not allowed (allowed: {}{})", shown, range_text(o, "a whole number"),
                           std::string(o.name).find("threads") != std::string::npos
                               ? "; Kokkos' host thread pool holds at most " + std::to_string(l.max_threads)
                               : std::string(l.gpu ? "" : "; this build runs on the host, which is device 0"));
      return "";
    case Kind::device_count: {  // N, or N,S: N devices, skipping device S
      const std::size_t comma = v.find(',');
      long skip = 0;
      if (!whole(v.substr(0, comma), number) || number < o.min || number > o.max ||
          (comma != std::string::npos && (!whole(v.substr(comma + 1), skip) || skip >= number)))
        return fmt::format("{} is not allowed (allowed: N or N,S with N a device count from {} to {} and S a "
                           "device to skip below N)",
                           shown, o.min, o.max);
      return "";
    }
    case Kind::choice: {
      const std::string c = o.choices;
      std::size_t at = 0;
      while (at <= c.size()) {
        const std::size_t end = std::min(c.find(", ", at), c.size());
        if (c.compare(at, end - at, v) == 0 && !v.empty()) return "";
        at = end + 2;
      }
      return fmt::format("{} is not allowed (allowed: {})", shown, c);
    }
    case Kind::library:
      if (v.empty()) return fmt::format("{} names no library (allowed: the path of a Kokkos tools library)", shown);
      if (l.load_library) {
        // Kokkos 4 takes a ';'-separated list; each must load (Kokkos 3.4 would print dlopen's
        // text and run on without the tool).
        std::size_t at = 0;
        while (at <= v.size()) {
          const std::size_t end = l.kokkos_major >= 4 ? std::min(v.find(';', at), v.size()) : v.size();
          const std::string one = v.substr(at, end - at);
          if (const std::string why = l.load_library(one); !why.empty())
            return fmt::format("{}: the tools library {} cannot be loaded ({})", shown, quoted(one), why);
          at = end + 1;
        }
      }
      return "";
    case Kind::flag: {
      bool b = false;
      if (!boolean(v, b)) return fmt::format("{} is not allowed (allowed: true or false, also 1/0, on/off, yes/no)", shown);
      number = b ? 1 : 0;
      return "";
    }
    case Kind::text:
      return "";
  }
  return "";
}

}  // namespace

std::string check_kokkos_options(const std::vector<std::string>& args,
                                 const std::function<const char*(const char*)>& getenv, const KokkosLimits& l) {
  const std::vector<Option> all = options(l);
  const int major = l.kokkos_major, version = l.kokkos_major * 100 + l.kokkos_minor;
  std::map<std::string, std::string> given;  // variable name -> value from the command line
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.compare(0, 9, "--kokkos-") != 0) continue;
    const std::size_t eq = a.find('=');
    const std::string name = a.substr(0, eq);
    const auto it = std::find_if(all.begin(), all.end(), [&](const Option& o) { return name == o.name; });
    if (it == all.end())
      return fmt::format("unknown Kokkos option {} (allowed: {}; each takes its value after '=')", quoted(a),
                         allowed_names(all, version));
    const Option& o = *it;
    if (version < o.since || version > o.until)
      return fmt::format("{} is not taken by the Kokkos {}.{} this tilekit is built with{}", quoted(name), major,
                         l.kokkos_minor,
                         *o.instead ? fmt::format(" (use {})", o.instead) : std::string());
    if (o.kind == Kind::flag) {
      if (eq == std::string::npos) {
        if (*o.env) given[o.env] = "1";
        continue;
      }
      if (major < 4) return fmt::format("{} takes no value in this Kokkos (write {} alone)", quoted(a), o.name);
    } else if (eq == std::string::npos) {
      const bool next_value = i + 1 < args.size() && !args[i + 1].empty() && args[i + 1][0] != '-';
      const char* what = o.kind == Kind::integer ? "N" : o.kind == Kind::library ? "PATH" : "VALUE";
      return next_value ? fmt::format("{} {}: Kokkos options take their value after '=' (write {})", o.name,
                                      quoted(args[i + 1]), quoted(std::string(o.name) + "=" + args[i + 1]))
                        : fmt::format("{} needs a value (write {}={})", o.name, o.name, what);
    }
    long number = 0;
    const std::string value = a.substr(eq + 1);
    if (std::string why = check_value(o, quoted(a), value, l, number); !why.empty()) return why;
    if (*o.env) {
      // Kokkos refuses an option and its variable set to different values.
      const auto prev = given.find(o.env);
      if (prev != given.end() && prev->second != value && o.kind != Kind::flag)
        return fmt::format("{} is given twice with different values ({} and {})", o.name, quoted(prev->second),
                           quoted(value));
      given[o.env] = o.kind == Kind::flag ? std::to_string(number) : value;
    }
  }

  // The variables Kokkos reads, with the same rules; a variable that disagrees with its option on
  // the command line is refused, as Kokkos would (with its own text).
  struct Variable {
    const char* name;
    const char* option;  // the option of the same setting
  };
  static const Variable kVariables[] = {
      {"KOKKOS_NUM_THREADS", "--kokkos-threads"},     {"KOKKOS_NUMA", "--kokkos-numa"},
      {"KOKKOS_DEVICE_ID", "--kokkos-device-id"},     {"KOKKOS_NUM_DEVICES", "--kokkos-num-devices"},
      {"KOKKOS_RAND_DEVICES", "--kokkos-num-devices"}, {"KOKKOS_SKIP_DEVICE", "--kokkos-device-id"},
      {"KOKKOS_MAP_DEVICE_ID_BY", "--kokkos-map-device-id-by"},
      {"KOKKOS_PROFILE_LIBRARY", "--kokkos-tools-library"}, {"KOKKOS_TOOLS_LIBS", "--kokkos-tools-libs"},
      {"KOKKOS_DISABLE_WARNINGS", "--kokkos-disable-warnings"}, {"KOKKOS_TUNE_INTERNALS", "--kokkos-tune-internals"},
      {"KOKKOS_PRINT_CONFIGURATION", "--kokkos-print-configuration"}};
  for (const Variable& var : kVariables) {
    const char* raw = getenv ? getenv(var.name) : nullptr;
    if (!raw) continue;
    const std::string v = raw;
    // KOKKOS_NUM_THREADS sets --kokkos-num-threads in Kokkos 4 (--kokkos-threads in 3).
    const std::string option =
        std::string(var.name) == "KOKKOS_NUM_THREADS" && major >= 4 ? "--kokkos-num-threads" : var.option;
    auto it = std::find_if(all.begin(), all.end(), [&](const Option& o) { return option == o.name; });
    if (it == all.end() || version < it->since || version > it->until) continue;  // this Kokkos does not read it
    Option o = *it;
    const std::string shown = fmt::format("{}={}", var.name, quoted(v));
    long number = 0;
    if (std::string(var.name) == "KOKKOS_RAND_DEVICES") o.kind = Kind::integer;
    if (std::string(var.name) == "KOKKOS_SKIP_DEVICE") o.min = 0, o.max = 1023;
    if (std::string(var.name) == "KOKKOS_NUM_DEVICES") o.kind = Kind::integer;
    if (std::string(var.name) == "KOKKOS_PROFILE_LIBRARY" || std::string(var.name) == "KOKKOS_TOOLS_LIBS") {
      o.kind = Kind::library;
    }
    if (std::string why = check_value(o, shown, v, l, number); !why.empty())
      return fmt::format("environment variable {}", why);
    const auto prev = given.find(var.name);
    if (prev != given.end()) {
      bool a = false, b = false;
      const bool same = o.kind == Kind::flag ? (boolean(prev->second, a) && boolean(v, b) && a == b)
                                             : prev->second == v;
      if (!same)
        return fmt::format("{} on the command line and the environment variable {} disagree; give one of them",
                           o.name, shown);
    }
  }
  // Without a thread count of Kokkos' own, its OpenMP backend takes OpenMP's (OMP_NUM_THREADS, the
  // first of a comma list): the same pool limit applies.
  const char* omp = getenv && l.openmp && !given.count("KOKKOS_NUM_THREADS") && !getenv("KOKKOS_NUM_THREADS")
                        ? getenv("OMP_NUM_THREADS")
                        : nullptr;
  if (omp && *omp) {
    const std::string v = omp, first = v.substr(0, v.find(','));
    long n = 0;
    if (!whole(first, n) || n < 1 || n > l.max_threads)
      return fmt::format("environment variable OMP_NUM_THREADS={} is not allowed here (allowed: a whole number "
                         "from 1 to {}, Kokkos' OpenMP thread pool holds at most {}; or give {}=N)",
                         quoted(v), l.max_threads, l.max_threads, thread_option(l));
  }
  if (version <= 402 && getenv && getenv("KOKKOS_NUM_DEVICES") && getenv("KOKKOS_RAND_DEVICES"))
    return "environment variables KOKKOS_NUM_DEVICES and KOKKOS_RAND_DEVICES are both set; set one of them";
  return "";
}

int default_thread_cap(const std::vector<std::string>& args, const std::function<const char*(const char*)>& getenv,
                       int available, const KokkosLimits& l) {
  if (!l.openmp || available <= l.max_threads) return 0;
  for (const std::string& a : args)
    if (a.rfind("--kokkos-threads", 0) == 0 || a.rfind("--kokkos-num-threads", 0) == 0) return 0;
  for (const char* var : {"KOKKOS_NUM_THREADS", "OMP_NUM_THREADS"})
    if (const char* v = getenv ? getenv(var) : nullptr; v && *v) return 0;
  return l.max_threads;
}

std::string thread_count_option(int threads, const KokkosLimits& l) {
  return fmt::format("{}={}", thread_option(l), threads);
}

}  // namespace tilekit::app
