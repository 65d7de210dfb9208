#include "models/registry.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "models/error.hpp"

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

namespace {

struct ParamStore {
  std::map<std::string, double> values, overridden;
  ParamStore() {
    for (const auto& m : all_models())
      for (const auto& p : m.params) values[m.name + "." + p.name] = p.value;
  }
};

ParamStore& store() {
  static ParamStore s;
  return s;
}

}  // namespace

double param(const std::string& qualified_name) {
  auto& s = store();
  auto it = s.values.find(qualified_name);
  if (it == s.values.end()) throw std::out_of_range("unknown model parameter " + qualified_name);
  return it->second;
}

void load_params_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) input_error(path, "", "cannot open the parameter file");
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    input_error(path, "byte " + std::to_string(e.byte), std::string("malformed JSON: ") + e.what());
  }
  if (!doc.is_object() || !doc.contains("params") || !doc["params"].is_object())
    input_error(path, "top level", "expected an object with a \"params\" object of \"<model>.<parameter>\": value");
  auto& s = store();
  for (auto it = doc["params"].begin(); it != doc["params"].end(); ++it) {
    if (!s.values.count(it.key()))
      input_error(path, "params." + it.key(), "unknown model parameter (see `composim list-models`)");
    if (!it->is_number() || !(it->get<double>() >= 0) || !std::isfinite(it->get<double>()))
      input_error(path, "params." + it.key(), "expected a number >= 0");
    s.values[it.key()] = it->get<double>();
    s.overridden[it.key()] = it->get<double>();
  }
}

std::vector<std::pair<std::string, double>> overridden_params() {
  const auto& o = store().overridden;
  return {o.begin(), o.end()};
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
