// composim: command-line entry point.
//
//   composim run --trace FILE [--trace FILE ...] --topology NAME|FILE [--ranks N]
//                [--placement gpu0,gpu1,...] [--out DIR] [--warmup N] [--p2p on|off]
//   composim import TRACE [--out FILE]
//   composim topology NAME|FILE [--dot FILE] [--route A B]
//   composim list-models [--markdown]
//   composim bench --trace FILE --topology NAME|FILE --ranks N
//
// Our own flags are parsed first; --cfg=... and --log=... are handed to SimGrid untouched.
// Bad input exits with status 2 and one line naming the file and the place.
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u.hpp>
#include <simgrid/version.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xbt/log.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <regex>
#include <sstream>
#include <thread>

#include "models/error.hpp"
#include "models/gpu.hpp"
#include "models/registry.hpp"
#include "models/units.hpp"
#include "sim/nccl_tests.hpp"
#include "sim/platform.hpp"
#include "sim/process.hpp"
#include "sim/replay.hpp"
#include "sim/report.hpp"
#include "sim/calibrate.hpp"
#include "sim/sweep.hpp"
#include "sim/validate.hpp"
#include "topologies/generate.hpp"
#include "topologies/routing.hpp"
#include "traces/capture/capture_trace.hpp"
#include "traces/kineto.hpp"
#include "traces/workload_json.hpp"

namespace {

using namespace composim;

constexpr const char* kVersion = "0.1.0";

std::string g_compose;  // --compose of the subcommand being run
std::vector<std::pair<std::string, std::vector<std::string>>> parse_compose(const std::string& text);

// Loads a topology and applies --compose and --p2p.
topo::Topology load_topology(const std::string& name, const std::string& p2p) {
  topo::Topology t = topo::Topology::load(name);
  if (!g_compose.empty()) t.set_composition(parse_compose(g_compose), "--compose");
  if (p2p == "off") t.set_p2p_enabled(false);
  else if (p2p == "on") t.force_p2p_on();
  return t;
}

struct RunArgs {
  std::vector<std::string> traces;
  std::string topology;
  int ranks = 0;
  std::string placement;
  std::string out;
  int warmup = -1;
  std::string p2p;
  std::string launch_latency;
  std::vector<std::string> dp_groups;
  bool placement_given = false;
};

// "host0=gpu0-3,host1=gpu4-7,gpu9": hosts and the devices attached to them; "gpu0-3" is
// gpu0, gpu1, gpu2, gpu3 (a name prefix and a numeric range).
std::vector<std::pair<std::string, std::vector<std::string>>> parse_compose(const std::string& text) {
  std::vector<std::pair<std::string, std::vector<std::string>>> spec;
  std::stringstream ss(text);
  std::string item;
  if (!text.empty() && text.back() == ',') input_error("", "--compose", "\"" + text + "\" ends with a comma (expected a device after it)");
  while (std::getline(ss, item, ',')) {
    while (!item.empty() && item.front() == ' ') item.erase(0, 1);
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (item.empty()) input_error("", "--compose", "an empty item in \"" + text + "\" (two commas in a row?)");
    std::string dev = item;
    if (auto eq = item.find('='); eq != std::string::npos) {
      spec.emplace_back(item.substr(0, eq), std::vector<std::string>{});
      dev = item.substr(eq + 1);
      if (dev.find('=') != std::string::npos)
        input_error("", "--compose", "\"" + item + "\" has two '=' (separate hosts with commas: host0=gpu0-3,host1=gpu4-7)");
      if (dev.empty()) input_error("", "--compose", "\"" + item + "\" attaches no device (expected host=devices, e.g. host0=gpu0-3)");
    }
    if (spec.empty()) input_error("", "--compose", "expected host=devices, e.g. host0=gpu0-3,host1=gpu4-7");
    // A range is a name ending in digits, a dash and digits, nothing after: "n0.gpu0-3" is
    // n0.gpu0 to n0.gpu3. Anything else is one device's name, checked against the topology.
    static const std::regex kRange(R"(^(.*[^0-9])?([0-9]+)-([0-9]+)$)");
    if (std::smatch m; std::regex_match(dev, m, kRange)) {
      const std::string prefix = m[1].str();
      long long lo = 0, hi = -1;
      if (m[2].length() < 10 && m[3].length() < 10) {
        lo = std::stoll(m[2].str());
        hi = std::stoll(m[3].str());
      }
      if (hi < lo || hi - lo > 100000)
        input_error("", "--compose", "cannot read the range \"" + dev + "\" (expected a name with first-last, e.g. gpu0-3)");
      for (long long k = lo; k <= hi; ++k) spec.back().second.push_back(prefix + std::to_string(k));
    } else {
      spec.back().second.push_back(dev);
    }
  }
  if (spec.empty()) input_error("", "--compose", "expected host=devices, e.g. host0=gpu0-3,host1=gpu4-7");
  return spec;
}

std::vector<int> parse_placement(const topo::Topology& t, const std::string& text) {
  std::vector<int> out;
  if (const auto last = text.find_last_not_of(' '); last != std::string::npos && text[last] == ',')
    input_error("", "--placement", "\"" + text + "\" ends with a comma (expected a GPU after it)");
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    while (!item.empty() && item.front() == ' ') item.erase(0, 1);
    while (!item.empty() && item.back() == ' ') item.pop_back();
    // "host0:gpu3": the rank runs on host0, which must own gpu3.
    std::string host;
    if (auto colon = item.find(':'); colon != std::string::npos) {
      host = item.substr(0, colon);
      item = item.substr(colon + 1);
    }
    auto n = t.find_node(item);
    if (!n) {
      // Accept bare indices into the GPU list.
      try {
        size_t pos = 0;
        int i = std::stoi(item, &pos);
        if (pos == item.size() && i >= 0 && i < static_cast<int>(t.gpus().size())) n = t.gpus()[i];
      } catch (...) {
      }
    }
    if (!n || t.nodes()[*n].type != topo::NodeType::gpu)
      input_error("", "--placement", "\"" + item + "\" is not a GPU of topology \"" + t.name() + "\"");
    if (!host.empty()) {
      auto h = t.find_node(host);
      if (!h || t.nodes()[*h].type != topo::NodeType::host) input_error("", "--placement", "\"" + host + "\" is not a host of topology \"" + t.name() + "\"");
      if (!t.attached(*n))
        input_error("", "--placement", "rank " + std::to_string(out.size()) + " runs on " + host + " but " + item + " is not attached to any host in the composition");
      if (t.host_of(*n) != *h)
        input_error("", "--placement", "rank " + std::to_string(out.size()) + " runs on " + host + " but " + item + " is attached to " +
                                           t.nodes()[t.host_of(*n)].name);
    }
    if (std::find(out.begin(), out.end(), *n) != out.end())
      input_error("", "--placement", "GPU \"" + t.nodes()[*n].name + "\" is given twice");
    if (!t.attached(*n)) input_error("", "--placement", "GPU \"" + t.nodes()[*n].name + "\" is not attached to any host in the composition");
    out.push_back(*n);
  }
  if (out.empty()) input_error("", "--placement", "needs a comma-separated list of GPUs");
  return out;
}

std::string join(const std::set<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// --gpus N with --placement: both say how many GPUs, so they must agree.
void check_gpus_match_placement(int gpus, size_t placed) {
  if (gpus > 0 && static_cast<size_t>(gpus) != placed)
    input_error("", "--gpus", std::to_string(gpus) + " GPUs but --placement names " + std::to_string(placed) + " (give one of the two)");
}

// Trace files of --trace arguments: a file as given; a directory (one job's per-rank
// traces, as the profiler writes them) gives its *.json and *.json.gz files (any case), by name.
std::vector<std::string> expand_traces(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) {
      out.push_back(p);
      continue;
    }
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(p, ec)) {
      const std::string name = e.path().filename().string();
      std::error_code type_ec;
      std::string lower = name;  // TRACE.JSON is a trace too
      std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      if (name[0] == '.' || !(lower.ends_with(".json") || lower.ends_with(".json.gz"))) continue;
      if (e.is_regular_file(type_ec)) {
        files.push_back(e.path().string());
      } else if (e.is_symlink(type_ec) && !fs::exists(e.path(), type_ec)) {
        // A rank's trace that is a broken link would otherwise drop that rank unnoticed.
        input_error(e.path().string(), "--trace " + p, "is a link to a missing file (" + fs::read_symlink(e.path(), type_ec).string() + ")");
      }
    }
    if (ec) input_error(p, "--trace", "cannot list the directory: " + ec.message());
    if (files.empty()) input_error(p, "--trace", "directory holds no trace files (*.json or *.json.gz)");
    std::sort(files.begin(), files.end());
    out.insert(out.end(), files.begin(), files.end());
  }
  // One file given twice (or also through its directory) would be two ranks claiming one.
  std::map<std::pair<dev_t, ino_t>, size_t> seen;
  for (size_t i = 0; i < out.size(); ++i) {
    struct stat st {};
    if (::stat(out[i].c_str(), &st) != 0) continue;  // the importer says why it cannot be read
    if (auto [it, fresh] = seen.emplace(std::make_pair(st.st_dev, st.st_ino), i); !fresh)
      input_error(out[i], "--trace", "given twice (as " + out[it->second] + " too): give each rank's trace once");
  }
  return out;
}

std::vector<trace::Workload> load_traces(const std::vector<std::string>& paths) {
  std::vector<trace::Workload> w;
  for (const auto& p : expand_traces(paths)) w.push_back(trace::load_workload(p));
  return w;
}

void make_parent_dirs(const std::string& file) {
  std::error_code ec;
  const auto parent = std::filesystem::path(file).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) input_error(file, "", "cannot create its directory: " + ec.message());
}

// The largest of this process and its children (a sweep simulates each size in a child).
double peak_rss_MiB() {
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  return std::max(self.ru_maxrss, children.ru_maxrss) / 1024.0;
}

// SimGrid ends the process (abort) on a --cfg or --log value it cannot use. Those options
// are tried first in a child process, which uses them as a simulation does (an engine, a
// split-duplex link, a route, one flow); SimGrid's complaint becomes an input error here.
void check_simgrid_options(const std::vector<char*>& args) {
  std::string given;
  for (size_t i = 1; i + 1 < args.size(); ++i)
    if (std::strncmp(args[i], "--cfg", 5) == 0 || std::strncmp(args[i], "--log", 5) == 0)
      if (i > 2) given += (given.empty() ? "" : " ") + std::string(args[i]);  // args[1..2] are ours
  if (given.empty()) return;
  int fds[2];
  if (pipe(fds) != 0) return;
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return;
  }
  if (child == 0) {
    close(fds[0]);
    dup2(fds[1], STDERR_FILENO);
    dup2(fds[1], STDOUT_FILENO);
    std::vector<char*> copy = args;
    int argc = static_cast<int>(copy.size()) - 1;
    try {  // as a simulation uses the engine: a zone, split-duplex links, a route, a flow
      simgrid::s4u::Engine engine(&argc, copy.data());
      auto* zone = simgrid::s4u::create_full_zone("probe");
      auto* a = zone->create_host("a", 1e9)->seal();
      auto* b = zone->create_host("b", 1e9)->seal();
      auto* link = zone->create_split_duplex_link("l", 1e9)->set_latency(1e-6)->seal();
      zone->add_route(a->get_netpoint(), b->get_netpoint(), nullptr, nullptr,
                      {simgrid::s4u::LinkInRoute(link, simgrid::s4u::LinkInRoute::Direction::UP)}, false);
      zone->seal();
      auto comm = simgrid::s4u::Comm::sendto_init(a, b);
      comm->set_payload_size(1 << 20);
      comm->start();
      engine.run();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "\ncomposim-probe-error: %s\n", e.what());  // its first line is the reason
      std::fflush(stderr);
      _exit(3);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string said;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) said.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  // SimGrid's reason: its CRITICAL line ("[0.000000] ./src/xbt/log.cpp:368: [root/CRITICAL]
  // Invalid control string 'foo'"), else the last line that is not a backtrace or an INFO
  // line (an exception's message, written last).
  std::string why, last;
  if (const auto at = said.find("composim-probe-error: "); at != std::string::npos) {
    const auto from = at + 22;
    said = said.substr(from, said.find('\n', from) - from);  // the exception's first line
  }
  std::istringstream lines(said);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line.find("Backtrace") != std::string::npos || line.rfind("  ->", 0) == 0 || line.find("/INFO]") != std::string::npos)
      continue;
    const auto critical = line.find("/CRITICAL] ");
    if (critical != std::string::npos) {
      why = line.substr(critical + 11);
      break;
    }
    last = line;
  }
  if (why.empty()) why = last;
  input_error("", "--cfg/--log", "SimGrid refused \"" + given + "\": " + (why.empty() ? "it stopped the process" : why));
}

void start_engine(int argc_sg, std::vector<char*>& argv_sg) {
  static bool started = false;
  if (started) return;
  started = true;
  xbt_log_control_set("root.thresh:warning");
  // Our network model defaults go first, so a user's own --cfg=... (which follows) wins.
  static char model[] = "--cfg=network/model:CM02", cross[] = "--cfg=network/crosstraffic:0";
  std::vector<char*> args{argv_sg[0], model, cross};
  for (int i = 1; i < argc_sg; ++i) args.push_back(argv_sg[i]);
  args.push_back(nullptr);
  check_simgrid_options(args);
  int argc = static_cast<int>(args.size()) - 1;
  // SimGrid's engine installs a SIGINT handler that calls exit(), which can crash in its
  // shutdown mid-simulation (a segfault instead of the interrupt a sweep recognises): the
  // disposition from before (default, or ignored in a background job) is put back.
  struct sigaction before_int {}, before_term {};
  sigaction(SIGINT, nullptr, &before_int);
  sigaction(SIGTERM, nullptr, &before_term);
  auto* engine = new simgrid::s4u::Engine(&argc, args.data());
  (void)engine;
  sigaction(SIGINT, &before_int, nullptr);
  sigaction(SIGTERM, &before_term, nullptr);
}

// A duration flag: a number with its unit ("2us"); a bare number is refused, since "5"
// could mean seconds or microseconds.
double duration_flag(const std::string& flag, const std::string& text) {
  if (text.find_first_of("nums") == std::string::npos)
    input_error("", flag, "\"" + text + "\" needs a unit, e.g. 2us, 500ns or 0.1ms");
  try {
    return parse_duration_s(text);
  } catch (const std::invalid_argument& e) {
    input_error("", flag, e.what());
  }
}

// Checks before a long simulation that --out can be written, so a bad location fails fast.
// Leaves nothing behind: the writers make the directory when the outputs are ready, so a
// run that fails leaves the file system as it was. The directory, or else its nearest
// existing ancestor, must be a directory in which this process can create an entry (tried
// with a probe directory, removed at once: permission bits do not tell for root or /proc).
void check_out_dir(const std::string& dir, std::initializer_list<const char*> outputs = {}) {
  namespace fs = std::filesystem;
  if (dir.empty()) input_error("", "--out", "needs a directory");
  std::error_code ec;
  const fs::path wanted = fs::absolute(dir, ec);
  if (fs::is_symlink(fs::symlink_status(wanted, ec)) && !fs::exists(wanted, ec)) {
    if (ec == std::errc::too_many_symbolic_link_levels) input_error(dir, "--out", "is a loop of symbolic links");
    input_error(dir, "--out", "is a symbolic link to nothing (" + fs::read_symlink(wanted, ec).string() + ")");
  }
  fs::path p = wanted;
  while (!fs::exists(p, ec) && p.has_parent_path() && p.parent_path() != p) p = p.parent_path();
  const bool exists = p == wanted;
  if (!fs::is_directory(p, ec))
    input_error(dir, "--out", exists ? "exists and is not a directory" : "cannot create the output directory: " + p.string() + " is not a directory");
  const fs::path probe = p / (".composim-write-test-" + std::to_string(getpid()));
  if (!fs::create_directory(probe, ec) || ec)
    input_error(dir, "--out", (exists ? "cannot write in the output directory: " : "cannot create the output directory: cannot write in " + p.string() + ": ") + ec.message());
  fs::remove(probe, ec);
  for (const char* name : outputs) sim::check_replaceable((fs::path(dir) / name).string(), "--out");
}

int cmd_run(const RunArgs& a, std::vector<char*>& sg_argv, bool out_given) {
  if (out_given) check_out_dir(a.out, {"summary.json", "iterations.csv", "links.csv", "timeline.json"});
  topo::Topology topology = load_topology(a.topology, a.p2p);
  auto workloads = load_traces(a.traces);
  sim::ReplayOptions opt;
  opt.ranks = a.ranks;
  opt.dp_groups = a.dp_groups;
  if (a.placement_given && a.placement.empty()) input_error("", "--placement", "needs a comma-separated list of GPUs");
  if (!a.placement.empty()) opt.placement = parse_placement(topology, a.placement);
  if (!a.launch_latency.empty()) {
    opt.launch_latency_s = duration_flag("--launch-latency", a.launch_latency);
    // Launch latencies are microseconds (hardware.md); a second is already far outside any
    // what-if and larger values overflow the simulated clock.
    if (opt.launch_latency_s > 1.0)
      input_error("", "--launch-latency", "\"" + a.launch_latency + "\" is more than 1 s; kernel launch latencies are a few microseconds");
  }
  start_engine(static_cast<int>(sg_argv.size()) - 1, sg_argv);
  const auto t0 = std::chrono::steady_clock::now();
  sim::Replay replay(topology, std::move(workloads), opt);
  sim::ReplayResult result = replay.run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto& ws = replay.workloads();
  sim::RunReport rep = sim::analyse(ws, result, a.warmup);
  for (const auto& w : ws)
    for (const auto& n : w.notes) rep.notes.push_back(w.source + ": " + n);
  if (ws.size() > 1 && ws[0].world_size > static_cast<int>(ws.size()))
    rep.notes.push_back(std::to_string(ws.size()) + " traces of a " + std::to_string(ws[0].world_size) + "-rank job: replaying those " +
                        std::to_string(ws.size()) + " ranks only");
  // A trace replicated to another rank count is a what-if: its measured steps ran on the
  // captured ranks, so the error compares two different jobs.
  const bool what_if = ws.size() == 1 && ws[0].world_size > 0 && replay.rank_count() != ws[0].world_size;
  if (what_if)
    rep.notes.push_back("the trace ran on " + std::to_string(ws[0].world_size) + " rank(s) and is replayed on " +
                        std::to_string(replay.rank_count()) + ": \"measured\" is the " + std::to_string(ws[0].world_size) +
                        "-rank run, so the error is the what-if's change from it, not the model's error");

  std::printf("composim %s: %d rank(s) on %s, %zu trace(s)\n", kVersion, replay.rank_count(), topology.name().c_str(), ws.size());
  std::printf("%-22s %14s %14s %9s\n", "iteration", "measured_ms", "predicted_ms", what_if ? "change_%" : "error_%");
  for (const auto& r : rep.iterations) {
    if (r.zero_length) {  // nothing measured: no error to print
      std::printf("%-22s %14.3f %14.3f %9s  (zero length, excluded)\n", r.name.c_str(), r.measured_s * 1e3, r.predicted_s * 1e3, "n/a");
      continue;
    }
    std::printf("%-22s %14.3f %14.3f %+9.2f%s\n", r.name.c_str(), r.measured_s * 1e3, r.predicted_s * 1e3, r.error_pct,
                r.warmup ? "  (warm-up, excluded)" : r.empty ? "  (no CUDA call, excluded)" : "");
  }
  std::string of;
  for (const auto& sr : rep.breakdown_steps) of += (of.empty() ? "" : " and ") + sr.step + " on rank " + std::to_string(sr.rank);
  if (rep.breakdown_steps.size() > 1) of = "mean of " + of;
  std::printf("breakdown of the median step (%s): compute %.3f ms, exposed communication %.3f ms, memcpy %.3f ms, idle %.3f ms\n",
              of.c_str(), rep.breakdown.compute_s * 1e3, rep.breakdown.exposed_communication_s * 1e3, rep.breakdown.memcpy_s * 1e3,
              std::max(0.0, rep.breakdown.idle_s) * 1e3);  // rounding of the parts leaves -1e-16 s ("-0.000")
  std::printf("summary: predicted %.3f ms vs measured %.3f ms%s per iteration (median of %zu), %s %+.2f%%; %llu ops, %llu flows, %llu collectives%s; simulated in %.3f s\n",
              rep.predicted_iteration_s * 1e3, rep.measured_iteration_s * 1e3,
              what_if ? (" on " + std::to_string(ws[0].world_size) + " rank(s)").c_str() : "",
              static_cast<size_t>(std::count_if(rep.iterations.begin(), rep.iterations.end(), [](const auto& r) { return !r.warmup && !r.empty; })),
              what_if ? "change" : "error", rep.error_pct, static_cast<unsigned long long>(result.ops_simulated), static_cast<unsigned long long>(result.flows),
              static_cast<unsigned long long>(result.collectives),
              result.p2p_paired ? (", " + std::to_string(result.p2p_paired) + " sends paired with their receives").c_str() : "", wall);
  // Every note goes to the terminal and into summary.json.
  for (const auto& w : ws)
    if (w.synthetic) rep.notes.push_back(w.source + " is a synthetic trace: its \"measured\" times come from its generator, not from hardware");
  {
    // Kernels keep their measured durations: on another GPU model the compute is not rescaled.
    std::set<std::string> topo_models;
    for (const auto& rt : result.ranks) topo_models.insert(gpu::find_gpu_spec(topology.nodes()[rt.gpu_node].model).name);
    std::set<std::string> noted;
    for (const auto& w : ws) {
      bool known = false;
      const std::string m = w.gpu_model.empty() ? "" : gpu::find_gpu_spec(w.gpu_model, &known).name;
      if (known && !topo_models.count(m) && noted.insert(m).second)
        rep.notes.push_back("the trace ran on " + m + " GPUs, the ranks run on " + join(topo_models) + " GPUs of " + topology.name() +
                            ": kernels keep their measured durations (compute is not rescaled)");
    }
  }
  {
    // The modelled collectives against the measured ones: a self-replay's step can match
    // while its collectives do not (a CPU-bound step hides them), which a what-if on that
    // topology then inherits. Both sides include waiting for the other ranks.
    double measured_s = 0, replayed_s = 0;
    size_t counted = 0;
    for (const auto& rt : result.ranks) {
      const auto& w = ws[rt.workload];
      for (const auto& c : w.collectives) {
        // Sends and receives are left out: unpaired ones replay as measured, and a paired
        // one's time, measured and replayed, is mostly its wait for the peer's launch (a
        // pipeline's bubble), which says little of the communication model.
        if (c.gpu_op < 0 || c.in_bytes == 0 || c.kind == collective::Kind::send_recv) continue;
        measured_s += static_cast<double>(w.gpu_ops[c.gpu_op].dur_ns) * 1e-9;
        replayed_s += rt.gpu_end[c.gpu_op] - rt.gpu_start[c.gpu_op];
        ++counted;
      }
    }
    // Not for a what-if on another rank count: its measured collectives are another job's.
    if (!what_if && counted > 0 && measured_s > 1e-4 && replayed_s > 0 && (measured_s > 2 * replayed_s || replayed_s > 2 * measured_s)) {
      char buf[512];
      std::snprintf(buf, sizeof buf,
                    "the traces' %zu collective kernel(s) over %zu rank(s) took %.3f ms measured and %.3f ms replayed on %s (%.1f times %s, waits for "
                    "other ranks included): ",
                    counted, result.ranks.size(), measured_s * 1e3, replayed_s * 1e3, topology.name().c_str(),
                    measured_s > replayed_s ? measured_s / replayed_s : replayed_s / measured_s, measured_s > replayed_s ? "less" : "more");
      rep.notes.push_back(std::string(buf) +
                          "the traced system's communication differs from this topology's model; the step time shows it only where "
                          "communication is exposed");
    }
  }
  for (const auto& n : result.notes) rep.notes.push_back(n);
  for (const auto& n : topo::long_reach_notes(topology)) rep.notes.push_back(n);
  if (const auto changed = format_overridden_params(); !changed.empty()) rep.notes.push_back("model parameters set: " + changed);
  if (result.p2p_at_measured_duration) {
    // Why they were not paired with their peers, the commonest first.
    std::vector<std::pair<std::uint64_t, std::string>> why = {
        {result.p2p_without_peer, "the traces do not say which peer they talk to (PyTorch records it since 2.4; a batched kernel takes it from the record_param_comms before it, which the trace window may cut)"},
        {result.p2p_peer_without_trace, "their peers' traces were not given"},
        {result.p2p_replicated, "a replicated trace's peers are ranks of the run it was captured on"},
        {result.p2p_peer_batched, "the two ranks' traces name different numbers of them, and the short side has batched ones (naming no peer) "
                                  "that may be the missing ones, so they cannot be paired in order"}};
    std::stable_sort(why.begin(), why.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string reasons;
    for (const auto& [n, text] : why)
      if (n) reasons += (reasons.empty() ? "" : "; ") + (n == result.p2p_at_measured_duration ? text : std::to_string(n) + ": " + text);
    rep.notes.push_back(std::to_string(result.p2p_at_measured_duration) + " send/recv operation(s) ran at their measured duration: " + reasons);
  }
  if (result.p2p_parts_left_out)
    rep.notes.push_back(std::to_string(result.p2p_parts_left_out) +
                        " send(s) or receive(s) of batched send/recv kernels were left out of them: their peers' traces were not given, or the two "
                        "ranks' traces cannot be paired in order; each such kernel ended with its paired sends and receives");
  if (result.p2p_paired_without_size)
    rep.notes.push_back(std::to_string(result.p2p_paired_without_size) +
                        " paired send(s) had no message size in the trace, or a size of 0: each pair ran at the shorter of its two measured durations");
  if (result.unequal_all_to_all)
    rep.notes.push_back(std::to_string(result.unequal_all_to_all) +
                        " all_to_all(s) moved different amounts on different ranks (all_to_allv) and were modelled as even ones of the largest");
  if (result.collectives_without_size)
    rep.notes.push_back(std::to_string(result.collectives_without_size) +
                        " collective(s) had no message size in the trace, or a size of 0, and were replayed at their measured duration");
  for (const auto& n : rep.notes) std::printf("note: %s\n", n.c_str());

  if (out_given) {
    nlohmann::ordered_json meta = nlohmann::ordered_json::object();
    meta["topology"] = topology.name();
    meta["topology_file"] = topology.file();
    std::string traces;
    for (const auto& w : ws) traces += (traces.empty() ? "" : ";") + w.source;
    meta["traces"] = traces;
    meta["what_if"] = what_if;  // replayed on another rank count than the trace ran on: error_pct is a change, not an error
    // What the run was computed with beyond the defaults (--params files, --nccl-buffsize).
    meta["params_overridden"] = nlohmann::ordered_json::object();
    for (const auto& [name, v] : overridden_params()) meta["params_overridden"][name] = v;
    meta["composim_version"] = kVersion;
    meta["simgrid_version"] = SIMGRID_VERSION_STRING;
    std::string placement;
    for (const auto& rt : result.ranks) placement += (placement.empty() ? "" : ",") + topology.nodes()[rt.gpu_node].name;
    meta["placement"] = placement;
    const auto busiest = sim::busiest_link(result, topology);
    meta["busiest_link"] = busiest.first;
    meta["busiest_link_utilisation"] = busiest.second;
    const std::string summary = sim::summary_json(rep, result, meta), iterations = sim::iterations_csv(rep),
                      links = sim::links_csv(result, topology);
    auto text = [](const std::string& s) { return [&s](std::ostream& out) { out << s; }; };
    sim::write_streams_atomically(a.out, {{"summary.json", text(summary)},
                                          {"iterations.csv", text(iterations)},
                                          {"links.csv", text(links)},
                                          {"timeline.json", [&](std::ostream& out) { sim::write_timeline_json(out, ws, result, topology); }}});
    std::printf("wrote %s/summary.json, iterations.csv, links.csv, timeline.json\n", a.out.c_str());
  }
  return 0;
}

struct CollectiveArgs {
  std::string op = "all_reduce", bytes = "8:1G", topology, placement, p2p, algo, proto, out, dtype = "float";
  bool placement_given = false;
  double step_factor = 2;
  int gpus = 0;
};

int cmd_collective(const CollectiveArgs& a, std::vector<char*>& sg_argv, bool out_given) {
  if (out_given) check_out_dir(a.out, {"collective.csv"});
  topo::Topology topology = load_topology(a.topology, a.p2p);
  sim::SweepOptions o;
  o.kind = collective::kind_named(a.op);
  // A hint only for the same letters spelt otherwise (AllReduce, allreduce, " float").
  auto letters = [](std::string_view v) {
    std::string l;
    for (char c : v)
      if (std::isalnum(static_cast<unsigned char>(c))) l += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return l;
  };
  if (o.kind == collective::Kind::unknown) {
    const auto near = collective::parse_kind(a.op);
    const bool same = near != collective::Kind::unknown && letters(a.op) == letters(collective::to_string(near));
    input_error("", "--op", "unknown collective \"" + a.op + "\" (" + collective::kKindNames + ")" +
                                (same ? "; did you mean " + std::string(collective::to_string(near)) + "?" : ""));
  }
  o.type_size_B = sim::nccl_tests_type_size_B(a.dtype);
  if (o.type_size_B == 0) {
    std::string hint;
    for (auto t : sim::kNcclTestsTypes)
      if (letters(t) == letters(a.dtype)) hint = "; did you mean " + std::string(t) + "?";
    input_error("", "--dtype", "unknown type \"" + a.dtype + "\" (" + sim::nccl_tests_type_list() + ", as nccl-tests -d)" + hint);
  }
  o.type_name = a.dtype;
  try {
    o.sizes_B = sim::size_range(a.bytes, a.step_factor);
  } catch (const std::invalid_argument& e) {
    input_error("", "--bytes", e.what());
  }
  if (a.placement_given && a.placement.empty()) input_error("", "--placement", "needs a comma-separated list of GPUs");
  if (!a.placement.empty()) {
    o.gpus = parse_placement(topology, a.placement);
    check_gpus_match_placement(a.gpus, o.gpus.size());
  } else {
    const auto attached = topology.attached_gpus();
    const int n = a.gpus > 0 ? a.gpus : static_cast<int>(attached.size());
    if (n > static_cast<int>(attached.size()))
      input_error(topology.file(), "--gpus", std::to_string(n) + " GPUs but topology \"" + topology.name() + "\" has only " +
                                                 std::to_string(attached.size()) + (topology.composed() ? " attached" : ""));
    o.gpus.assign(attached.begin(), attached.begin() + n);
  }
  if (o.gpus.size() < 2) {
    if (a.placement.empty() && a.gpus == 0)
      input_error(topology.file(), "gpus", "topology \"" + topology.name() + "\" has " + std::to_string(o.gpus.size()) +
                                               (topology.composed() ? " attached" : "") + " GPU(s); a collective needs at least 2");
    input_error("", a.placement.empty() ? "--gpus" : "--placement", "a collective needs at least 2 GPUs");
  }
  // NCCL reduces FP8 only on compute capability 9.0+ (it returns ncclInvalidArgument,
  // "FP8 reduction support begins with sm90 capable devices"); copies of FP8 run anywhere.
  const bool reduces = o.kind == collective::Kind::all_reduce || o.kind == collective::Kind::reduce || o.kind == collective::Kind::reduce_scatter;
  if (reduces && a.dtype.rfind("f8", 0) == 0)
    for (int g : o.gpus)
      if (const auto& spec = gpu::find_gpu_spec(topology.nodes()[g].model); spec.compute_capability < 90)
        input_error("", "--dtype", "NCCL reduces " + a.dtype + " only on GPUs of compute capability 9.0 or later; " + topology.nodes()[g].name + " (" +
                                       spec.name + ") is " + std::to_string(spec.compute_capability / 10) + "." +
                                       std::to_string(spec.compute_capability % 10));
  try {
    if (!a.algo.empty()) o.choices.algorithms = sim::parse_algorithm_list(a.algo);
  } catch (const std::invalid_argument& e) {
    input_error("", "--algo", e.what());
  }
  try {
    if (!a.proto.empty()) o.choices.protocols = sim::parse_protocol_list(a.proto);
  } catch (const std::invalid_argument& e) {
    input_error("", "--proto", e.what());
  }
  // NCCL_PROTO and NCCL_ALGO do not reach NCCL's point-to-point operations: a protocol or
  // algorithm named for them would be one NCCL cannot run (LL128) or ignores.
  if (o.kind == collective::Kind::all_to_all || o.kind == collective::Kind::send_recv)
    for (const auto& [flag, value] : {std::pair{"--proto", &a.proto}, std::pair{"--algo", &a.algo}})
      if (!value->empty())
        input_error("", flag,
                    std::string(collective::to_string(o.kind)) +
                        " is a point-to-point operation: NCCL chooses its protocol itself (LL up to 16 KiB per peer inside a machine, "
                        "Simple otherwise) and has no algorithm choice for it, whatever NCCL_PROTO and NCCL_ALGO say");
  start_engine(static_cast<int>(sg_argv.size()) - 1, sg_argv);
  const auto t0 = std::chrono::steady_clock::now();
  o.jobs = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
  const std::string title = std::string(collective::to_string(o.kind)) + " on " + std::to_string(o.gpus.size()) + " GPUs of " +
                            topology.name() + (topology.p2p_enabled() ? "" : " (P2P off)") + ", simulated by composim";
  // As nccl-tests: the header, then each row as soon as it is simulated. The header waits
  // for the first row, so that an input error found while planning comes alone.
  bool header_printed = false;
  auto print_header = [&] {
    if (header_printed) return;
    header_printed = true;
    std::fputs(sim::format_table_header(title).c_str(), stdout);
    for (const auto& n : topo::long_reach_notes(topology)) std::printf("# note: %s\n", n.c_str());
  };
  o.on_row = [&o, &print_header](const sim::SweepRow& r) {
    print_header();
    std::fputs(sim::format_table_row(o, r).c_str(), stdout);
    std::fflush(stdout);
  };
  const auto rows = sim::run_sweep(topology, o);
  print_header();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fputs(sim::format_table_footer(rows).c_str(), stdout);
  size_t flows = 0;
  for (const auto& r : rows) flows += r.flows;
  std::printf("# composim: %zu flows, planned and simulated in %.2f s, peak RSS %.0f MiB\n", flows, wall, peak_rss_MiB());
  if (out_given) {
    sim::write_files_atomically(a.out, {{"collective.csv", sim::format_csv(o, rows)}});
    std::printf("wrote %s/collective.csv\n", a.out.c_str());
  }
  return 0;
}

struct P2pArgs {
  std::string topology, p2p, placement, bytes = "64M", out;
  int gpus = 0;
  bool placement_given = false;
};

// p2pBandwidthLatencyTest-style: unidirectional copy bandwidth between every ordered pair.
constexpr size_t kMaxP2pGpus = 1024;

int cmd_p2p(const P2pArgs& a, std::vector<char*>& sg_argv, bool out_given) {
  if (out_given) check_out_dir(a.out, {"p2p.csv"});
  topo::Topology topology = load_topology(a.topology, a.p2p);
  // p2pBandwidthLatencyTest is one process: it sees the GPUs of one machine, or of one host
  // of a composition.
  auto one_process = [&](int g, int h) {
    return topology.machine_of(g) == topology.machine_of(h) && (!topology.composed() || topology.host_of(g) == topology.host_of(h));
  };
  std::vector<int> gpus;
  if (a.placement_given && a.placement.empty()) input_error("", "--placement", "needs a comma-separated list of GPUs");
  if (!a.placement.empty()) {
    gpus = parse_placement(topology, a.placement);
    check_gpus_match_placement(a.gpus, gpus.size());
    for (int g : gpus)
      if (!one_process(g, gpus.front()))
        input_error(topology.file(), "--placement",
                    "\"" + topology.nodes()[gpus.front()].name + "\" and \"" + topology.nodes()[g].name + "\" are on different " +
                        (topology.composed() ? "hosts" : "machines") +
                        ": p2pBandwidthLatencyTest copies between the GPUs one process sees (`composim collective` goes across)");
  } else {
    // By default the GPUs of the first machine (or host).
    std::vector<int> visible;
    for (int g : topology.attached_gpus())
      if (visible.empty() || one_process(g, visible.front())) visible.push_back(g);
    const int n = a.gpus > 0 ? a.gpus : static_cast<int>(visible.size());
    if (n > static_cast<int>(visible.size()))
      input_error(topology.file(), "--gpus", std::to_string(n) + " GPUs but the first " + (topology.composed() ? "host" : "machine") + " of topology \"" +
                                                 topology.name() + "\" has only " + std::to_string(visible.size()));
    gpus.assign(visible.begin(), visible.begin() + n);
    if (a.gpus <= 0 && gpus.size() < 2)
      input_error(topology.file(), "p2p",
                  std::string("the first ") + (topology.composed() ? "host" : "machine") + " of topology \"" + topology.name() + "\" sees " +
                      std::to_string(gpus.size()) + " GPU" + (gpus.size() == 1 ? "" : "s") +
                      " and the copy matrix needs at least 2: name the GPUs with --placement");
  }
  double bytes = 0;
  try {
    bytes = sim::parse_nccl_size(a.bytes);
  } catch (const std::invalid_argument& e) {
    input_error("", "--bytes", e.what());
  }
  if (gpus.size() < 2) input_error("", a.placement.empty() ? "--gpus" : "--placement", "the copy matrix needs at least 2 GPUs");
  // Each ordered pair keeps a route and a copy: 1,024 GPUs (1,047,552 copies) take about
  // 9 s and 1.3 GB on a generated chassis; 2,000 GPUs ran out of memory.
  if (gpus.size() > kMaxP2pGpus)
    input_error(topology.file(), a.placement.empty() ? "--gpus" : "--placement",
                std::to_string(gpus.size()) + " GPUs are " + std::to_string(gpus.size() * (gpus.size() - 1)) +
                    " copies; the copy matrix takes at most " + std::to_string(kMaxP2pGpus) + " GPUs: name a subset with --placement or --gpus");
  std::vector<std::pair<int, int>> pairs;
  for (size_t i = 0; i < gpus.size(); ++i)
    for (size_t j = 0; j < gpus.size(); ++j)
      if (i != j) pairs.emplace_back(gpus[i], gpus[j]);
  start_engine(static_cast<int>(sg_argv.size()) - 1, sg_argv);
  const auto bw = sim::run_p2p(topology, pairs, bytes);
  if (const auto changed = format_overridden_params(); !changed.empty()) std::printf("# model parameters set: %s\n", changed.c_str());
  for (const auto& n : topo::long_reach_notes(topology)) std::printf("# note: %s\n", n.c_str());
  std::printf("Unidirectional P2P=%s Bandwidth Matrix (GB/s), %s copies on %s, simulated by composim\n   D\\D",
              topology.p2p_enabled() ? "Enabled" : "Disabled", a.bytes.c_str(), topology.name().c_str());
  for (size_t j = 0; j < gpus.size(); ++j) std::printf("%8zu", j);
  std::printf("\n");
  std::string csv = "src_gpu,dst_gpu,src,dst,bandwidth_GBps,route,params\n";
  const std::string changed = sim::csv_field(format_overridden_params());
  size_t k = 0;
  for (size_t i = 0; i < gpus.size(); ++i) {
    std::printf("%6zu ", i);
    for (size_t j = 0; j < gpus.size(); ++j) {
      if (i == j) {
        std::printf("%8s", "-");
        continue;
      }
      std::printf("%8.2f", bw[k] / 1e9);
      const auto r = topo::route(topology, gpus[i], gpus[j]);
      char rate[32];
      std::snprintf(rate, sizeof rate, "%.9g", bw[k] / 1e9);
      csv += std::to_string(i) + "," + std::to_string(j) + "," + sim::csv_field(topology.nodes()[gpus[i]].name) + "," +
             sim::csv_field(topology.nodes()[gpus[j]].name) + "," + rate + "," +
             (r.nvlink ? "nvlink" : r.network ? "network" : r.staged ? "staged" : "pcie") + "," + changed + "\n";
      ++k;
    }
    std::printf("\n");
  }
  if (out_given) {
    sim::write_files_atomically(a.out, {{"p2p.csv", csv}});
    std::printf("wrote %s/p2p.csv\n", a.out.c_str());
  }
  return 0;
}

int cmd_import(const std::string& path, const std::string& out, bool out_given) {
  if (out_given && out.empty()) input_error("", "--out", "needs a file name");
  if (out_given) {  // fail before a long parse, not after
    sim::check_replaceable(out, "--out");
    const auto parent = std::filesystem::path(out).parent_path();
    check_out_dir(parent.empty() ? "." : parent.string());
  }
  trace::Workload w = trace::load_workload(path);
  std::printf("%s: format %s, rank %d of %d, GPU \"%s\"\n", path.c_str(), w.format.c_str(), w.rank, w.world_size, w.gpu_model.c_str());
  auto counted = [](size_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); };
  std::printf("  %s, %s, %s\n", counted(w.threads.size(), "CPU thread", "CPU threads").c_str(),
              counted(w.cpu_op_count(), "CPU op", "CPU ops").c_str(), counted(w.streams.size(), "stream", "streams").c_str());
  const auto p2p = static_cast<size_t>(
      std::count_if(w.collectives.begin(), w.collectives.end(), [](const trace::Collective& c) { return c.kind == collective::Kind::send_recv; }));
  std::printf("  kernels %zu (NCCL %zu), memcpy %zu, memset %zu, collectives %zu, sends/receives %zu, iterations %zu\n", w.kernel_count(),
              w.count(trace::GpuOpKind::collective), w.count(trace::GpuOpKind::memcpy), w.count(trace::GpuOpKind::memset),
              w.collectives.size() - p2p, p2p, w.iterations.size());
  std::string numbered;  // process groups whose collectives are matched across ranks by PyTorch's "Seq"
  for (const auto& c : w.communicators)
    if (c.seq_from_trace) numbered += (numbered.empty() ? "\"" : ", \"") + shown_text(c.name) + "\"";
  if (!numbered.empty()) std::printf("  collectives numbered by PyTorch's \"Seq\" on process group(s) %s\n", numbered.c_str());
  for (const auto& n : w.notes) std::printf("note: %s\n", n.c_str());
  if (out_given) {
    sim::write_file_atomically(out, trace::workload_to_json(w), "--out");
    std::printf("wrote %s\n", out.c_str());
  }
  return 0;
}

int cmd_topology(const std::string& name, const std::string& p2p, const std::string& dot, bool dot_given, const std::vector<std::string>& route_ends,
                 const std::string& placement) {
  if (dot_given && dot.empty()) input_error("", "--dot", "expected a file name");
  topo::Topology t = load_topology(name, p2p);
  // A job's GPUs: only they relay PXN traffic in its routes, as in collective and run.
  std::vector<char> relays;
  if (!placement.empty()) relays = topo::pxn_proxies_of(t, parse_placement(t, placement));
  const std::vector<char>* proxies = relays.empty() ? nullptr : &relays;
  // Everything is computed before anything is printed or written: a route that cannot be
  // found, or a --dot path that cannot be written, leaves no partial listing.
  std::string text;
  auto line = [&text](const char* fmt, auto... args) {
    const int n = std::snprintf(nullptr, 0, fmt, args...);
    std::string buf(static_cast<size_t>(std::max(n, 0)) + 1, '\0');
    std::snprintf(buf.data(), buf.size(), fmt, args...);
    text += buf.c_str();
  };
  if (route_ends.size() == 2) {
    auto a = t.find_node(route_ends[0]), b = t.find_node(route_ends[1]);
    if (!a || !b) input_error(t.file(), "--route", "unknown node \"" + (a ? route_ends[1] : route_ends[0]) + "\"");
    text = topo::describe(t, topo::route(t, *a, *b, false, proxies)) + "\n";
  } else {
    line("topology %s (%s): %zu nodes, %zu links, %zu GPUs, P2P %s\n", t.name().c_str(), t.file().c_str(), t.nodes().size(),
         t.links().size(), t.gpus().size(), t.p2p_enabled() ? "on" : "off");
    text += "nodes:\n";
    for (const auto& n : t.nodes()) {
      char extra[96] = "";
      if (n.nccl_net_latency_s > 0) std::snprintf(extra, sizeof extra, ", NCCL net plugin latency %.3f us", n.nccl_net_latency_s * 1e6);
      if (n.type == topo::NodeType::host)
        std::snprintf(extra, sizeof extra, ", memory %.1f GB/s%s%s", n.memory_bandwidth_Bps / 1e9, n.amd_cpu ? ", AMD CPU" : "",
                      n.p2p_across_root_ports ? ", P2P across root ports" : "");
      line("  %-14s %-20s latency %.3f us%s%s%s\n", n.name.c_str(), std::string(topo::to_string(n.type)).c_str(), n.latency_s * 1e6,
           n.model.empty() ? "" : (", model " + n.model).c_str(),
           n.type == topo::NodeType::gpu ? (n.p2p ? ", PCIe P2P capable" : ", no PCIe P2P") : "", extra);
    }
    text += "links:\n";
    for (const auto& l : t.links())
      line("  %-22s %-16s %s <-> %s  %.2f GB/s per direction, latency %.3f us%s\n", l.name.c_str(),
           std::string(topo::to_string(l.type)).c_str(), t.nodes()[l.from].name.c_str(), t.nodes()[l.to].name.c_str(),
           l.bandwidth_Bps / 1e9, l.latency_s * 1e6, l.trained.empty() ? "" : (" (" + l.trained + ")").c_str());
    const auto& g = t.gpus();
    text += "routes:\n";
    // A pair without a route (hosts of a composition that share no network) is listed as
    // such: the rest of the listing, and --dot, do not need it.
    auto describe = [&](int a, int b) {
      try {
        return topo::describe(t, topo::route(t, a, b, false, proxies));
      } catch (const InputError& e) {
        return t.nodes()[a].name + " -> " + t.nodes()[b].name + "  [no route: " + e.reason() + "]";
      }
    };
    for (size_t i = 0; i < g.size(); ++i) {
      text += "  " + describe(g[i], t.host_of(g[i])) + "\n";
      for (size_t j = 0; j < g.size(); ++j)
        if (i != j) text += "  " + describe(g[i], g[j]) + "\n";
    }
  }
  for (const auto& n : topo::long_reach_notes(t)) text += "note: " + n + "\n";
  if (!dot.empty()) {
    sim::write_file_atomically(dot, t.to_dot(), "--dot");
    text += "wrote " + dot + "\n";
  }
  std::fputs(text.c_str(), stdout);
  return 0;
}

int cmd_bench(const RunArgs& a, std::vector<char*>& sg_argv) {
  topo::Topology topology = topo::Topology::load(a.topology);
  const auto t_load = std::chrono::steady_clock::now();
  auto workloads = load_traces(a.traces);
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_load).count();
  sim::ReplayOptions opt;
  opt.ranks = a.ranks;
  start_engine(static_cast<int>(sg_argv.size()) - 1, sg_argv);
  const auto t0 = std::chrono::steady_clock::now();
  sim::Replay replay(topology, std::move(workloads), opt);
  sim::ReplayResult result = replay.run();
  const double sim_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("bench: %d ranks on %s: %llu operations, %llu flows, %llu collectives, %llu sends paired\n", replay.rank_count(), topology.name().c_str(),
              static_cast<unsigned long long>(result.ops_simulated), static_cast<unsigned long long>(result.flows),
              static_cast<unsigned long long>(result.collectives), static_cast<unsigned long long>(result.p2p_paired));
  std::printf("bench: import %.3f s; graph build + simulation %.3f s = %.0f operations/s; peak RSS %.1f MiB\n", load_s, sim_s,
              result.ops_simulated / sim_s, peak_rss_MiB());
  return 0;
}

// composim capture [--out DIR] [--preload] -- COMMAND [ARGS...]
// Runs COMMAND with the CUPTI injection library; each CUDA process writes
// DIR/rank<R>.<pid>.pt.trace.json.gz at exit. Parsed by hand: everything after "--" is the
// child's command line, untouched.
int cmd_capture(int argc, char** argv) {
  std::string out = "composim-capture";
  bool preload = false;
  int i = 2;
  for (; i < argc; ++i) {
    std::string_view a(argv[i]);
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "--out" && i + 1 < argc) out = argv[++i];
    else if (a.rfind("--out=", 0) == 0) out = std::string(a.substr(6));
    else if (a == "--preload") preload = true;
    else if (a == "-h" || a == "--help") {
      std::printf(
          "Usage: composim capture [--out DIR] [--preload] -- COMMAND [ARGS...]\n"
          "Records COMMAND's CUDA activity with CUPTI; each process writes DIR/rank<R>.<pid>.pt.trace.json.gz\n"
          "(a PyTorch-profiler-compatible trace that `composim run --trace` replays). The rank comes from\n"
          "RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID or PMI_RANK. --preload uses LD_PRELOAD instead of\n"
          "CUDA_INJECTION64_PATH. NVTX ranges named \"step N\" become ProfilerStep#N.\n");
      return 0;
    } else {
      input_error("", "capture", "unexpected argument \"" + std::string(a) + "\" (expected --out DIR, --preload, then -- COMMAND)");
    }
  }
  if (i >= argc) input_error("", "capture", "no command given (composim capture [--out DIR] -- COMMAND [ARGS...])");
#ifdef COMPOSIM_CUPTI_LIB
  const std::string lib = COMPOSIM_CUPTI_LIB, cupti = COMPOSIM_LIBCUPTI;
#else
  input_error("", "capture", "this composim was built without the CUDA Toolkit / CUPTI; rebuild on a machine with /usr/local/cuda");
  const std::string lib, cupti;
#endif
  make_parent_dirs(out + "/x");
  const char* ld = std::getenv("LD_PRELOAD");
  for (const auto& [k, v] : capture::launcher_environment(out, lib, cupti, preload, ld ? ld : "")) setenv(k.c_str(), v.c_str(), 1);
  std::fflush(stdout);
  const pid_t child = fork();
  if (child < 0) input_error("", "capture", "cannot start the command");
  if (child == 0) {
    execvp(argv[i], argv + i);
    std::fprintf(stderr, "composim: error: capture: cannot run \"%s\": %s\n", argv[i], std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  int files = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(out, ec))
    if (e.path().string().size() > 20 && e.path().string().find(".pt.trace.json.gz") != std::string::npos) ++files;
  std::printf("composim capture: %d trace file(s) in %s\n", files, out.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

namespace {
void decimal_integers(CLI::App& app);  // below, with the other option checks
}  // namespace

// composim topology generate [options] --out FILE
int cmd_generate(int argc, char** argv) {
  topo::GenerateOptions g;
  std::string out, p2p = "on", fabric = "off";
  CLI::App app{"composim topology generate: write a parametric composable-system topology"};
  app.add_option("--name", g.name, "topology name");
  app.add_option("--placement", g.placement, "chassis (GPUs in a composable chassis) or in-host")->check(CLI::IsMember({"chassis", "in-host"}));
  app.add_option("--hosts", g.hosts, "hosts cabled to the chassis");
  app.add_option("--gpus", g.gpus, "GPUs");
  app.add_option("--levels", g.levels, "chassis switch levels (1 or 2)");
  app.add_option("--fanout", g.fanout, "GPUs per leaf switch");
  app.add_option("--switch-gen", g.switch_generation, "PCIe generation of the switches")->check(CLI::Range(1, 6));
  app.add_option("--uplink-gen", g.uplink_generation, "PCIe generation of the host cables")->check(CLI::Range(1, 6));
  app.add_option("--uplink-lanes", g.uplink_lanes, "lanes of the host cables");
  app.add_option("--gpu-gen", g.gpu_generation, "PCIe generation of the GPUs' links (default: the GPU model's)")->check(CLI::Range(0, 6));
  app.add_option("--cable", g.cable, "copper or optical");
  app.add_option("--length-m", g.length_m, "host cable length, metres");
  app.add_option("--retimers", g.retimers, "retimers along each host cable");
  app.add_option("--gpu-model", g.gpu_model, "GPU model name");
  app.add_option("--p2p", p2p, "GPU peer-to-peer on or off")->check(CLI::IsMember({"on", "off"}));
  app.add_option("--fabric-p2p", fabric, "the chassis forwards P2P between hosts' GPUs")->check(CLI::IsMember({"on", "off"}));
  app.add_option("--host-nic-gbps", g.host_nic_Gbps, "hosts' NIC rate, Gb/s");
  app.add_option("--compose-split", g.compose_split, "attach the first N GPUs half to host0, half to host1");
  app.add_option("--out", out, "file to write")->required();
  decimal_integers(app);
  try {
    app.parse(argc - 2, argv + 2);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "composim: error: topology generate: %s (see --help)\n", e.what());
    return 2;
  }
  g.p2p = p2p == "on";
  g.fabric_p2p = fabric == "on";
  if (g.placement == "in-host" && (app.count("--cable") || app.count("--length-m") || app.count("--retimers") || app.count("--uplink-lanes")))
    input_error("", "topology generate", "--placement in-host has no host cable: --cable, --length-m, --retimers and --uplink-lanes do not apply");
  const auto doc = topo::generate_topology(g);
  topo::Topology::parse(doc, "generated topology");  // the same validation as a hand-written topology
  sim::write_file_atomically(out, doc.dump(1) + "\n", "--out");
  std::printf("wrote %s (%zu nodes, %zu links)\n", out.c_str(), doc["nodes"].size(), doc["links"].size());
  return 0;
}

// --p2p of run, collective and p2p.
constexpr const char* kP2pHelp =
    "force GPU peer-to-peer on or off (on: also on GPUs whose driver lacks it, e.g. GeForce; off: like NCCL_P2P_DISABLE=1)";

namespace {
// CLI11 reads an integer option's "010" as octal (8) and "0x10" as hex (16): a count typed
// with a leading zero would silently change. Every integer option of `app` and its
// subcommands takes plain decimal digits instead ("010" is 10), anything else is refused;
// every real-valued option plain decimal notation.
void decimal_integers(CLI::App& app) {
  const CLI::Validator decimal(
      [](std::string& v) {
        const size_t digits = !v.empty() && (v[0] == '-' || v[0] == '+') ? 1 : 0;
        if (digits == v.size() || v.find_first_not_of("0123456789", digits) != std::string::npos)
          return "expected a whole decimal number, got \"" + v + "\"";
        const size_t first = v.find_first_not_of('0', digits);
        v = std::string(v[0] == '-' ? "-" : "") + (first == std::string::npos ? "0" : v.substr(first));
        return std::string();
      },
      "");
  // A real number the same way: CLI11 (strtod) also takes hex ("0x10") and "inf"/"nan".
  const CLI::Validator decimal_real(
      [](std::string& v) {
        if (v.empty() || v.find_first_not_of("0123456789+-.eE") != std::string::npos || v.find_first_of("0123456789") == std::string::npos)
          return "expected a decimal number, got \"" + v + "\"";
        return std::string();
      },
      "");
  for (auto* opt : app.get_options()) {
    const std::string type = opt->get_type_name();
    if (type.rfind("INT", 0) == 0 || type.rfind("UINT", 0) == 0) opt->transform(decimal);
    if (type.rfind("FLOAT", 0) == 0) opt->transform(decimal_real);
  }
  for (auto* sub : app.get_subcommands([](CLI::App*) { return true; })) decimal_integers(*sub);
}

// A whole number in [min, 1000000] of `what` (GPUs, ranks). What CLI::Range would say ("Value
// 2.5 not in range 1 to 1000000") says neither that a fraction is the problem nor why.
CLI::Validator whole_number(long min, const std::string& what, const std::string& below_min) {
  return CLI::Validator(
      [=](std::string& v) {
        try {  // decimal_integers() has made v plain decimal digits
          const long n = std::stol(v);
          if (n >= min && n <= 1000000) return std::string();
          if (n > 1000000) return "at most 1000000 " + what + ", got " + v;
        } catch (const std::out_of_range&) {
          return "at most 1000000 " + what + ", got " + v;
        } catch (const std::exception&) {
          return "expected a whole number of " + what + ", got " + v;
        }
        return below_min + ", got " + v;
      },
      "N >= " + std::to_string(min));
}
}  // namespace

int main(int argc, char** argv) {
  if (argc > 2 && std::string_view(argv[1]) == "topology" && std::string_view(argv[2]) == "generate") {
    try {
      return cmd_generate(argc, argv);
    } catch (const InputError& e) {
      std::fprintf(stderr, "composim: error: %s\n", e.what());
      return 2;
    }
  }
  if (argc > 1 && std::string_view(argv[1]) == "capture") {
    try {
      return cmd_capture(argc, argv);
    } catch (const InputError& e) {
      std::fprintf(stderr, "composim: error: %s\n", e.what());
      return 2;
    }
  }
  // SimGrid's own flags go to SimGrid, everything else to us.
  std::vector<char*> ours{argv[0]}, sg{argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string_view s(argv[i]);
    if (s.rfind("--cfg=", 0) == 0 || s.rfind("--log=", 0) == 0) sg.push_back(argv[i]);
    else ours.push_back(argv[i]);
  }
  sg.push_back(nullptr);

  CLI::App app{"composim: discrete-event simulator of composable GPU systems for deep-learning training"};
  app.set_version_flag("--version", std::string("composim ") + kVersion + " (" + SIMGRID_VERSION_STRING + ")");
  app.require_subcommand(1);

  RunArgs run;
  auto* run_cmd = app.add_subcommand("run", "replay traces on a topology and predict the iteration time");
  run_cmd->add_option("--trace", run.traces, "trace file (Kineto JSON, .json.gz, or composim IR); repeat for one per rank, or give a directory of per-rank traces")->required();
  run_cmd->add_option("--topology", run.topology, "shipped topology name or JSON file")->required();
  run_cmd->add_option("--ranks", run.ranks, "replicate a single trace to N ranks (default: its world size)")->check(whole_number(1, "ranks", "at least 1 rank"));
  run_cmd->add_option("--placement", run.placement, "GPU per rank, comma-separated names or indices (default: in order)");
  run_cmd->add_option("--dp-group", run.dp_groups,
                      "a data-parallel process group (its \"Process Group Name\"): with --ranks it grows as the job does (repeat for several)");
  run_cmd->add_option("--out", run.out, "write summary.json, iterations.csv, links.csv and timeline.json here");
  run_cmd->add_option("--warmup", run.warmup, "exclude the first N steps (default: leading outliers)")->check(CLI::Range(0, 1000000));
  run_cmd->add_option("--p2p", run.p2p, kP2pHelp)->check(CLI::IsMember({"on", "off"}));
  run_cmd->add_option("--launch-latency", run.launch_latency, "kernel launch latency, e.g. 2us (default: GPU model)");
  std::vector<std::string> params_files;  // applied in order: a later file's values win
  std::string cal_params_file;
  run_cmd->add_option("--params", params_files, "model parameter file (e.g. written by `composim calibrate`; repeat to apply several in order)");
  // --compose "" would silently be no composition.
  const CLI::Validator compose_check(
      [](std::string& v) { return v.empty() ? std::string("needs host=devices, e.g. host0=gpu0-3,host1=gpu4-7 (empty given)") : std::string(); }, "HOST=DEVICES");
  run_cmd->add_option("--compose", g_compose, "attach pooled devices to hosts, e.g. host0=gpu0-3,host1=gpu4-7")->check(compose_check);
  std::string nccl_buffsize;
  const char* buffsize_help = "NCCL's buffer size, as NCCL_BUFFSIZE (bytes, or 8M; default 4M): a tree's Simple chunk is 1/8 of it";
  auto* run_buffsize = run_cmd->add_option("--nccl-buffsize", nccl_buffsize, buffsize_help);

  std::string import_path, import_out;
  auto* import_cmd = app.add_subcommand("import", "import a trace into the workload IR and print its counts");
  import_cmd->add_option("trace", import_path, "trace file")->required();
  import_cmd->add_option("--out", import_out, "write the IR as JSON to this file");

  std::string topo_name, topo_dot, topo_p2p, topo_placement;
  std::vector<std::string> route_ends;
  auto* topo_cmd = app.add_subcommand("topology", "print a topology's nodes, links and routes (`topology generate --help`: generate one)");
  topo_cmd->add_option("topology", topo_name, "shipped topology name or JSON file")->required();
  topo_cmd->add_option("--dot", topo_dot, "write GraphViz to this file");
  topo_cmd->add_option("--p2p", topo_p2p, "force GPU peer-to-peer on or off, as run and collective take it")->check(CLI::IsMember({"on", "off"}));
  topo_cmd->add_option("--route", route_ends, "print only the route between two endpoints")->expected(2);
  topo_cmd->add_option("--placement", topo_placement, "a job's GPUs: only they relay traffic to another rail's NIC (PXN), as in collective and run");
  topo_cmd->add_option("--params", params_files, "model parameter file (repeat to apply several in order)");
  topo_cmd->add_option("--compose", g_compose, "attach pooled devices to hosts, e.g. host0=gpu0-3,host1=gpu4-7")->check(compose_check);

  bool markdown = false;
  auto* models_cmd = app.add_subcommand("list-models", "print the component models and their parameters");
  models_cmd->add_flag("--markdown", markdown, "as Markdown tables");

  CollectiveArgs coll;
  auto* coll_cmd = app.add_subcommand("collective", "emulate nccl-tests: time a collective over a range of sizes on a topology");
  coll_cmd->add_option("--op", coll.op, collective::kKindNames);
  coll_cmd->add_option("--bytes", coll.bytes, "size or min:max, as nccl-tests -b/-e (K, M, G, T are powers of 1024; 1MB reads as 1M)");
  // The range in nccl-tests' terms (CLI::Range would say "not in range"); decimal_integers()
  // has already refused what is not a decimal number ("2abc", "0x10").
  const CLI::Validator step_factor_range(
      [](std::string& v) {
        double f = 0;
        try {
          f = std::stod(v);
        } catch (const std::out_of_range&) {  // 1e400, 1e-400: outside a double, so outside the range
        }
        return f >= 1.0001 && f <= 1024.0 ? std::string() : "must be in [1.0001, 1024] (nccl-tests -f), got " + v;
      },
      "FLOAT in [1.0001 - 1024]");
  coll_cmd->add_option("--step-factor", coll.step_factor, "multiply the size by this between rows (nccl-tests -f)")->check(step_factor_range);
  const CLI::Validator at_least_two_gpus = whole_number(2, "GPUs", "a collective needs at least 2 GPUs");
  coll_cmd->add_option("--dtype", coll.dtype,
                       "element type, as nccl-tests -d: " + sim::nccl_tests_type_list() + " (default float; sizes round to whole elements)");
  coll_cmd->add_option("--gpus", coll.gpus, "use the first N GPUs of the topology (default: all)")->check(at_least_two_gpus);
  coll_cmd->add_option("--placement", coll.placement, "the GPUs to use, comma-separated names or indices");
  coll_cmd->add_option("--topology", coll.topology, "shipped topology name or JSON file")->required();
  coll_cmd->add_option("--p2p", coll.p2p, kP2pHelp)->check(CLI::IsMember({"on", "off"}));
  coll_cmd->add_option("--algo", coll.algo,
                       "algorithms to choose from, as NCCL_ALGO: ring, tree, nvls, nvlstree, a list (ring,tree) or ^ and a list to exclude "
                       "(^nvls: as NCCL_NVLS_ENABLE=0; default: NCCL-like choice by predicted time)");
  coll_cmd->add_option("--proto", coll.proto,
                       "protocols to choose from, as NCCL_PROTO: LL, LL128, Simple, a list (Simple,LL128) or ^ and a list to exclude "
                       "(a protocol named here is used even where NCCL would not enable it by default)");
  coll_cmd->add_option("--out", coll.out, "write collective.csv here");
  coll_cmd->add_option("--params", params_files, "model parameter file (e.g. written by `composim calibrate`, or models/params/rccl-2.8.json; repeat to apply several in order)");
  coll_cmd->add_option("--compose", g_compose, "attach pooled devices to hosts, e.g. host0=gpu0-3,host1=gpu4-7")->check(compose_check);
  auto* coll_buffsize = coll_cmd->add_option("--nccl-buffsize", nccl_buffsize, buffsize_help);

  P2pArgs p2p;
  auto* p2p_cmd = app.add_subcommand("p2p", "emulate p2pBandwidthLatencyTest: copy bandwidth between every pair of GPUs");
  p2p_cmd->add_option("--topology", p2p.topology, "shipped topology name or JSON file")->required();
  p2p_cmd->add_option("--p2p", p2p.p2p, kP2pHelp)->check(CLI::IsMember({"on", "off"}));
  p2p_cmd->add_option("--gpus", p2p.gpus, "use the first N GPUs of the first machine (or host of a composition; default: all of them)")->check(CLI::Range(2, 4096));
  p2p_cmd->add_option("--placement", p2p.placement, "the GPUs to use, comma-separated");
  p2p_cmd->add_option("--bytes", p2p.bytes, "bytes per copy (default 64M)");
  p2p_cmd->add_option("--out", p2p.out, "write p2p.csv here");
  p2p_cmd->add_option("--params", params_files, "model parameter file (repeat to apply several in order)");
  p2p_cmd->add_option("--compose", g_compose, "attach pooled devices to hosts")->check(compose_check);

  sim::ValidateOptions val;
  val.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  val.data_dir = std::getenv("COMPOSIM_DATA") ? std::getenv("COMPOSIM_DATA") : COMPOSIM_DEFAULT_DATA;
  auto* val_cmd = app.add_subcommand("validate", "run measured cases and report composim's error against them");
  val_cmd->add_option("--cases", val.cases, "case files or directories (default: validation/cases)");
  val_cmd->add_option("--category", val.category, "only this category")->check(CLI::IsMember({"self-replay", "collective", "p2p", "end-to-end"}));
  val_cmd->add_option("--data", val.data_dir, "folder of the shared measurements and traces (default: $COMPOSIM_DATA, else the one found at build time)")
      ->default_str(val.data_dir);
  val_cmd->add_option("--out", val.out_dir, "write report.csv, report.json and report.png here");
  val_cmd->add_option("-j,--jobs", val.jobs, "cases run at once")->check(CLI::Range(1, 256));
  val_cmd->add_option("--params", val.params_files, "model parameter file to run every case with (repeat to apply several in order)");
  val_cmd->add_flag("--strict", val.strict, "exit 1 when any case is outside its tolerance, known gaps included");

  sim::CalibrateOptions cal;
  cal.data_dir = val.data_dir;
  auto* cal_cmd = app.add_subcommand("calibrate", "fit link efficiencies and NCCL step latencies to measured collective sweeps");
  cal_cmd->add_option("--fit", cal.fit_cases, "collective case files to fit")->required();
  cal_cmd->add_option("--holdout", cal.holdout_cases, "case files held out whole (default: every k-th point of each fitted case)");
  cal_cmd->add_option("--holdout-every", cal.holdout_every, "hold out every k-th point by size when no --holdout cases")->check(CLI::Range(2, 100));
  cal_cmd->add_option("--data", cal.data_dir, "folder of the shared measurements")->default_str(cal.data_dir);
  cal_cmd->add_option("--out", cal.out_file, "parameter file to write")->required();
  cal_cmd->add_option("--params", cal_params_file, "start from this parameter file instead of the defaults (its values are kept unless refitted)");

  sim::SweepRunOptions sw;
  sw.data_dir = val.data_dir;
  sw.jobs = val.jobs;
  auto* sweep_cmd = app.add_subcommand("sweep", "run every point of a sweep spec (topology parameters x ranks x traces)");
  sweep_cmd->add_option("spec", sw.spec_file, "sweep spec JSON (not with --collect)");
  sweep_cmd->add_option("--out", sw.out_dir, "results directory (re-running resumes)");
  std::string collect_dir;
  sweep_cmd->add_option("--collect", collect_dir, "merge the finished points of a Slurm sweep directory into results.csv");
  sweep_cmd->add_flag("--slurm", sw.slurm, "prepare the points and write DIR/sweep.slurm, a Slurm job array, instead of running");
  sweep_cmd->add_option("--tasks", sw.tasks, "Slurm array tasks (default: min(points, 64))")->check(CLI::Range(1, 100000));
  sweep_cmd->add_option("--task", sw.task, "run only this array task's points (used by sweep.slurm)")->check(CLI::Range(0, 99999));
  sweep_cmd->add_option("-j,--jobs", sw.jobs, "points run at once")->check(CLI::Range(1, 256));
  sweep_cmd->add_option("--data", sw.data_dir, "folder that {data} in the spec stands for")->default_str(sw.data_dir);

  std::string plot_dir;
  auto* plot_cmd = app.add_subcommand("plot", "draw the plots of a sweep, run or validate output directory (PNG and PDF)");
  plot_cmd->add_option("dir", plot_dir, "directory with results.csv, links.csv or report.csv")->required();

  RunArgs bench;
  auto* bench_cmd = app.add_subcommand("bench", "measure replay throughput (operations/s) and peak memory");
  // Dispatched before parsing (its command line is the program's); listed for --help.
  app.add_subcommand("capture", "run a CUDA program under CUPTI and write its trace (composim capture --help)")->allow_extras();
  bench_cmd->add_option("--trace", bench.traces, "trace file")->required();
  bench_cmd->add_option("--topology", bench.topology, "topology")->required();
  bench_cmd->add_option("--ranks", bench.ranks, "replicate to N ranks")->check(whole_number(1, "ranks", "at least 1 rank"));

  decimal_integers(app);
  try {
    app.parse(static_cast<int>(ours.size()), ours.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "composim: error: %s (see --help)\n", e.what());
    return 2;
  }

  try {
    for (const auto& f : params_files) load_params_file(f);
    if (!cal_params_file.empty()) load_params_file(cal_params_file);  // calibrate reads the values it starts from
    if (run_buffsize->count() || coll_buffsize->count()) {
      double v = 0;
      try {
        v = sim::parse_nccl_size(nccl_buffsize);
      } catch (const std::invalid_argument& e) {
        input_error("command line", "--nccl-buffsize", e.what());
      }
      set_param("collective.nccl_buffsize_B", v, "command line", "--nccl-buffsize");
    }
    run.placement_given = run_cmd->count("--placement") > 0;
    coll.placement_given = coll_cmd->count("--placement") > 0;
    p2p.placement_given = p2p_cmd->count("--placement") > 0;
    if (*run_cmd) return cmd_run(run, sg, run_cmd->count("--out") > 0);
    if (*val_cmd) {
      sim::catch_termination();
      if (val_cmd->count("--out") && val.out_dir.empty()) input_error("", "--out", "needs a directory");
      if (val.cases.empty()) val.cases.push_back(std::string(COMPOSIM_SOURCE_DIR) + "/validation/cases");
      val.composim = sim::self_executable(argv[0]);
      if (!val.out_dir.empty()) check_out_dir(val.out_dir, {"report.csv", "report.json"});  // before the cases run, not after
      return sim::validate(val);
    }
    if (*sweep_cmd) {
      sim::catch_termination();
      if (!collect_dir.empty()) {
        if (!sw.spec_file.empty() || !sw.out_dir.empty()) input_error("", "--collect", "takes only the sweep directory (no SPEC, no --out)");
        if (sw.slurm || sw.task >= 0 || sw.tasks > 0) input_error("", "--collect", "goes without --slurm, --task and --tasks (it only merges results)");
        sw.collect = true;
        sw.out_dir = collect_dir;
      } else if (sw.spec_file.empty() || sw.out_dir.empty()) {
        input_error("", "sweep", "needs SPEC and --out DIR (or --collect DIR)");
      }
      if (sw.task >= 0 && sw.tasks <= sw.task) input_error("", "--task", "needs --tasks greater than --task");
      if (sw.tasks > 0 && !sw.slurm && sw.task < 0) input_error("", "--tasks", "goes with --slurm (or --task)");
      sw.composim = sim::self_executable(argv[0]);
      return sim::run_sweep_spec(sw);
    }
    if (*plot_cmd) {
      const std::string script = std::string(COMPOSIM_SOURCE_DIR) + "/plots/plot.py";
      const std::string cmd = "/usr/bin/python3 " + sim::shell_quote(script) + " " + sim::shell_quote(plot_dir);
      const int rc = std::system(cmd.c_str());
      return WIFEXITED(rc) ? WEXITSTATUS(rc) : 1;
    }
    if (*cal_cmd) {
      sim::catch_termination();
      if (!cal.holdout_cases.empty() && cal_cmd->count("--holdout-every"))
        input_error("", "--holdout-every", "goes without --holdout (held-out cases replace every k-th point)");
      // Before the fit, which takes minutes: a directory, a device or a loop of links.
      if (cal.out_file.empty()) input_error("", "--out", "needs a file name (the parameter file to write)");
      std::error_code dir_ec;  // a loop of links is check_replaceable()'s to name
      if (cal.out_file.back() == '/' || std::filesystem::is_directory(cal.out_file, dir_ec))
        input_error(cal.out_file, "--out", "is a directory; give the parameter file to write");
      sim::check_replaceable(cal.out_file, "--out");
      if (cal_cmd->count("--params") && cal_params_file.empty()) input_error("--params", "", "the parameter file's name is empty");
      cal.composim = sim::self_executable(argv[0]);
      cal.params_file = cal_params_file;
      return sim::calibrate(cal);
    }
    if (*p2p_cmd) return cmd_p2p(p2p, sg, p2p_cmd->count("--out") > 0);
    if (*coll_cmd) return cmd_collective(coll, sg, coll_cmd->count("--out") > 0);
    if (*import_cmd) return cmd_import(import_path, import_out, import_cmd->count("--out") > 0);
    if (*topo_cmd) return cmd_topology(topo_name, topo_p2p, topo_dot, topo_cmd->count("--dot") > 0, route_ends, topo_placement);
    if (*models_cmd) {
      std::fputs(format_models_table(markdown).c_str(), stdout);
      return 0;
    }
    if (*bench_cmd) return cmd_bench(bench, sg);
  } catch (const sim::Interrupted& e) {
    std::fprintf(stderr, "composim: %s\n", e.what());
    return 130;
  } catch (const InputError& e) {
    std::fprintf(stderr, "composim: error: %s\n", e.what());
    return 2;
  } catch (const sim::OutOfResources& e) {
    std::fprintf(stderr, "composim: error: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "composim: error: out of memory: the simulation needs more memory than this process may use; simulate fewer GPUs, ranks or sizes at once\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "composim: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
