#include "app/commands.hpp"
#include "tilekit/kernels/core/cpu.hpp"
#include "tilekit/kernels/core/runtime.hpp"
#include "tilekit/tuning/elementwise_defaults.hpp"
#include "tilekit/kernels/matmul/tiles.hpp"
#include "tilekit/tuning/matmul_defaults.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace tilekit::app {

Runner add_info(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  app.add_flag("--json", *json, "print JSON instead of text");
  return [json]() {
    const RuntimeInfo r = runtime_info();
    const bool gpu = r.backend == "cuda" || r.backend == "hip";
    nlohmann::json def;  // the matmul default config, per input type
    std::string def_text;
    for (DType t : {DType::f64, DType::f32, DType::f16, DType::bf16, DType::i8}) {
      const std::string name = tuning::default_matmul_config(r.backend, t).name();
      def[dtype_name(t)] = name;
      def_text += fmt::format("{}{}: {}", def_text.empty() ? "" : ", ", dtype_name(t), name);
    }
    nlohmann::json ew_auto;  // what elementwise --variant auto runs, per type
    std::string ew_text;
    for (DType t : {DType::f64, DType::f32, DType::f16, DType::bf16, DType::i32}) {
      const std::string name = tuning::default_elementwise_config(r.backend, t).name();
      ew_auto[dtype_name(t)] = name;
      ew_text += fmt::format("{}{}: {}", ew_text.empty() ? "" : ", ", dtype_name(t), name);
    }
    if (*json) {
      nlohmann::json j = {{"backend", r.backend},
                          {"device", r.device},
                          {"architecture", r.architecture},
                          {"compute_units", r.compute_units},
                          {"concurrency", r.concurrency},
                          {"scratch_level0_bytes", r.scratch_level0},
                          {"scratch_level1_bytes", r.scratch_level1},
                          {"device_shared_memory_per_block_bytes", r.device_shared_per_block},
                          {"kokkos_version", r.kokkos_version},
                          {"kokkos_kernels_version", r.kokkos_kernels_version},
                          {"tilekit_version", r.tilekit_version},
                          {"build_type", r.build_type},
                          {"matmul_tiles", menu_names()},
                          {"host_path", gpu ? "" : host_isa_reason()},
                          {"matmul_default_config", def},
                          {"elementwise_auto_config", ew_auto}};
      std::cout << j.dump(2) << "\n";
      return 0;
    }
    fmt::print("tilekit {} ({} build)\n", r.tilekit_version, r.build_type.empty() ? "unnamed" : r.build_type);
    if (!r.optimized) fmt::print("{}\n", unoptimized_build_warning(r));
    fmt::print("backend          {}\n", r.backend);
    fmt::print("device           {} ({}, {} compute units)\n", r.device, r.architecture, r.compute_units);
    fmt::print("concurrency      {}\n", r.concurrency);
    fmt::print("team scratch     level 0: {} bytes, level 1: {} bytes per team{}\n", r.scratch_level0,
               r.scratch_level1,
               r.device_shared_per_block > 0
                   ? fmt::format(" (the device allows {} bytes of shared memory per block)", r.device_shared_per_block)
                   : std::string());
    fmt::print("Kokkos           {}\n", r.kokkos_version);
    fmt::print("Kokkos Kernels   {}\n", r.kokkos_kernels_version);
    fmt::print("matmul tiles     {}\n", menu_names());
    if (!gpu) fmt::print("host path        {}\n", host_isa_reason());
    fmt::print("matmul default   {}\n", def_text);
    fmt::print("elementwise auto {}\n", ew_text);
    return 0;
  };
}

}  // namespace tilekit::app
