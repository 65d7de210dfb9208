#include "sim/nccl_tests.hpp"

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <set>
#include <stdexcept>
#include <csignal>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "models/error.hpp"
#include "models/registry.hpp"
#include "sim/platform.hpp"
#include "sim/process.hpp"
#include "sim/report.hpp"

namespace composim::sim {

namespace sg4 = simgrid::s4u;
using collective::Kind;

double per_rank_input_B(Kind kind, double size_B, int n) { return kind == Kind::all_gather ? size_B / n : size_B; }

double parse_nccl_size(const std::string& text) {
  if (text.empty()) throw std::invalid_argument("empty size");
  // A whole number and a unit, as nccl-tests reads sizes (no fractions, exponents or hex).
  size_t pos = 0;
  while (pos < text.size() && pos < 20 && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
  if (pos == 0 || pos == 20)
    throw std::invalid_argument("cannot read size \"" + text + "\" (expected a whole number with an optional K, M, G or T, e.g. 8, 64K, 1M, 1G)");
  const double v = std::stod(text.substr(0, pos));
  std::string suffix = text.substr(pos);
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b')) suffix.pop_back();
  double f = 1;
  if (suffix == "K" || suffix == "k") f = 1024.0;
  else if (suffix == "M" || suffix == "m") f = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "g") f = 1024.0 * 1024 * 1024;
  else if (suffix == "T" || suffix == "t") f = 1024.0 * 1024 * 1024 * 1024;
  else if (!suffix.empty())
    throw std::invalid_argument("cannot read size \"" + text + "\" (expected a whole number with an optional K, M, G or T, e.g. 8, 64K, 1M, 1G)");
  if (!(v > 0) || !std::isfinite(v)) throw std::invalid_argument("size \"" + text + "\" must be positive");
  if (v * f > 1125899906842624.0) throw std::invalid_argument("size \"" + text + "\" is above 2^50 bytes (1024T)");
  if (std::floor(v * f) < 1) throw std::invalid_argument("size \"" + text + "\" is below one byte");
  return std::floor(v * f);
}

std::vector<double> size_range(const std::string& spec, double factor) {
  const auto colon = spec.find(':');
  if (colon != std::string::npos && (colon == 0 || colon + 1 == spec.size()))
    throw std::invalid_argument("size range \"" + spec + "\" lacks its " + (colon == 0 ? "minimum" : "maximum") + " (min:max, e.g. 8:1G)");
  const double lo = parse_nccl_size(spec.substr(0, colon));
  const double hi = colon == std::string::npos ? lo : parse_nccl_size(spec.substr(colon + 1));
  if (hi < lo) throw std::invalid_argument("size range \"" + spec + "\" goes down");
  if (!(factor > 1) || !std::isfinite(factor)) throw std::invalid_argument("step factor must be a number > 1");
  std::vector<double> sizes;
  for (double s = lo; s <= hi * (1 + 1e-12); s = std::max(std::floor(s * factor), s + 1)) {
    if (sizes.size() == 1000) throw std::invalid_argument("\"" + spec + "\" with step factor " + std::to_string(factor) + " gives more than 1000 sizes");
    sizes.push_back(s);
  }
  return sizes;
}

namespace {

// The memory new work can have, in bytes (0 when unknown): the machine's MemAvailable
// (/proc/meminfo), bounded by what this process's cgroup has left (v2: memory.max -
// memory.current; v1: memory.limit_in_bytes - memory.usage_in_bytes), where a container,
// CI runner or Slurm job sets a limit below the machine's.
double mem_available_B() {
  double available = 0;
  {
    std::ifstream in("/proc/meminfo");
    for (std::string key; in >> key;) {
      double kB = 0;
      in >> kB;
      if (key == "MemAvailable:") {
        available = kB * 1024.0;
        break;
      }
      in.ignore(256, '\n');
    }
  }
  auto number_in = [](const std::string& path) {
    std::ifstream f(path);
    double v = -1;
    if (!(f >> v)) v = -1;  // "max" (no limit) or no such file
    return v;
  };
  std::ifstream self("/proc/self/cgroup");  // lines "0::/path" (v2) or "N:memory:/path" (v1)
  for (std::string line; std::getline(self, line);) {
    const auto colon = line.find(':'), second = line.find(':', colon + 1);
    if (colon == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(colon + 1, second - colon - 1), path = line.substr(second + 1);
    double limit = -1, used = -1;
    if (controllers.empty()) {
      limit = number_in("/sys/fs/cgroup" + path + "/memory.max");
      used = number_in("/sys/fs/cgroup" + path + "/memory.current");
    } else if (controllers.find("memory") != std::string::npos) {
      limit = number_in("/sys/fs/cgroup/memory" + path + "/memory.limit_in_bytes");
      used = number_in("/sys/fs/cgroup/memory" + path + "/memory.usage_in_bytes");
    }
    if (limit > 0 && used >= 0 && limit < 1e18) available = available > 0 ? std::min(available, std::max(0.0, limit - used)) : std::max(0.0, limit - used);
  }
  return available;
}

struct Runner {
  const topo::Topology& topo;
  const SweepOptions& opt;
  std::vector<CollectivePlan> plans;
  std::vector<SweepRow> rows;
  std::unique_ptr<Platform> platform;
  size_t current = 0;
  size_t flows_left = 0;
  double started = 0;
  std::deque<sg4::CommPtr> inflight;
  std::vector<sg4::CommPtr> graveyard;

  void start(size_t i) {
    graveyard.clear();
    current = i;
    started = sg4::Engine::get_clock();
    const auto& p = plans[i];
    if (p.flows.empty()) {
      simgrid::kernel::timer::Timer::set(started + p.after_flows_s(), [this] { done(); });
      return;
    }
    flows_left = p.flows.size();
    for (const auto& f : p.flows) {
      auto c = sg4::Comm::sendto_init(platform->host_of(f.src), platform->host_of(f.dst));
      c->set_payload_size(static_cast<std::uint64_t>(std::llround(f.bytes)));
      platform->start(c, f.src, f.dst);
      inflight.push_back(c);
    }
  }
  void flow_done() {
    if (--flows_left == 0) {
      for (auto& c : inflight) graveyard.push_back(std::move(c));
      inflight.clear();
      simgrid::kernel::timer::Timer::set(sg4::Engine::get_clock() + plans[current].after_flows_s(), [this] { done(); });
    }
  }
  void done() {
    rows[current].time_s = sg4::Engine::get_clock() - started;
    if (current + 1 < plans.size()) start(current + 1);
  }
};

}  // namespace

size_t sweep_jobs_for_memory(double available_B, double first_peak_B, size_t first_flows, size_t most_flows, size_t wanted) {
  wanted = std::max<size_t>(1, wanted);
  // Sizes may change algorithm (a tree's 48 flows, then a ring's 128): memory goes with flows.
  const double child_B = first_peak_B * static_cast<double>(std::max<size_t>(1, most_flows)) / static_cast<double>(std::max<size_t>(1, first_flows));
  if (!(available_B > 0) || !(child_B > 0)) return wanted;
  return static_cast<size_t>(std::clamp(available_B / (1.25 * child_B), 1.0, static_cast<double>(wanted)));
}

std::string describe_size_failure(double size_B, int status, const std::string& said, bool& out_of_memory) {
  const bool oom = WIFEXITED(status) && WEXITSTATUS(status) == 6;
  const bool sigkill = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  out_of_memory = oom || sigkill;
  return "simulating size " + std::to_string(static_cast<long long>(size_B)) + " B failed" +
         (oom       ? " (out of memory; simulate fewer GPUs)"
          : sigkill ? " (killed: most likely out of memory; simulate fewer GPUs)"
          : WIFSIGNALED(status) ? " (signal " + std::to_string(WTERMSIG(status)) + ")"
                                : "") +
         (said.empty() ? "" : ": " + said);
}

std::vector<SweepRow> run_sweep(const topo::Topology& t, const SweepOptions& o) {
  // Only the communicator's GPUs relay PXN traffic (NCCL's proxy is a rank).
  const std::vector<char> proxies = topo::pxn_proxies_of(t, o.gpus);
  CollectivePlanner planner(t, proxies);
  Runner run{t, o, {}, {}, nullptr, 0, 0, 0, {}, {}};
  const int n = static_cast<int>(o.gpus.size());
  for (double size : o.sizes_B) {
    // nccl-tests' counts (common.cu's setupArgs, each test's getCollByteCount): the size in
    // whole elements, and for the operations that split it over the ranks, whole elements
    // per rank; the row shows those bytes, as nccl-tests prints them (8 B all-gathered on 8
    // GPUs is 0 B, count 0).
    using collective::Kind;
    const bool split = o.kind == Kind::all_gather || o.kind == Kind::reduce_scatter || o.kind == Kind::all_to_all;
    const double elems = std::floor(size / o.type_size_B), count = split ? std::floor(elems / n) : elems;
    const double moved_B = (split ? count * n : count) * o.type_size_B;
    // A step factor close to 1 can give the same whole elements twice: one row each.
    if (!run.rows.empty() && run.rows.back().size_B == moved_B) continue;
    auto p = planner.plan(o.kind, per_rank_input_B(o.kind, moved_B, n), o.gpus, o.choices);
    SweepRow row;
    row.size_B = moved_B;
    row.count = count;
    row.algorithm = p.algorithm;
    row.protocol = p.protocol;
    row.channels = p.channels;
    row.flows = p.flows.size();
    row.link_class = p.link_class;
    row.steps = p.steps;
    row.hop_steps = p.hop_steps;
    row.bandwidth_Bps = p.bandwidth_Bps;
    row.bottleneck_bytes = p.bottleneck_bytes;
    row.latency_s = p.latency_s;
    row.processing_s = p.processing_s;
    row.channel_rate_s = p.channel_rate_s;
    row.pipeline_s = p.pipeline_s;
    if (!p.flows.empty()) row.bound_by = planner.bound_by(p.flows);
    run.rows.push_back(row);
    run.plans.push_back(std::move(p));
  }
  // Each size is simulated in a process of its own (a fork of this one, up to `jobs` at
  // once): sizes are independent, as in nccl-tests, and in one SimGrid engine each size
  // after the first ran about 3 times slower than alone (a 128-GPU all_to_all: 0.35 s for a
  // size alone, 1.1-1.4 s for each later one), which made long sweeps quadratic.
  // The first size runs alone; its child's peak memory then bounds how many run at once
  // (the memory available, in the machine and the process's cgroup, / 1.25 x that peak
  // scaled to the most flows of any size), so that a large topology (10,000 GPUs: 12 GB a
  // size) does not run four at once into the out-of-memory killer.
  size_t jobs = 1;
  const size_t jobs_wanted = std::min<size_t>(std::max(1, o.jobs), run.plans.size());
  bool first_reaped = false;
  struct Child {
    pid_t pid;
    int fd;
    size_t size;
  };
  std::vector<Child> running;
  std::string failure, input_failure;
  bool killed = false;  // a child out of memory, or ended by SIGKILL (the out-of-memory killer, most likely)
  // Rows go to o.on_row in size order as soon as they and every smaller size are done.
  std::vector<bool> ready(run.rows.size(), false);
  size_t emitted = 0;
  auto finish_row = [&](SweepRow& r) {
    r.algbw_Bps = r.time_s > 0 ? r.size_B / r.time_s : 0;
    r.busbw_Bps = r.algbw_Bps * collective::busbw_factor(o.kind, n);
  };
  auto emit = [&] {
    for (; emitted < run.rows.size() && ready[emitted]; ++emitted) {
      finish_row(run.rows[emitted]);
      if (o.on_row) o.on_row(run.rows[emitted]);
    }
  };
  auto reap = [&](Child c) {
    std::string said;
    char buf[4096];
    for (ssize_t k; (k = read(c.fd, buf, sizeof buf)) > 0;) said.append(buf, static_cast<size_t>(k));
    close(c.fd);
    int status = 0;
    struct rusage usage {};
    wait4(c.pid, &status, 0, &usage);
    if (!first_reaped) {
      first_reaped = true;
      size_t most_flows = 1;
      for (const auto& p : run.plans) most_flows = std::max(most_flows, p.flows.size());
      // ru_maxrss (KiB) also counts pages shared with this process, which errs on the safe side.
      jobs = sweep_jobs_for_memory(mem_available_B(), static_cast<double>(usage.ru_maxrss) * 1024.0, run.plans[c.size].flows.size(), most_flows,
                                   jobs_wanted);
    }
    double time_s = 0;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && said.size() == sizeof time_s) {
      std::memcpy(&time_s, said.data(), sizeof time_s);
      run.rows[c.size].time_s = time_s;
      ready[c.size] = true;
      emit();
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 2 && input_failure.empty()) {
      input_failure = said;  // an InputError's message, whole
    } else if (failure.empty()) {
      failure = describe_size_failure(run.rows[c.size].size_B, status, said, killed);
    }
  };
  for (size_t i = 0; i < run.plans.size() && failure.empty() && input_failure.empty(); ++i) {
    if (run.plans[i].flows.empty()) {  // nothing to simulate: the model's time after no flows
      run.rows[i].time_s = run.plans[i].after_flows_s();
      ready[i] = true;
      emit();
      continue;
    }
    while (!running.empty() && running.size() >= jobs) {
      reap(running.front());
      running.erase(running.begin());
      if (!failure.empty() || !input_failure.empty()) break;  // start no other size
    }
    if (!failure.empty() || !input_failure.empty()) break;
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("cannot make a pipe for a size's simulation");
    std::fflush(nullptr);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("cannot fork a size's simulation");
    if (pid == 0) {
      // Ends with this process however it ends (a signal to it alone included).
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(5);
      close(fds[0]);
      try {
        std::set<std::pair<int, int>> mine;
        for (const auto& f : run.plans[i].flows) mine.emplace(f.src, f.dst);
        run.plans = {run.plans[i]};
        run.rows = {run.rows[i]};
        run.platform = std::make_unique<Platform>(t, std::vector<std::pair<int, int>>(mine.begin(), mine.end()), true, &proxies);
        sg4::Activity::on_completion_cb([&run](const sg4::Activity&) { run.flow_done(); });
        simgrid::kernel::timer::Timer::set(0.0, [&run] { run.start(0); });
        sg4::Engine::get_instance()->run();
        const double time_s = run.rows[0].time_s;
        if (write(fds[1], &time_s, sizeof time_s) != static_cast<ssize_t>(sizeof time_s)) _exit(4);
        _exit(0);
      } catch (const std::bad_alloc&) {
        _exit(6);  // out of memory: the parent says so
      } catch (const std::exception& e) {
        const std::string what = e.what();
        if (write(fds[1], what.data(), what.size()) < 0) _exit(4);
        _exit(dynamic_cast<const InputError*>(&e) ? 2 : 3);
      }
    }
    close(fds[1]);
    running.push_back({pid, fds[0], i});
  }
  for (const auto& c : running) reap(c);
  if (!input_failure.empty()) throw InputError(input_failure);
  if (!failure.empty() && killed) throw OutOfResources(failure);
  if (!failure.empty()) throw std::runtime_error(failure);
  for (auto& r : run.rows) finish_row(r);
  return run.rows;
}

std::vector<double> run_p2p(const topo::Topology& t, const std::vector<std::pair<int, int>>& pairs, double bytes) {
  Platform platform(t, pairs, /*nccl_paths=*/false);
  std::vector<double> bw(pairs.size(), 0.0);
  size_t i = 0;
  double started = 0;
  sg4::CommPtr current;
  std::vector<sg4::CommPtr> done;
  std::function<void()> next = [&] {
    if (i >= pairs.size()) return;
    started = sg4::Engine::get_clock();
    current = sg4::Comm::sendto_init(platform.host_of(pairs[i].first), platform.host_of(pairs[i].second));
    current->set_payload_size(static_cast<std::uint64_t>(bytes));
    platform.start(current, pairs[i].first, pairs[i].second);
  };
  sg4::Activity::on_completion_cb([&](const sg4::Activity&) {
    bw[i] = bytes / (sg4::Engine::get_clock() - started);
    done.push_back(current);
    ++i;
    simgrid::kernel::timer::Timer::set(sg4::Engine::get_clock(), [&] { next(); });
  });
  simgrid::kernel::timer::Timer::set(0.0, [&] { next(); });
  sg4::Engine::get_instance()->run();
  return bw;
}

int nccl_tests_type_size_B(std::string_view name) {
  // nccl-tests' names, exactly (its -d compares them so); their sizes are the traces' table.
  return std::find(std::begin(kNcclTestsTypes), std::end(kNcclTestsTypes), name) != std::end(kNcclTestsTypes) ? collective::dtype_size_B(name) : 0;
}

std::string nccl_tests_type_list() {
  std::string list;
  for (auto n : kNcclTestsTypes) list.append(list.empty() ? "" : ", ").append(n);
  return list;
}

std::string format_table_header(const std::string& title) {
  const std::string changed = format_overridden_params();
  return "# " + title + "\n" + (changed.empty() ? "" : "# model parameters set: " + changed + "\n") +
         "#\n#       size         count      type   redop    root     time   algbw   busbw  algo       proto   channels\n" +
         "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)\n";
}

namespace {
// A row of no bytes runs nothing (NCCL returns at once for a count of 0): no algorithm,
// protocol or link class to show.
std::string algorithm_column(const SweepOptions& o, const SweepRow& r) {
  if (r.size_B <= 0) return "-";
  return (o.kind == Kind::all_to_all || o.kind == Kind::send_recv) ? "P2P" : std::string(collective::to_string(r.algorithm));
}
std::string protocol_column(const SweepRow& r) { return r.size_B <= 0 ? "-" : std::string(collective::to_string(r.protocol)); }
}  // namespace

std::string format_table_row(const SweepOptions& o, const SweepRow& r) {
  char line[256];
  std::snprintf(line, sizeof line, "%12.0f  %12.0f  %8s  %6s  %6d  %7.1f  %6.2f  %6.2f  %-9s  %-6s  %8d\n", r.size_B, r.count, o.type_name.c_str(),
                // nccl-tests names the reduction of the operations that take one; sendrecv_perf
                // runs its op loop too (sum by default), the rest print "none".
                o.kind == Kind::all_reduce || o.kind == Kind::reduce || o.kind == Kind::reduce_scatter || o.kind == Kind::send_recv ? "sum" : "none",
                o.kind == Kind::broadcast || o.kind == Kind::reduce ? 0 : -1, r.time_s * 1e6, r.algbw_Bps / 1e9, r.busbw_Bps / 1e9,
                algorithm_column(o, r).c_str(), protocol_column(r).c_str(), r.channels);
  return line;
}

std::string format_table_footer(const std::vector<SweepRow>& rows) {
  double sum = 0;
  for (const auto& r : rows) sum += r.busbw_Bps;
  char line[96];
  std::snprintf(line, sizeof line, "# Avg bus bandwidth    : %g \n", rows.empty() ? 0.0 : sum / rows.size() / 1e9);
  return line;
}

std::string format_table(const SweepOptions& o, const std::vector<SweepRow>& rows, const std::string& title) {
  std::string out = format_table_header(title);
  for (const auto& r : rows) out += format_table_row(o, r);
  return out + format_table_footer(rows);
}

std::string format_csv(const SweepOptions& o, const std::vector<SweepRow>& rows) {
  std::string out = "op,gpus,size_B,count,type,time_us,algbw_GBps,busbw_GBps,algorithm,protocol,channels,flows,link_class,steps,"
                    "model_bandwidth_GBps,model_bottleneck_bytes,model_latency_us,model_hop_steps,model_processing_us,model_pipeline_us,model_channel_rate_us,model_bound_by,params\n";
  const std::string changed = csv_field(format_overridden_params());  // ";"-separated: one field
  char line[512];
  for (const auto& r : rows) {
    std::snprintf(line, sizeof line, "%s,%zu,%.0f,%.0f,%s,%.6g,%.6g,%.6g,%s,%s,%d,%zu\n", std::string(collective::to_string(o.kind)).c_str(),
                  o.gpus.size(), r.size_B, r.count, o.type_name.c_str(), r.time_s * 1e6, r.algbw_Bps / 1e9, r.busbw_Bps / 1e9,
                  algorithm_column(o, r).c_str(), protocol_column(r).c_str(), r.channels, r.flows);
    out.append(line, strlen(line) - 1);
    static const char* kClass[3] = {"nvlink", "pcie", "network"};
    std::snprintf(line, sizeof line, ",%s,%d,%.9g,%.9g,%.9g,%d,%.9g,%.9g,%.9g,%s,", r.size_B <= 0 ? "-" : kClass[static_cast<int>(r.link_class)], r.steps, r.bandwidth_Bps / 1e9,
                  r.bottleneck_bytes, r.latency_s * 1e6, r.hop_steps, r.processing_s * 1e6, r.pipeline_s * 1e6, r.channel_rate_s * 1e6,
                  r.bound_by.empty() ? "-" : r.bound_by.c_str());
    out += line + changed + "\n";
  }
  return out;
}

}  // namespace composim::sim
