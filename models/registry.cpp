#include "models/registry.hpp"

#include <cstdio>
#include <sstream>

#include "models/collective.hpp"
#include "models/gpu.hpp"
#include "models/host.hpp"
#include "models/network.hpp"
#include "models/nvlink.hpp"
#include "models/pcie.hpp"

namespace composim {

const std::vector<ModelInfo>& all_models() {
  static const std::vector<ModelInfo> models = {
      gpu::gpu_model_info(),         pcie::link_model_info(),   pcie::switch_model_info(),
      pcie::cable_model_info(),      host::host_model_info(),   nvlink::nvlink_model_info(),
      network::network_model_info(), collective::collective_model_info(),
  };
  return models;
}

std::string format_models_table(bool markdown) {
  std::ostringstream out;
  char value[64];
  for (const auto& m : all_models()) {
    if (markdown) {
      out << "### `" << m.name << "`\n\n" << m.description << ". Equations: `" << m.equations << "`\n\n";
      out << "| parameter | unit | default | description | source |\n|---|---|---|---|---|\n";
    } else {
      out << m.name << ": " << m.description << "\n  equations: " << m.equations << "\n";
    }
    for (const auto& p : m.params) {
      std::snprintf(value, sizeof value, "%.6g", p.value);
      if (markdown)
        out << "| `" << p.name << "` | " << p.unit << " | " << value << " | " << p.description << " | " << p.source << " |\n";
      else
        out << "  " << p.name << " = " << value << " " << p.unit << "  (" << p.description << "; source: " << p.source << ")\n";
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace composim
