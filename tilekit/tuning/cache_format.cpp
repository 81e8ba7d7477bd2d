// The tuning cache's file format: JSON text to entries and back. No Kokkos and no file system, so
// that fuzz/cache_reader.cpp can run it on its own; tilekit/tuning/cache.cpp does the files.
#include "tilekit/tuning/cache.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace tilekit {
namespace tuning {

using nlohmann::json;

std::string DeviceIdentity::file_name() const {
  std::string slug;
  for (char ch : device) {
    if (std::isalnum(static_cast<unsigned char>(ch)))
      slug += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    else if (!slug.empty() && slug.back() != '-')
      slug += '-';
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return fmt::format("{}__{}__{}__{}.json", backend, slug.empty() ? "unknown" : slug, architecture, compute_units);
}

std::string TuneKey::family() const { return fmt::format("{} {} {} {}", kernel, types, layout, epilogue); }

std::string TuneKey::str() const {
  std::string s = family();
  for (std::size_t i = 0; i < shape.size(); ++i) {
    s += i ? 'x' : ' ';
    s += std::to_string(shape[i]);
  }
  return s;
}

int compare_versions(const std::string& a, const std::string& b) {
  auto parts = [](const std::string& v) {
    std::vector<long> out;
    std::size_t i = 0;
    while (i < v.size() && out.size() < 8) {
      long n = 0;
      std::size_t digits = 0;
      while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])) && digits < 9) n = n * 10 + (v[i++] - '0'), ++digits;
      out.push_back(n);
      if (i < v.size() && v[i] == '.') ++i;
      else break;
    }
    while (out.size() < 3) out.push_back(0);
    return out;
  };
  const auto pa = parts(a), pb = parts(b);
  for (std::size_t i = 0; i < std::min(pa.size(), pb.size()); ++i)
    if (pa[i] != pb[i]) return pa[i] < pb[i] ? -1 : 1;
  return 0;
}

namespace {

// The fields of `j` whose names are not in `known`, as a JSON object's text ("" when none).
std::string unknown_fields(const json& j, std::initializer_list<const char*> known) {
  json extra = json::object();
  for (auto it = j.begin(); it != j.end(); ++it)
    if (std::none_of(known.begin(), known.end(), [&](const char* k) { return it.key() == k; }))
      extra[it.key()] = it.value();
  return extra.empty() ? "" : extra.dump();
}

// Adds the fields of `extra` (unknown_fields' text) that `j` does not have.
void add_extra(json& j, const std::string& extra) {
  if (extra.empty()) return;
  const json x = json::parse(extra, nullptr, false);
  if (!x.is_object()) return;
  for (auto it = x.begin(); it != x.end(); ++it)
    if (!j.contains(it.key())) j[it.key()] = it.value();
}

json identity_json(const DeviceIdentity& d) {
  return {{"backend", d.backend}, {"device", d.device}, {"architecture", d.architecture},
          {"compute_units", d.compute_units}};
}

json entry_json(const TuneEntry& e) {
  json j = {{"kernel", e.key.kernel},   {"types", e.key.types},   {"layout", e.key.layout},
            {"epilogue", e.key.epilogue}, {"shape", e.key.shape},  {"config", e.config},
            {"median_s", e.median_s},   {"p20_s", e.p20_s},       {"p80_s", e.p80_s},
            {"rate", e.rate},           {"date", e.date},         {"tilekit_version", e.tilekit_version}};
  add_extra(j, e.extra);
  return j;
}

// A field of an object, of the expected JSON type; "" when fine, else what is wrong.
std::string need(const json& j, const char* name, json::value_t type) {
  const auto it = j.find(name);
  if (it == j.end()) return fmt::format("field '{}' missing", name);
  const bool ok = type == json::value_t::number_float ? it->is_number()
                  : type == json::value_t::number_integer ? it->is_number_integer()
                                                           : it->type() == type;
  return ok ? "" : fmt::format("field '{}' has the wrong type", name);
}

// One entry; "" when usable, else why not.
std::string entry_from(const json& j, const std::string& file_version, TuneEntry& e) {
  if (!j.is_object()) return "not an object";
  using vt = json::value_t;
  for (const auto& [name, type] : {std::make_pair("kernel", vt::string), std::make_pair("types", vt::string),
                                   std::make_pair("layout", vt::string), std::make_pair("epilogue", vt::string),
                                   std::make_pair("shape", vt::array), std::make_pair("config", vt::string),
                                   std::make_pair("median_s", vt::number_float)})
    if (const std::string w = need(j, name, type); !w.empty()) return w;
  e.key.kernel = j["kernel"].get<std::string>();
  e.key.types = j["types"].get<std::string>();
  e.key.layout = j["layout"].get<std::string>();
  e.key.epilogue = j["epilogue"].get<std::string>();
  e.key.shape.clear();
  for (const json& d : j["shape"]) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0) return "field 'shape' is not a list of sizes";
    e.key.shape.push_back(d.get<int64_t>());
  }
  if (e.key.shape.empty() || e.key.shape.size() > 3) return "field 'shape' must have 1 to 3 sizes";
  e.config = j["config"].get<std::string>();
  e.median_s = j["median_s"].get<double>();
  if (!std::isfinite(e.median_s) || e.median_s < 0) return "field 'median_s' is not a time";
  auto number = [&](const char* name, double fallback) {
    const auto it = j.find(name);
    return it != j.end() && it->is_number() ? it->get<double>() : fallback;
  };
  auto text = [&](const char* name, const std::string& fallback) {
    const auto it = j.find(name);
    return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
  };
  e.p20_s = number("p20_s", e.median_s);
  e.p80_s = number("p80_s", e.median_s);
  e.rate = number("rate", 0.0);
  e.date = text("date", "");
  e.tilekit_version = text("tilekit_version", file_version);
  e.extra = unknown_fields(j, {"kernel", "types", "layout", "epilogue", "shape", "config", "median_s", "p20_s",
                               "p80_s", "rate", "date", "tilekit_version"});
  return "";
}

}  // namespace

CacheParse parse_cache_text(const std::string& text, const std::string& reader_version, CacheFile& out,
                            std::string& why) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    why = "not valid JSON";
    return CacheParse::corrupt;
  }
  using vt = json::value_t;
  if (!j.is_object()) {
    why = "not a JSON object";
    return CacheParse::corrupt;
  }
  for (const auto& [name, type] : {std::make_pair("format", vt::number_integer),
                                   std::make_pair("tilekit_version", vt::string), std::make_pair("device", vt::object)})
    if (const std::string w = need(j, name, type); !w.empty()) {
      why = w;
      return CacheParse::corrupt;
    }
  CacheFile f;
  const int64_t format = j["format"].get<int64_t>();
  f.format = format > 1000000 ? 1000000 : format < 0 ? 0 : static_cast<int>(format);
  f.tilekit_version = j["tilekit_version"].get<std::string>();
  if (f.format > TuningCache::kFormatVersion) {
    why = fmt::format("format {}, written by tilekit {} (this tilekit {} reads formats up to {})", f.format,
                      f.tilekit_version, reader_version, TuningCache::kFormatVersion);
    return CacheParse::newer_format;
  }
  if (f.format < 1) {
    why = fmt::format("format {} is not a tilekit cache format", f.format);
    return CacheParse::corrupt;
  }
  const json& dj = j["device"];
  for (const auto& [name, type] : {std::make_pair("backend", vt::string), std::make_pair("device", vt::string),
                                   std::make_pair("architecture", vt::string),
                                   std::make_pair("compute_units", vt::number_integer)})
    if (const std::string w = need(dj, name, type); !w.empty()) {
      why = "device: " + w;
      return CacheParse::corrupt;
    }
  f.device.backend = dj["backend"].get<std::string>();
  f.device.device = dj["device"].get<std::string>();
  f.device.architecture = dj["architecture"].get<std::string>();
  const int64_t units = dj["compute_units"].get<int64_t>();
  if (units < 0 || units > 1000000000) {
    why = "device: field 'compute_units' is out of range";
    return CacheParse::corrupt;
  }
  f.device.compute_units = static_cast<int>(units);
  f.device.tilekit_version = f.tilekit_version;
  if (const std::string w = need(j, "entries", vt::array); !w.empty()) {
    why = w;
    return CacheParse::corrupt;
  }
  f.extra = unknown_fields(j, {"format", "tilekit_version", "device", "entries"});
  int newer = 0, unreadable = 0;
  std::string newest, first_problem;
  const auto& entries = j["entries"];
  for (std::size_t i = 0; i < entries.size(); ++i) {
    TuneEntry e;
    const std::string problem = entry_from(entries[i], f.tilekit_version, e);
    if (!problem.empty()) {
      ++unreadable;
      if (first_problem.empty()) first_problem = fmt::format("entry {}: {}", i, problem);
      f.kept.push_back(entries[i].dump());
    } else if (compare_versions(e.tilekit_version, reader_version) > 0) {
      ++newer;
      if (newest.empty() || compare_versions(e.tilekit_version, newest) > 0) newest = e.tilekit_version;
      f.kept.push_back(entries[i].dump());
    } else {
      f.entries.push_back(std::move(e));
    }
  }
  if (newer)
    f.notes.push_back(fmt::format("{} entr{} measured by a newer tilekit (up to {}; this is {}) kept in the file, "
                                  "not used",
                                  newer, newer == 1 ? "y" : "ies", newest, reader_version));
  if (unreadable)
    f.notes.push_back(fmt::format("{} entr{} this tilekit cannot read kept in the file, not used ({})", unreadable,
                                  unreadable == 1 ? "y" : "ies", first_problem));
  out = std::move(f);
  return CacheParse::ok;
}

std::string cache_file_text(const CacheFile& f) {
  json j = {{"format", TuningCache::kFormatVersion}, {"tilekit_version", f.tilekit_version},
            {"device", identity_json(f.device)}, {"entries", json::array()}};
  for (const auto& e : f.entries) j["entries"].push_back(entry_json(e));
  for (const auto& k : f.kept) {
    json kj = json::parse(k, nullptr, false);
    if (!kj.is_discarded()) j["entries"].push_back(std::move(kj));
  }
  add_extra(j, f.extra);
  return j.dump(1) + "\n";
}

}  // namespace tuning
}  // namespace tilekit
