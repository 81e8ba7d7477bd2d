// The host FMA probe's result, kept per machine and path beside the tuning cache.
#include "tilekit/tuning/peak_cache.hpp"

#include "tilekit/kernels/core/cpu.hpp"
#include "tilekit/tuning/cache.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include <unistd.h>

namespace tilekit {
namespace tuning {

namespace fs = std::filesystem;

namespace {

double probed_f32(const std::string& dir) {
  static std::mutex mutex;
  static double known = 0.0;
  std::lock_guard<std::mutex> lock(mutex);
  if (known > 0) return known;
  const DeviceIdentity id = DeviceIdentity::current();
  std::string stem = id.file_name();
  stem = stem.substr(0, stem.size() - 5);  // without ".json"
  // (results of an earlier version of the probe are not read: a new name)
  const fs::path file = fs::path(dir) / ("peak__" + stem + "__" + host_isa_name(host_isa()) + "__probe" +
                                         std::to_string(kHostFmaProbeVersion) + ".json");
  std::error_code ec;
  if (fs::is_regular_file(file, ec)) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
    if (j.is_object() && j.contains("f32_fma_flops") && j["f32_fma_flops"].is_number() &&
        j["f32_fma_flops"].get<double>() > 0)
      return known = j["f32_fma_flops"].get<double>();
  }
  known = measure_host_fma_peak();
  if (known > 0) {  // kept for the next process; a failure to write only costs the next probe
    const nlohmann::json j = {{"f32_fma_flops", known}, {"path", host_isa_name(host_isa())}, {"device", id.device},
                              {"architecture", id.architecture}, {"threads", id.compute_units},
                              {"probe_version", kHostFmaProbeVersion}};
    fs::create_directories(dir, ec);
    const fs::path tmp = file.string() + ".tmp-" + std::to_string(::getpid());
    {
      std::ofstream out(tmp);
      out << j.dump(1) << "\n";
    }
    fs::rename(tmp, file, ec);
    if (ec) fs::remove(tmp, ec);
  }
  return known;
}

}  // namespace

PeakRate machine_peak(DType in, Math math, const std::string& dir) {
  const std::string backend = DeviceIdentity::current().backend;
  if (backend == "cuda" || backend == "hip") return device_peak(in, math);
  return device_peak(in, math, probed_f32(dir));
}

}  // namespace tuning
}  // namespace tilekit
