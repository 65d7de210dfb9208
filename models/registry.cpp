#include "models/registry.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
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
  std::map<std::string, double> values, overridden, defaults;
  std::map<std::string, ParamSetting> settings;
  ParamStore() {
    for (const auto& m : all_models())
      for (const auto& p : m.params) {
        values[m.name + "." + p.name] = defaults[m.name + "." + p.name] = p.value;
        settings[m.name + "." + p.name] = p.setting;
      }
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

namespace {
// A parameter file's checks, and its values applied if `apply`.
void read_params_file(const std::string& path, bool apply, bool warn_far) {
  std::error_code ec;
  if (path.empty()) input_error("--params", "", "the parameter file's name is empty");
  if (std::filesystem::is_directory(path, ec)) input_error(path, "", "is a directory, not a parameter file");
  std::ifstream in(path);
  if (!in) input_error(path, "", "cannot open the parameter file");
  const nlohmann::json doc = parse_json_input(in, path);
  if (!doc.is_object() || !doc.contains("params") || !doc["params"].is_object())
    input_error(path, "top level", "expected an object with a \"params\" object of \"<model>.<parameter>\": value");
  // Besides "params", what people and `composim calibrate` write about a file; anything else
  // is a typo whose values would be ignored.
  static const std::set<std::string> kInfo = {"description", "source", "sources", "notes", "fitted_on", "generated_by", "held_out_cases",
                                              "method", "residuals", "held_out_points"};
  for (auto it = doc.begin(); it != doc.end(); ++it)
    if (it.key() != "params" && !kInfo.count(it.key()))
      input_error(path, "top level", "unknown key \"" + it.key() + "\" (parameters go in \"params\")");
  for (auto it = doc["params"].begin(); it != doc["params"].end(); ++it) {
    if (!store().values.count(it.key())) input_error(path, "params." + it.key(), "unknown model parameter (see `composim list-models`)");
    if (!it->is_number() || !std::isfinite(it->get<double>())) input_error(path, "params." + it.key(), "expected a number");
    (apply ? set_param : check_param)(it.key(), it->get<double>(), path, "params." + it.key());
    // In range, but far from what the model was built on: say so, once per value, so that an
    // absurd time is not taken for a prediction (the outputs record the value too).
    const double v = it->get<double>(), d = store().defaults.at(it.key());
    if ((apply || warn_far) && d > 0 && (v > 10 * d || v < d / 10))
      std::fprintf(stderr, "composim: warning: %s: params.%s = %.6g is %.3gx its default %.6g; predictions with it are far from what the model was checked against\n",
                   path.c_str(), it.key().c_str(), v, v / d, d);
  }
}
}  // namespace

void load_params_file(const std::string& path) { read_params_file(path, true, true); }

void check_params_file(const std::string& path, bool warn_far) { read_params_file(path, false, warn_far); }

void set_param(const std::string& name, double v, const std::string& origin, const std::string& where) {
  check_param(name, v, origin, where);
  auto& s = store();
  s.values[name] = v;
  s.overridden[name] = v;
}

const char* setting_range(ParamSetting setting) {
  switch (setting) {
    case ParamSetting::fixed: return "fixed";
    case ParamSetting::fraction: return "[0.01, 1]";
    case ParamSetting::latency: return "[0, 1] s";
    case ParamSetting::rate: return ">= 1e6 B/s";
    case ParamSetting::rate_or_off: return "0 or >= 1e6 B/s";
    case ParamSetting::latency_factor: return "[1, 100]";
    case ParamSetting::buffer_size: return "whole B in [64 KiB, 1 GiB]";
  }
  return "fixed";
}

void check_param(const std::string& name, double v, const std::string& origin, const std::string& where) {
  const auto& settings = store().settings;
  const auto it = settings.find(name);
  if (it == settings.end()) input_error(origin, where, "unknown model parameter (see `composim list-models`)");
  if (!std::isfinite(v)) input_error(origin, where, "expected a number");
  switch (it->second) {
    case ParamSetting::fixed:
      input_error(origin, where, "cannot be set: it documents a constant the models do not read at run time (`composim list-models` shows what can be set)");
    case ParamSetting::fraction:
      if (!(v >= 0.01 && v <= 1)) input_error(origin, where, "an efficiency or fraction must be in [0.01, 1]");
      break;
    case ParamSetting::latency:
      if (!(v >= 0 && v <= 1)) input_error(origin, where, "a latency must be in [0, 1] s");
      break;
    case ParamSetting::rate:
      if (!(v >= 1e6)) input_error(origin, where, "a rate must be at least 1e6 bytes/s (1 MB/s; rates are in bytes/s, not GB/s)");
      break;
    case ParamSetting::rate_or_off:
      if (!(v == 0 || v >= 1e6)) input_error(origin, where, "a rate must be 0 (no such term) or at least 1e6 bytes/s (1 MB/s; rates are in bytes/s, not GB/s)");
      break;
    case ParamSetting::latency_factor:
      if (!(v >= 1 && v <= 100)) input_error(origin, where, "a latency factor must be in [1, 100] (1: none)");
      break;
    case ParamSetting::buffer_size:
      if (!(v >= 65536 && v <= 1073741824 && v == std::floor(v)))
        input_error(origin, where, "NCCL's buffer size must be a whole number of bytes in [64 KiB, 1 GiB]");
      break;
  }
}

std::vector<std::pair<std::string, double>> overridden_params() {
  const auto& o = store().overridden;
  return {o.begin(), o.end()};
}

namespace {
// The shortest of %.15g and %.17g that reads back as `v`: 1073741824 stays whole, 0.914
// does not become 0.91400000000000003.
std::string exact_number(double v) {
  char text[40];
  std::snprintf(text, sizeof text, "%.15g", v);
  if (std::strtod(text, nullptr) != v) std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}
}  // namespace

std::string format_overridden_params() {
  std::string out;
  for (const auto& [name, v] : overridden_params()) out += (out.empty() ? "" : "; ") + name + "=" + exact_number(v);
  return out;
}

std::string format_models_table(bool markdown) {
  std::ostringstream out;
  char value[64];
  for (const auto& m : all_models()) {
    if (markdown) {
      out << "### `" << m.name << "`\n\n" << m.description << ". Equations: `" << m.equations << "`\n\n";
      out << "| parameter | unit | default | can be set to | description | source |\n|---|---|---|---|---|---|\n";
    } else {
      out << m.name << ": " << m.description << "\n  equations: " << m.equations << "\n";
    }
    for (const auto& p : m.params) {
      // Six digits, but a whole number of bytes whole (4194304, not 4.1943e+06).
      if (p.value == std::floor(p.value) && std::fabs(p.value) < 1e9) std::snprintf(value, sizeof value, "%.0f", p.value);
      else std::snprintf(value, sizeof value, "%.6g", p.value);
      if (markdown)
        out << "| `" << p.name << "` | " << p.unit << " | " << value << " | " << setting_range(p.setting) << " | " << p.description << " | " << p.source << " |\n";
      else
        out << "  " << p.name << " = " << value << " " << p.unit << (p.setting == ParamSetting::fixed ? ", " : ", settable ") << setting_range(p.setting) << "  (" << p.description << "; source: " << p.source
            << ")\n";
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace composim
