#include "sim/replay.hpp"

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "models/error.hpp"
#include "models/gpu.hpp"
#include "sim/collectives.hpp"

namespace composim::sim {

namespace sg4 = simgrid::s4u;
using trace::GpuOpKind;
using trace::Workload;

namespace {

enum class NodeKind : std::uint8_t { origin, cpu, gpu_timed, gpu_copy, gpu_collective };

// The dependency graph of one workload, shared by every rank that replays it.
struct Graph {
  std::int32_t n = 0;
  std::vector<std::int32_t> cpu_base;  // [thread] -> node of op 0
  std::int32_t gpu_base = 0;
  std::vector<NodeKind> kind;
  std::vector<double> dur_s;
  std::vector<std::int32_t> ndeps;
  std::vector<std::uint32_t> succ_begin;  // CSR, size n + 1
  std::vector<std::int32_t> succ;
  std::vector<double> succ_delay_s;
  std::vector<std::uint8_t> succ_program_order;  // edge decides when a CPU call starts (its thread, or its trigger)
};

struct Edge {
  std::int32_t from, to;
  double delay_s;
  bool program_order;
};

Graph build_graph(const Workload& w, double launch_latency_s, int queue_depth) {
  Graph g;
  std::int32_t next = 1;  // node 0 is the origin (t = 0)
  for (const auto& t : w.threads) {
    g.cpu_base.push_back(next);
    next += static_cast<std::int32_t>(t.ops.size());
  }
  g.gpu_base = next;
  next += static_cast<std::int32_t>(w.gpu_ops.size());
  g.n = next;
  g.kind.assign(g.n, NodeKind::cpu);
  g.dur_s.assign(g.n, 0.0);
  g.kind[0] = NodeKind::origin;
  std::vector<Edge> edges;
  edges.reserve(static_cast<size_t>(g.n) * 2);
  auto ns = [](std::int64_t v) { return static_cast<double>(v) * 1e-9; };
  auto gpu_end_ns = [&](std::int32_t gi) { return w.gpu_ops[gi].ts_ns + w.gpu_ops[gi].dur_ns; };

  // Cross-thread dependencies. The trace records each thread's order but not why one thread
  // waited for another (PyTorch's autograd thread starts when the main thread calls
  // backward; the main thread resumes when backward ends). A call that follows a gap of
  // more than kCrossThreadGap_ns on its thread depends on the latest call of another thread
  // that ended inside that gap (its trigger), with the measured delay; its own thread's
  // previous call then only orders it (no delay). Self-replay is unchanged, and a what-if
  // that moves one thread moves the other.
  constexpr std::int64_t kCrossThreadGap_ns = 20'000;
  struct Trigger {
    std::int32_t node = -1;
    double delay_s = 0;
  };
  std::vector<std::vector<Trigger>> trigger(w.threads.size());
  for (size_t ti = 0; ti < w.threads.size(); ++ti) trigger[ti].resize(w.threads[ti].ops.size());
  if (w.threads.size() > 1) {
    struct End {
      std::int64_t end_ns;
      std::int32_t thread, op;
    };
    std::vector<End> ends;
    for (size_t ti = 0; ti < w.threads.size(); ++ti)
      for (size_t k = 0; k < w.threads[ti].ops.size(); ++k)
        ends.push_back({w.threads[ti].ops[k].ts_ns + w.threads[ti].ops[k].dur_ns, static_cast<std::int32_t>(ti), static_cast<std::int32_t>(k)});
    std::sort(ends.begin(), ends.end(), [](const End& a, const End& b) { return a.end_ns < b.end_ns; });
    for (size_t ti = 0; ti < w.threads.size(); ++ti) {
      const auto& ops = w.threads[ti].ops;
      for (size_t k = 1; k < ops.size(); ++k) {
        const std::int64_t prev_end = ops[k - 1].ts_ns + ops[k - 1].dur_ns;
        if (ops[k].ts_ns - prev_end <= kCrossThreadGap_ns) continue;
        // Latest end on another thread in (prev_end, start].
        auto it = std::upper_bound(ends.begin(), ends.end(), ops[k].ts_ns, [](std::int64_t t, const End& e) { return t < e.end_ns; });
        while (it != ends.begin()) {
          --it;
          if (it->end_ns <= prev_end) break;
          if (it->thread != static_cast<std::int32_t>(ti)) {
            trigger[ti][k] = {g.cpu_base[it->thread] + it->op, ns(ops[k].ts_ns - it->end_ns)};
            break;
          }
        }
      }
    }
  }
  // A call that launches work and then blocks on it (a blocking memcpy) enqueues the work
  // when it starts, not when it returns: its launch edge leaves from the call's start.
  // With a cross-thread trigger the call starts after that too: both edges.
  struct LaunchFrom {
    std::int32_t node;
    double delay_s;
    std::int32_t trigger_node = -1;
    double trigger_delay_s = 0;
  };
  std::vector<LaunchFrom> blocking_launch(w.gpu_ops.size(), {-1, 0.0});
  // The launch queue: the call making a stream's k-th launch returns no earlier than the
  // end of the operation of its (k - queue_depth)-th (gpu::kLaunchQueueDepth), so a CPU
  // that never synchronizes runs a bounded way ahead of a slower GPU, as in CUDA. Launches
  // are the stream's operations with a launch call: a CUDA graph's kernels after its first
  // have none and take no entry. A wait the measurement contradicts (the oldest ended after
  // the call returned: this GPU's queue was deeper) is not added. queue_wait[call]: the
  // operation it waits for (a call launches at most one: CpuOp::gpu_op).
  std::unordered_map<std::int32_t, std::int32_t> queue_wait;
  for (const auto& stream : w.streams) {
    std::vector<std::int32_t> launched;
    for (auto x : stream.ops)
      if (w.gpu_ops[x].launch_thread >= 0) launched.push_back(x);
    for (size_t k = static_cast<size_t>(queue_depth); k < launched.size(); ++k) {
      const auto& op = w.gpu_ops[launched[k]];
      const auto& call = w.threads[op.launch_thread].ops[op.launch_op];
      if (call.blocking) continue;  // waits for its work anyway
      const auto oldest = launched[k - static_cast<size_t>(queue_depth)];
      if (gpu_end_ns(oldest) > call.ts_ns + call.dur_ns) continue;
      queue_wait[g.cpu_base[op.launch_thread] + op.launch_op] = oldest;
    }
  }
  for (size_t ti = 0; ti < w.threads.size(); ++ti) {
    const auto& ops = w.threads[ti].ops;
    for (size_t k = 0; k < ops.size(); ++k) {
      const auto& op = ops[k];
      const std::int32_t id = g.cpu_base[ti] + static_cast<std::int32_t>(k);
      const std::int32_t prev = k == 0 ? 0 : id - 1;
      const std::int64_t prev_end = k == 0 ? 0 : ops[k - 1].ts_ns + ops[k - 1].dur_ns;
      const Trigger& trig = trigger[ti][k];
      if (trig.node >= 0) edges.push_back({trig.node, id, trig.delay_s, true});  // also decides when the call starts
      const double gap = trig.node >= 0 ? 0.0 : ns(std::max<std::int64_t>(0, op.ts_ns - prev_end));
      if (op.blocking && op.gpu_op >= 0) blocking_launch[op.gpu_op] = {prev, gap + launch_latency_s, trig.node, trig.delay_s + launch_latency_s};
      if (op.blocking && !op.waits.empty()) {
        std::int64_t awaited_end = 0;
        for (auto x : op.waits) awaited_end = std::max(awaited_end, gpu_end_ns(x));
        const bool waited = awaited_end >= op.ts_ns;
        const double ret = waited ? ns(std::clamp<std::int64_t>(op.ts_ns + op.dur_ns - awaited_end, 0, op.dur_ns)) : 0.0;
        // The call begins after its gap (program order: its start); measured without waiting
        // (the work had ended), it also lasts its own duration before returning.
        edges.push_back({prev, id, gap, true});
        if (!waited) {
          edges.push_back({prev, id, gap + ns(op.dur_ns), false});
          if (trig.node >= 0) edges.push_back({trig.node, id, trig.delay_s + ns(op.dur_ns), false});
        }
        for (auto x : op.waits) edges.push_back({g.gpu_base + x, id, ret, false});
        g.dur_s[id] = 0;
      } else {
        edges.push_back({prev, id, gap, true});
        g.dur_s[id] = ns(op.dur_ns);
        if (const auto q = queue_wait.find(id); q != queue_wait.end()) {
          // Measured with the oldest operation ending inside the call, the call waited for the
          // queue until then: only what follows is its own cost (so a self-replay keeps the
          // measured end). Ending before the call, the oldest did not hold it: all of it is
          // its own cost. (Ending after it, there is no wait: see queue_wait.)
          edges.push_back({g.gpu_base + q->second, id, 0.0, false});
          const std::int64_t oldest_end = gpu_end_ns(q->second);
          if (oldest_end > op.ts_ns) g.dur_s[id] = ns(op.ts_ns + op.dur_ns - oldest_end);
        }
      }
    }
  }
  for (size_t s = 0; s < w.streams.size(); ++s) {
    const auto& order = w.streams[s].ops;
    for (size_t k = 1; k < order.size(); ++k) edges.push_back({g.gpu_base + order[k - 1], g.gpu_base + order[k], 0.0, false});
    if (!order.empty() && w.gpu_ops[order[0]].launch_thread < 0) edges.push_back({0, g.gpu_base + order[0], 0.0, false});
  }
  for (size_t gi = 0; gi < w.gpu_ops.size(); ++gi) {
    const auto& op = w.gpu_ops[gi];
    const std::int32_t id = g.gpu_base + static_cast<std::int32_t>(gi);
    if (blocking_launch[gi].node >= 0) {
      edges.push_back({blocking_launch[gi].node, id, blocking_launch[gi].delay_s, false});
      if (blocking_launch[gi].trigger_node >= 0) edges.push_back({blocking_launch[gi].trigger_node, id, blocking_launch[gi].trigger_delay_s, false});
    } else if (op.launch_thread >= 0) {
      edges.push_back({g.cpu_base[op.launch_thread] + op.launch_op, id, launch_latency_s, false});
    } else {
      // No launch recorded (sampled trace): not before its measured start.
      edges.push_back({0, id, ns(op.ts_ns), false});
    }
    for (auto x : op.waits) edges.push_back({g.gpu_base + x, id, 0.0, false});
    g.dur_s[id] = ns(op.dur_ns);
    switch (op.kind) {
      case GpuOpKind::kernel:
      case GpuOpKind::memset: g.kind[id] = NodeKind::gpu_timed; break;
      case GpuOpKind::memcpy:
        g.kind[id] = (op.bytes > 0 && (op.copy == trace::CopyKind::htod || op.copy == trace::CopyKind::dtoh))
                         ? NodeKind::gpu_copy
                         : NodeKind::gpu_timed;
        break;
      case GpuOpKind::collective: g.kind[id] = NodeKind::gpu_collective; break;
    }
  }
  // CSR.
  g.ndeps.assign(g.n, 0);
  g.succ_begin.assign(g.n + 1, 0);
  for (const auto& e : edges) {
    ++g.succ_begin[e.from + 1];
    ++g.ndeps[e.to];
  }
  for (std::int32_t i = 0; i < g.n; ++i) g.succ_begin[i + 1] += g.succ_begin[i];
  g.succ.resize(edges.size());
  g.succ_delay_s.resize(edges.size());
  g.succ_program_order.resize(edges.size());
  std::vector<std::uint32_t> fill(g.succ_begin.begin(), g.succ_begin.end() - 1);
  for (const auto& e : edges) {
    const auto at = fill[e.from]++;
    g.succ[at] = e.to;
    g.succ_delay_s[at] = e.delay_s;
    g.succ_program_order[at] = e.program_order;
  }
  return g;
}

// Names a graph node the way the IR file does ("gpu_ops[12] (kernel \"gemm\")"); long
// kernel names are cut.
std::string describe_node(const Graph& g, const Workload& w, std::int32_t node) {
  auto cut = [](const std::string& s) { return s.size() <= 48 ? s : s.substr(0, 45) + "..."; };
  if (node == 0) return "the start of the trace";
  if (node >= g.gpu_base) {
    const auto i = node - g.gpu_base;
    const auto& op = w.gpu_ops[i];
    return "gpu_ops[" + std::to_string(i) + "] (" + std::string(trace::to_string(op.kind)) + " \"" + cut(w.names[op.name]) + "\")";
  }
  const auto ti = static_cast<size_t>(std::upper_bound(g.cpu_base.begin(), g.cpu_base.end(), node) - g.cpu_base.begin()) - 1;
  const auto k = node - g.cpu_base[ti];
  return "threads[" + std::to_string(ti) + "].ops[" + std::to_string(k) + "] (\"" + cut(w.names[w.threads[ti].ops[k].name]) + "\")";
}

// A workload whose operations wait on each other in a cycle (an event wait on a later op of
// the same stream, a blocking call waiting for work it launches after itself) would stall
// the replay; find it before, with Kahn's algorithm, and name the ops of one cycle, runs of
// consecutive ops of one stream or thread shown as "first .. last".
void check_acyclic(const Graph& g, const Workload& w) {
  std::vector<std::int32_t> left = g.ndeps, ready{0};
  std::int32_t done = 0;
  while (!ready.empty()) {
    const std::int32_t n = ready.back();
    ready.pop_back();
    ++done;
    for (auto e = g.succ_begin[n]; e < g.succ_begin[n + 1]; ++e)
      if (--left[g.succ[e]] == 0) ready.push_back(g.succ[e]);
  }
  if (done == g.n) return;
  // Every op left has a predecessor left; walking predecessors must enter a cycle.
  std::vector<std::int32_t> pred(g.n, -1);
  for (std::int32_t n = 0; n < g.n; ++n)
    for (auto e = g.succ_begin[n]; e < g.succ_begin[n + 1]; ++e)
      if (left[n] > 0 && left[g.succ[e]] > 0) pred[g.succ[e]] = n;
  std::int32_t at = 0;
  while (left[at] == 0) ++at;
  std::vector<std::uint8_t> seen(g.n, 0);
  while (!seen[at]) {
    seen[at] = 1;
    at = pred[at];
  }
  std::vector<std::int32_t> cycle{at};
  for (std::int32_t n = pred[at]; n != at; n = pred[n]) cycle.push_back(n);
  std::reverse(cycle.begin(), cycle.end());  // now each op waits for the one before it
  // a -> b is program order when b follows a on the same stream or CPU thread.
  std::vector<std::int32_t> pos(w.gpu_ops.size(), -1);
  for (const auto& st : w.streams)
    for (size_t k = 0; k < st.ops.size(); ++k) pos[st.ops[k]] = static_cast<std::int32_t>(k);
  auto in_order = [&](std::int32_t a, std::int32_t b) {
    if (a >= g.gpu_base && b >= g.gpu_base) {
      const auto& x = w.gpu_ops[a - g.gpu_base];
      return x.stream == w.gpu_ops[b - g.gpu_base].stream && pos[b - g.gpu_base] == pos[a - g.gpu_base] + 1;
    }
    if (a <= 0 || b <= 0 || a >= g.gpu_base || b >= g.gpu_base || b != a + 1) return false;
    return std::upper_bound(g.cpu_base.begin(), g.cpu_base.end(), a) == std::upper_bound(g.cpu_base.begin(), g.cpu_base.end(), b);
  };
  const size_t n = cycle.size();
  size_t first = 0;  // start at the beginning of a run
  for (size_t i = 0; i < n; ++i)
    if (!in_order(cycle[(i + n - 1) % n], cycle[i])) {
      first = i;
      break;
    }
  std::rotate(cycle.begin(), cycle.begin() + static_cast<std::ptrdiff_t>(first), cycle.end());
  std::string chain;
  size_t runs = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j + 1 < n && in_order(cycle[j], cycle[j + 1])) ++j;
    if (runs++ < 8) chain += describe_node(g, w, cycle[i]) + (j > i ? " .. " + describe_node(g, w, cycle[j]) : "") + " -> ";
    i = j + 1;
  }
  chain += (runs > 8 ? "... -> " : "") + describe_node(g, w, cycle[0]);
  input_error(w.source, describe_node(g, w, cycle[0]),
              "operations wait on each other in a cycle and could never run: " + chain +
                  " (each waits for the one before it: stream and thread order, event waits, launches, blocking calls)");
}

std::string human_bytes(double b) {
  char buf[32];
  if (b >= 1 << 20) std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1 << 20));
  else if (b >= 1 << 10) std::snprintf(buf, sizeof buf, "%.1f KiB", b / (1 << 10));
  else std::snprintf(buf, sizeof buf, "%.0f B", b);
  return buf;
}

// A replicated trace's process group laid out over `nranks` ranks: the group's offsets from
// its lowest rank ([0, 8]; [0, 1, 8, 9]) placed from each rank not yet in a group, lowest
// first, so that they tile the ranks ({r mod 8, r mod 8 + 8} of each 16). Each rank's group
// and the groups' members; empty if the layout does not tile the ranks ([0, 15] of 16).
struct GroupLayout {
  std::vector<int> group_of;
  std::vector<std::vector<int>> groups;
  bool consecutive = false;  // the trace's layout could not tile the ranks: consecutive groups instead
};

std::optional<GroupLayout> tile_groups(const std::vector<int>& ranks, int nranks) {
  std::vector<int> offsets = ranks;
  std::sort(offsets.begin(), offsets.end());
  for (size_t k = offsets.size(); k-- > 0;) offsets[k] -= offsets[0];
  GroupLayout t;
  t.group_of.assign(static_cast<size_t>(nranks), -1);
  for (int base = 0; base < nranks; ++base) {
    if (t.group_of[static_cast<size_t>(base)] >= 0) continue;
    std::vector<int> g;
    for (int o : offsets) {
      const long long m = static_cast<long long>(base) + o;
      if (m >= nranks || t.group_of[static_cast<size_t>(m)] >= 0) return std::nullopt;
      g.push_back(static_cast<int>(m));
    }
    for (int m : g) t.group_of[static_cast<size_t>(m)] = static_cast<int>(t.groups.size());
    t.groups.push_back(std::move(g));
  }
  return t;
}

// Groups of `size` consecutive ranks (nranks a multiple of it).
GroupLayout consecutive_groups(int nranks, int size) {
  GroupLayout t;
  for (int m = 0; m < nranks; ++m) {
    if (m % size == 0) t.groups.emplace_back();
    t.groups.back().push_back(m);
    t.group_of.push_back(m / size);
  }
  return t;
}

}  // namespace

struct Replay::Impl {
  const topo::Topology& topo;
  std::vector<Workload> workloads;
  ReplayOptions opt;
  int nranks = 0;
  bool replicated = true;
  std::vector<int> rank_workload;  // rank -> workload index
  std::vector<int> rank_gpu;       // rank -> topology node
  std::vector<Graph> graphs;

  // Collective instances.
  struct Member {
    int rank;
    std::int32_t node;
  };
  struct Instance {
    std::string label;  // "all_reduce #3 of communicator 0 (25.3 MiB)"
    std::vector<Member> members;
    int expected = 0;
    int arrived = 0;
    collective::Kind kind = collective::Kind::unknown;
    double in_bytes = 0;
    collective::Protocol protocol = collective::Protocol::simple;
    bool protocol_from_trace = false;
    std::string algorithm;  // from the kernel name ("RING"); meaningful with protocol_from_trace
    std::string dtype;      // the first known element type a member's trace gives ("Float"); "" if none
    int dtype_rank = -1;    // that member's rank slot
    double measured_dur_s = INFINITY;
    int captured_ranks = 0;  // ranks of the communicator when the trace was captured (0: unknown)
    bool unequal = false;    // all_to_allv: the ranks' sizes differ (in_bytes is the largest)
    bool p2p = false;        // a send or receive, run alone at its measured duration
    int p2p_src = -1, p2p_dst = -1;  // a send paired with its receive: the sender's and receiver's slots
    std::vector<int> member_slots;  // the members as the first trace to launch it lists them (slots, sorted)
    int flows_left = 0;
    CollectivePlan plan;
    int route_variant = 0;  // Platform route variant: 0, or its communicator's own PXN relays
    const std::string* step = nullptr;  // the step a member launched it in (the first that says)
    int step_rank = -1;                  // that member
    std::string comm_name;               // its communicator (process group) name
    double gather_scale = 1;             // an all-gather's input per trace input (--ranks)
    bool numbered_by_trace = false;      // matched by PyTorch's "Seq" (seq), not by order
    std::uint64_t seq = 0;               // its number on the communicator
    bool outside_window = false;         // a member's trace window does not reach it: this member's alone, at its measured duration
    bool in_batch = false;               // a part of a batched send/recv kernel (a member's kernel may wait for others: Batch)
  };
  std::vector<Instance> instances;
  std::vector<std::vector<std::int32_t>> instance_of;  // [rank][collective index] -> instance; -2 - b: batches[b]
  // A batched send/recv kernel whose parts were paired: their instances, and how many are
  // still to finish (the kernel ends with the last).
  struct Batch {
    std::vector<std::int32_t> instances;
    int left = 0;
  };
  std::vector<Batch> batches;
  // A replicated trace's process groups laid out over the replay's ranks, per (workload,
  // communicator).
  std::map<std::pair<int, long long>, GroupLayout> layouts;
  std::set<std::string> notes;  // said once each, in the run's notes
  // Members whose profiler windows start at different collectives of a group numbered by
  // "Seq": the later-starting one's slot, the other's, and how much later the former's trace
  // began (ns; negative: earlier), told by the end of the first collective both have.
  struct WindowPair {
    int late, early;
    std::int64_t offset_ns;
  };
  std::vector<WindowPair> window_pairs;
  // A rank whose trace began later than another's starts when that one's node starts, plus
  // a gap: (leader, node) -> (follower slot, gap in s).
  std::unordered_multimap<std::uint64_t, std::pair<int, double>> follow;
  std::vector<int> placements_left;  // per rank slot: the anchors (follow) it still waits for; 0: starts at 0
  std::map<std::string, int> algorithm_not_kept;  // kernel-named algorithms the topology cannot run -> collectives

  // Run state.
  struct RankState {
    std::vector<std::int32_t> remaining;
    std::vector<double> release, start, end;
  };
  std::vector<RankState> state;
  std::unique_ptr<Platform> platform;
  std::vector<std::uint64_t> worklist;
  std::uint64_t completed = 0, total = 0, flows = 0, instances_done = 0, no_size = 0, unequal_all_to_all = 0, p2p_at_measured = 0;
  // Sends and receives at their measured duration, by why: no peer in the trace, the peer's
  // trace not given, a replicated trace (its peers are the capture's ranks); and those paired.
  std::uint64_t p2p_no_peer = 0, p2p_peer_absent = 0, p2p_replicated = 0, p2p_paired_no_size = 0;
  std::uint64_t p2p_peer_batched = 0;  // of a pair that cannot be paired in order (see unpairable)
  std::uint64_t p2p_batches_paired = 0;  // batched send/recv kernels whose parts were paired
  std::uint64_t p2p_parts_left_out = 0;  // their parts that could not be (peer's trace not given, or an unpairable pair)
  std::uint64_t outside_window = 0;    // collective kernels outside another member's trace window, at their measured duration
  struct CommTag {
    bool collective;
    int rank;
    std::int32_t node;
    std::int32_t instance;
    sg4::CommPtr comm;  // kept alive until it completes (SimGrid needs the handle)
    int src = -1, dst = -1;  // topology endpoints, for link accounting
    double bytes = 0;
    double remaining = 0;   // bytes still to move when last sampled
    int active_index = -1;  // in `active` while moving data
    const topo::Route* route = nullptr;  // its route, set when it starts
    int variant = 0;                     // its Platform route variant
  };
  std::deque<CommTag> tags;
  std::vector<sg4::CommPtr> graveyard;  // completed; released at the next timer
  std::vector<std::array<double, 2>> link_bytes;
  // Link traffic over time, exact per bin. kLinkBins bins of width bin_w cover
  // [0, kLinkBins * bin_w); when time passes the end, the width doubles (pairs of bins
  // merge). While any flow moves data, every flow's progress is sampled at each bin
  // boundary (a timer) and a flow's last stretch when it ends, so each bin holds exactly
  // the bytes moved in it. Starts cost nothing; a sample costs the flows in flight, and
  // there are about kLinkBins / 2 boundaries per doubling: bounded however the flows
  // interleave (sampling at every start and end grew with their product).
  static constexpr int kLinkBins = 100;
  double bin_w = 1e-9;
  std::vector<std::int32_t> bins_of;          // [2 * link + direction] -> row of `bins`, or -1
  std::vector<std::int32_t> bins_key;         // row -> 2 * link + direction
  std::vector<std::vector<double>> bins;      // row -> bytes per bin
  std::vector<CommTag*> active;
  simgrid::kernel::timer::Timer* tick = nullptr;
  void widen_to(double t) {
    while (t > kLinkBins * bin_w) {
      for (auto& b : bins) {
        for (int i = 0; i < kLinkBins / 2; ++i) b[i] = b[2 * i] + b[2 * i + 1];
        std::fill(b.begin() + kLinkBins / 2, b.end(), 0.0);
      }
      bin_w *= 2;
    }
  }
  // While a boundary is pending (whenever a flow moves data), the progress since the last
  // one is in the bin that boundary closes: tick_bin. Kept as an index, not recomputed
  // from times, which rounding can move across a boundary.
  int tick_bin = 0;
  void sample(CommTag& t, int bin) {
    const double rem = t.comm->get_remaining();
    const double moved = t.remaining - rem;
    t.remaining = rem;
    if (moved <= 0) return;
    for (const auto& h : t.route->hops) {
      const std::int32_t k = 2 * h.link + (h.forward ? 0 : 1);
      if (bins_of[k] < 0) {
        bins_of[k] = static_cast<std::int32_t>(bins.size());
        bins_key.push_back(k);
        bins.emplace_back(kLinkBins, 0.0);
      }
      bins[bins_of[k]][bin] += moved;
    }
  }
  void arm_tick() {
    if (tick || active.empty()) return;
    const double now = sg4::Engine::get_clock();
    // The first boundary strictly after now (now / bin_w can round down across one).
    auto boundary_after = [&] {
      double k = std::floor(now / bin_w) + 1;
      while (k * bin_w <= now) ++k;
      return k * bin_w;
    };
    double next = boundary_after();
    while (next > kLinkBins * bin_w) {
      widen_to(next);
      next = boundary_after();
    }
    tick_bin = std::clamp(static_cast<int>(std::llround(next / bin_w)) - 1, 0, kLinkBins - 1);
    tick = simgrid::kernel::timer::Timer::set(next, [this] {
      tick = nullptr;
      for (CommTag* t : active) sample(*t, tick_bin);
      arm_tick();
    });
  }
  std::function<void()> on_start(CommTag* t) {
    return [this, t] {
      if (!tick) widen_to(sg4::Engine::get_clock());  // a pending boundary is within the bins
      t->remaining = t->bytes;
      t->route = &platform->route(t->variant, t->src, t->dst);
      t->active_index = static_cast<int>(active.size());
      active.push_back(t);
      arm_tick();
    };
  }
  // A finished flow: its last stretch in the bins, its bytes on every link direction of its
  // route; no sampling while nothing moves (a pending boundary would outlast the run).
  void account(CommTag& t) {
    if (t.active_index >= 0) {
      sample(t, tick_bin);  // a boundary is pending while it moved data
      active[t.active_index] = active.back();
      active[t.active_index]->active_index = t.active_index;
      active.pop_back();
      t.active_index = -1;
      if (active.empty() && tick) {
        tick->remove();
        tick = nullptr;
      }
    }
    for (const auto& h : t.route->hops) link_bytes[h.link][h.forward ? 0 : 1] += t.bytes;  // set when it started
  }

  Impl(const topo::Topology& t, std::vector<Workload> w, ReplayOptions o) : topo(t), workloads(std::move(w)), opt(std::move(o)) {}

  // The rank a slot stands for: its trace's rank, or the slot when one trace is replicated.
  int rank_id(int slot) const { return replicated ? slot : workloads[rank_workload[slot]].rank; }
  std::string rank_list(const std::vector<int>& slots) const {
    std::string s;
    for (size_t i = 0; i < slots.size(); ++i) {
      if (i == 8) return s + ",... (" + std::to_string(slots.size()) + " ranks)";
      s += (i ? "," : "") + std::to_string(rank_id(slots[i]));
    }
    return s;
  }

  static std::uint64_t pack(int rank, std::int32_t node) { return (static_cast<std::uint64_t>(rank) << 32) | static_cast<std::uint32_t>(node); }
  static int rank_of(std::uint64_t id) { return static_cast<int>(id >> 32); }
  static std::int32_t node_of(std::uint64_t id) { return static_cast<std::int32_t>(id & 0xffffffffu); }

  void setup();
  void match_collectives();
  void release(int rank, std::int32_t node);
  void complete(int rank, std::int32_t node);
  void drain();
  void start_copy(int rank, std::int32_t node);
  void arrive(int rank, std::int32_t node);
  void start_collective(std::int32_t inst);
  void finish_collective(std::int32_t inst);
  void on_comm_done(const sg4::Activity& a);
  std::string deadlock_report() const;
  std::string stalled_trace() const;
};

Replay::Replay(const topo::Topology& topology, std::vector<trace::Workload> workloads, ReplayOptions options)
    : impl_(std::make_unique<Impl>(topology, std::move(workloads), std::move(options))) {
  impl_->setup();
}

Replay::~Replay() = default;

const std::vector<trace::Workload>& Replay::workloads() const { return impl_->workloads; }
int Replay::rank_count() const { return impl_->nranks; }

void Replay::Impl::setup() {
  if (workloads.empty()) input_error("", "--trace", "no trace given");
  replicated = workloads.size() == 1;
  const auto gpus = topo.attached_gpus();
  if (replicated) {
    nranks = opt.ranks > 0 ? opt.ranks : std::max(1, workloads[0].world_size);
    if (opt.placement.empty() && nranks > static_cast<int>(gpus.size()))
      input_error(topo.file(), "", std::to_string(nranks) + " ranks (" +
                                       (opt.ranks > 0                          ? std::string("--ranks")
                                        : workloads[0].world_size_from_groups ? "the collectives' groups of " + workloads[0].source
                                                                               : "the world size of " + workloads[0].source) +
                                       ") but topology \"" + topo.name() + "\" has only " + std::to_string(gpus.size()) +
                                       (topo.composed() ? " attached" : "") + " GPUs (" +
                                       (opt.ranks > 0 ? "give --ranks " + std::to_string(gpus.size()) + " or fewer, or a topology with more GPUs"
                                                      : std::string("use --ranks N to replay fewer ranks")) +
                                       ")");
    rank_workload.assign(nranks, 0);
  } else {
    for (size_t i = 1; i < workloads.size(); ++i)
      if (workloads[i].world_size != workloads[0].world_size) {
        // A trace without distributedInfo has a world size only by default (1, or its
        // largest group): named as such, not as if it gave one.
        const Workload& odd = !workloads[i].world_size_given || workloads[0].world_size_given ? workloads[i] : workloads[0];
        const Workload& other = &odd == &workloads[i] ? workloads[0] : workloads[i];
        if (!odd.world_size_given)
          input_error(odd.source, "distributedInfo.world_size",
                      "absent, so the trace is taken as a job of " + std::to_string(odd.world_size) + " rank(s)" +
                          (odd.world_size_from_groups ? " (its largest process group)" : "") + ", where " + other.source + " gives " +
                          std::to_string(other.world_size) + ": with several traces, each must give its world size (the PyTorch profiler writes distributedInfo in a distributed job)");
        input_error(workloads[i].source, workloads[i].format == "composim-ir" ? "world_size" : "distributedInfo.world_size",
                    "world size " + std::to_string(workloads[i].world_size) + " differs from " + std::to_string(workloads[0].world_size) +
                        " in " + workloads[0].source + ": the traces are not of one job");
      }
    std::stable_sort(workloads.begin(), workloads.end(), [](const Workload& a, const Workload& b) { return a.rank < b.rank; });
    for (size_t i = 1; i < workloads.size(); ++i)
      if (workloads[i].rank == workloads[i - 1].rank) {
        // A trace that does not give its rank is named as such, not as if it gave this one.
        const Workload& unknown = !workloads[i].rank_known ? workloads[i] : workloads[i - 1];
        if (!unknown.rank_known)
          input_error(unknown.source, "distributedInfo.rank",
                      "absent, so the trace is taken as rank " + std::to_string(unknown.rank) + ", as is " +
                          (&unknown == &workloads[i] ? workloads[i - 1] : workloads[i]).source +
                          ": with several traces, each must give its rank (the PyTorch profiler writes distributedInfo in a distributed job)");
        input_error(workloads[i].source, workloads[i].format == "composim-ir" ? "rank" : "distributedInfo.rank",
                    "rank " + std::to_string(workloads[i].rank) + " is also the rank of " + workloads[i - 1].source +
                        "; give one trace per rank");
      }
    nranks = static_cast<int>(workloads.size());
    if (opt.ranks > 0 && opt.ranks != nranks)
      input_error("", "--ranks", "--ranks " + std::to_string(opt.ranks) + " with " + std::to_string(nranks) +
                                     " traces: --ranks replicates a single trace; give one or the other");
    for (int r = 0; r < nranks; ++r) rank_workload.push_back(r);
  }
  if (opt.placement.empty()) {
    if (nranks > static_cast<int>(gpus.size()))
      input_error(topo.file(), "", std::to_string(nranks) + " ranks but topology \"" + topo.name() + "\" has only " +
                                       std::to_string(gpus.size()) + (topo.composed() ? " attached" : "") +
                                       " GPUs: give a topology with a GPU for every rank's trace");
    rank_gpu.assign(gpus.begin(), gpus.begin() + nranks);
  } else {
    if (static_cast<int>(opt.placement.size()) != nranks)
      input_error("", "--placement", "gives " + std::to_string(opt.placement.size()) + " GPUs for " + std::to_string(nranks) + " ranks");
    rank_gpu = opt.placement;
    std::set<int> seen;
    for (int g : rank_gpu) {
      if (!seen.insert(g).second) input_error("", "--placement", "GPU \"" + topo.nodes()[g].name + "\" is given twice");
      if (!topo.attached(g)) input_error("", "--placement", "GPU \"" + topo.nodes()[g].name + "\" is not attached to any host in the composition");
    }
  }
  const double launch_latency = opt.launch_latency_s >= 0 ? opt.launch_latency_s : gpu::kLaunchLatency_s;
  for (const auto& w : workloads) {
    graphs.push_back(build_graph(w, launch_latency, gpu::kLaunchQueueDepth));
    check_acyclic(graphs.back(), w);
  }
  match_collectives();
}

// The step (ProfilerStep mark) a collective was launched in: its launch's time within a
// step's span; nullptr outside every step, or without a launch (a kernel of a CUDA graph
// after the first has none, and a GPU running behind its CPU starts kernels in the next
// step).
static const std::string* step_of(const Workload& w, const trace::Collective& c) {
  if (w.iterations.empty() || c.gpu_op < 0) return nullptr;
  const auto& op = w.gpu_ops[c.gpu_op];
  if (op.launch_thread < 0 || op.launch_op < 0) return nullptr;
  const std::int64_t t = w.threads[op.launch_thread].ops[op.launch_op].ts_ns;
  for (const auto& it : w.iterations)
    if (t >= it.ts_ns && t < it.ts_ns + it.dur_ns) return &it.name;
  return nullptr;
}

void Replay::Impl::match_collectives() {
  instance_of.resize(nranks);
  std::map<std::tuple<std::string, int, std::uint64_t>, std::int32_t> by_key;
  std::map<int, int> slot_of_rank;  // a trace's rank -> its slot (traces given one per rank)
  // Given traces: the groups each process group name has (member slots, sorted; the first
  // rank to give it), in the order found. Disjoint groups may share a name: some PyTorch
  // releases named split_group's subgroups (a DeviceMesh's rows and columns) by a counter of
  // splits, not of groups, so [0,1] and [2,3] are both "1". A rank is in one group of a name.
  struct NamedGroup {
    std::vector<int> members;
    int first_slot;
    int captured;
  };
  std::map<std::string, std::vector<NamedGroup>> groups_of_name;
  std::map<std::pair<std::string, std::vector<int>>, int> block_of_group;  // (name, members) -> its index there
  std::map<std::pair<int, std::int32_t>, int> block_of_comm;                 // (rank slot, communicator) -> its block
  // Sends and receives by (process group, sender, receiver): how many each side has met
  // (sends, receives), and the k-th pair's instance.
  // A send's or receive's ends that name their peer: a batched kernel's parts, or its own.
  auto p2p_ends = [](const trace::Collective& c) {
    if (!c.batch.empty() || c.peer < 0) return c.batch;
    return std::vector<trace::P2pPart>{{c.p2p_role, c.peer, c.in_bytes}};
  };
  std::map<std::tuple<std::string, int, int>, std::array<std::uint64_t, 2>> p2p_count;
  std::map<std::tuple<std::string, int, int, std::uint64_t>, std::int32_t> p2p_by_key;
  // For errors: how many sends rank src's trace has to dst on process group `name` and how
  // many receives dst's has from src, and where they differ, what the short side has
  // instead (the like on another process group, or sends and receives that name no peer);
  // whether the counts differ; and whether the short side has sends or receives naming no
  // peer (batched ones), which may be the missing ones.
  struct P2pTally {
    std::string text;
    bool counts_differ = false;
    bool batched_cover = false;  // the short side's batched ones are at least as many as it lacks
  };
  auto p2p_tally = [&](const std::string& name, int src, int dst) {
    const Workload& ws = workloads[rank_workload[slot_of_rank.at(src)]];
    const Workload& wd = workloads[rank_workload[slot_of_rank.at(dst)]];
    auto count = [](const Workload& x, trace::P2pRole role, int peer, const std::string& on, bool same_group) {
      std::uint64_t n = 0;
      for (const auto& o : x.collectives) {
        if (o.kind != collective::Kind::send_recv || (x.communicators[o.communicator].name == on) != same_group) continue;
        if (o.batch.empty()) {
          n += o.p2p_role == role && o.peer == peer;
        } else {
          for (const auto& part : o.batch) n += part.role == role && part.peer == peer;
        }
      }
      return n;
    };
    const auto sent = count(ws, trace::P2pRole::send, dst, name, true), received = count(wd, trace::P2pRole::recv, src, name, true);
    P2pTally tally;
    std::string& text = tally.text;
    text = "rank " + std::to_string(src) + " sends " + std::to_string(sent) + " time(s) to rank " + std::to_string(dst) + " on communicator \"" +
           name + "\" (" + ws.source + "), which receives " + std::to_string(received) + " time(s) from it (" + wd.source + ")";
    tally.counts_differ = sent != received;
    if (sent != received) {
      const bool short_sender = sent < received;
      const Workload& x = short_sender ? ws : wd;
      const int me = short_sender ? src : dst, peer = short_sender ? dst : src;
      const auto role = short_sender ? trace::P2pRole::send : trace::P2pRole::recv;
      const auto elsewhere = count(x, role, peer, name, false);
      // Its sends (or receives) on this process group that name no peer (batched ones whose
      // record_param_comms are not in the trace, or of no known direction): one of them may be
      // the missing one. So may one on a group the trace does not name ("world" of no listed
      // ranks: a batched kernel names its group only through those records).
      // One of no known direction may be a batch of any number of them (any_batch).
      std::uint64_t unnamed = 0;
      bool any_batch = false;
      for (const auto& o : x.collectives) {
        const auto& on = x.communicators[o.communicator];
        if (o.kind != collective::Kind::send_recv || o.peer >= 0 || !o.batch.empty() || (o.p2p_role != role && o.p2p_role != trace::P2pRole::none) ||
            (on.name != name && (on.name != "world" || !on.ranks.empty())))
          continue;
        ++unnamed;
        any_batch = any_batch || o.p2p_role == trace::P2pRole::none;
      }
      if (elsewhere)
        text += "; rank " + std::to_string(me) + (short_sender ? " sends " : " receives ") + std::to_string(elsewhere) + " time(s)" +
                (short_sender ? " to rank " : " from rank ") + std::to_string(peer) +
                " on other communicators: do the traces name the process group alike (\"Process Group Name\")?";
      if (unnamed)
        text += "; rank " + std::to_string(me) + "'s trace has " + std::to_string(unnamed) + (short_sender ? " send(s)" : " receive(s)") +
                " on it that name no peer (no \"" + (short_sender ? "Dst" : "Src") + " Rank\": batched ones), which cannot be paired";
      tally.batched_cover = any_batch || unnamed >= std::max(sent, received) - std::min(sent, received);
    }
    return tally;
  };
  if (!replicated)
    for (int m = 0; m < nranks; ++m) slot_of_rank.emplace(workloads[rank_workload[m]].rank, m);
  // Rank pairs whose sends and receives cannot be paired in order: the two traces name
  // different numbers of them, and the short side has at least as many batched ones (naming
  // no peer) of that direction on that process group, among which the missing ones may be
  // (and which would shift every later pair). All of such a pair's sends and receives run
  // unpaired, with a note; a shortfall the batched ones cannot cover is an error (below).
  std::set<std::tuple<std::string, int, int>> unpairable;
  if (!replicated) {
    std::map<std::tuple<std::string, int, int>, std::array<std::uint64_t, 2>> named;
    for (int r = 0; r < nranks; ++r) {
      const Workload& w = workloads[rank_workload[r]];
      for (const auto& c : w.collectives) {
        if (c.kind != collective::Kind::send_recv) continue;
        for (const auto& e : p2p_ends(c)) {
          if (!slot_of_rank.count(e.peer)) continue;
          const bool sends = e.role == trace::P2pRole::send;
          ++named[{w.communicators[c.communicator].name, sends ? w.rank : e.peer, sends ? e.peer : w.rank}][sends ? 0 : 1];
        }
      }
    }
    for (const auto& [key, n] : named)
      if (n[0] != n[1] && p2p_tally(std::get<0>(key), std::get<1>(key), std::get<2>(key)).batched_cover) unpairable.insert(key);
  }
  // Collectives are matched by (process group, group, number). The number is PyTorch's own
  // ("Seq", Communicator::seq_from_trace) where every trace with collectives on that group
  // (a process group name and its ranks: disjoint groups may share a name) gives it: the
  // same on every rank, whatever collective each profiler window starts at. Else it is their
  // order on the process group in each trace (one trace without "Seq" turns the others' back
  // to order, with a note).
  using GroupId = std::pair<std::string, std::vector<int>>;  // name and global ranks, sorted
  auto group_of = [&](const trace::Communicator& comm) {
    GroupId id{comm.name, comm.ranks};
    if (id.second.empty())
      for (const auto& [rank, slot] : slot_of_rank) id.second.push_back(rank);
    std::sort(id.second.begin(), id.second.end());
    return id;
  };
  std::set<GroupId> by_trace_seq, by_order;  // numbered by "Seq" on every trace; renumbered by order (traces disagree)
  // [workload][communicator]: 1 numbered by "Seq", 2 renumbered by order, 0 as its trace numbers it.
  std::vector<std::vector<char>> numbering(workloads.size());
  std::map<std::pair<int, std::string>, std::pair<std::uint64_t, std::uint64_t>> seq_window;  // (slot, name) -> first and last number
  std::vector<std::vector<std::uint64_t>> order_of(workloads.size());  // [workload][collective] -> its order on its process group
  if (!replicated) {
    std::map<GroupId, std::array<int, 2>> given;  // traces numbering the group by "Seq", by order
    for (size_t wi = 0; wi < workloads.size(); ++wi) {
      const Workload& w = workloads[wi];
      std::vector<std::uint64_t> next(w.communicators.size(), 0);
      std::vector<char> used(w.communicators.size(), 0);
      order_of[wi].resize(w.collectives.size(), 0);
      for (size_t ci = 0; ci < w.collectives.size(); ++ci) {
        const auto& c = w.collectives[ci];
        if (c.kind == collective::Kind::send_recv) continue;
        order_of[wi][ci] = next[c.communicator]++;
        used[c.communicator] = 1;
      }
      for (size_t k = 0; k < w.communicators.size(); ++k)
        if (used[k]) ++given[group_of(w.communicators[k])][w.communicators[k].seq_from_trace ? 0 : 1];
    }
    for (const auto& [id, n] : given) {
      if (n[1] == 0) {
        by_trace_seq.insert(id);
      } else if (n[0] > 0) {
        by_order.insert(id);
        notes.insert("process group \"" + shown_text(id.first) + "\" (ranks [" + trace::rank_list_text(id.second) + "]): " + std::to_string(n[0]) +
                     " trace(s) number its collectives by PyTorch's \"Seq\", " + std::to_string(n[1]) +
                     " do not: its collectives are matched by their order in each trace");
      }
    }
    for (size_t wi = 0; wi < workloads.size(); ++wi)
      for (const auto& comm : workloads[wi].communicators) {
        const GroupId id = group_of(comm);
        numbering[wi].push_back(comm.seq_from_trace && by_trace_seq.count(id) ? 1 : by_order.count(id) ? 2 : 0);
      }
    std::map<GroupId, std::vector<int>> slots_of;  // numbered groups -> the slots with collectives on them
    for (int r = 0; r < nranks; ++r) {
      const Workload& w = workloads[rank_workload[r]];
      // Per communicator: its first and last number (first > last: none yet).
      std::vector<std::pair<std::uint64_t, std::uint64_t>> window(w.communicators.size(), {UINT64_MAX, 0});
      for (const auto& c : w.collectives)
        if (c.kind != collective::Kind::send_recv && numbering[rank_workload[r]][c.communicator] == 1)
          window[c.communicator] = {std::min(window[c.communicator].first, c.seq), std::max(window[c.communicator].second, c.seq)};
      for (size_t k = 0; k < window.size(); ++k)
        if (window[k].first <= window[k].second) {
          seq_window.emplace(std::make_pair(r, w.communicators[k].name), window[k]);
          slots_of[group_of(w.communicators[k])].push_back(r);
        }
    }
    // Windows that share no collective: traces of different profiler windows, of which
    // nothing could be matched (each rank's collectives would run alone).
    for (const auto& [id, slots] : slots_of)
      for (int a : slots)
        for (int b : slots) {
          const auto& wa = seq_window.at({a, id.first});
          const auto& wb = seq_window.at({b, id.first});
          if (wa.second < wb.first)
            input_error(workloads[rank_workload[b]].source, "process group \"" + shown_text(id.first) + "\"",
                        "rank " + std::to_string(rank_id(a)) + "'s trace (" + workloads[rank_workload[a]].source + ") has its collectives \"Seq\" " +
                            std::to_string(wa.first) + " to " + std::to_string(wa.second) + ", rank " + std::to_string(rank_id(b)) + "'s \"Seq\" " +
                            std::to_string(wb.first) + " to " + std::to_string(wb.second) +
                            ": they share none, so the traces are of different profiler windows (give traces of one profiler schedule)");
        }
  }
  // "all_reduce of 12.0 MiB", with the exact bytes where two sizes would read the same.
  auto what = [](collective::Kind kind, std::uint64_t bytes, bool exact) {
    const std::string k(collective::to_string(kind));
    if (bytes == 0) return k + " of unknown size";
    return k + " of " + (exact ? std::to_string(bytes) + " B" : human_bytes(static_cast<double>(bytes)));
  };
  for (int r = 0; r < nranks; ++r) {
    const Workload& w = workloads[rank_workload[r]];
    const Graph& g = graphs[rank_workload[r]];
    instance_of[r].assign(w.collectives.size(), -1);
    for (size_t ci = 0; ci < w.collectives.size(); ++ci) {
      const auto& c = w.collectives[ci];
      const auto& comm = w.communicators[c.communicator];
      // A send or receive that names its peer, or a batched kernel's sends and receives
      // (PyTorch 2.4+ records the peer): the k-th send from rank a to rank b on a process group
      // pairs with b's k-th receive from a there, and moves its bytes from a's GPU to b's once
      // both kernels have launched (NCCL's rendezvous). A batched kernel ends when all its
      // paired parts have.
      const auto ends = c.kind == collective::Kind::send_recv ? p2p_ends(c) : std::vector<trace::P2pPart>{};
      std::vector<char> pairable(ends.size(), 0);  // per end: its peer has a trace and the pair pairs in order
      bool peer_unpairable = false;
      for (size_t k = 0; k < ends.size(); ++k) {
        const auto& e = ends[k];
        const bool sends = e.role == trace::P2pRole::send;
        if (replicated || !slot_of_rank.count(e.peer)) continue;
        if (!unpairable.empty() && unpairable.count({comm.name, sends ? w.rank : e.peer, sends ? e.peer : w.rank}))
          peer_unpairable = true;
        else
          pairable[k] = 1;
      }
      if (std::find(pairable.begin(), pairable.end(), 1) != pairable.end()) {
        std::vector<std::int32_t> parts;
        for (size_t end = 0; end < ends.size(); ++end) {
          const auto& e = ends[end];
          const bool sends = e.role == trace::P2pRole::send;
          const int src = sends ? w.rank : e.peer, dst = sends ? e.peer : w.rank;
          if (!pairable[end]) {
            ++p2p_parts_left_out;
            continue;
          }
          const std::uint64_t k = p2p_count[{comm.name, src, dst}][sends ? 0 : 1]++;
          auto [it, inserted] = p2p_by_key.emplace(std::make_tuple(comm.name, src, dst, k), static_cast<std::int32_t>(instances.size()));
          if (inserted) {
            Instance inst;
            inst.label = "send #" + std::to_string(k) + " from rank " + std::to_string(src) + " to rank " + std::to_string(dst) +
                         " on communicator \"" + shown_text(comm.name) + "\"";
            inst.expected = 2;
            inst.kind = c.kind;
            inst.in_bytes = static_cast<double>(e.in_bytes);
            inst.p2p_src = slot_of_rank.at(src);
            inst.p2p_dst = slot_of_rank.at(dst);
            inst.member_slots = {std::min(inst.p2p_src, inst.p2p_dst), std::max(inst.p2p_src, inst.p2p_dst)};
            inst.comm_name = comm.name;
            inst.step = step_of(w, c);
            inst.step_rank = r;
            instances.push_back(std::move(inst));
          } else {
            const Instance& inst = instances[it->second];
            const Workload& theirs_w = workloads[rank_workload[sends ? inst.p2p_dst : inst.p2p_src]];
            const std::string place = "rank " + std::to_string(w.rank) + ", " + inst.label;
            if (inst.in_bytes != static_cast<double>(e.in_bytes)) {
              // Sizes as the sender and the receiver give them.
              const auto mine = e.in_bytes, theirs = static_cast<std::uint64_t>(inst.in_bytes);
              const bool exact = human_bytes(static_cast<double>(mine)) == human_bytes(inst.in_bytes);
              auto size = [exact](std::uint64_t b) {
                return b == 0 ? std::string("an unknown size") : exact ? std::to_string(b) + " B" : human_bytes(static_cast<double>(b));
              };
              const auto tally = p2p_tally(comm.name, src, dst);
              input_error(w.source, place,
                          "mismatched send/recv: rank " + std::to_string(src) + " sends " + size(sends ? mine : theirs) + ", rank " + std::to_string(dst) +
                              " receives " + size(sends ? theirs : mine) + "; " + tally.text +
                              (tally.counts_differ ? ": sends and receives between two ranks pair in order, so one missing or extra shifts the later pairs" : ""));
            }
            // Paired by their order in each trace: traces of different profiler windows would
            // pair one step's with another's.
            if (const std::string* step = step_of(w, c); step && inst.step && *step != *inst.step)
              input_error(w.source, place,
                          "this rank launches it in " + *step + ", rank " + std::to_string(rank_id(inst.step_rank)) + " in " + *inst.step + " (" +
                              theirs_w.source + "): sends and receives between two ranks are paired by their order in each trace, so the traces must cover the same steps "
                              "(give traces of one profiler schedule)");
          }
          Instance& inst = instances[it->second];
          inst.members.push_back({r, g.gpu_base + c.gpu_op});
          inst.measured_dur_s = std::min(inst.measured_dur_s, w.gpu_ops[c.gpu_op].dur_ns * 1e-9);
          parts.push_back(it->second);
        }
        if (c.batch.empty()) {
          instance_of[r][ci] = parts.front();
        } else {
          for (const auto id : parts) instances[id].in_batch = true;
          instance_of[r][ci] = -2 - static_cast<std::int32_t>(batches.size());
          batches.push_back({std::move(parts), 0});
          batches.back().left = static_cast<int>(batches.back().instances.size());
          ++p2p_batches_paired;
        }
        continue;
      }
      if (c.kind == collective::Kind::send_recv) {
        // Point-to-point whose peer is not recorded (a batched send/recv of an older PyTorch),
        // has no trace here, or is a rank of the replicated trace's capture: each runs alone
        // at its measured time.
        ++(ends.empty() ? p2p_no_peer : replicated ? p2p_replicated : peer_unpairable ? p2p_peer_batched : p2p_peer_absent);
        Instance inst;
        inst.label = "send/recv #" + std::to_string(c.seq) + " of communicator \"" + comm.name + "\" on rank " + std::to_string(w.rank);
        inst.expected = 1;
        inst.kind = c.kind;
        inst.p2p = true;
        inst.member_slots = {r};
        inst.members.push_back({r, g.gpu_base + c.gpu_op});
        inst.measured_dur_s = w.gpu_ops[c.gpu_op].dur_ns * 1e-9;
        instance_of[r][ci] = static_cast<std::int32_t>(instances.size());
        instances.push_back(std::move(inst));
        ++p2p_at_measured;
        continue;
      }
      // Its number on the process group (see by_trace_seq).
      const char numbered = replicated ? 0 : numbering[rank_workload[r]][c.communicator];
      const bool numbered_by_trace = numbered == 1;
      const std::uint64_t seq = numbered == 2 ? order_of[rank_workload[r]][ci] : c.seq;
      const std::string number = (numbered_by_trace ? "Seq " : "#") + std::to_string(seq);  // as errors and labels name it
      // Members of this rank's communicator and the group key.
      const bool named_dp = std::find(opt.dp_groups.begin(), opt.dp_groups.end(), comm.name) != opt.dp_groups.end();
      std::vector<int> members;
      int block = 0;
      if (replicated) {
        const bool world = comm.ranks.empty() || static_cast<int>(comm.ranks.size()) >= w.world_size;
        // A data-parallel sub-group named by --dp-group grows with the ranks (laid out once
        // per communicator below).
        const bool grows = !world && nranks != w.world_size && nranks > 1 && named_dp;
        // A communicator smaller than the job (tensor- or pipeline-parallel groups) keeps
        // its size: the replicas are whole copies of it, so --ranks must be a multiple. One
        // rank alone runs every collective as a local copy.
        const int group_size = world || nranks == 1 ? nranks : static_cast<int>(comm.ranks.size());
        // The replicas' groups have the trace's layout (tile_groups(): [0, 8] is a
        // data-parallel group across the tensor-parallel ranks of 2 machines). A layout
        // that does not tile the ranks ([0, 15] of 16) falls back to consecutive groups of
        // its size, with a note.
        if (world || nranks == 1) {
          for (int m = 0; m < nranks; ++m) members.push_back(m);
        } else {
          const auto key = std::make_pair(rank_workload[r], static_cast<long long>(c.communicator));
          auto layout = layouts.find(key);
          if (layout == layouts.end() && grows) {
            // Its stride d stays (the ranks of one data-parallel replica), its members
            // become nranks / d.
            std::vector<int> sorted = comm.ranks;
            std::sort(sorted.begin(), sorted.end());
            const int stride = sorted.size() > 1 ? sorted[1] - sorted[0] : 0;
            bool even = stride > 0 && sorted.front() < stride && static_cast<long long>(stride) * static_cast<long long>(sorted.size()) == w.world_size;
            for (size_t k = 1; even && k < sorted.size(); ++k) even = sorted[k] - sorted[k - 1] == stride;
            if (!even)
              input_error("", "--dp-group",
                          "process group \"" + comm.name + "\" of " + w.source + " has ranks [" + rank_list(comm.ranks) +
                              "]: a data-parallel group to grow must be evenly strided over the whole job (r, r + d, ..., with d x its size = the world size, " +
                              std::to_string(w.world_size) + ")");
            if (nranks % stride != 0)
              input_error("", "--ranks",
                          std::to_string(nranks) + " ranks cannot keep process group \"" + comm.name + "\"'s stride of " + std::to_string(stride) +
                              " (the ranks of one data-parallel replica): give a multiple of " + std::to_string(stride));
            GroupLayout strided;
            strided.groups.resize(static_cast<size_t>(stride));
            for (int m = 0; m < nranks; ++m) {
              strided.group_of.push_back(m % stride);
              strided.groups[static_cast<size_t>(m % stride)].push_back(m);
            }
            layout = layouts.emplace(key, std::move(strided)).first;
          } else if (layout == layouts.end()) {
            auto tiled = tile_groups(comm.ranks, nranks);
            if (!tiled) {
              if (nranks % group_size != 0)
                input_error(w.source, "communicator \"" + comm.name + "\"",
                            "has " + std::to_string(group_size) + " of the trace's " + std::to_string(w.world_size) + " ranks, and " +
                                std::to_string(nranks) + " ranks (" + (opt.ranks > 0 ? "--ranks" : "the world size") +
                                ") cannot be made of whole copies of it: give a multiple of " + std::to_string(group_size));
              notes.insert(w.source + ": communicator \"" + comm.name + "\" (ranks [" + rank_list(comm.ranks) + "]) cannot be laid out over " +
                           std::to_string(nranks) + " ranks as in the trace: its copies are groups of " + std::to_string(group_size) +
                           " consecutive ranks");
              tiled = consecutive_groups(nranks, group_size);
              tiled->consecutive = true;
            }
            layout = layouts.emplace(key, std::move(*tiled)).first;
          }
          block = layout->second.group_of[static_cast<size_t>(r)];
          members = layout->second.groups[static_cast<size_t>(block)];
          // Scaled (--ranks), only the whole job's collectives gain members: a data-parallel
          // group that is a sub-group (across tensor-parallel ranks) keeps its size too.
          if (nranks > w.world_size && r == 0 && !layout->second.consecutive && !grows)
            notes.insert(w.source + ": communicator \"" + comm.name + "\" (ranks [" + rank_list(comm.ranks) + "]) keeps its " + std::to_string(group_size) +
                         " members on " + std::to_string(nranks) + " ranks, copied " + std::to_string(nranks / group_size) +
                         " times: --ranks adds members only to collectives over the whole job and to the groups --dp-group names "
                         "(a data-parallel group across tensor-parallel ranks, evenly strided over the job)");
        }
      } else if (comm.ranks.empty()) {
        // No rank list: the group is every trace given, unless the trace says it is larger
        // (its "Group size", or without one the job's world size: a group the trace does
        // not size or list is the whole job, as when it is replicated), when its other
        // members' traces are missing, as with a list.
        const int group_size = c.group_size > 0 ? c.group_size : (w.world_size_from_groups ? 0 : w.world_size);
        if (group_size > nranks)
          input_error(w.source, "collective " + std::string(collective::to_string(c.kind)) + " " + number + " of communicator \"" +
                                    comm.name + "\"",
                      (c.group_size > 0 ? "has \"Group size\" " + std::to_string(c.group_size)
                                        : "gives neither its group's ranks nor its size, so it spans the job's " + std::to_string(w.world_size) +
                                              " ranks (" + (w.format == "composim-ir" ? "world_size" : "distributedInfo.world_size") + ")") +
                          " but only " + std::to_string(nranks) +
                          " traces are given: its other members have no trace (give every member's trace, or one trace to replicate)");
        for (int m = 0; m < nranks; ++m) members.push_back(m);
      } else {
        for (int gr : comm.ranks) {
          const auto found = slot_of_rank.find(gr);
          if (found == slot_of_rank.end())
            input_error(w.source, "collective " + std::string(collective::to_string(c.kind)) + " " + number +
                                      " of communicator \"" + comm.name + "\"",
                        "needs rank " + std::to_string(gr) + ", which has no trace (give every member's trace, or one trace to replicate)");
          members.push_back(found->second);
        }
        std::sort(members.begin(), members.end());
        auto [cached, first_use] = block_of_comm.try_emplace(std::make_pair(r, c.communicator), 0);
        if (!first_use) {
          block = cached->second;
        } else if (auto [known, fresh] = block_of_group.try_emplace(std::make_pair(comm.name, members), 0); !fresh) {
          block = cached->second = known->second;
        } else {
          auto& groups = groups_of_name[comm.name];
          const int captured = c.group_size > 0 ? c.group_size : static_cast<int>(comm.ranks.size());
          // Overlapping but different: the traces disagree on who is in the group.
          for (const auto& other : groups) {
            std::vector<int> both;
            std::set_intersection(members.begin(), members.end(), other.members.begin(), other.members.end(), std::back_inserter(both));
            if (!both.empty())
              input_error(w.source, "rank " + std::to_string(w.rank) + ", collective " + number + " of communicator \"" + comm.name + "\"",
                          "mismatched communicator: this rank's trace gives it ranks [" + rank_list(members) + "] (group size " + std::to_string(captured) +
                              "), rank " + std::to_string(rank_id(other.first_slot)) + "'s ranks [" + rank_list(other.members) + "] (group size " +
                              std::to_string(other.captured) + ")");
          }
          block = cached->second = known->second = static_cast<int>(groups.size());
          groups.push_back({members, r, captured});
        }
      }
      auto key = std::make_tuple(comm.name, block, seq);
      auto [it, inserted] = by_key.emplace(key, static_cast<std::int32_t>(instances.size()));
      const std::string* step = replicated ? nullptr : step_of(w, c);  // where this rank launched it
      if (inserted) {
        Instance inst;
        inst.label = std::string(collective::to_string(c.kind)) + " " + number + " of communicator \"" +
                     comm.name + "\" (" + (c.in_bytes ? human_bytes(static_cast<double>(c.in_bytes)) : "size unknown") + ")";
        inst.expected = static_cast<int>(members.size());
        inst.kind = c.kind;
        inst.in_bytes = static_cast<double>(c.in_bytes);
        inst.protocol = c.protocol;
        inst.protocol_from_trace = c.protocol_from_trace;
        inst.algorithm = c.algorithm;
        if (!collective::canonical_dtype(c.dtype).empty()) {
          inst.dtype = c.dtype;
          inst.dtype_rank = r;
        }
        inst.captured_ranks = c.group_size > 0 ? c.group_size : static_cast<int>(comm.ranks.size());
        inst.member_slots = members;
        inst.comm_name = comm.name;
        inst.numbered_by_trace = numbered_by_trace;
        inst.seq = seq;
        // Scaled to another rank count (--ranks), a data-parallel collective keeps its whole
        // buffer, as the same model on more GPUs does: an all-reduce's, a reduce-scatter's
        // input, an all-gather's output, whose input (the trace's size: the rank's shard)
        // shrinks as ranks are added. A sub-communicator keeps its size, unless --dp-group
        // names it.
        const bool whole_job = comm.ranks.empty() || static_cast<int>(comm.ranks.size()) >= w.world_size;
        if (replicated && c.kind == collective::Kind::all_gather && nranks != w.world_size && (whole_job || named_dp))
          inst.gather_scale = static_cast<double>(c.group_size > 0 ? c.group_size : whole_job ? w.world_size : static_cast<int>(comm.ranks.size())) /
                              static_cast<double>(members.size());
        instances.push_back(std::move(inst));
      } else {
        const Instance& inst = instances[it->second];
        const int first = inst.members.front().rank;
        const std::string place = "rank " + std::to_string(w.rank) + ", collective " + number + " of communicator \"" + comm.name + "\"";
        // all_to_allv sends each rank its own amount (MoE dispatch): the ranks' sizes may
        // differ. Modelled as an even all_to_all of the largest, which the slowest rank sets.
        // A rank may send nothing (0 elements read as no size): the others' size then counts.
        if (inst.kind == c.kind && c.kind == collective::Kind::all_to_all && inst.in_bytes != static_cast<double>(c.in_bytes)) {
          Instance& mut = instances[it->second];
          if (!mut.unequal) ++unequal_all_to_all;
          mut.unequal = true;
          mut.in_bytes = std::max(mut.in_bytes, static_cast<double>(c.in_bytes));
        } else if (inst.kind != c.kind || inst.in_bytes != static_cast<double>(c.in_bytes)) {
          const auto theirs = static_cast<std::uint64_t>(inst.in_bytes);
          const bool exact = human_bytes(static_cast<double>(c.in_bytes)) == human_bytes(inst.in_bytes);
          // Pairing is by order on the communicator: one collective missing, extra or moved to
          // another communicator shifts every later pair. Say so when the counts differ.
          auto count_on = [&](const trace::Workload& x) {
            return std::count_if(x.collectives.begin(), x.collectives.end(), [&](const trace::Collective& o) { return x.communicators[o.communicator].name == comm.name; });
          };
          const auto& theirs_w = workloads[rank_workload[first]];
          const auto mine_n = count_on(w), theirs_n = count_on(theirs_w);
          const std::string counts = mine_n == theirs_n || numbered_by_trace ? ""
                                                        : "; this rank has " + std::to_string(mine_n) + " collectives on communicator \"" + comm.name + "\", rank " +
                                                              std::to_string(rank_id(first)) + " has " + std::to_string(theirs_n) +
                                                              ": one is missing, extra or on another communicator, and the later ones pair wrongly";
          input_error(w.source, place,
                      "mismatched collective: this rank has " + what(c.kind, c.in_bytes, exact) + ", rank " + std::to_string(rank_id(first)) +
                          " has " + what(inst.kind, theirs, exact) + " (" + theirs_w.source + ")" + counts);
        }
        // NCCL needs every rank to call with the same type (and count): traces that disagree
        // come from different jobs or steps, even where the bytes agree. Types are compared
        // by canonical name ("Float" is "float32"), against the first rank that gave one.
        if (const auto mine = collective::canonical_dtype(c.dtype); !mine.empty()) {
          Instance& mut = instances[it->second];
          if (mut.dtype.empty()) {
            mut.dtype = c.dtype;
            mut.dtype_rank = r;
          } else if (collective::canonical_dtype(mut.dtype) != mine) {
            input_error(w.source, place,
                        "mismatched collective: this rank's is of type \"" + c.dtype + "\", rank " + std::to_string(rank_id(mut.dtype_rank)) + "'s of \"" +
                            mut.dtype + "\" (" + workloads[rank_workload[mut.dtype_rank]].source + ")");
          }
        }
        // NCCL's tuner picks one algorithm and protocol for all ranks of a collective: kernel
        // names that disagree come from different jobs (or an edited trace).
        if (c.protocol_from_trace && inst.protocol_from_trace && (c.protocol != inst.protocol || c.algorithm != inst.algorithm))
          input_error(w.source, place,
                      "mismatched collective: this rank's ran " + (c.algorithm.empty() ? std::string("-") : c.algorithm) + "/" +
                          std::string(collective::to_string(c.protocol)) + ", rank " + std::to_string(rank_id(first)) + "'s " +
                          (inst.algorithm.empty() ? std::string("-") : inst.algorithm) + "/" + std::string(collective::to_string(inst.protocol)) + " (" +
                          workloads[rank_workload[first]].source + "): NCCL runs one algorithm and protocol on every rank");
        const int captured = c.group_size > 0 ? c.group_size : static_cast<int>(comm.ranks.size());
        if (members != inst.member_slots || (captured > 0 && inst.captured_ranks > 0 && captured != inst.captured_ranks))
          input_error(w.source, place,
                      "mismatched communicator: this rank's trace gives it ranks [" + rank_list(members) + "] (group size " +
                          std::to_string(captured) + "), rank " + std::to_string(rank_id(first)) + "'s ranks [" +
                          rank_list(inst.member_slots) + "] (group size " + std::to_string(inst.captured_ranks) + ")");
        // Collectives are paired by their order in each trace: traces of different profiler
        // windows with as many collectives would pair one step's with another's.
        if (step && inst.step && *step != *inst.step) {
          // Traces of the same steps: a step where the two launch a different number of
          // collectives on this communicator holds the missing or extra one.
          const Workload& theirs_w = workloads[rank_workload[inst.step_rank]];
          auto step_names = [](const Workload& x) {
            std::vector<std::string> names;
            for (const auto& it : x.iterations) names.push_back(it.name);
            return names;
          };
          auto count_in = [&](const Workload& x, const std::string& name) {
            return std::count_if(x.collectives.begin(), x.collectives.end(), [&](const trace::Collective& o) {
              const std::string* at = step_of(x, o);
              return x.communicators[o.communicator].name == comm.name && at && *at == name;
            });
          };
          std::string why;
          if (numbered_by_trace)  // the same collective, by PyTorch's number: the steps are named apart
            why = " (" + theirs_w.source + "): the traces number their profiler steps differently (steps are compared by name)";
          else if (step_names(w) == step_names(theirs_w))
            for (const auto& it : w.iterations)
              if (const auto mine_n = count_in(w, it.name), theirs_n = count_in(theirs_w, it.name); mine_n != theirs_n) {
                why = ": in " + it.name + " this rank launches " + std::to_string(mine_n) + " collectives on communicator \"" + comm.name + "\", rank " +
                      std::to_string(rank_id(inst.step_rank)) + " launches " + std::to_string(theirs_n) + " (" + theirs_w.source +
                      "): one is missing or extra there, and the later ones pair wrongly";
                break;
              }
          input_error(w.source, place,
                      "this rank launches it in " + *step + ", rank " + std::to_string(rank_id(inst.step_rank)) + " in " + *inst.step +
                          (why.empty() ? " (" + theirs_w.source +
                                             "): collectives are matched by their order in each trace, so the traces must cover the same steps (give "
                                             "traces of one profiler schedule)"
                                       : why));
        }
      }
      Instance& inst = instances[it->second];
      if (!inst.step) inst.step = step, inst.step_rank = r;
      inst.members.push_back({r, g.gpu_base + c.gpu_op});
      inst.measured_dur_s = std::min(inst.measured_dur_s, w.gpu_ops[c.gpu_op].dur_ns * 1e-9);
      instance_of[r][ci] = it->second;
    }
  }
  // --dp-group names process groups of the traces.
  std::set<std::string> names;
  for (const auto& w : workloads)
    for (const auto& comm : w.communicators) names.insert(comm.name);
  for (const auto& name : opt.dp_groups) {
    if (!names.count(name)) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "\"" : ", \"") + n + "\"";
      input_error("", "--dp-group", "no process group \"" + name + "\" in the traces (theirs: " + (list.empty() ? std::string("none") : list) + ")");
    }
  }
  // Pairs of members of a group numbered by "Seq" whose windows start at different
  // collectives: at the later-starting one's first, the offset between the traces' clocks
  // (see below).
  auto ended_ns = [&](const Member& m) {
    const auto& op = workloads[rank_workload[m.rank]].gpu_ops[m.node - graphs[rank_workload[m.rank]].gpu_base];
    return op.ts_ns + op.dur_ns;
  };
  for (const auto& inst : instances) {
    if (!inst.numbered_by_trace) continue;
    for (const auto& late : inst.members) {
      if (seq_window.at({late.rank, inst.comm_name}).first != inst.seq) continue;  // not its first on the group
      for (const auto& early : inst.members)
        if (seq_window.at({early.rank, inst.comm_name}).first < inst.seq) window_pairs.push_back({late.rank, early.rank, ended_ns(early) - ended_ns(late)});
    }
  }
  // A collective numbered by PyTorch's "Seq" that a member's trace does not reach because its
  // profiler window begins after it or ends before it (that member's first and last numbers
  // on the process group do not bracket it): the window cut it, the job did not skip it.
  // Each member that launched it runs it alone at its measured duration. A number missing
  // inside a member's window is a collective it never reaches: an error, below.
  for (size_t id = 0, n = instances.size(); id < n; ++id) {
    if (!instances[id].numbered_by_trace || static_cast<int>(instances[id].members.size()) == instances[id].expected) continue;
    std::set<int> present;
    for (const auto& m : instances[id].members) present.insert(m.rank);
    const bool cut = std::all_of(instances[id].member_slots.begin(), instances[id].member_slots.end(), [&](int m) {
      if (present.count(m)) return true;
      const auto win = seq_window.find({m, instances[id].comm_name});
      return win != seq_window.end() && (instances[id].seq < win->second.first || instances[id].seq > win->second.second);
    });
    if (!cut) continue;
    const std::vector<Member> members = std::move(instances[id].members);
    for (size_t k = 0; k < members.size(); ++k) {
      const auto piece = k == 0 ? static_cast<std::int32_t>(id) : static_cast<std::int32_t>(instances.size());
      if (k > 0) instances.push_back(instances[id]);
      Instance& inst = instances[piece];
      const Member& m = members[k];
      const Workload& w = workloads[rank_workload[m.rank]];
      const auto& op = w.gpu_ops[m.node - graphs[rank_workload[m.rank]].gpu_base];
      inst.members = {m};
      inst.member_slots = {m.rank};
      inst.expected = 1;
      inst.outside_window = true;
      inst.measured_dur_s = op.dur_ns * 1e-9;
      instance_of[m.rank][op.collective] = piece;
      ++outside_window;
    }
  }
  if (outside_window)
    notes.insert(std::to_string(outside_window) + " collective kernel(s) launched before or after another member's trace window (by PyTorch's \"Seq\") "
                 "ran alone at their measured duration: the profiler windows of the ranks' traces begin or end at different collectives");
  // A collective that some member never reaches would hang: report it now.
  for (const auto& inst : instances) {
    if (static_cast<int>(inst.members.size()) == inst.expected) continue;
    if (inst.p2p_src >= 0) {
      // A send without its receive, or a receive without its send (a pair the batched ones of
      // the short side cannot explain: see unpairable).
      const bool sent = inst.members.front().rank == inst.p2p_src;
      const int src = rank_id(inst.p2p_src), dst = rank_id(inst.p2p_dst);
      // A trace with sends' or receives' records and not their kernel: its window ended inside
      // a batch_isend_irecv, or the profiler lost kernels; the missing one may be there.
      const Workload& short_w = workloads[rank_workload[sent ? inst.p2p_dst : inst.p2p_src]];
      const std::string cut = short_w.p2p_records_without_kernel == 0
                                  ? ""
                                  : "; rank " + std::to_string(sent ? dst : src) + "'s trace has " + std::to_string(short_w.p2p_records_without_kernel) +
                                        " send/recv record_param_comms whose kernel it does not hold: its profiler window may end inside a batched "
                                        "send/recv, or the profiler lost kernels";
      input_error(short_w.source, inst.label,
                  "rank " + std::to_string(sent ? dst : src) + (sent ? " never receives it, which rank " : " never sends it, which rank ") +
                      std::to_string(sent ? src : dst) + (sent ? " sends" : " receives") + "; the job would hang: " + p2p_tally(inst.comm_name, src, dst).text + cut);
    }
    std::set<int> present;
    for (const auto& m : inst.members) present.insert(m.rank);
    std::vector<int> reached, missing;
    for (int m : inst.member_slots) (present.count(m) ? reached : missing).push_back(m);
    if (inst.numbered_by_trace) {
      // Only the members whose window holds it skipped it: the others' windows missed it.
      const auto skipped = std::stable_partition(missing.begin(), missing.end(), [&](int m) {
        const auto win = seq_window.find({m, inst.comm_name});
        return win == seq_window.end() || (inst.seq >= win->second.first && inst.seq <= win->second.second);
      });
      missing.erase(skipped, missing.end());
    }
    const Workload& w0 = workloads[rank_workload[inst.members.front().rank]];
    // Traces of different steps (profiler windows) also leave collectives unmatched: they
    // are matched by their order in each trace.
    std::string steps;
    if (inst.numbered_by_trace) {
      // Matched by PyTorch's number: the missing member's window holds it, so it skipped it.
      if (const auto win = seq_window.find({missing.front(), inst.comm_name}); win != seq_window.end())
        steps = "; rank " + std::to_string(rank_id(missing.front())) + "'s trace has the collectives Seq " + std::to_string(win->second.first) + " to " +
                std::to_string(win->second.second) + " of this process group but not this one";
      else
        steps = "; rank " + std::to_string(rank_id(missing.front())) +
                "'s trace has no collective of this process group (is its profiler window the others'? one that holds none of the group's collectives "
                "cannot be placed among them)";
    } else {
      for (const auto& w : workloads)
        if (!w.iterations.empty() && !w0.iterations.empty() && w.iterations.front().name != w0.iterations.front().name && steps.empty())
          steps = "; or the traces cover different steps (rank " + std::to_string(w0.rank) + "'s starts at " + w0.iterations.front().name +
                  ", rank " + std::to_string(w.rank) + "'s at " + w.iterations.front().name +
                  "): collectives are matched by their order in each trace, so give traces of the same steps";
    }
    // A missing rank that launches the like of it on a communicator of another name: the
    // traces name the process group differently (or not at all).
    // Only when that rank launches nothing on a communicator of this name: one it uses, that
    // merely lacks this collective, is a missing collective, not a misnamed group.
    std::string elsewhere;
    const Workload& wm = workloads[rank_workload[missing.front()]];
    const bool has_comm =
        std::any_of(wm.collectives.begin(), wm.collectives.end(), [&](const auto& c) { return wm.communicators[c.communicator].name == inst.comm_name; });
    // Members the importer took as consecutive ranks (the trace gave only the group's size)
    // may be wrong where a missing member has no such group: say so first.
    for (const auto& comm : w0.communicators)
      if (!has_comm && comm.name == inst.comm_name && comm.ranks_guessed)
        elsewhere = "; rank " + std::to_string(w0.rank) + "'s trace gives only the size of process group \"" + comm.name + "\", whose members were taken as the consecutive ranks [" +
                    std::to_string(comm.ranks.front()) + ".." + std::to_string(comm.ranks.back()) + "]: give traces that list them (\"Process Group Ranks\")";
    for (const auto& c : wm.collectives)
      if (elsewhere.empty() && !has_comm && c.kind == inst.kind && static_cast<double>(c.in_bytes) == inst.in_bytes && wm.communicators[c.communicator].name != inst.comm_name) {
        elsewhere = "; rank " + std::to_string(wm.rank) + "'s trace (" + wm.source + ") has " + std::string(collective::to_string(c.kind)) +
                    "s of this size on communicator \"" + wm.communicators[c.communicator].name +
                    "\" instead: do the traces name the process group alike (\"Process Group Name\")?";
        break;
      }
    input_error(w0.source, inst.label,
                "ranks [" + rank_list(missing) + "]" + (wm.source != w0.source ? " (" + wm.source + (missing.size() > 1 ? ", ..." : "") + ")" : "") +
                    " never reach this collective, which ranks [" + rank_list(reached) + "] launch; the job would hang" +
                    elsewhere + steps);
  }
  // Ranks whose traces start at different collectives of a process group numbered by "Seq"
  // (their profiler windows began at different times): a rank whose trace began later in
  // real time starts in the replay when the rank of its set whose trace began first reaches
  // the moment it began, not at 0, where it would wait in their first shared collective for
  // the other's collectives outside its window, and the wait would read as communication.
  // When it began is told by the first collective two ranks have: a collective ends at the
  // same moment on every rank, so its end in each trace gives the offset between the
  // traces' clocks; offsets chain through the pairs (a set is the ranks linked by them;
  // where pairs disagree, the first found holds). The moment is placed on the first rank's
  // replayed timeline by its CPU op that ended last before it (measured times after that op
  // are kept), so that rank's replayed speed up to there counts.
  std::vector<std::vector<std::pair<int, std::int64_t>>> linked(nranks);  // (other, its trace's begin - this one's, ns)
  for (const auto& pair : window_pairs) {
    linked[pair.late].push_back({pair.early, -pair.offset_ns});
    linked[pair.early].push_back({pair.late, pair.offset_ns});
  }
  placements_left.assign(nranks, 0);
  std::vector<std::int64_t> began(nranks, 0);  // when each trace began, relative to its set's first-reached rank
  std::vector<char> reached(nranks, 0);
  std::string placed;
  int n_placed = 0;
  for (int r0 = 0; r0 < nranks; ++r0) {
    if (reached[r0] || linked[r0].empty()) continue;
    std::vector<int> set{r0};
    reached[r0] = 1;
    for (size_t at = 0; at < set.size(); ++at)
      for (const auto& [other, d] : linked[set[at]])
        if (!reached[other]) {
          reached[other] = 1;
          began[other] = began[set[at]] + d;
          set.push_back(other);
        }
    const int first = *std::min_element(set.begin(), set.end(), [&](int a, int b) { return std::tie(began[a], a) < std::tie(began[b], b); });
    for (const int later : set) {
      if (later == first || began[later] <= began[first]) continue;
      // Placed on the first rank's timeline and on that of every rank it shares collectives
      // with whose trace began before it: it starts when the last of them reaches the moment
      // (a rank replayed slower than measured would otherwise keep it waiting).
      std::set<int> by{first};
      for (const auto& [other, d] : linked[later])
        if (began[other] < began[later]) by.insert(other);
      for (const int earlier : by) {
        // The moment `later`'s trace began, in `earlier`'s trace time.
        const std::int64_t t = began[later] - began[earlier];
        const Workload& w = workloads[rank_workload[earlier]];
        const Graph& g = graphs[rank_workload[earlier]];
        // The CPU op that ended last before it: one that ended before it cannot have waited
        // for a collective `later` takes part in (which ended after it), as one that started
        // before it may have (a synchronize), which would wait for ever for the rank it was
        // to start.
        std::int32_t node = 0;  // the origin: the trace's time 0
        std::int64_t node_end = 0;
        for (size_t ti = 0; ti < w.threads.size(); ++ti)
          for (size_t k = 0; k < w.threads[ti].ops.size() && w.threads[ti].ops[k].ts_ns <= t; ++k)
            if (const auto& op = w.threads[ti].ops[k]; op.ts_ns + op.dur_ns <= t && op.ts_ns + op.dur_ns >= node_end)
              node = g.cpu_base[ti] + static_cast<std::int32_t>(k), node_end = op.ts_ns + op.dur_ns;
        follow.emplace(pack(earlier, node), std::make_pair(later, 1e-9 * static_cast<double>(t - node_end)));
        ++placements_left[later];
      }
      if (n_placed++ < 4) {
        char b[160];
        std::snprintf(b, sizeof b, "%srank %d at %.3f ms into rank %d's trace", placed.empty() ? "" : ", ", rank_id(later),
                      1e-6 * static_cast<double>(began[later] - began[first]), rank_id(first));
        placed += b;
      }
    }
  }
  if (n_placed)
    notes.insert(std::to_string(n_placed) + " rank(s) whose traces began later than another member's (their first collectives differ, by PyTorch's \"Seq\") "
                 "start in the replay when the rank whose trace began first reaches the moment they began, told by the ends of collectives they share: " + placed +
                 (n_placed > 4 ? ", ..." : ""));
}

void Replay::Impl::release(int rank, std::int32_t node) {
  const Graph& g = graphs[rank_workload[rank]];
  RankState& s = state[rank];
  const double now = sg4::Engine::get_clock();
  const double at = s.release[node];
  if (g.kind[node] != NodeKind::cpu || s.start[node] < 0) s.start[node] = at;
  switch (g.kind[node]) {
    case NodeKind::origin:
    case NodeKind::cpu:
    case NodeKind::gpu_timed: {
      const double end = at + g.dur_s[node];
      if (end <= now) {
        worklist.push_back(pack(rank, node));
      } else {
        simgrid::kernel::timer::Timer::set(end, [this, rank, node] {
          graveyard.clear();
          worklist.push_back(pack(rank, node));
          drain();
        });
      }
      break;
    }
    case NodeKind::gpu_copy:
      if (at <= now) start_copy(rank, node);
      else simgrid::kernel::timer::Timer::set(at, [this, rank, node] { start_copy(rank, node); });
      break;
    case NodeKind::gpu_collective:
      if (at <= now) arrive(rank, node);
      else simgrid::kernel::timer::Timer::set(at, [this, rank, node] { arrive(rank, node); });
      break;
  }
}

void Replay::Impl::drain() {
  while (!worklist.empty()) {
    const std::uint64_t id = worklist.back();
    worklist.pop_back();
    complete(rank_of(id), node_of(id));
  }
}

void Replay::Impl::complete(int rank, std::int32_t node) {
  const Graph& g = graphs[rank_workload[rank]];
  RankState& s = state[rank];
  const double now = sg4::Engine::get_clock();
  s.end[node] = now;
  ++completed;
  if (!follow.empty()) {
    // A rank whose trace began this long after this op ended (see window_pairs).
    const auto [from, to] = follow.equal_range(pack(rank, node));
    for (auto f = from; f != to; ++f) {
      const int later = f->second.first;
      state[later].release[0] = std::max(state[later].release[0], now + f->second.second);
      if (--placements_left[later] == 0) release(later, 0);
    }
  }
  for (auto e = g.succ_begin[node]; e < g.succ_begin[node + 1]; ++e) {
    const std::int32_t to = g.succ[e];
    const double t = now + g.succ_delay_s[e];
    if (t > s.release[to]) s.release[to] = t;
    if (g.succ_program_order[e]) s.start[to] = std::max(s.start[to], t);
    if (--s.remaining[to] == 0) release(rank, to);
  }
}

void Replay::Impl::start_copy(int rank, std::int32_t node) {
  const Graph& g = graphs[rank_workload[rank]];
  const Workload& w = workloads[rank_workload[rank]];
  const auto& op = w.gpu_ops[node - g.gpu_base];
  const int gpu_node = rank_gpu[rank];
  const int host_node = topo.host_of(gpu_node);
  sg4::Host* src = platform->host_of(op.copy == trace::CopyKind::htod ? host_node : gpu_node);
  sg4::Host* dst = platform->host_of(op.copy == trace::CopyKind::htod ? gpu_node : host_node);
  auto comm = sg4::Comm::sendto_init(src, dst);
  tags.push_back({false, rank, node, -1, comm, op.copy == trace::CopyKind::htod ? host_node : gpu_node,
                  op.copy == trace::CopyKind::htod ? gpu_node : host_node, static_cast<double>(op.bytes)});
  comm->set_payload_size(op.bytes);
  comm->set_data(&tags.back());
  platform->start(comm, tags.back().src, tags.back().dst, on_start(&tags.back()));
  ++flows;
}

void Replay::Impl::arrive(int rank, std::int32_t node) {
  const Graph& g = graphs[rank_workload[rank]];
  const Workload& w = workloads[rank_workload[rank]];
  const auto& op = w.gpu_ops[node - g.gpu_base];
  const std::int32_t inst = instance_of[rank][op.collective];
  if (inst <= -2) {
    for (const auto id : batches[static_cast<size_t>(-2 - inst)].instances)
      if (++instances[id].arrived == instances[id].expected) start_collective(id);
    return;
  }
  if (++instances[inst].arrived == instances[inst].expected) start_collective(inst);
}

void Replay::Impl::start_collective(std::int32_t id) {
  Instance& inst = instances[id];
  const int n = static_cast<int>(inst.members.size());
  if (inst.in_bytes <= 0 || n <= 1) {
    // No size in the trace (or a one-rank communicator): the kernel's measured duration,
    // synchronised across members. The fastest member's duration is the least waiting.
    // A collective captured on several ranks and replayed on one has nothing to wait for:
    // NCCL runs it as a local copy (read and write of the buffer at the GPU's HBM rate).
    if (inst.in_bytes <= 0 && inst.p2p_src >= 0)
      ++p2p_paired_no_size;
    else if (inst.in_bytes <= 0 && !inst.p2p && !inst.outside_window)
      ++no_size;
    double dur = std::isfinite(inst.measured_dur_s) ? inst.measured_dur_s : 0.0;
    if (n == 1 && inst.in_bytes > 0 && inst.captured_ranks > 1 && !inst.outside_window) {
      // The whole buffer: an all-gather's is its shard (the trace's size) times its ranks.
      const double bytes = inst.kind == collective::Kind::all_gather ? inst.in_bytes * inst.captured_ranks : inst.in_bytes;
      const auto spec = gpu::find_gpu_spec(topo.nodes()[rank_gpu[inst.members.front().rank]].model);
      dur = 2 * bytes / spec.hbm_bandwidth_Bps;
    }
    const double end = sg4::Engine::get_clock() + dur;
    simgrid::kernel::timer::Timer::set(end, [this, id] { finish_collective(id); });
    return;
  }
  inst.flows_left = 0;
  for (const auto& f : inst.plan.flows) {
    auto comm = sg4::Comm::sendto_init(platform->source_of(inst.route_variant, f.src, f.dst), platform->host_of(f.dst));
    const auto payload = static_cast<std::uint64_t>(std::llround(f.bytes));
    tags.push_back({true, -1, -1, id, comm, f.src, f.dst, static_cast<double>(payload)});
    tags.back().variant = inst.route_variant;
    comm->set_payload_size(payload);
    comm->set_data(&tags.back());
    platform->start(comm, inst.route_variant, f.src, f.dst, on_start(&tags.back()));
    ++inst.flows_left;
    ++flows;
  }
  if (inst.flows_left == 0) {
    simgrid::kernel::timer::Timer::set(sg4::Engine::get_clock() + inst.plan.after_flows_s(), [this, id] { finish_collective(id); });
    return;
  }
  // The plan's latency, processing and pipeline terms are added when the last flow ends
  // (on_comm_done).
}

void Replay::Impl::finish_collective(std::int32_t id) {
  graveyard.clear();
  ++instances_done;
  for (const auto& m : instances[id].members) {
    if (instances[id].in_batch) {
      // A batched kernel ends with its last part.
      const Graph& g = graphs[rank_workload[m.rank]];
      const std::int32_t of = instance_of[m.rank][workloads[rank_workload[m.rank]].gpu_ops[m.node - g.gpu_base].collective];
      if (of <= -2 && --batches[static_cast<size_t>(-2 - of)].left > 0) continue;
    }
    worklist.push_back(pack(m.rank, m.node));
  }
  drain();
}

void Replay::Impl::on_comm_done(const sg4::Activity& a) {
  auto* tag = a.get_data<CommTag>();
  if (!tag) return;
  account(*tag);
  graveyard.push_back(std::move(tag->comm));
  if (!tag->collective) {
    worklist.push_back(pack(tag->rank, tag->node));
    drain();
    return;
  }
  Instance& inst = instances[tag->instance];
  if (--inst.flows_left == 0) {
    const std::int32_t id = tag->instance;
    simgrid::kernel::timer::Timer::set(sg4::Engine::get_clock() + inst.plan.after_flows_s(), [this, id] { finish_collective(id); });
  }
}

// The trace of the first rank left with operations that never ran (several: each waits on
// another's collective; the report names them).
std::string Replay::Impl::stalled_trace() const {
  // Every stalled rank's trace (up to 3): in a deadlock across ranks the culprit is any of them.
  std::vector<std::string> files;
  size_t more = 0;
  for (int r = 0; r < nranks; ++r) {
    const std::string& src = workloads[rank_workload[r]].source;
    if (std::find(files.begin(), files.end(), src) != files.end()) continue;
    if (!std::any_of(state[r].remaining.begin(), state[r].remaining.end(), [](auto left) { return left > 0; })) continue;
    if (files.size() == 3) {
      ++more;
      continue;
    }
    files.push_back(src);
  }
  std::string out;
  for (const auto& f : files) out += (out.empty() ? "" : ", ") + f;
  if (more) out += " and " + std::to_string(more) + " more";
  return out;
}

std::string Replay::Impl::deadlock_report() const {
  std::ostringstream out;
  int shown = 0;
  for (const auto& inst : instances) {
    if (inst.arrived == inst.expected || inst.arrived == 0) continue;
    if (shown++ == 3) break;
    // A member has arrived once its op was released; members are in slot order.
    std::vector<int> waiting, absent;
    for (const auto& m : inst.members) (state[m.rank].start[m.node] >= 0 ? waiting : absent).push_back(m.rank);
    out << (shown > 1 ? "; " : "") << "ranks [" << rank_list(waiting) << "] wait in " << inst.label << " for ranks ["
        << rank_list(absent) << "]";
  }
  if (shown == 0) out << "operations wait on each other in a cycle (event waits across streams)";
  return out.str();
}

ReplayResult Replay::run() {
  Impl& m = *impl_;
  // Plan every collective instance (rings or trees on the topology, protocol), then build
  // the routes the run needs: each GPU with its host, and every planned flow.
  std::set<std::pair<int, int>> needed;
  for (int a : m.rank_gpu) {
    const int h = m.topo.host_of(a);
    needed.emplace(a, h);
    needed.emplace(h, a);
  }
  // NCCL's PXN proxy is a rank of the communicator: a communicator relays through its own
  // GPUs. One planner and one Platform route variant per set of relays that is not the
  // whole job's (sub-communicators that do not reach a relay of the job's).
  const std::vector<char> proxies = topo::pxn_proxies_of(m.topo, m.rank_gpu);
  CollectivePlanner job_planner(m.topo, proxies);
  std::map<std::vector<char>, int> variant_of;  // relays -> Platform variant
  std::vector<std::unique_ptr<CollectivePlanner>> variant_planners;
  std::vector<std::vector<char>> variant_proxies;
  std::vector<std::set<std::pair<int, int>>> variant_pairs;
  for (auto& inst : m.instances) {
    if (inst.in_bytes <= 0 || inst.members.size() <= 1) continue;
    std::vector<int> ranks;
    for (const auto& mem : inst.members) ranks.push_back(mem.rank);
    std::sort(ranks.begin(), ranks.end());
    std::vector<int> gpus;
    for (int r : ranks) gpus.push_back(m.rank_gpu[r]);
    std::vector<char> own = topo::pxn_proxies_of(m.topo, gpus);
    CollectivePlanner* planner = &job_planner;
    if (own != proxies) {
      auto [it, added] = variant_of.emplace(own, static_cast<int>(variant_planners.size()) + 1);
      if (added) {
        variant_planners.push_back(std::make_unique<CollectivePlanner>(m.topo, own));
        variant_proxies.push_back(std::move(own));
        variant_pairs.emplace_back();
      }
      inst.route_variant = it->second;
      planner = variant_planners[it->second - 1].get();
    }
    // NCCL >= 2.19 kernel names say which protocol and algorithm ran: both are kept (NVLS and
    // NVLS_TREE where this topology can run them; elsewhere the tuner chooses among the
    // rest, with a note). Older names give the kernel's entry point, not what ran.
    std::optional<collective::Protocol> proto;
    std::optional<collective::Algorithm> algo;
    if (inst.protocol_from_trace) {
      proto = inst.protocol;
      if (inst.algorithm == "RING") algo = collective::Algorithm::ring;
      if (inst.algorithm == "TREE" && inst.kind == collective::Kind::all_reduce) algo = collective::Algorithm::tree;
      if (inst.algorithm == "NVLS" && inst.kind == collective::Kind::all_reduce && inst.protocol == collective::Protocol::simple &&
          planner->nvls_available(gpus))
        algo = collective::Algorithm::nvls;
      if (inst.algorithm == "NVLS_TREE" && inst.kind == collective::Kind::all_reduce && inst.protocol == collective::Protocol::simple &&
          planner->nvls_tree_available(gpus))
        algo = collective::Algorithm::nvls_tree;
      if (!algo && !inst.algorithm.empty() && inst.algorithm != "RING" && inst.algorithm != "TREE") ++m.algorithm_not_kept[inst.algorithm];
    }
    try {
      inst.plan = inst.p2p_src >= 0 ? planner->plan_send(inst.in_bytes, m.rank_gpu[inst.p2p_src], m.rank_gpu[inst.p2p_dst])
                                    : planner->plan(inst.kind, inst.in_bytes * inst.gather_scale, gpus, proto, algo);
    } catch (const InputError& e) {
      // Which collective needs the route (a sub-communicator's relays are its own GPUs).
      throw InputError(std::string(e.what()) + " (for " + inst.label + ", ranks [" + m.rank_list(ranks) + "])");
    }
    for (const auto& f : inst.plan.flows) {
      needed.emplace(f.src, f.dst);
      if (inst.route_variant > 0) variant_pairs[inst.route_variant - 1].emplace(f.src, f.dst);
    }
  }
  std::vector<std::pair<int, int>> pairs(needed.begin(), needed.end());
  std::vector<Platform::RouteVariant> variants;
  for (size_t v = 0; v < variant_proxies.size(); ++v)
    variants.push_back({&variant_proxies[v], {variant_pairs[v].begin(), variant_pairs[v].end()}});
  m.platform = std::make_unique<Platform>(m.topo, pairs, true, &proxies, variants);
  m.link_bytes.assign(m.topo.links().size(), {0.0, 0.0});
  m.bins_of.assign(2 * m.topo.links().size(), -1);
  sg4::Activity::on_completion_cb([&m](const sg4::Activity& a) { m.on_comm_done(a); });

  m.state.resize(m.nranks);
  for (int r = 0; r < m.nranks; ++r) {
    const Graph& g = m.graphs[m.rank_workload[r]];
    auto& s = m.state[r];
    s.remaining = g.ndeps;
    s.release.assign(g.n, 0.0);
    s.start.assign(g.n, -1.0);
    s.end.assign(g.n, -1.0);
    m.total += g.n;
  }
  for (int r = 0; r < m.nranks; ++r)
    if (m.placements_left.empty() || m.placements_left[r] == 0) m.release(r, 0);  // else started by other ranks' ops (Impl::follow)
  m.drain();
  sg4::Engine::get_instance()->run();
  m.graveyard.clear();

  if (m.completed != m.total)
    input_error(m.stalled_trace(), "replay", "the simulation stopped with " + std::to_string(m.total - m.completed) +
                                  " operations that never ran: " + m.deadlock_report());

  ReplayResult res;
  res.makespan_s = sg4::Engine::get_clock();
  res.flows = m.flows;
  // Sends and receives are counted apart.
  const auto paired = static_cast<std::uint64_t>(
      std::count_if(m.instances.begin(), m.instances.end(), [](const Impl::Instance& i) { return i.p2p_src >= 0; }));
  res.collectives = m.instances_done - m.p2p_at_measured - paired - m.outside_window;
  res.collectives_outside_window = m.outside_window;
  res.p2p_paired = paired;
  res.p2p_batches_paired = m.p2p_batches_paired;
  res.p2p_parts_left_out = m.p2p_parts_left_out;
  res.p2p_paired_without_size = m.p2p_paired_no_size;
  res.collectives_without_size = m.no_size;
  res.unequal_all_to_all = m.unequal_all_to_all;
  res.p2p_at_measured_duration = m.p2p_at_measured;
  res.p2p_without_peer = m.p2p_no_peer;
  res.p2p_peer_without_trace = m.p2p_peer_absent;
  res.p2p_replicated = m.p2p_replicated;
  res.p2p_peer_batched = m.p2p_peer_batched;
  for (const auto& [name, count] : m.algorithm_not_kept)
    m.notes.insert(std::to_string(count) + " collective(s) whose kernels name " + name + " ran as the tuner chooses: " +
                   (name == "NVLS" || name == "NVLS_TREE" ? "this topology cannot run " + name + " for their GPUs" : "composim does not model " + name) +
                   " (the timeline keeps the kernel's name)");
  res.notes.assign(m.notes.begin(), m.notes.end());
  res.link_bytes = m.link_bytes;
  res.link_bin_s = m.bin_w;
  for (size_t i = 0; i < m.bins.size(); ++i) res.link_bins.push_back({m.bins_key[i] / 2, m.bins_key[i] % 2, std::move(m.bins[i])});
  std::sort(res.link_bins.begin(), res.link_bins.end(),
            [](const LinkBins& a, const LinkBins& b) { return std::tie(a.link, a.direction) < std::tie(b.link, b.direction); });
  for (int r = 0; r < m.nranks; ++r) {
    const Graph& g = m.graphs[m.rank_workload[r]];
    const Workload& w = m.workloads[m.rank_workload[r]];
    auto& s = m.state[r];
    RankTimes t;
    t.rank = m.rank_id(r);
    t.workload = m.rank_workload[r];
    t.gpu_node = m.rank_gpu[r];
    t.start_s_ = std::move(s.start);
    t.end_s_ = std::move(s.end);
    const std::span<const double> start(t.start_s_), end(t.end_s_);
    for (size_t ti = 0; ti < w.threads.size(); ++ti) {
      const auto n = w.threads[ti].ops.size();
      t.cpu_start.push_back(start.subspan(static_cast<size_t>(g.cpu_base[ti]), n));
      t.cpu_end.push_back(end.subspan(static_cast<size_t>(g.cpu_base[ti]), n));
    }
    t.gpu_start = start.subspan(static_cast<size_t>(g.gpu_base));
    t.gpu_end = end.subspan(static_cast<size_t>(g.gpu_base));
    s = {};  // release and remaining are no longer needed
    res.ops_simulated += static_cast<std::uint64_t>(g.n - 1);
    res.ranks.push_back(std::move(t));
  }
  return res;
}

}  // namespace composim::sim
