// File: models/registry.hpp
//
// The model registry: one table of every component model and its parameters (name, unit,
// default, source). `composim list-models` prints it and the README's model table is
// generated from it, so documentation and code cannot drift apart (the idea of SST's ELI and
// ns-3's attributes). Each model header defines `<model>_model_info()` next to the constants
// it documents; registry.cpp lists those functions once.
#pragma once

#include <string>
#include <vector>

namespace composim {

// ParamSetting: whether a parameter file (or a command-line option) may override a
// parameter, and the values it accepts. Only what the models read at run time can be set;
// the other registered values document constants. A value outside the range would give
// absurd times or overflow (a rate near 0 is inverted), so it is refused as a typo.
enum class ParamSetting {
  fixed,           // documents a constant; cannot be set
  fraction,        // an efficiency or fraction, in [0.01, 1]: below 1% nothing runs
  latency,         // seconds, in [0, 1]
  rate,            // bytes/s, at least 1e6: below, no interconnect runs; likely GB/s written for B/s
  rate_or_off,     // bytes/s: 0 (no such term) or at least 1e6
  latency_factor,  // a multiplier on a latency, in [1, 100]: 1 is none
  buffer_size,     // NCCL_BUFFSIZE: whole bytes in [64 KiB, 1 GiB] (8 steps of at least 8 KiB)
};

// The accepted values as text, e.g. "[0.01, 1]"; "fixed" for ParamSetting::fixed.
const char* setting_range(ParamSetting setting);

// ParamInfo: one model parameter. `value` is in SI units as given by `unit`.
struct ParamInfo {
  std::string name;         // e.g. "switch_latency_gen4_s"
  std::string unit;         // e.g. "s", "B/s", "B", "1"
  double value;             // default value, SI
  std::string description;  // one line
  std::string source;       // spec, datasheet, paper or measurement; "assumption: ..." if none
  ParamSetting setting = ParamSetting::fixed;
};

// ModelInfo: one component model.
struct ModelInfo {
  std::string name;         // e.g. "pcie.link"
  std::string description;  // what it models
  std::string equations;    // the equations it applies, in one or two lines
  std::vector<ParamInfo> params;
};

// all_models()
//
// Every registered model, in a stable order.
const std::vector<ModelInfo>& all_models();

// param()
//
// The value in force of a registered parameter, by "<model>.<parameter>" (e.g.
// "nvlink.payload_efficiency"): the registry's default unless a parameter file overrode it.
// Throws std::out_of_range for an unknown name.
double param(const std::string& qualified_name);

// load_params_file()
//
// Overrides parameters from a JSON file {"params": {"<model>.<parameter>": value, ...}, ...}
// (what `composim calibrate` writes; other top-level keys document where the values came
// from). Must be called before topologies are loaded or anything is simulated. Throws
// InputError naming the file and the parameter for an unknown name, a fixed parameter or a
// value outside the parameter's range (ParamSetting). A value more than 10 times above or
// below a non-zero default (0 included) is applied with a warning on stderr.
void load_params_file(const std::string& path);

// check_params_file(): the checks of load_params_file() without applying the values; with
// `warn_far`, also its warning on values far from their defaults (for a file that is applied
// in child processes whose stderr the user does not see).
void check_params_file(const std::string& path, bool warn_far = false);

// set_param()
//
// Overrides one parameter, as a parameter file does, with the same checks: what may be set
// and its range (ParamInfo::setting). `origin` and `where` name the source in the
// InputError thrown (e.g. the file and "params.<name>", or "command line" and
// "--nccl-buffsize"). Must be called before anything is simulated.
void set_param(const std::string& qualified_name, double value, const std::string& origin, const std::string& where);
// check_param(): set_param()'s checks alone.
void check_param(const std::string& qualified_name, double value, const std::string& origin, const std::string& where);

// Names and values of the parameters a parameter file (or an option such as
// --nccl-buffsize) changed, in name order.
std::vector<std::pair<std::string, double>> overridden_params();

// The same as one line, "name=value; name=value" (each value exact: the shortest of %.15g
// and %.17g that reads back as it), for outputs to record what a run
// was computed with; "" when nothing was changed.
std::string format_overridden_params();

// format_models_table()
//
// The registry as a human-readable text table (what `composim list-models` prints);
// `markdown` gives a Markdown table instead.
std::string format_models_table(bool markdown);

}  // namespace composim
