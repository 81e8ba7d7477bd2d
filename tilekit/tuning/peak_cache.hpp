// The machine's peak rate per input type (tilekit/kernels/core/peak.hpp), with the host FMA probe
// measured once per machine and path and kept in the tuning directory.
#pragma once

#include "tilekit/kernels/core/peak.hpp"

#include <string>

namespace tilekit {
namespace tuning {

/// GPUs: device_peak. Host backends: device_peak of the f32 FMA rate read from
/// "<dir>/peak__<identity>__<path>__probe<kHostFmaProbeVersion>.json", measured (measure_host_fma_peak, ~0.2 s) and written there
/// atomically when missing or unreadable. A directory that cannot be written only costs the file.
PeakRate machine_peak(DType in, Math math, const std::string& dir);

}  // namespace tuning
}  // namespace tilekit
