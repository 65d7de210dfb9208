#include "sim/validate.hpp"

#include <unistd.h>

#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "models/error.hpp"
#include "models/registry.hpp"
#include "sim/calibrate.hpp"
#include "sim/process.hpp"
#include "sim/report.hpp"
#include "topologies/topology.hpp"

#include <Eigen/Dense>

namespace composim::sim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Point {
  std::string label, metric, unit;
  double key = 0;  // size in bytes for collectives
  double time_us = 0;  // measured time of a collective point (for calibration)
  double measured = 0, predicted = NAN, tolerance_pct = 0;
  bool within() const { return std::isfinite(predicted) && std::abs(error_pct()) <= tolerance_pct; }
  double error_pct() const { return 100.0 * (predicted - measured) / measured; }
};

struct Case {
  std::string file, name, category, description, known_gap, skip_reason, run_error;
  json doc;
  std::vector<Point> points;
  std::string command, work_dir;
  std::string params_file;  // the case's own parameter file ("run": {"params": ...}), checked; "" if none
  // What the measured rows ran, to check the run against (collective cases; empty or 0 when
  // the data does not say).
  std::string expect_op, expect_type;
  int expect_gpus = 0;
  std::string status;  // pass, fail, skipped, known gap, known gap closed, error
};

// A temporary directory removed on every exit path.
struct ScratchDir {
  std::string path;
  explicit ScratchDir(const std::string& prefix) : path(fs::temp_directory_path() / (prefix + std::to_string(getpid()))) {
    fs::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// A measured number read from a data file: finite and positive, or an error naming the row.
double measured_number(const std::string& text, const std::string& file, const std::string& place, bool zero_ok = false) {
  double v = NAN;
  try {
    size_t pos = 0;
    v = std::stod(text, &pos);
    // The whole field: "70140abc" or "0x100000" is not a measured value.
    if (pos != text.size() || text.find_first_of("xXpP") != std::string::npos) v = NAN;
  } catch (const std::exception&) {
  }
  if (!std::isfinite(v) || v < 0 || (v == 0 && !zero_ok)) input_error(file, place, "\"" + text + "\" is not a positive measured value");
  return v;
}

// Fields of a comma-separated line, with double-quoted fields.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') cur += '"', ++i;
      else if (c == '"') quoted = false;
      else cur += c;
    } else if (c == '"') quoted = true;
    else if (c == ',') out.push_back(cur), cur.clear();
    else if (c != '\r') cur += c;
  }
  out.push_back(cur);
  return out;
}

// Rows of a CSV file by column name. `required`: columns the header must have; every row
// must have as many fields as the header, so a missing value is an error naming the row.
std::vector<std::map<std::string, std::string>> read_csv(const std::string& path, const std::vector<std::string>& required = {}) {
  std::ifstream in(path);
  if (!in) input_error(path, "", "cannot open");
  std::string line;
  std::getline(in, line);
  const auto header = csv_fields(line);
  for (const auto& col : required)
    if (std::find(header.begin(), header.end(), col) == header.end()) input_error(path, "header", "no column \"" + col + "\"");
  std::vector<std::map<std::string, std::string>> rows;
  size_t row_no = 1;
  while (std::getline(in, line)) {
    ++row_no;
    if (line.empty()) continue;
    auto f = csv_fields(line);
    if (f.size() < header.size())
      input_error(path, "row " + std::to_string(row_no),
                  std::to_string(f.size()) + " fields where the header has " + std::to_string(header.size()));
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < f.size(); ++i) {
      std::string v = f[i];
      while (!v.empty() && v.back() == ' ') v.pop_back();
      while (!v.empty() && v.front() == ' ') v.erase(0, 1);
      row[header[i]] = v;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

const json& need(const json& obj, const char* key, const Case& c, const std::string& place) {
  if (!obj.is_object() || !obj.contains(key)) input_error(c.file, place, std::string("missing key \"") + key + "\"");
  return obj.at(key);
}

std::string need_str(const json& obj, const char* key, const Case& c, const std::string& place) {
  const json& v = need(obj, key, c, place);
  if (!v.is_string()) input_error(c.file, place + "." + key, "expected a string");
  return v.get<std::string>();
}

double need_num(const json& obj, const char* key, const Case& c, const std::string& place) {
  const json& v = need(obj, key, c, place);
  if (!v.is_number()) input_error(c.file, place + "." + key, "expected a number");
  return v.get<double>();
}

// Measured points of a case, from its data file or its inline values. Sets skip_reason
// when the data file is absent.
void load_measured(Case& c, const std::string& data) {
  const json& m = need(c.doc, "measured", c, "top level");
  const std::string kind = need_str(m, "kind", c, "measured");
  const json& tol = need(c.doc, "tolerance", c, "top level");
  auto data_file = [&](const char* key) -> std::string {
    const std::string rel = need_str(m, key, c, "measured");
    const std::string path = data + "/" + rel;
    if (!fs::exists(path)) c.skip_reason = "input missing: " + path;
    return path;
  };
  // Keys each kind reads: any other is a typo whose value would be ignored.
  static const std::map<std::string, std::pair<std::set<std::string>, std::set<std::string>>> kKeys = {
      {"trace-steps", {{"kind", "trace", "median_step_s"}, {"pct"}}},
      {"nccl-tests-csv", {{"kind", "file", "source_id"}, {"busbw_pct", "time_pct_below_1MiB"}}},
      {"vtrain-lut", {{"kind", "file"}, {"busbw_pct", "time_pct_below_1MiB"}}},
      {"p2p-csv", {{"kind", "file", "source_id", "test"}, {"pct"}}}};
  if (const auto k = kKeys.find(kind); k != kKeys.end()) {
    auto check = [&](const json& obj, const std::set<std::string>& keys, const std::string& place) {
      if (!obj.is_object()) input_error(c.file, place, "expected an object");
      for (auto it = obj.begin(); it != obj.end(); ++it)
        if (!keys.count(it.key())) {
          std::string known;
          for (const auto& x : keys) known += (known.empty() ? "" : ", ") + x;
          input_error(c.file, place + "." + it.key(), "unknown key for measured kind \"" + kind + "\" (" + known + ")");
        }
    };
    check(m, k->second.first, "measured");
    check(tol, k->second.second, "tolerance");
  }
  if (kind == "trace-steps") {
    const std::string trace = data_file("trace");
    if (!c.skip_reason.empty()) return;
    (void)trace;
    Point p{"median step", "iteration_time", "s", 0, 0, need_num(m, "median_step_s", c, "measured"), NAN, need_num(tol, "pct", c, "tolerance")};
    c.points.push_back(p);
  } else if (kind == "nccl-tests-csv" || kind == "vtrain-lut") {
    const std::string path = data_file("file");
    if (!c.skip_reason.empty()) return;
    const double bus_tol = need_num(tol, "busbw_pct", c, "tolerance");
    const double time_tol = need_num(tol, "time_pct_below_1MiB", c, "tolerance");
    auto add = [&](double bytes, double time_us, double busbw) {
      if (bytes >= 1048576 && busbw <= 0) input_error(path, "size " + std::to_string(static_cast<long long>(bytes)), "zero bus bandwidth at 1 MiB or more");
      if (bytes >= 1048576)
        c.points.push_back({std::to_string(static_cast<long long>(bytes)) + " B", "busbw", "GB/s", bytes, time_us, busbw, NAN, bus_tol});
      else
        c.points.push_back({std::to_string(static_cast<long long>(bytes)) + " B", "time", "us", bytes, time_us, time_us, NAN, time_tol});
    };
    if (kind == "nccl-tests-csv") {
      const std::string id = need_str(m, "source_id", c, "measured");
      size_t row = 1;
      for (const auto& r : read_csv(path, {"source_id", "bytes", "time_us", "busbw_GBps"})) {
        ++row;
        if (r.at("source_id") == id && !r.at("time_us").empty()) {
          const std::string place = "row " + std::to_string(row);
          if (const auto f = r.find("collective"); f != r.end() && !f->second.empty()) c.expect_op = f->second;
          if (const auto f = r.find("dtype"); f != r.end() && !f->second.empty()) c.expect_type = f->second;
          if (const auto f = r.find("n_gpus"); f != r.end() && !f->second.empty()) c.expect_gpus = static_cast<int>(measured_number(f->second, path, place));
          add(measured_number(r.at("bytes"), path, place), measured_number(r.at("time_us"), path, place),
              measured_number(r.at("busbw_GBps"), path, place, /*zero_ok=*/true));
        }
      }
    } else {
      std::ifstream in(path);
      std::string line;
      std::getline(in, line);
      size_t row = 1;
      // vTrain's file names give the GPUs (AR_GPU4_...), its rows the type; all all-reduces.
      c.expect_op = "all_reduce";
      if (const auto at = path.rfind("_GPU"); at != std::string::npos) c.expect_gpus = std::atoi(path.c_str() + at + 4);
      while (std::getline(in, line)) {
        ++row;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;  // a blank line, as the CSV reader skips
        auto f = csv_fields(line);
        if (f.size() >= 3 && !f[2].empty()) c.expect_type = f[2];
        const std::string place = "row " + std::to_string(row);
        if (f.size() < 5) input_error(path, place, "expected size, count, type, time (ns), busbw columns");
        const double b = measured_number(f[0], path, place);
        if (b > 1125899906842624.0) input_error(path, place, "size above 2^50 bytes");
        const auto bi = static_cast<long long>(b);
        if ((bi & (bi - 1)) == 0) add(b, measured_number(f[3], path, place) / 1000.0, measured_number(f[4], path, place, true));
      }
    }
    if (c.points.empty()) input_error(c.file, "measured", "no measured rows found for this source in " + path);
  } else if (kind == "p2p-csv") {
    const std::string path = data_file("file");
    if (!c.skip_reason.empty()) return;
    const std::string id = need_str(m, "source_id", c, "measured"), test = need_str(m, "test", c, "measured");
    const double t = need_num(tol, "pct", c, "tolerance");
    for (const auto& r : read_csv(path, {"source_id", "test", "src_gpu", "dst_gpu", "value"}))
      if (r.at("source_id") == id && r.at("test") == test && r.at("src_gpu") != r.at("dst_gpu") && !r.at("value").empty())
        c.points.push_back({r.at("src_gpu") + "->" + r.at("dst_gpu"), "copy_bandwidth", "GB/s", 0, 0, measured_number(r.at("value"), path, "source " + id), NAN, t});
    if (c.points.empty()) input_error(c.file, "measured", "no off-diagonal rows for this source and test in " + path);
  } else {
    input_error(c.file, "measured.kind", "unknown kind \"" + kind + "\" (trace-steps, nccl-tests-csv, vtrain-lut, p2p-csv)");
  }
}

// The parameter file a case's run names ("run": {"params": FILE}, relative to the case
// file), or "" if none; an error if it is not a string or the file does not exist.
std::string case_params_file(const Case& c) {
  if (!c.doc.contains("run") || !c.doc["run"].is_object() || !c.doc["run"].contains("params")) return "";
  const json& v = c.doc["run"]["params"];
  if (!v.is_string() || v.get<std::string>().empty()) input_error(c.file, "run.params", "expected the path of a parameter file (relative to the case file)");
  std::string pf = v.get<std::string>();
  if (!fs::path(pf).is_absolute()) pf = (fs::path(c.file).parent_path() / pf).string();
  std::error_code ec;
  if (!fs::is_regular_file(pf, ec)) input_error(c.file, "run.params", "no such file: " + pf);
  check_params_file(pf);  // its content too, before any case runs
  return pf;
}

// The composim command line that produces the case's predictions into c.work_dir.
void build_command(Case& c, const ValidateOptions& o) {
  const json& run = need(c.doc, "run", c, "top level");
  if (!run.is_object()) input_error(c.file, "run", "expected an object");
  static const std::set<std::string> kRunKeys = {"kind", "topology", "op", "args", "params"};
  for (auto it = run.begin(); it != run.end(); ++it)
    if (!kRunKeys.count(it.key())) input_error(c.file, "run." + it.key(), "unknown key (kind, topology, op, args, params)");
  const std::string kind = need_str(run, "kind", c, "run");
  std::string topo = need_str(run, "topology", c, "run");
  // A file is relative to the case (a plain name too: "x.json" beside it); a name without a
  // slash that is no file there is a shipped topology's.
  if (!fs::path(topo).is_absolute()) {
    const std::string beside = (fs::path(c.file).parent_path() / topo).string();
    std::error_code ec;
    if (topo.find('/') != std::string::npos || fs::is_regular_file(beside, ec)) topo = beside;
  }
  std::string args;
  if (run.contains("args")) {
    if (!run["args"].is_array()) input_error(c.file, "run.args", "expected an array of strings");
    for (const auto& a : run["args"]) {
      if (!a.is_string()) input_error(c.file, "run.args", "expected an array of strings");
      std::string v = a.get<std::string>();
      // "{data}/..." names a file under the shared data folder; a missing one skips the case.
      if (v.rfind("{data}/", 0) == 0) {
        v = o.data_dir + v.substr(6);
        if (!fs::exists(v)) c.skip_reason = "input missing: " + v;
      }
      args += " " + shell_quote(v);
    }
  }
  std::string cmd = shell_quote(o.composim);
  if (kind == "replay") {
    cmd += " run --trace " + shell_quote(o.data_dir + "/" + need_str(c.doc["measured"], "trace", c, "measured")) + " --topology " + shell_quote(topo);
  } else if (kind == "collective") {
    double lo = INFINITY, hi = 0;
    for (const auto& p : c.points) lo = std::min(lo, p.key), hi = std::max(hi, p.key);
    cmd += " collective --op " + shell_quote(need_str(run, "op", c, "run")) + " --bytes " + std::to_string(static_cast<long long>(lo)) + ":" +
           std::to_string(static_cast<long long>(hi)) + " --step-factor 2 --topology " + shell_quote(topo);
  } else if (kind == "p2p") {
    cmd += " p2p --topology " + shell_quote(topo);
  } else {
    input_error(c.file, "run.kind", "unknown kind \"" + kind + "\" (replay, collective, p2p)");
  }
  for (const auto& f : o.params_files) cmd += " --params " + shell_quote(f);
  // The case's own parameter file (e.g. another library's latency tables) goes after the
  // one given to validate: it states a fact of the measured system, which a calibration of
  // the defaults does not change.
  if (!c.params_file.empty()) cmd += " --params " + shell_quote(c.params_file);
  c.command = cmd + args + " --out " + shell_quote(c.work_dir) + " >" + shell_quote(c.work_dir + ".log") + " 2>&1";
}

void read_predictions(Case& c) {
  const std::string kind = c.doc["run"]["kind"].get<std::string>();
  if (kind == "replay") {
    std::ifstream in(c.work_dir + "/summary.json");
    json s = parse_json_input(in, c.work_dir + "/summary.json");
    c.points[0].predicted = s.at("predicted_iteration_s").get<double>();
    // The trace's own measured median must be the one the case states.
    const double traced = s.at("measured_iteration_s").get<double>();
    if (std::abs(traced - c.points[0].measured) > 0.005 * c.points[0].measured)
      c.run_error = "the trace's measured median step is " + std::to_string(traced) + " s, the case states " + std::to_string(c.points[0].measured);
  } else if (kind == "collective") {
    std::map<long long, std::map<std::string, std::string>> by_size;
    for (auto& r : read_csv(c.work_dir + "/collective.csv", {"op", "gpus", "type", "size_B", "time_us", "busbw_GBps"})) {
      // The run must be what was measured: the same operation, GPU count and type.
      if (by_size.empty()) {
        std::string said;
        if (!c.expect_op.empty() && r.at("op") != c.expect_op) said += " " + c.expect_op + ",";
        if (c.expect_gpus > 0 && r.at("gpus") != std::to_string(c.expect_gpus)) said += " on " + std::to_string(c.expect_gpus) + " GPUs,";
        if (!c.expect_type.empty() && r.at("type") != c.expect_type) said += " of type " + c.expect_type + ",";
        if (!said.empty()) {
          said.pop_back();
          c.run_error = "the run is " + r.at("op") + " on " + r.at("gpus") + " GPUs of type " + r.at("type") + "; the measured rows are" + said;
        }
      }
      by_size[std::stoll(r.at("size_B"))] = r;
    }
    if (!c.run_error.empty()) return;
    for (auto& p : c.points) {
      auto it = by_size.find(static_cast<long long>(p.key));
      if (it == by_size.end()) continue;
      p.predicted = p.metric == "busbw" ? std::stod(it->second.at("busbw_GBps")) : std::stod(it->second.at("time_us"));
    }
  } else {
    std::map<std::string, double> by_pair;
    for (auto& r : read_csv(c.work_dir + "/p2p.csv", {"src_gpu", "dst_gpu", "bandwidth_GBps"})) by_pair[r.at("src_gpu") + "->" + r.at("dst_gpu")] = std::stod(r.at("bandwidth_GBps"));
    for (auto& p : c.points)
      if (by_pair.count(p.label)) p.predicted = by_pair[p.label];
  }
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace

int validate(const ValidateOptions& o) {
  // Collect case files.
  std::vector<std::string> files;
  for (const auto& c : o.cases) {
    if (fs::is_directory(c)) {
      std::vector<std::string> in_dir;
      for (const auto& e : fs::directory_iterator(c))
        if (std::error_code ec; e.path().extension() == ".json" && !e.is_directory(ec)) in_dir.push_back(e.path().string());  // a bad link: the reader names it
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else if (fs::exists(c)) {
      files.push_back(c);
    } else if (fs::is_symlink(c)) {
      input_error(c, "--cases", "is a link to a missing file");
    } else {
      input_error(c, "--cases", "no such file or directory");
    }
  }
  // One file given twice (by itself and through its folder) is one case.
  {
    std::vector<std::string> unique;
    std::set<std::string> seen;
    for (const auto& f : files) {
      std::error_code ec;
      const auto canonical = fs::weakly_canonical(f, ec);
      if (seen.insert(ec ? f : canonical.string()).second) unique.push_back(f);
    }
    files = std::move(unique);
  }
  for (const auto& f : o.params_files) check_params_file(f, true);  // a bad file fails here, once; far values warned of here
  ScratchDir scratch("composim-validate-");
  const std::string& tmp = scratch.path;
  std::vector<Case> cases;
  for (const auto& f : files) {
    Case c;
    c.file = f;
    std::ifstream in(f);
    c.doc = parse_json_input(in, f);
    c.name = need_str(c.doc, "name", c, "top level");
    if (c.name.empty()) input_error(f, "name", "must not be empty");
    for (const auto& other : cases)
      if (other.name == c.name) input_error(f, "name", "case \"" + c.name + "\" is also " + other.file);
    static const std::set<std::string> kKeys = {"name", "category", "description", "source", "run", "measured", "tolerance", "known_gap"};
    for (auto it = c.doc.begin(); it != c.doc.end(); ++it)
      if (!kKeys.count(it.key())) input_error(f, "top level", "unknown key \"" + it.key() + "\"");
    if (c.doc.contains("known_gap") && !c.doc["known_gap"].is_string()) input_error(f, "known_gap", "expected a string saying why");
    if (c.doc.contains("tolerance") && c.doc["tolerance"].is_object())
      for (auto it = c.doc["tolerance"].begin(); it != c.doc["tolerance"].end(); ++it)
        if (!it->is_number() || !(it->get<double>() > 0) || it->get<double>() > 1000)
          input_error(f, "tolerance." + it.key(), "expected a percentage in (0, 1000]");
    c.category = need_str(c.doc, "category", c, "top level");
    static const std::set<std::string> kCategories = {"self-replay", "collective", "p2p", "end-to-end"};
    if (!kCategories.count(c.category)) input_error(f, "category", "\"" + c.category + "\" is not self-replay, collective, p2p or end-to-end");
    need(c.doc, "source", c, "top level");
    if (c.doc.contains("known_gap")) c.known_gap = c.doc["known_gap"].get<std::string>();
    if (!o.category.empty() && c.category != o.category) continue;
    c.work_dir = tmp + "/" + std::to_string(cases.size());
    c.params_file = case_params_file(c);  // a bad one is an error with or without the data
    load_measured(c, o.data_dir);
    if (c.skip_reason.empty()) build_command(c, o);
    if (!c.skip_reason.empty()) c.command.clear();
    cases.push_back(std::move(c));
  }
  if (cases.empty()) input_error("", "--cases", "no case to run" + (o.category.empty() ? std::string() : " in category " + o.category));

  // Run them, `jobs` at a time, each in its own process.
  // Ctrl-C reaches only the running cases (see ended_by_interrupt): one ended by it stops the
  // run before any other case starts, and no report is written.
  std::atomic<size_t> next{0};
  std::atomic<bool> interrupted{false};
  std::vector<std::thread> pool;
  for (int j = 0; j < std::max(1, o.jobs); ++j)
    pool.emplace_back([&] {
      for (size_t i = next++; i < cases.size() && !interrupted && !termination_requested(); i = next++) {
        Case& c = cases[i];
        if (!c.skip_reason.empty()) continue;
        const int rc = std::system(c.command.c_str());
        if (ended_by_interrupt(rc)) {
          interrupted = true;
          break;
        }
        if (rc != 0) c.run_error = "composim failed: " + last_line(c.work_dir + ".log");
      }
    });
  for (auto& t : pool) t.join();
  if (interrupted || termination_requested()) throw Interrupted("validate interrupted; no report written");

  // Score.
  for (auto& c : cases) {
    if (!c.skip_reason.empty()) {
      c.status = "skipped";
      continue;
    }
    if (c.run_error.empty()) read_predictions(c);
    if (c.run_error.empty()) {  // every measured point needs a prediction: a missing one is no error of 0%
      std::string missing;
      size_t n_missing = 0;
      for (const auto& p : c.points)
        if (!std::isfinite(p.predicted) && n_missing++ < 3) missing += (missing.empty() ? "" : ", ") + p.label;
      if (n_missing > 0)
        c.run_error = "no prediction for " + std::to_string(n_missing) + " measured point(s) (" + missing + (n_missing > 3 ? ", ..." : "") +
                      "): the run does not produce them (a size off its sweep, or a run kind that does not fit the measured table)";
    }
    if (!c.run_error.empty()) {
      c.status = "error";
      continue;
    }
    const bool ok = std::all_of(c.points.begin(), c.points.end(), [](const Point& p) { return p.within(); });
    c.status = c.known_gap.empty() ? (ok ? "pass" : "fail") : (ok ? "known gap closed" : "known gap");
  }
  // Table.
  std::printf("%-44s %-12s %6s %12s %12s %9s %6s  %s\n", "case", "category", "points", "measured", "predicted", "max err", "tol", "status");
  for (const auto& c : cases) {
    if (c.points.empty() || c.status == "skipped" || c.status == "error") {
      std::printf("%-44s %-12s %6zu %12s %12s %9s %6s  %s%s\n", c.name.c_str(), c.category.c_str(), c.points.size(), "-", "-", "-", "-",
                  c.status.c_str(), (c.skip_reason.empty() ? (c.run_error.empty() ? "" : ": " + c.run_error) : ": " + c.skip_reason).c_str());
      continue;
    }
    // Representative point: the largest message (collectives), the step, or the mean copy.
    const Point* rep = &c.points.back();
    for (const auto& p : c.points)
      if (p.key >= rep->key) rep = &p;
    double worst = 0;
    for (const auto& p : c.points) worst = std::max(worst, std::abs(p.error_pct()));
    double shown_meas = rep->measured, shown_pred = rep->predicted;
    if (rep->metric == "copy_bandwidth") {  // copies between GPU pairs: the mean copy
      shown_meas = shown_pred = 0;
      for (const auto& p : c.points) shown_meas += p.measured / c.points.size(), shown_pred += p.predicted / c.points.size();
    }
    char meas[32], pred[32];
    std::snprintf(meas, sizeof meas, "%.4g %s", shown_meas, rep->unit.c_str());
    std::snprintf(pred, sizeof pred, "%.4g %s", shown_pred, rep->unit.c_str());
    std::printf("%-44s %-12s %6zu %12s %12s %8.1f%% %5.3g%%  %s\n", c.name.c_str(), c.category.c_str(), c.points.size(), meas, pred, worst,
                rep->tolerance_pct, c.status.c_str());
  }
  // Summary per category over points.
  std::printf("\n%-12s %6s %6s %8s %8s %8s   %s\n", "category", "cases", "points", "MAPE", "median", "max", "pass / fail / known gap / skipped");
  std::map<std::string, std::vector<const Case*>> by_cat;
  for (const auto& c : cases) by_cat[c.category].push_back(&c);
  json summary = json::object();
  for (const auto& [cat, list] : by_cat) {
    std::vector<double> errs;
    int pass = 0, fail = 0, gap = 0, skip = 0;
    for (const Case* c : list) {
      if (c->status == "pass" || c->status == "known gap closed") ++pass;
      else if (c->status == "fail" || c->status == "error") ++fail;
      else if (c->status == "known gap") ++gap;
      else ++skip;
      if (c->status == "skipped" || c->status == "error") continue;
      for (const auto& p : c->points)
        if (std::isfinite(p.predicted)) errs.push_back(std::abs(p.error_pct()));
    }
    double mape = 0, mx = 0;
    for (double e : errs) mape += e, mx = std::max(mx, e);
    mape = errs.empty() ? 0 : mape / errs.size();
    if (errs.empty())
      std::printf("%-12s %6zu %6zu %8s %8s %8s   %d / %d / %d / %d\n", cat.c_str(), list.size(), errs.size(), "-", "-", "-", pass, fail, gap, skip);
    else
      std::printf("%-12s %6zu %6zu %7.1f%% %7.1f%% %7.1f%%   %d / %d / %d / %d\n", cat.c_str(), list.size(), errs.size(), mape, median(errs), mx,
                  pass, fail, gap, skip);
    summary[cat] = {{"cases", list.size()}, {"points", errs.size()}, {"pass", pass}, {"fail", fail}, {"known_gap", gap}, {"skipped", skip}};
    if (!errs.empty()) {
      summary[cat]["mape_pct"] = mape;
      summary[cat]["median_abs_error_pct"] = median(errs);
      summary[cat]["max_abs_error_pct"] = mx;
    }
  }

  const bool failed = std::any_of(cases.begin(), cases.end(), [&](const Case& c) {
    return c.status == "fail" || c.status == "error" || (o.strict && c.status == "known gap");
  });
  if (std::all_of(cases.begin(), cases.end(), [](const Case& c) { return c.status == "skipped"; }))
    std::printf("\nnote: every case was skipped (their inputs are missing): nothing was validated\n");
  if (!o.out_dir.empty()) {
    std::string csv = "case,category,point,metric,unit,measured,predicted,error_pct,tolerance_pct,within,status\n";
    json report;
    report["summary"] = summary;
    report["params_files"] = o.params_files;
    report["cases"] = json::array();
    for (const auto& c : cases) {
      json jc = {{"name", c.name}, {"file", c.file}, {"category", c.category}, {"status", c.status}, {"source", c.doc["source"]}};
      if (!c.skip_reason.empty()) jc["reason"] = c.skip_reason;
      if (!c.run_error.empty()) jc["error"] = c.run_error;
      if (!c.known_gap.empty()) jc["known_gap"] = c.known_gap;
      if (!c.params_file.empty()) jc["params_file"] = c.params_file;
      json pts = json::array();
      for (const auto& p : c.points) {
        if (!std::isfinite(p.predicted)) continue;
        char numbers[160];
        std::snprintf(numbers, sizeof numbers, ",%.9g,%.9g,%.4f,%.6g,%d,", p.measured, p.predicted, p.error_pct(), p.tolerance_pct,
                      p.within() ? 1 : 0);
        csv += csv_field(c.name) + "," + csv_field(c.category) + "," + csv_field(p.label) + "," + csv_field(p.metric) + "," +
               csv_field(p.unit) + numbers + csv_field(c.status) + "\n";
        pts.push_back({{"point", p.label}, {"metric", p.metric}, {"unit", p.unit}, {"measured", p.measured}, {"predicted", p.predicted},
                       {"error_pct", p.error_pct()}, {"tolerance_pct", p.tolerance_pct}});
      }
      jc["points"] = std::move(pts);
      report["cases"].push_back(std::move(jc));
    }
    std::map<std::string, std::string> files_out = {{"report.csv", csv}, {"report.json", report.dump(1) + "\n"}};
    if (termination_requested()) throw Interrupted("validate interrupted; no report written");
    write_files_atomically(o.out_dir, files_out);
    const std::string script = std::string(COMPOSIM_SOURCE_DIR) + "/plots/validation.py";
    // An earlier run's plot would not match this report: it goes first.
    std::error_code ec;
    for (const char* old_plot : {"/report.png", "/report.pdf"}) fs::remove(o.out_dir + old_plot, ec);
    if (fs::exists(script) && fs::exists("/usr/bin/python3")) {
      const std::string log = o.out_dir + "/.report-plot.log";
      const std::string cmd = "/usr/bin/python3 " + shell_quote(script) + " " + shell_quote(o.out_dir + "/report.csv") + " " +
                              shell_quote(o.out_dir + "/report.png") + " >" + shell_quote(log) + " 2>&1";
      const int rc = std::system(cmd.c_str());
      const std::string why = last_line(log);  // the plot script's last line says why it drew nothing
      fs::remove(log, ec);
      // Ctrl-C reaches the plot script, not this process (std::system ignores SIGINT while
      // it waits): Python exits 1 on its KeyboardInterrupt, which is the user's stop.
      if (ended_by_interrupt(rc) || why.find("KeyboardInterrupt") != std::string::npos) {
        for (const char* f : {"/report.csv", "/report.json", "/report.png", "/report.pdf"}) fs::remove(o.out_dir + f, ec);
        throw Interrupted("validate interrupted; report removed");
      }
      if (rc == 0) std::printf("\nwrote %s/report.csv, report.json, report.png\n", o.out_dir.c_str());
      else if (WIFEXITED(rc) && WEXITSTATUS(rc) == 2) std::printf("\nwrote %s/report.csv, report.json (no plot: no points)\n", o.out_dir.c_str());
      else std::printf("\nwrote %s/report.csv, report.json (no plot: %s)\n", o.out_dir.c_str(), why.empty() ? "the plot script failed" : why.c_str());
    } else {
      std::printf("\nwrote %s/report.csv, report.json\n", o.out_dir.c_str());
    }
    if (termination_requested()) {  // while the plot was drawn: the report goes, all of it
      for (const char* f : {"/report.csv", "/report.json", "/report.png", "/report.pdf"}) fs::remove(o.out_dir + f, ec);
      throw Interrupted("validate interrupted; report removed");
    }
  }
  return failed ? 1 : 0;
}

namespace {

struct CalRow {
  size_t case_index;
  double size_B, measured_time_s;
  bool holdout;
  std::string eff_param, hop_param, base_param;
  std::string link_param;     // NVLS rows: the NVLink efficiency their bandwidth was taken at
  double base_s, steps, x_s;  // x_s = bytes * f0 / B: the bandwidth term divided by 1/f
  double extra_s = 0;         // latency the plan adds beyond base + steps * hop (not fitted)
};

Case load_case_file(const std::string& file, const std::string& data) {
  Case c;
  c.file = file;
  std::error_code ec;
  if (fs::is_directory(file, ec)) input_error(file, "", "is a directory, not a case file");
  std::ifstream in(file);
  if (!in) input_error(file, "", "cannot open");
  c.doc = parse_json_input(in, file);
  c.name = need_str(c.doc, "name", c, "top level");
  c.category = need_str(c.doc, "category", c, "top level");
  if (c.category != "collective" || need_str(need(c.doc, "run", c, "top level"), "kind", c, "run") != "collective")
    input_error(file, "run.kind", "calibration uses collective sweeps only");
  c.params_file = case_params_file(c);
  if (!c.params_file.empty())
    input_error(file, "run.params", "a case with its own parameter file cannot be calibrated: its values would replace the fitted ones");
  load_measured(c, data);
  if (!c.skip_reason.empty()) input_error(file, "measured", c.skip_reason);
  return c;
}

// Runs the case's sweep (with `params` if given) and returns its CSV rows by size.
std::map<long long, std::map<std::string, std::string>> run_case(Case& c, const CalibrateOptions& o, const std::string& params,
                                                                  const std::string& dir) {
  ValidateOptions vo;
  vo.composim = o.composim;
  vo.data_dir = o.data_dir;
  if (!params.empty()) vo.params_files = {params};
  c.work_dir = dir;
  build_command(c, vo);
  const int rc = std::system(c.command.c_str());
  if (ended_by_interrupt(rc)) throw Interrupted("calibrate interrupted; no parameter file written");
  if (rc != 0) {  // its log goes with the scratch folder: what it said is the message
    const std::string last = last_line(dir + ".log");
    input_error(c.file, "run", "composim collective failed: " + (last.empty() ? std::string("(no output)") : last));
  }
  std::map<long long, std::map<std::string, std::string>> by_size;
  for (auto& r : read_csv(dir + "/collective.csv", {"size_B", "time_us", "busbw_GBps"})) by_size[std::stoll(r.at("size_B"))] = r;
  return by_size;
}

std::string efficiency_param(const Case& c, const std::string& link_class) {
  if (link_class == "pcie") return "pcie.link.efficiency";
  if (link_class == "network") return "network.efficiency";
  std::string topo = c.doc["run"]["topology"].get<std::string>();
  if (topo.find('/') != std::string::npos && !fs::path(topo).is_absolute()) topo = (fs::path(c.file).parent_path() / topo).string();
  const auto t = topo::Topology::load(topo);
  for (const auto& l : t.links())
    if (l.type == topo::LinkType::nvlink) return "nvlink.payload_efficiency_gen" + std::to_string(l.generation);
  return "nvlink.payload_efficiency_gen3";
}

// Relative error of each point (busbw at >= 1 MiB, time below), from a run's rows.
std::vector<double> point_errors(const Case& c, const std::map<long long, std::map<std::string, std::string>>& rows) {
  std::vector<double> e;
  for (const auto& p : c.points) {
    auto it = rows.find(static_cast<long long>(p.key));
    if (it == rows.end()) {
      e.push_back(NAN);
      continue;
    }
    const double pred = p.metric == "busbw" ? std::stod(it->second.at("busbw_GBps")) : std::stod(it->second.at("time_us"));
    e.push_back(100.0 * (pred - p.measured) / p.measured);
  }
  return e;
}

}  // namespace

int calibrate(const CalibrateOptions& o) {
  std::vector<Case> cases;
  std::set<std::string> seen;
  for (const auto& f : o.fit_cases) {
    cases.push_back(load_case_file(f, o.data_dir));
    if (!seen.insert(cases.back().name).second) input_error(f, "--fit", "case \"" + cases.back().name + "\" is given twice");
  }
  const size_t n_fit_cases = cases.size();
  for (const auto& f : o.holdout_cases) {
    cases.push_back(load_case_file(f, o.data_dir));
    if (!seen.insert(cases.back().name).second)
      input_error(f, "--holdout", "case \"" + cases.back().name + "\" is also fitted or given twice: a held-out case must be unseen");
  }
  if (cases.empty()) input_error("", "--fit", "no case given");
  ScratchDir scratch("composim-calibrate-");
  const std::string& tmp = scratch.path;

  // 1. The model's terms at every measured point, with the parameters in force.
  std::vector<CalRow> rows;
  size_t rate_bound = 0;  // fitted points bound by NCCL's per-channel tree rate: latencies only
  std::map<std::string, size_t> not_links;  // fitted points bound by something else than links ("shm", "host_memory"): the same
  std::vector<std::map<long long, std::map<std::string, std::string>>> before(cases.size());
  std::vector<std::vector<bool>> held(cases.size());
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    Case& c = cases[ci];
    std::sort(c.points.begin(), c.points.end(), [](const Point& a, const Point& b) { return a.key < b.key; });
    before[ci] = run_case(c, o, o.params_file, tmp + "/before" + std::to_string(ci));
    held[ci].assign(c.points.size(), ci >= n_fit_cases);
    const std::string nvlink_eff = efficiency_param(c, "nvlink");  // loads the case's topology: once per case
    for (size_t k = 0; k < c.points.size(); ++k) {
      const Point& p = c.points[k];
      if (o.holdout_cases.empty() && o.holdout_every > 0 && k % static_cast<size_t>(o.holdout_every) == static_cast<size_t>(o.holdout_every - 1)) held[ci][k] = true;
      auto it = before[ci].find(static_cast<long long>(p.key));
      if (it == before[ci].end()) continue;
      const auto& r = it->second;
      std::string algo = r.at("algorithm"), proto = r.at("protocol");
      std::transform(algo.begin(), algo.end(), algo.begin(), [](unsigned char ch) { return std::tolower(ch); });
      CalRow row;
      row.case_index = ci;
      row.size_B = p.key;
      row.measured_time_s = p.time_us * 1e-6;
      row.holdout = held[ci][k];
      // NVLS: its own efficiency (not the links'), and one latency term with no per-step part.
      // NVLS_TREE: its own efficiency where NVLink binds (link class nvlink), else the
      // network's; NVLS's latency and its network steps'.
      const bool nvls = algo == "nvls", nvls_tree = algo == "nvls_tree";
      const std::string& link_class = r.at("link_class");
      if (nvls_tree) row.hop_param = "collective.hop_latency_network_nvls_tree_Simple_s";
      if (nvls || (nvls_tree && link_class == "nvlink")) {
        row.eff_param = nvls ? "collective.efficiency_nvls" : "collective.efficiency_nvls_tree";
        row.link_param = nvlink_eff;
      } else if (nvls_tree) {
        row.eff_param = efficiency_param(c, link_class);
      } else {
        row.eff_param = link_class == "nvlink" ? nvlink_eff : efficiency_param(c, link_class);
        row.hop_param = "collective.hop_latency_" + link_class + "_" + algo + "_" + proto + "_s";
      }
      row.base_param = nvls || nvls_tree ? "collective.base_latency_nvls_Simple_s" : "collective.base_latency_" + algo + "_" + proto + "_s";
      row.base_s = param(row.base_param);
      // The steps at the link class's hop latency; across machines only the network's (the
      // intra-machine ones are in the known part below, with the extras).
      row.steps = std::stod(r.at("model_hop_steps"));
      row.x_s = std::stod(r.at("model_bottleneck_bytes")) * param(row.eff_param) / (std::stod(r.at("model_bandwidth_GBps")) * 1e9);
      // E.g. the achieved LL128 latency beyond NCCL's model, the GPUs' processing time (V100
      // LL128) and a tree's pipeline fill (less the chunk NCCL's tree latency counts): kept as
      // they are, not fitted.
      row.extra_s = std::stod(r.at("model_latency_us")) * 1e-6 - row.base_s - (row.hop_param.empty() ? 0.0 : row.steps * param(row.hop_param)) +
                    std::stod(r.at("model_processing_us")) * 1e-6 + std::stod(r.at("model_pipeline_us")) * 1e-6;
      // A tree whose steady time NCCL's per-channel rate bounds (model_channel_rate_us > 0,
      // trees across machines): that time does not move with the efficiency (near the point:
      // lower it enough and the links bind again), so the row fits latencies only, its
      // bandwidth term and the rate's known.
      // Bound by the SHM transport's rate or a host's memory, not by links, likewise: the time
      // does not move with a link efficiency (fitting one to it would misplace it).
      auto latencies_only = [&row](double known_s) {
        row.extra_s += row.x_s / param(row.eff_param) + known_s;
        row.x_s = 0;
        row.eff_param.clear();
      };
      if (const auto cr = r.find("model_channel_rate_us"); cr != r.end() && std::stod(cr->second) > 0) {
        latencies_only(std::stod(cr->second) * 1e-6);
        if (!row.holdout) ++rate_bound;
      } else if (const auto bb = r.find("model_bound_by"); bb != r.end() && bb->second != "links" && bb->second != "-" && !row.eff_param.empty()) {
        latencies_only(0);
        if (!row.holdout) ++not_links[bb->second];
      }
      if (row.measured_time_s > 0) rows.push_back(row);
    }
  }

  if (rate_bound > 0)
    std::printf("note: %zu fitted point%s bound by NCCL's per-channel tree rate: %s latencies only, not efficiencies\n", rate_bound,
                rate_bound == 1 ? " is" : "s are", rate_bound == 1 ? "it fits" : "they fit");
  for (const auto& [what, count] : not_links)
    std::printf("note: %zu fitted point%s bound by %s, not by links: %s latencies only, not efficiencies%s\n", count, count == 1 ? " is" : "s are",
                what == "shm" ? "the SHM transport's rate (collective.shm_transport_Bps)" : "a host's memory bandwidth",
                count == 1 ? "it fits" : "they fit", what == "shm" ? "; that rate is set in a parameter file, not fitted" : "");

  // 2. Least squares on the fitted points, latencies kept >= 0.
  std::vector<std::string> names;
  std::map<std::string, int> col;
  std::map<std::string, std::set<double>> steps_of_base;  // a base is told from its hop only by different step counts
  for (const auto& r : rows)
    if (!r.holdout) {
      for (const auto& nm : {r.eff_param, r.hop_param, r.base_param})
        if (!nm.empty() && !col.count(nm)) col[nm] = static_cast<int>(names.size()), names.push_back(nm);
      if (!r.hop_param.empty()) steps_of_base[r.base_param].insert(r.steps);  // a base without a hop (NVLS) is fitted alone
    }
  const size_t n_fit_rows = static_cast<size_t>(std::count_if(rows.begin(), rows.end(), [](const CalRow& r) { return !r.holdout; }));
  if (n_fit_rows == 0) input_error("", "--fit", "the fitted cases give no usable measured point");
  std::set<int> pinned;  // columns not fitted (latencies fixed at 0, or bases kept at NCCL's)
  std::set<int> kept;    // bases the data cannot tell from their hop: kept at NCCL's value
  for (const auto& [base, steps] : steps_of_base)
    if (steps.size() < 2) kept.insert(col[base]);
  // A latency that is under 1% of every fitted point's time (at its value in force, or 1 us
  // if that is 0) is not what the points measure: fitted, it would take whatever the
  // bandwidth terms leave (a 1-8 GiB sweep gave a hop latency 16x NCCL's, which changed the
  // tuner's choices at 32-128 MiB). It is kept at its value in force, with a note.
  std::vector<std::string> unseen;
  for (size_t j = 0; j < names.size(); ++j) {
    if (names[j].find("latency") == std::string::npos || kept.count(static_cast<int>(j))) continue;
    const double scale = param(names[j]) > 0 ? param(names[j]) : 1e-6;
    double share = 0;
    for (const auto& r : rows)
      if (!r.holdout) {
        if (r.hop_param == names[j]) share = std::max(share, r.steps * scale / r.measured_time_s);
        if (r.base_param == names[j]) share = std::max(share, scale / r.measured_time_s);
      }
    if (share < 0.01) {
      kept.insert(static_cast<int>(j));
      char buf[64];
      std::snprintf(buf, sizeof buf, " (at most %.2g%%)", 100 * share);
      unseen.push_back(names[j] + buf);
    }
  }
  for (const auto& u : unseen)
    std::printf("note: %s is under 1%% of every fitted point's time: kept at its value in force, not fitted (give smaller sizes to fit it)\n", u.c_str());
  std::fflush(stdout);  // the notes before the error
  if (kept.size() == names.size())
    input_error("", "--fit", "the fitted points identify no parameter (" + std::to_string(n_fit_rows) +
                                 " points; see the notes above): give points bound by links, and smaller sizes for latencies");
  if (n_fit_rows < names.size() - kept.size() + 1)
    input_error("", "--fit", std::to_string(n_fit_rows) + " fitted points for " + std::to_string(names.size() - kept.size()) +
                                 " parameters: give more sizes or cases");
  Eigen::VectorXd solution;
  for (int iter = 0; iter < 16; ++iter) {
    std::vector<const CalRow*> fit;
    for (const auto& r : rows)
      if (!r.holdout) fit.push_back(&r);
    Eigen::MatrixXd A = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(fit.size()), static_cast<Eigen::Index>(names.size()));
    Eigen::VectorXd b(static_cast<Eigen::Index>(fit.size()));
    for (size_t i = 0; i < fit.size(); ++i) {
      const CalRow& r = *fit[i];
      const double w = 1.0 / r.measured_time_s;
      if (!r.eff_param.empty()) A(static_cast<Eigen::Index>(i), col[r.eff_param]) = r.x_s * w;
      double known = r.extra_s;
      if (!r.hop_param.empty() && kept.count(col[r.hop_param])) known += r.steps * param(r.hop_param);
      else if (!r.hop_param.empty() && !pinned.count(col[r.hop_param])) A(static_cast<Eigen::Index>(i), col[r.hop_param]) = r.steps * w;
      if (kept.count(col[r.base_param])) known += r.base_s;
      else if (!pinned.count(col[r.base_param])) A(static_cast<Eigen::Index>(i), col[r.base_param]) = w;
      b(static_cast<Eigen::Index>(i)) = (r.measured_time_s - known) * w;
    }
    solution = A.colPivHouseholderQr().solve(b);
    int worst = -1;
    for (size_t j = 0; j < names.size(); ++j)
      if (names[j].find("latency") != std::string::npos && !pinned.count(static_cast<int>(j)) && solution(static_cast<Eigen::Index>(j)) < 0 &&
          (worst < 0 || solution(static_cast<Eigen::Index>(j)) < solution(worst)))
        worst = static_cast<int>(j);
    if (worst < 0) break;
    pinned.insert(worst);
  }
  // Start from the parameters in force (a --params file's), then overwrite what is fitted.
  json params = json::object();
  if (!o.params_file.empty()) {
    std::ifstream in(o.params_file);
    params = parse_json_input(in, o.params_file)["params"];
  }
  // The table is printed once every value is checked: a refused fit prints its error alone.
  std::string table;
  char line[256];
  std::snprintf(line, sizeof line, "%-48s %12s %12s\n", "parameter", "in force", "fitted");
  table += line;
  for (size_t j = 0; j < names.size(); ++j) {
    if (kept.count(static_cast<int>(j))) continue;  // not identifiable: left at its value in force
    double v = pinned.count(static_cast<int>(j)) ? 0.0 : solution(static_cast<Eigen::Index>(j));
    if (names[j].find("efficiency") != std::string::npos) {
      if (!(v > 0)) input_error("", "calibrate", "the fit gives a non-positive inverse efficiency for " + names[j] + ": the data cannot identify it");
      v = 1.0 / v;
      if (v > 1.0)
        input_error("", "calibrate", "the fit gives " + names[j] + " = " + std::to_string(v) +
                                         " (above 1: faster than the links allow); check the measured data");
    }
    // A value its parameter file could not hold (an efficiency under 1%, a latency over 1 s)
    // is refused here, not in the run that loads the file.
    try {
      check_param(names[j], v, "calibrate", names[j]);
    } catch (const InputError& e) {
      input_error("", "calibrate", "the fit gives " + names[j] + " = " + std::to_string(v) + ", which a parameter file cannot hold (" + e.reason() +
                                       "); check the measured data");
    }
    params[names[j]] = v;
    std::snprintf(line, sizeof line, "%-48s %12.6g %12.6g\n", names[j].c_str(), param(names[j]), v);
    table += line;
  }
  // NVLS rows were fitted at their NVLink efficiency in force; if ring rows moved that
  // efficiency too, keep the product NVLS's times were fitted to.
  for (const auto& r : rows) {
    if (r.holdout || r.link_param.empty() || !col.count(r.eff_param) || !col.count(r.link_param)) continue;
    const double v = params[r.eff_param].get<double>() * param(r.link_param) / params[r.link_param].get<double>();
    if (v > 1.0)
      input_error("", "calibrate", "the fit gives " + r.eff_param + " = " + std::to_string(v) + " at the fitted " + r.link_param +
                                       " (above 1: faster than the links allow); check the measured data");
    try {
      check_param(r.eff_param, v, "calibrate", r.eff_param);
    } catch (const InputError& e) {
      input_error("", "calibrate", "the fit gives " + r.eff_param + " = " + std::to_string(v) + " at the fitted " + r.link_param +
                                       ", which a parameter file cannot hold (" + e.reason() + "); check the measured data");
    }
    params[r.eff_param] = v;
    std::snprintf(line, sizeof line, "%-48s %12.6g %12.6g  (at the fitted %s)\n", r.eff_param.c_str(), param(r.eff_param), v, r.link_param.c_str());
    table += line;
    break;  // one NVLS efficiency: the first NVLS row's link sets it
  }
  std::fputs(table.c_str(), stdout);

  // 3. Re-run everything with the fitted parameters; errors before and after.
  json doc;
  doc["generated_by"] = "composim calibrate";
  doc["params"] = params;
  doc["method"] = "linear least squares on relative time residuals; latencies >= 0 (active set)";
  json fitted_on = json::array(), held_out = json::array();
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    json entry = {{"case", cases[ci].name}, {"measured", cases[ci].doc["measured"]}};
    (ci < n_fit_cases ? fitted_on : held_out).push_back(entry);
  }
  doc["fitted_on"] = fitted_on;
  if (!held_out.empty()) doc["held_out_cases"] = held_out;
  else {
    const int k = o.holdout_every;
    const char* suffix = k % 100 >= 11 && k % 100 <= 13 ? "th" : k % 10 == 1 ? "st" : k % 10 == 2 ? "nd" : k % 10 == 3 ? "rd" : "th";
    doc["held_out_points"] = "every " + std::to_string(k) + suffix + " point of each case, by size";
  }
  const std::string params_tmp = tmp + "/params.json";
  write_file_atomically(params_tmp, doc.dump(1) + "\n", "calibrate");
  std::vector<double> fb, fa, hb, ha;
  std::printf("\n%-34s %22s %22s\n", "case", "fitted points |err|", "held-out points |err|");
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    auto after = run_case(cases[ci], o, params_tmp, tmp + "/after" + std::to_string(ci));
    const auto eb = point_errors(cases[ci], before[ci]), ea = point_errors(cases[ci], after);
    std::vector<double> cfb, cfa, chb, cha;
    for (size_t k = 0; k < eb.size(); ++k) {
      if (!std::isfinite(eb[k]) || !std::isfinite(ea[k])) continue;
      (held[ci][k] ? chb : cfb).push_back(std::abs(eb[k]));
      (held[ci][k] ? cha : cfa).push_back(std::abs(ea[k]));
    }
    auto mean = [](const std::vector<double>& v) {
      double t = 0;
      for (double x : v) t += x;
      return v.empty() ? NAN : t / v.size();
    };
    auto pct = [](double v) {
      char buf[16];
      if (std::isnan(v)) return std::string("-");
      std::snprintf(buf, sizeof buf, "%.1f%%", v);
      return std::string(buf);
    };
    std::printf("%-34s %10s -> %7s   %10s -> %7s\n", cases[ci].name.c_str(), pct(mean(cfb)).c_str(), pct(mean(cfa)).c_str(),
                pct(mean(chb)).c_str(), pct(mean(cha)).c_str());
    fb.insert(fb.end(), cfb.begin(), cfb.end());
    fa.insert(fa.end(), cfa.begin(), cfa.end());
    hb.insert(hb.end(), chb.begin(), chb.end());
    ha.insert(ha.end(), cha.begin(), cha.end());
  }
  auto stats = [](const std::vector<double>& v) {
    double t = 0, mx = 0;
    for (double x : v) t += x, mx = std::max(mx, x);
    return json{{"points", v.size()}, {"mape_pct", v.empty() ? 0.0 : t / v.size()}, {"max_abs_error_pct", mx}};
  };
  doc["residuals"] = {{"fitted_before", stats(fb)}, {"fitted_after", stats(fa)}, {"held_out_before", stats(hb)}, {"held_out_after", stats(ha)}};
  if (hb.empty())  // nothing held out (e.g. --holdout-every larger than the sweeps): no held-out error to show
    std::printf("\n%-34s %9.1f%% -> %6.1f%%   %10s -> %7s   (mean |error|; no point held out)\n", "all",
                doc["residuals"]["fitted_before"]["mape_pct"].get<double>(), doc["residuals"]["fitted_after"]["mape_pct"].get<double>(), "-", "-");
  else
    std::printf("\n%-34s %9.1f%% -> %6.1f%%   %9.1f%% -> %6.1f%%   (mean |error|; max %.1f%% -> %.1f%% held out)\n", "all",
                doc["residuals"]["fitted_before"]["mape_pct"].get<double>(), doc["residuals"]["fitted_after"]["mape_pct"].get<double>(),
                doc["residuals"]["held_out_before"]["mape_pct"].get<double>(), doc["residuals"]["held_out_after"]["mape_pct"].get<double>(),
                doc["residuals"]["held_out_before"]["max_abs_error_pct"].get<double>(), doc["residuals"]["held_out_after"]["max_abs_error_pct"].get<double>());
  const std::string text = doc.dump(1) + "\n";
  write_files_atomically(fs::path(o.out_file).parent_path().empty() ? "." : fs::path(o.out_file).parent_path().string(),
                         {{fs::path(o.out_file).filename().string(), text}});
  std::printf("wrote %s\n", o.out_file.c_str());
  return 0;
}

}  // namespace composim::sim
