// tilekit: run blocked matmul and elementwise ops (and, later, tuning) from the command line.
#include "app/commands.hpp"
#include "kernels/matmul.hpp"

#include <Kokkos_Core.hpp>

#include <iostream>
#include <map>

int main(int argc, char* argv[]) {
  // Kokkos takes its own --kokkos-* arguments out of argv first.
  Kokkos::ScopeGuard kokkos(argc, argv);

  CLI::App app{"tilekit: performance-portable blocked matmul and elementwise kernels (Kokkos)"};
  app.require_subcommand(1);
  std::map<CLI::App*, tilekit::app::Runner> runners;
  auto add = [&](const char* name, const char* help, auto&& adder) {
    CLI::App* sub = app.add_subcommand(name, help);
    runners[sub] = adder(*sub);
  };
  add("matmul", "C = alpha op(A) op(B) + beta C with a fused epilogue; timed, optionally validated",
      tilekit::app::add_matmul);
  add("elementwise", "out = op(inputs) over M x N tensors (add, fma, silu, ...); timed in GB/s against a copy, "
      "optionally validated",
      tilekit::app::add_elementwise);
  add("tune", "sweep tile configs, verify each, keep the best per shape in the tuning cache",
      tilekit::app::add_tune);
  add("info", "backend, device, concurrency, scratch limits, versions", tilekit::app::add_info);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help or the error
    return code == 0 ? 0 : 2;
  }
  try {
    for (auto& [sub, run] : runners)
      if (sub->parsed()) return run();
  } catch (const tilekit::InvalidArgument& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
