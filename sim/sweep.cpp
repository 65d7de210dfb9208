#include "sim/sweep.hpp"

#include <algorithm>
#include <cctype>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <map>
#include <set>
#include <thread>
#include <sys/wait.h>
#include <unistd.h>

#include "models/error.hpp"
#include "sim/process.hpp"
#include "sim/report.hpp"
#include "topologies/generate.hpp"
#include "topologies/topology.hpp"

namespace composim::sim {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;  // axes keep the spec's order

namespace {

// A spec's trace path: "{data}/..." is under the shared data folder.
std::string resolve_trace(const std::string& trace, const std::string& data_dir) {
  return trace.rfind("{data}/", 0) == 0 ? data_dir + trace.substr(6) : trace;
}

// What tells that a file changed: its size and modification time (null when it is absent).
json file_stamp(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {  // a directory of traces: every file in it, by name
    std::map<std::string, json> entries;
    for (const auto& e : fs::directory_iterator(path, ec))
      if (e.is_regular_file(ec)) entries.emplace(e.path().filename().string(), file_stamp(e.path().string()));
    json stamps = json::object();
    for (auto& [name, stamp] : entries) stamps[name] = std::move(stamp);
    return stamps;
  }
  if (!fs::is_regular_file(path, ec)) return nullptr;
  return {{"size", static_cast<long long>(fs::file_size(path, ec))},
          {"mtime", static_cast<long long>(fs::last_write_time(path, ec).time_since_epoch().count())}};
}

// Reads a point's summary.json into *out; returns what is wrong with it ("" when it holds
// every number a row needs), so a truncated or foreign file is run again or reported.
std::string read_summary(const std::string& path, json* out = nullptr) {
  std::ifstream f(path);
  if (!f) return "no summary.json";
  json s;
  try {
    s = parse_ordered_json_input(f, path);
  } catch (const InputError& e) {
    return e.what();  // names the file
  }
  auto number = [](const json& o, const char* k) { return o.is_object() && o.contains(k) && o[k].is_number(); };
  if (!number(s, "predicted_iteration_s") || !number(s, "measured_iteration_s") || !s.contains("breakdown"))
    return path + ": not a composim run summary";
  for (const char* k : {"compute_s", "exposed_communication_s", "memcpy_s", "idle_s"})
    if (!number(s["breakdown"], k)) return path + ": no breakdown." + k;
  if (s.contains("busiest_link") && !s["busiest_link"].is_string()) return path + ": busiest_link is not a string";
  if (s.contains("busiest_link_utilisation") && !number(s, "busiest_link_utilisation"))
    return path + ": busiest_link_utilisation is not a number";
  if (out) *out = std::move(s);
  return "";
}

struct SweepPoint {
  size_t index;
  json params;                                          // merged parameters
  std::vector<std::pair<std::string, std::string>> labels;  // axis name -> label
  std::string dir, error;
  bool reused = false;
};

topo::GenerateOptions generator_options(const json& p, const std::string& place) {
  topo::GenerateOptions g;
  auto get = [&](const char* k, auto& field) {
    if (!p.contains(k)) return;
    using T = std::decay_t<decltype(field)>;
    const json& v = p.at(k);
    const bool ok = std::is_same_v<T, std::string> ? v.is_string()
                    : std::is_same_v<T, bool>      ? v.is_boolean()
                    : std::is_same_v<T, int>       ? v.is_number_integer() && (v.is_number_unsigned() ? v.get<unsigned long long>() <= 1000000000ull
                                                                                                     : v.get<long long>() >= -1000000000ll && v.get<long long>() <= 1000000000ll)
                                                   : v.is_number();
    if (!ok)
      input_error("", place, std::string("parameter \"") + k + "\" = " + shown_value(v) +
                                 (std::is_same_v<T, int> && v.is_number_integer() ? " is out of range" : " has the wrong type"));
    field = v.get<T>();
  };
  get("placement", g.placement);
  get("hosts", g.hosts);
  get("gpus", g.gpus);
  get("levels", g.levels);
  get("fanout", g.fanout);
  get("switch_gen", g.switch_generation);
  get("uplink_gen", g.uplink_generation);
  get("uplink_lanes", g.uplink_lanes);
  get("gpu_gen", g.gpu_generation);
  get("cable", g.cable);
  get("length_m", g.length_m);
  get("retimers", g.retimers);
  get("gpu_model", g.gpu_model);
  get("p2p", g.p2p);
  get("fabric_p2p", g.fabric_p2p);
  get("host_nic_gbps", g.host_nic_Gbps);
  if (p.contains("compose_split")) {
    if (p["compose_split"].is_string() && p["compose_split"] == "ranks") g.compose_split = p.value("ranks", 0);
    else if (p["compose_split"].is_number_integer()) get("compose_split", g.compose_split);
    else input_error("", place, "\"compose_split\" must be an integer or \"ranks\"");
  }
  if (g.compose_split == 1) g.compose_split = 0;  // one rank: nothing to split
  return g;
}

}  // namespace

int run_sweep_spec(const SweepRunOptions& o) {
  const std::string spec_file = o.collect && o.spec_file.empty() ? o.out_dir + "/sweep.json" : o.spec_file;
  std::ifstream in(spec_file);
  if (!in) input_error(spec_file, "", o.collect ? "no sweep.json here: was this directory written by `composim sweep --slurm`?" : "cannot open the sweep spec");
  json spec = parse_ordered_json_input(in, spec_file);
  if (!spec.is_object() || (!spec.contains("axes") && !spec.contains("points")))
    input_error(spec_file, "top level", "expected \"axes\" (an object of axis name -> list of values) and/or \"points\" (a list)");
  static const std::set<std::string> kTop = {"name", "description", "traces", "generate", "axes", "points", "run_args"};
  for (auto it = spec.begin(); it != spec.end(); ++it)
    if (!kTop.count(it.key())) input_error(spec_file, "top level", "unknown key \"" + it.key() + "\" (name, description, traces, generate, axes, points, run_args)");
  if (spec.contains("axes") && !spec["axes"].is_object()) input_error(spec_file, "axes", "expected an object of axis name -> list of values");
  // The name goes into sweep.slurm's comments and the summary line: one printable line.
  if (spec.contains("name")) {
    if (!spec["name"].is_string()) input_error(spec_file, "name", "expected a string");
    for (unsigned char ch : spec["name"].get<std::string>())
      if (ch < 0x20 || ch == 0x7f) input_error(spec_file, "name", "must be one line of printable text");
  }
  if (spec.contains("generate") && !spec["generate"].is_object()) input_error(spec_file, "generate", "expected an object of generator parameters");
  if (spec.contains("run_args")) {
    if (!spec["run_args"].is_array()) input_error(spec_file, "run_args", "expected a list of strings (extra `composim run` arguments)");
    for (const auto& a : spec["run_args"])
      if (!a.is_string()) input_error(spec_file, "run_args", "expected a list of strings, not " + shown_value(a));
  }
  if (spec.contains("axes") && spec["axes"].empty() && !spec.contains("points")) input_error(spec_file, "axes", "no axis and no points: the sweep has nothing to run");
  if (spec.contains("traces") && (!spec["traces"].is_array() || spec["traces"].size() != 1 || !spec["traces"][0].is_string()))
    input_error(spec_file, "traces", "expected a list with one trace file, or one directory of per-rank traces (use a \"trace\" axis for several)");
  if (spec.contains("points") && !spec["points"].is_array()) input_error(spec_file, "points", "expected a list of parameter objects");
  static const std::set<std::string> kKnown = {"placement", "hosts", "gpus", "levels", "fanout", "switch_gen", "uplink_gen", "uplink_lanes",
                                               "gpu_gen", "cable", "length_m", "retimers", "gpu_model", "p2p", "fabric_p2p",
                                               "host_nic_gbps", "compose_split", "compose", "ranks", "trace", "topology", "label"};
  auto check_keys = [&](const json& obj, const std::string& place) {
    for (auto it = obj.begin(); it != obj.end(); ++it)
      if (!kKnown.count(it.key())) input_error(spec_file, place, "unknown parameter \"" + it.key() + "\"");
  };
  json base = spec.value("generate", json::object());
  check_keys(base, "generate");
  if (spec.contains("traces")) base["trace"] = spec["traces"].at(0);
  // Axes in file order, and the cartesian product.
  std::vector<std::pair<std::string, json>> axes;
  const json no_axes = json::object();
  const json& axes_doc = spec.contains("axes") ? spec["axes"] : no_axes;
  for (auto it = axes_doc.begin(); it != axes_doc.end(); ++it) {
    if (!it->is_array() || it->empty()) input_error(spec_file, "axes." + it.key(), "expected a non-empty list of values");
    if (it.key() == "label") input_error(spec_file, "axes.label", "\"label\" names a point or an axis value; it is not an axis");
    for (const auto& v : *it)
      if (v.is_object()) check_keys(v, "axes." + it.key());
      else if (!kKnown.count(it.key())) input_error(spec_file, "axes." + it.key(), "unknown parameter (scalar axes name a parameter)");
    axes.emplace_back(it.key(), *it);
  }
  size_t total_points = axes.empty() ? 0 : 1;
  for (const auto& a : axes) {
    total_points *= a.second.size();
    if (total_points > 100000) input_error(spec_file, "axes", "more than 100000 points");
  }
  // Each parameter comes from one axis: a second would overwrite the first's value while
  // results.csv still showed the first's label.
  {
    std::map<std::string, std::string> set_by;  // parameter -> axis
    for (const auto& [name, values] : axes) {
      std::set<std::string> keys;
      for (const auto& v : values)
        if (v.is_object()) {
          for (auto it = v.begin(); it != v.end(); ++it)
            if (it.key() != "label") keys.insert(it.key());
        } else {
          keys.insert(name);
        }
      for (const auto& k : keys) {
        auto [it, added] = set_by.emplace(k, name);
        if (!added)
          input_error(spec_file, "axes." + name,
                      "sets \"" + k + "\", which axis \"" + it->second + "\" sets too: each parameter must come from one axis");
      }
    }
  }
  std::vector<SweepPoint> points;
  for (size_t k = 0; k < total_points; ++k) {
    // Mixed-radix decoding: the last axis varies fastest.
    std::vector<size_t> idx(axes.size());
    size_t rest = k;
    for (size_t a = axes.size(); a-- > 0;) {
      idx[a] = rest % axes[a].second.size();
      rest /= axes[a].second.size();
    }
    SweepPoint p;
    p.index = k;
    p.params = base;
    for (size_t a = 0; a < axes.size(); ++a) {
      const json& v = axes[a].second[idx[a]];
      if (v.is_object()) {
        for (auto it = v.begin(); it != v.end(); ++it)
          if (it.key() != "label") p.params[it.key()] = *it;
        if (v.contains("label") && !v["label"].is_string()) input_error(spec_file, "axes." + axes[a].first, "\"label\" must be a string");
        p.labels.emplace_back(axes[a].first, v.value("label", v.dump()));
      } else {
        p.params[axes[a].first] = v;
        p.labels.emplace_back(axes[a].first, v.is_string() ? v.get<std::string>() : v.dump());
      }
    }
    if (spec.contains("points")) p.labels.emplace_back("label", "");
    points.push_back(std::move(p));
  }
  // Explicit points, after the product: {"label": ..., parameters...}; an axis the point
  // does not set shows the point's label (so a plot draws it as a series of its own), or
  // "-" without one.
  if (spec.contains("points"))
    for (size_t k = 0; k < spec["points"].size(); ++k) {
      const json& v = spec["points"][k];
      if (!v.is_object()) input_error(spec_file, "points[" + std::to_string(k) + "]", "expected an object of parameters");
      check_keys(v, "points[" + std::to_string(k) + "]");
      if (v.contains("label") && !v["label"].is_string()) input_error(spec_file, "points[" + std::to_string(k) + "]", "\"label\" must be a string");
      SweepPoint p;
      p.index = points.size();
      // A point that names its own topology takes only the trace from the base: "generate"
      // describes the topologies the sweep builds, not this one.
      if (v.contains("topology")) {
        p.params = json::object();
        if (base.contains("trace")) p.params["trace"] = base["trace"];
      } else {
        p.params = base;
      }
      for (auto it = v.begin(); it != v.end(); ++it)
        if (it.key() != "label") p.params[it.key()] = *it;
      for (const auto& a : axes) {
        std::string label = "-";
        if (v.contains(a.first)) label = v[a.first].is_string() ? v[a.first].get<std::string>() : v[a.first].dump();
        else if (v.contains("label")) label = v["label"].get<std::string>();
        p.labels.emplace_back(a.first, label);
      }
      p.labels.emplace_back("label", v.value("label", "point " + std::to_string(k)));
      points.push_back(std::move(p));
    }
  if (points.empty()) input_error(spec_file, "axes", "the sweep has no point");

  // Every point's parameters are checked before anything runs.
  for (const auto& p : points) {
    const std::string place = "point " + std::to_string(p.index);
    if (p.params.contains("ranks") && (!p.params["ranks"].is_number_integer() || p.params["ranks"].get<long long>() < 1 ||
                                       p.params["ranks"].get<long long>() > 1000000))
      input_error(spec_file, place, "\"ranks\" must be an integer in [1, 1000000], not " + shown_value(p.params["ranks"]));
    if (!p.params.contains("trace")) input_error(spec_file, "traces", "no trace: give \"traces\" or a \"trace\" axis");
    if (!p.params["trace"].is_string()) input_error(spec_file, place, "\"trace\" must be a file or directory name");
    if (!o.collect) {
      // Every point needs its trace: a missing one is the spec's error, before anything runs.
      const std::string given = p.params["trace"].get<std::string>(), tr = resolve_trace(given, o.data_dir);
      const bool shared = tr != given;
      std::error_code ec;
      if (!fs::is_regular_file(tr, ec) && !fs::is_directory(tr, ec))  // a directory: one trace per rank, as `run --trace DIR`
        input_error(spec_file, place, "trace \"" + tr + "\" not found" +
                                          (shared ? " ({data} is the shared data folder: --data DIR)" : " (relative to the working directory)"));
    }
    if (p.params.contains("compose") && !p.params["compose"].is_string()) input_error(spec_file, place, "\"compose\" must be a string like host0=gpu0-3");
    if (p.params.contains("topology")) {
      if (!p.params["topology"].is_string()) input_error(spec_file, place, "\"topology\" must be a shipped name or a file");
      {  // a missing topology is the spec's error, before anything runs (as a missing trace)
        const std::string t = p.params["topology"].get<std::string>();
        const auto shipped = topo::Topology::shipped_names();
        std::error_code ec;
        if (!fs::is_regular_file(t, ec) && std::find(shipped.begin(), shipped.end(), t) == shipped.end())
          input_error(spec_file, place, "topology \"" + t + "\" is neither a file (relative to the working directory) nor a shipped topology");
      }
      // A given topology is run as it is: generator parameters would only label the row.
      static const std::set<std::string> kWithTopology = {"topology", "trace", "ranks", "compose", "label"};
      for (auto it = p.params.begin(); it != p.params.end(); ++it)
        if (!kWithTopology.count(it.key()))
          input_error(spec_file, place, "\"" + it.key() + "\" is a generator parameter, which a point with a \"topology\" ignores");
    } else {
      try {
        topo::generate_topology(generator_options(p.params, ""));
      } catch (const InputError& e) {
        input_error(spec_file, place, e.what());
      }
    }
  }
  {
    // Before any point runs: the files written at the end must be replaceable.
    for (const char* name : {"results.csv", "sweep.json", "sweep.slurm"}) check_replaceable(o.out_dir + "/" + name, "--out");
    std::error_code ec;
    fs::create_directories(o.out_dir + "/points", ec);
    if (ec) input_error(o.out_dir, "--out", "cannot create the sweep directory: " + ec.message());
  }
  std::vector<std::string> run_args;
  for (const auto& a : spec.value("run_args", json::array())) run_args.push_back(a.get<std::string>());
  // Prepare each point: topology file, command; reuse finished ones with the same parameters.
  std::vector<std::string> commands(points.size());
  for (auto& p : points) {
    if (o.collect) {
      p.dir = o.out_dir + "/points/" + std::to_string(p.index);
      if (fs::exists(p.dir + "/out/summary.json")) p.reused = true;
      else if (fs::exists(p.dir + "/log.txt") && fs::exists(p.dir + "/failed")) {
        const std::string last = last_line(p.dir + "/log.txt");
        p.error = last.empty() ? "composim run failed" : last;
      } else p.error = "not run yet";
      continue;
    }
    if (o.task >= 0 && static_cast<int>(p.index % static_cast<size_t>(o.tasks)) != o.task) {
      p.reused = true;  // another task's point
      continue;
    }
    p.dir = o.out_dir + "/points/" + std::to_string(p.index);
    fs::create_directories(p.dir);
    const std::string params_file = p.dir + "/point.json";
    // What decides a point's result: its parameters, the run arguments, the trace file and
    // the topology file (a shipped one's too) by size and modification time, and the
    // composim binary that runs it, so a changed spec, file or composim is run again.
    json identity = {{"params", p.params}, {"run_args", run_args}};
    if (json stamp = file_stamp(o.composim); !stamp.is_null()) identity["composim"] = stamp;
    if (json stamp = file_stamp(resolve_trace(p.params.value("trace", ""), o.data_dir)); !stamp.is_null()) identity["trace_file"] = stamp;
    if (p.params.contains("topology")) {
      const std::string file = topo::Topology::file_of(p.params["topology"].get<std::string>());
      if (json stamp = file_stamp(file); !stamp.is_null()) identity["topology_file"] = {{"path", fs::absolute(file).string()}, {"stamp", stamp}};
    }
    for (const auto& arg : run_args) {  // files the run arguments name (--params p.json, --params=p.json)
      const auto eq = arg.find('=');
      const std::string file = arg.rfind("--", 0) == 0 && eq != std::string::npos ? arg.substr(eq + 1) : arg;
      if (json stamp = file_stamp(file); !stamp.is_null()) identity["run_arg_files"][file] = stamp;
    }
    json stored;
    if (std::ifstream f(params_file); f) {
      try {
        stored = parse_ordered_json_input(f, params_file);
      } catch (...) {
      }
    }
    if (stored == identity && read_summary(p.dir + "/out/summary.json").empty()) {
      p.reused = true;
      continue;
    }
    fs::remove_all(p.dir + "/out");
    write_file_atomically(params_file, identity.dump(1) + "\n", "sweep point");
    const std::string trace = resolve_trace(p.params.value("trace", ""), o.data_dir);
    if (trace.empty()) {
      p.error = "no trace (give \"traces\" or a \"trace\" axis)";
      continue;
    }
    std::string topology;
    try {
      if (p.params.contains("topology")) {
        topology = p.params["topology"].get<std::string>();
      } else {
        auto g = generator_options(p.params, "point " + std::to_string(p.index));
        g.name = "point" + std::to_string(p.index);
        const json doc = topo::generate_topology(g);
        topology = p.dir + "/topology.json";
        topo::Topology::parse(doc, topology);
        write_file_atomically(topology, doc.dump(1) + "\n", "sweep point");
      }
    } catch (const InputError& e) {
      p.error = e.what();
      continue;
    }
    std::string cmd = shell_quote(o.composim) + " run --trace " + shell_quote(trace) + " --topology " + shell_quote(topology);
    if (p.params.contains("ranks")) cmd += " --ranks " + std::to_string(p.params["ranks"].get<int>());
    if (p.params.contains("compose")) cmd += " --compose " + shell_quote(p.params["compose"].get<std::string>());
    for (const auto& a : run_args) cmd += " " + shell_quote(a);
    commands[p.index] = cmd + " --out " + shell_quote(p.dir + "/out") + " >" + shell_quote(p.dir + "/log.txt") + " 2>&1";
  }
  if (o.slurm) {
    // Save the spec beside the points and write the job array.
    write_file_atomically(o.out_dir + "/sweep.json", spec.dump(1) + "\n", "--slurm");
    const int tasks = o.tasks > 0 ? std::min<int>(o.tasks, static_cast<int>(points.size())) : static_cast<int>(std::min<size_t>(points.size(), 64));
    const std::string abs_out = fs::absolute(o.out_dir).string();
    std::string script = "#!/bin/bash\n# composim sweep as a Slurm job array: task k runs the points i with i % " + std::to_string(tasks) +
                         " == k of " + spec.value("name", std::string("the sweep")) + " into " + abs_out + ".\n" +
                         "# Submit: sbatch " + abs_out + "/sweep.slurm ; then: composim sweep --collect " + abs_out + "\n" +
                         "#SBATCH --job-name=composim-sweep\n#SBATCH --array=0-" + std::to_string(tasks - 1) + "\n#SBATCH --ntasks=1\n" +
                         "#SBATCH --cpus-per-task=1\n#SBATCH --output=" + abs_out + "/slurm-%A_%a.out\n" +
                         "#SBATCH --chdir=" + fs::current_path().string() + "\n" +
                         "exec " + shell_quote(o.composim) + " sweep " + shell_quote(fs::absolute(o.out_dir + "/sweep.json").string()) + " --out " + shell_quote(abs_out) +
                         " --data " + shell_quote(o.data_dir) + " --task \"$SLURM_ARRAY_TASK_ID\" --tasks " + std::to_string(tasks) + "\n";
    write_files_atomically(o.out_dir, {{"sweep.slurm", script}});
    std::printf("wrote %s/sweep.slurm: a job array of %d tasks over %zu points; submit it with sbatch, then run composim sweep --collect %s\n",
                o.out_dir.c_str(), tasks, points.size(), o.out_dir.c_str());
    return 0;
  }

  // Run, N at once, with a progress bar.
  std::atomic<size_t> next{0}, done{0};
  std::mutex print;
  const size_t total = points.size();
  const bool tty = isatty(fileno(stderr));
  auto progress = [&] {
    std::lock_guard<std::mutex> lock(print);
    const size_t d = done.load();
    // On a terminal the bar redraws in place; in a log, a line every tenth of the sweep.
    if (!tty && d != total && (d * 10 / std::max<size_t>(total, 1)) == ((d - 1) * 10 / std::max<size_t>(total, 1))) return;
    const int width = 40, filled = static_cast<int>(width * d / std::max<size_t>(total, 1));
    std::fprintf(stderr, tty ? "\r[%s%s] %zu/%zu points" : "[%s%s] %zu/%zu points\n", std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), d, total);
    std::fflush(stderr);
  };
  // std::system ignores SIGINT and SIGQUIT in this process while a point runs, so Ctrl-C
  // reaches only the points' processes: a point ended by SIGINT or SIGTERM (or a shell
  // reporting it, status 128 + signal) stops the sweep, and nothing is reported as failed.
  std::atomic<bool> interrupted{false};
  std::vector<std::thread> pool;
  for (int j = 0; j < std::max(1, o.jobs); ++j)
    pool.emplace_back([&] {
      for (size_t i = next++; i < points.size() && !interrupted && !termination_requested(); i = next++) {
        SweepPoint& p = points[i];
        if (o.collect || p.reused || !p.error.empty()) {
          ++done;
          progress();
          continue;
        }
        const int rc = std::system(commands[i].c_str());
        if (ended_by_interrupt(rc)) {
          interrupted = true;
          break;
        }
        if (rc != 0) {
          std::ofstream(p.dir + "/failed") << "1\n";
          const std::string last = last_line(p.dir + "/log.txt");
          p.error = last.empty() ? "composim run failed" : last;
        }
        ++done;
        progress();
      }
    });
  for (auto& t : pool) t.join();
  if (tty) std::fprintf(stderr, "\n");
  if (interrupted || termination_requested()) {
    std::fprintf(stderr, "composim: sweep interrupted after %zu of %zu points; results.csv not written (the same command resumes it)\n",
                 done.load(), total);
    return 130;
  }
  if (o.task >= 0) {
    std::printf("sweep task %d of %d done\n", o.task, o.tasks);
    return 0;  // --collect writes results.csv once every task has run
  }

  // results.csv in point order.
  const bool explicit_points = spec.contains("points");
  std::string csv = "point";
  for (const auto& a : axes) csv += "," + csv_field(a.first);
  if (explicit_points) csv += ",label";
  csv += ",predicted_iteration_s,measured_iteration_s,compute_s,exposed_communication_s,memcpy_s,idle_s,busiest_link,busiest_link_utilisation,error,notes\n";
  size_t failed = 0, reused = 0;
  // A point's notes say what its prediction assumed (compute not rescaled to another GPU,
  // a send/recv at its measured time, ...): in its row, and once each on stdout, notes that
  // differ only in their numbers (a point's topology name, its rank count) counted as one.
  struct SeenNote {
    std::string text;  // the first point's
    size_t first_point, points;
  };
  std::vector<SeenNote> notes_seen;
  std::map<std::string, size_t> note_index;
  auto digits_out = [](const std::string& text) {
    std::string key;
    for (char c : text)
      if (!std::isdigit(static_cast<unsigned char>(c))) key += c;
      else if (key.empty() || key.back() != '#') key += '#';
    return key;
  };
  for (auto& p : points) {
    std::string row = std::to_string(p.index);
    for (const auto& [axis, label] : p.labels) row += "," + csv_field(label);
    json s;
    if (p.error.empty()) p.error = read_summary(p.dir + "/out/summary.json", &s);
    if (p.error.empty()) {
      char buf[512];
      std::snprintf(buf, sizeof buf, ",%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,", s["predicted_iteration_s"].get<double>(),
                    s["measured_iteration_s"].get<double>(), s["breakdown"]["compute_s"].get<double>(),
                    s["breakdown"]["exposed_communication_s"].get<double>(), s["breakdown"]["memcpy_s"].get<double>(),
                    s["breakdown"]["idle_s"].get<double>());
      row += buf + csv_field(s.value("busiest_link", ""));
      std::snprintf(buf, sizeof buf, ",%.6g,", s.value("busiest_link_utilisation", 0.0));
      row += buf;
      std::string notes;
      std::set<size_t> counted;  // a note counts once per point (rank 0's and rank 1's are one)
      if (s.contains("notes") && s["notes"].is_array())
        for (const auto& n : s["notes"]) {
          if (!n.is_string()) continue;
          const std::string text = n.get<std::string>();
          notes += (notes.empty() ? "" : " | ") + text;
          auto [it, added] = note_index.emplace(digits_out(text), notes_seen.size());
          if (added) notes_seen.push_back({text, p.index, 0});
          if (counted.insert(it->second).second) ++notes_seen[it->second].points;
        }
      std::replace(notes.begin(), notes.end(), '\n', ' ');
      row += "," + csv_field(notes);
    } else {
      std::string e = p.error;
      std::replace(e.begin(), e.end(), '\n', ' ');
      row += ",,,,,,,,," + csv_field(e) + ",";
      ++failed;
    }
    reused += p.reused && p.error.empty();  // a reused point whose summary is unreadable counts as failed only
    csv += row + "\n";
  }
  if (termination_requested()) {
    std::fprintf(stderr, "composim: sweep interrupted; results.csv not written (the same command resumes it)\n");
    return 130;
  }
  write_files_atomically(o.out_dir, {{"results.csv", csv}});
  if (o.collect)
    std::printf("sweep %s: %zu points (%zu finished, %zu failed or not run); wrote %s/results.csv\n", spec.value("name", "").c_str(), total,
                reused, failed, o.out_dir.c_str());
  else
    std::printf("sweep %s: %zu points (%zu reused from an earlier run, %zu failed); wrote %s/results.csv\n", spec.value("name", "").c_str(),
                total, reused, failed, o.out_dir.c_str());
  constexpr size_t kNotesShown = 8;
  for (size_t i = 0; i < notes_seen.size() && i < kNotesShown; ++i) {
    const auto& n = notes_seen[i];
    if (n.points == total) std::printf("note (every point): %s\n", n.text.c_str());
    else std::printf("note (%zu of %zu points; point %zu says): %s\n", n.points, total, n.first_point, n.text.c_str());
  }
  if (notes_seen.size() > kNotesShown)
    std::printf("note: %zu other notes, in results.csv's notes column\n", notes_seen.size() - kNotesShown);
  return 0;
}

}  // namespace composim::sim
