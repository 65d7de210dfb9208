#include "sim/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <csignal>
#include <iterator>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>
#include <zlib.h>

#include "models/error.hpp"

namespace composim::sim {

using trace::GpuOpKind;
using trace::Workload;

namespace {

using Interval = std::pair<double, double>;

// Union of intervals clipped to [lo, hi], as a sorted disjoint list.
std::vector<Interval> unite(std::vector<Interval> v, double lo, double hi) {
  std::vector<Interval> out;
  for (auto& [a, b] : v) {
    a = std::max(a, lo);
    b = std::min(b, hi);
  }
  v.erase(std::remove_if(v.begin(), v.end(), [](const Interval& i) { return i.second <= i.first; }), v.end());
  std::sort(v.begin(), v.end());
  for (const auto& i : v) {
    if (!out.empty() && i.first <= out.back().second) out.back().second = std::max(out.back().second, i.second);
    else out.push_back(i);
  }
  return out;
}

double length(const std::vector<Interval>& v) {
  double s = 0;
  for (const auto& [a, b] : v) s += b - a;
  return s;
}

// Length of `a` not covered by `b` (both sorted, disjoint).
double minus_length(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  double total = 0;
  size_t j = 0;
  for (const auto& [s, e] : a) {
    double covered = 0;
    while (j < b.size() && b[j].second <= s) ++j;
    for (size_t k = j; k < b.size() && b[k].first < e; ++k) covered += std::min(e, b[k].second) - std::max(s, b[k].first);
    total += (e - s) - covered;
  }
  return total;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Predicted time of a measured instant `t_ns` on thread `ti`, anchored to the thread's CPU
// calls: inside a call, near its start or end the same offset from it, in between stretched
// to the replayed length (a blocking call can end sooner or later in the replay: a mark
// closing a microsecond before its synchronize returns follows the return, one opening a
// microsecond after it starts follows the start); between calls, the same distance
// after the previous call's predicted end, but not after the next call's predicted start.
// Monotonic in `t_ns`, since a thread's calls run in order: a step's predicted end is never
// before its start.
double anchor(const Workload& w, const RankTimes& rt, int ti, std::int64_t t_ns) {
  const auto& ops = w.threads[ti].ops;
  const auto& ps = rt.cpu_start[ti];
  const auto& pe = rt.cpu_end[ti];
  auto it = std::upper_bound(ops.begin(), ops.end(), t_ns, [](std::int64_t t, const trace::CpuOp& op) { return t < op.ts_ns; });
  if (it == ops.begin()) return ps[0] - (ops[0].ts_ns - t_ns) * 1e-9;  // before the first call
  const size_t k = static_cast<size_t>(it - ops.begin()) - 1;
  const std::int64_t end_ns = ops[k].ts_ns + ops[k].dur_ns;
  if (t_ns < end_ns) {
    // Measured length L, replayed D: the first and last a = min(L, D) / 4 keep their offsets
    // from the call's start and end, the middle is stretched between them (continuous,
    // monotonic, the identity when D = L).
    const double into = (t_ns - ops[k].ts_ns) * 1e-9, L = ops[k].dur_ns * 1e-9, D = pe[k] - ps[k], a = 0.25 * std::min(L, D);
    if (into <= a) return ps[k] + into;
    if (L - into <= a) return pe[k] - (L - into);
    return ps[k] + a + (into - a) * (D - 2 * a) / (L - 2 * a);
  }
  const double after = pe[k] + (t_ns - end_ns) * 1e-9;
  return k + 1 < ops.size() ? std::min(after, ps[k + 1]) : after;
}

// The thread a rank's step marks are anchored to: their own if it made CUDA calls, else
// the thread of the first call (the main thread, which steps the profiler; a mark recorded
// on another thread, or none in an IR file).
int anchor_thread(const Workload& w, int marked) {
  if (marked >= 0 && marked < static_cast<int>(w.threads.size()) && !w.threads[marked].ops.empty()) return marked;
  int best = -1;
  for (size_t ti = 0; ti < w.threads.size(); ++ti)
    if (!w.threads[ti].ops.empty() && (best < 0 || w.threads[ti].ops[0].ts_ns < w.threads[best].ops[0].ts_ns)) best = static_cast<int>(ti);
  return best;
}

std::string fmt(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// Seconds as Chrome-trace microseconds to the nanosecond: fixed point, so a timestamp late
// in a long run keeps its nanoseconds (%g would round 1234567.891 us to 1234567.89).
std::string us(double s) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f", s * 1e6);
  return buf;
}

// A Chrome-trace event's "ts" and "dur" for [start, end] seconds, both from whole
// nanoseconds, so that ts + dur is the rounded end: an event that ends where the next on its
// stream starts does not overlap it by the rounding (1 ns), which Perfetto would flag.
std::string ts_dur(double start, double end) {
  const long long a = std::llround(start * 1e9), b = std::max(a, std::llround(end * 1e9));
  auto micro = [](long long ns) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%s%lld.%03lld", ns < 0 ? "-" : "", std::llabs(ns) / 1000, std::llabs(ns) % 1000);
    return std::string(buf);
  };
  return ",\"ts\":" + micro(a) + ",\"dur\":" + micro(b - a);
}

}  // namespace

namespace {

// Compute, exposed communication, memcpy and idle time of one rank within [lo, hi].
Breakdown breakdown_of(const Workload& w, const RankTimes& rt, double lo, double hi) {
  std::vector<Interval> compute, comm, copy;
  for (size_t g = 0; g < w.gpu_ops.size(); ++g) {
    Interval iv{rt.gpu_start[g], rt.gpu_end[g]};
    switch (w.gpu_ops[g].kind) {
      case GpuOpKind::kernel: compute.push_back(iv); break;
      case GpuOpKind::collective: comm.push_back(iv); break;
      default: copy.push_back(iv); break;
    }
  }
  auto c = unite(compute, lo, hi);
  auto m = unite(comm, lo, hi);
  std::vector<Interval> cm = c;
  cm.insert(cm.end(), m.begin(), m.end());
  auto cmu = unite(cm, lo, hi);
  auto cp = unite(copy, lo, hi);
  Breakdown b;
  b.compute_s = length(c);
  b.exposed_communication_s = minus_length(m, c);
  b.memcpy_s = minus_length(cp, cmu);
  b.idle_s = (hi - lo) - length(cmu) - b.memcpy_s;
  return b;
}

}  // namespace

RunReport analyse(const std::vector<Workload>& workloads, const ReplayResult& result, int warmup) {
  RunReport rep;
  const size_t nranks = result.ranks.size();
  // Steps are matched across ranks by name (ProfilerStep#N); only those every rank has are
  // compared. windows[step][rank]: the step's predicted [start, end] on that rank.
  std::vector<std::vector<Interval>> windows;
  size_t marked = 0;  // the first rank whose trace has step marks
  while (marked < nranks && workloads[result.ranks[marked].workload].iterations.empty()) ++marked;
  rep.has_marks = marked < nranks;
  if (rep.has_marks) {
    const Workload& first = workloads[result.ranks[0].workload];
    for (size_t ri = 0; ri < nranks; ++ri) {
      const Workload& w = workloads[result.ranks[ri].workload];
      if (w.iterations.empty())
        input_error(w.source, "ProfilerStep marks",
                    "this trace (rank " + std::to_string(w.rank) + ") has no step marks but that of rank " +
                        std::to_string(workloads[result.ranks[marked].workload].rank) + " has: give traces of one profiler schedule");
    }
    std::vector<std::map<std::string, size_t>> index(nranks);
    for (size_t ri = 0; ri < nranks; ++ri) {
      const Workload& w = workloads[result.ranks[ri].workload];
      for (size_t i = 0; i < w.iterations.size(); ++i) index[ri].emplace(w.iterations[i].name, i);
    }
    // Steps not in every rank's trace, listed once each (rank, name).
    std::string dropped;
    size_t n_dropped = 0;
    std::set<std::string> dropped_names;        // listed already
    std::map<std::string, size_t> ranks_with;  // step name -> ranks whose trace has it
    for (size_t ri = 0; ri < nranks; ++ri)
      for (const auto& it : workloads[result.ranks[ri].workload].iterations) ++ranks_with[it.name];
    for (size_t ri = 0; ri < nranks; ++ri)
      for (const auto& it : workloads[result.ranks[ri].workload].iterations) {
        if (ranks_with[it.name] == nranks || !dropped_names.insert(it.name).second) continue;
        if (n_dropped++ < 3) dropped += (dropped.empty() ? "" : ", ") + it.name + " of rank " + std::to_string(workloads[result.ranks[ri].workload].rank);
      }
    std::set<int> off_thread;
    // Steps are paired by name; a rank whose steps run in another order than rank 0's is
    // named in a note (its first step out of order), as that is unusual for one schedule.
    std::vector<std::ptrdiff_t> last_index(nranks, -1);
    std::map<int, std::string> out_of_order;  // rank -> its first step out of rank 0's order
    for (const auto& it : first.iterations) {
      if (ranks_with[it.name] != nranks) continue;
      IterationResult r;
      r.name = it.name;
      std::vector<Interval> per_rank;
      bool calls_in_step = false;
      for (size_t ri = 0; ri < nranks; ++ri) {
        const auto& rt = result.ranks[ri];
        const Workload& w = workloads[rt.workload];
        const auto i = static_cast<std::ptrdiff_t>(index[ri].at(it.name));
        if (i < last_index[ri]) out_of_order.emplace(rt.rank, it.name);
        last_index[ri] = std::max(last_index[ri], i);
        const auto& step = w.iterations[static_cast<size_t>(i)];
        const int ti = anchor_thread(w, step.thread);
        if (ti < 0)
          input_error(w.source, "step " + step.name,
                      "the trace has no CUDA calls to place its step marks in the replay (a step is anchored to its thread's calls)");
        if (ti != step.thread) off_thread.insert(w.rank);
        const double start = anchor(w, rt, ti, step.ts_ns), end = anchor(w, rt, ti, step.ts_ns + step.dur_ns);
        per_rank.emplace_back(start, end);
        const auto& ops = w.threads[ti].ops;
        const auto first_in = std::lower_bound(ops.begin(), ops.end(), step.ts_ns,
                                               [](const trace::CpuOp& op, std::int64_t t) { return op.ts_ns < t; });
        if (first_in != ops.end() && first_in->ts_ns <= step.ts_ns + step.dur_ns) calls_in_step = true;
        r.measured_s = std::max(r.measured_s, step.dur_ns * 1e-9);
        r.predicted_s = std::max(r.predicted_s, end - start);
      }
      // A step of zero length on every rank measured nothing: its "error" would be 0%.
      r.zero_length = r.measured_s <= 0;
      r.empty = !calls_in_step || r.zero_length;
      rep.iterations.push_back(std::move(r));
      windows.push_back(std::move(per_rank));
    }
    if (rep.iterations.empty())
      input_error(first.source, "ProfilerStep marks", "no step is in every rank's trace (this one has " + first.iterations.front().name +
                                                          "...): give traces of one profiler schedule");
    if (n_dropped > 0)
      rep.notes.push_back(std::to_string(n_dropped) + " step(s) (" + dropped + (n_dropped > 3 ? ", ..." : "") +
                          ") are not in every rank's trace and are not compared");
    for (const auto& [r, name] : out_of_order)
      rep.notes.push_back("rank " + std::to_string(r) + "'s steps are in another order than rank " + std::to_string(result.ranks[0].rank) +
                          "'s (" + name + " comes earlier there): steps are paired by name");
    for (int r : off_thread)
      rep.notes.push_back("rank " + std::to_string(r) + "'s step marks are on a thread without CUDA calls: anchored to the thread of its first CUDA call");
  } else {
    // Whole trace as one iteration: measured span of the trace vs the replay's span.
    IterationResult r;
    r.name = "whole trace";
    std::vector<Interval> per_rank;
    for (size_t ri = 0; ri < nranks; ++ri) {
      const auto& rt = result.ranks[ri];
      const Workload& w = workloads[rt.workload];
      std::int64_t lo = INT64_MAX, hi = 0;
      double plo = INFINITY, phi = 0;
      for (size_t ti = 0; ti < w.threads.size(); ++ti)
        for (size_t k = 0; k < w.threads[ti].ops.size(); ++k) {
          lo = std::min(lo, w.threads[ti].ops[k].ts_ns);
          hi = std::max(hi, w.threads[ti].ops[k].ts_ns + w.threads[ti].ops[k].dur_ns);
          plo = std::min(plo, rt.cpu_start[ti][k]);
          phi = std::max(phi, rt.cpu_end[ti][k]);
        }
      for (size_t g = 0; g < w.gpu_ops.size(); ++g) {
        lo = std::min(lo, w.gpu_ops[g].ts_ns);
        hi = std::max(hi, w.gpu_ops[g].ts_ns + w.gpu_ops[g].dur_ns);
        plo = std::min(plo, rt.gpu_start[g]);
        phi = std::max(phi, rt.gpu_end[g]);
      }
      r.measured_s = std::max(r.measured_s, (hi - lo) * 1e-9);
      r.predicted_s = std::max(r.predicted_s, phi - plo);
      per_rank.emplace_back(plo, phi);
    }
    rep.iterations.push_back(r);
    windows.push_back(std::move(per_rank));
  }
  for (auto& r : rep.iterations) r.error_pct = r.measured_s > 0 ? 100.0 * (r.predicted_s - r.measured_s) / r.measured_s : 0.0;

  // Steps without a CUDA call time nothing composim replays: left out, unless all are.
  // Steps of zero length measured nothing: always left out, and an error when all are.
  std::vector<size_t> cand;
  for (size_t i = 0; i < rep.iterations.size(); ++i)
    if (!rep.iterations[i].empty) cand.push_back(i);
  if (cand.empty()) {
    for (size_t i = 0; i < rep.iterations.size(); ++i)
      if (!rep.iterations[i].zero_length) rep.iterations[i].empty = false, cand.push_back(i);
    if (cand.empty())
      input_error(workloads[result.ranks[0].workload].source, "ProfilerStep marks",
                  "every step (" + rep.iterations.front().name + (rep.iterations.size() > 1 ? ", ..." : "") + ") has zero length" +
                      (nranks > 1 ? " on every rank" : "") +
                      ": there is no measured step time to compare the prediction with (give a trace whose step marks span its steps, or "
                      "one without step marks to compare the whole trace)");
  }
  if (cand.size() < rep.iterations.size()) {
    for (const bool zero : {false, true}) {
      std::string names;
      size_t n = 0;
      for (const auto& r : rep.iterations)
        if (r.empty && r.zero_length == zero && n++ < 3) names += (names.empty() ? "" : ", ") + r.name;
      if (n > 0)
        rep.notes.push_back(std::to_string(n) + " step(s) (" + names + (n > 3 ? ", ..." : "") + ") " +
                            (zero ? "have zero length" : "have no CUDA call") + " and are not compared");
    }
  }
  // Warm-up: the first `warmup` steps, or leading odd steps (below).
  size_t skip = 0;
  if (warmup >= 0) {
    if (rep.has_marks && static_cast<size_t>(warmup) >= cand.size())
      input_error("", "--warmup", "--warmup " + std::to_string(warmup) + " leaves no step to measure: the trace has " +
                                      std::to_string(cand.size()) + " steps" + (cand.size() < rep.iterations.size() ? " with CUDA calls" : "") +
                                      (nranks > 1 ? " in every rank's trace" : ""));
    skip = std::min<size_t>(static_cast<size_t>(warmup), cand.size() - 1);
  } else if (cand.size() > 2) {
    // Warm-up is a run of leading steps before steady ones: the fewest leading steps (at
    // most half) after which every step is within 20% of the median of those after. Steps
    // that vary throughout (gradient accumulation: 10, 20, 10, 20 ms) have no warm-up to
    // find, and are all kept.
    auto steady_from = [&](size_t r) {
      std::vector<double> tail;
      for (size_t k = r; k < cand.size(); ++k) tail.push_back(rep.iterations[cand[k]].measured_s);
      const double med = median(tail);
      for (double t : tail)
        if (std::abs(t - med) > 0.2 * med) return false;
      return true;
    };
    size_t run = 0;
    while (2 * run <= cand.size() && cand.size() - run >= 2 && !steady_from(run)) ++run;
    if (run > 0 && 2 * run <= cand.size() && cand.size() - run >= 2) {
      skip = run;
      rep.notes.push_back(std::to_string(skip) + " leading step(s) (" + rep.iterations[cand[0]].name +
                          (skip > 1 ? " to " + rep.iterations[cand[skip - 1]].name : "") +
                          ") are excluded as warm-up: the steps after them are steady, within 20% of their median (--warmup 0 keeps them)");
    }
  }
  std::vector<double> meas, pred;
  std::vector<size_t> kept;
  for (size_t k = 0; k < cand.size(); ++k) {
    rep.iterations[cand[k]].warmup = k < skip;
    if (k >= skip) {
      meas.push_back(rep.iterations[cand[k]].measured_s);
      pred.push_back(rep.iterations[cand[k]].predicted_s);
      kept.push_back(cand[k]);
    }
  }
  // Steps that vary widely: the median stands for them, and the user should know. Predicted
  // steps can vary where measured ones did not: a GPU slower than its CPU in a what-if falls
  // behind until its streams' launch queues fill, so the first steps are short.
  for (const bool predicted : {false, true}) {
    const auto& v = predicted ? pred : meas;
    if (v.size() < 2) continue;
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    const double med = median(v);
    if (*hi > 1.2 * med || *lo < 0.8 * med) {
      char buf[256];
      std::snprintf(buf, sizeof buf, "the %zu %s steps take %.3f to %.3f ms, more than 20%% around their median: the headline is that median", v.size(),
                    predicted ? "predicted" : "measured", *lo * 1e3, *hi * 1e3);
      rep.notes.push_back(buf);
    }
  }
  rep.measured_iteration_s = median(meas);
  rep.predicted_iteration_s = median(pred);
  rep.error_pct = rep.measured_iteration_s > 0 ? 100.0 * (rep.predicted_iteration_s - rep.measured_iteration_s) / rep.measured_iteration_s : 0;

  // Breakdown of the median step (the mean of the two middle ones for an even count), on
  // the rank that sets its time (the slowest): its parts add up to the headline prediction.
  std::stable_sort(kept.begin(), kept.end(), [&](size_t a, size_t b) { return rep.iterations[a].predicted_s < rep.iterations[b].predicted_s; });
  const size_t n = kept.size();
  std::vector<size_t> middle{kept[(n - 1) / 2]};
  if (n % 2 == 0) middle.push_back(kept[n / 2]);
  for (size_t i : middle) {
    size_t slowest = 0;
    for (size_t ri = 1; ri < nranks; ++ri)
      if (windows[i][ri].second - windows[i][ri].first > windows[i][slowest].second - windows[i][slowest].first) slowest = ri;
    const auto& rt = result.ranks[slowest];
    const Breakdown b = breakdown_of(workloads[rt.workload], rt, windows[i][slowest].first, windows[i][slowest].second);
    const double share = 1.0 / static_cast<double>(middle.size());
    rep.breakdown.compute_s += b.compute_s * share;
    rep.breakdown.exposed_communication_s += b.exposed_communication_s * share;
    rep.breakdown.memcpy_s += b.memcpy_s * share;
    rep.breakdown.idle_s += b.idle_s * share;
    rep.breakdown_steps.push_back({rep.iterations[i].name, rt.rank});
  }
  return rep;
}

std::string summary_json(const RunReport& rep, const ReplayResult& res, const nlohmann::ordered_json& meta) {
  nlohmann::ordered_json j;
  j["predicted_iteration_s"] = rep.predicted_iteration_s;
  j["measured_iteration_s"] = rep.measured_iteration_s;
  j["error_pct"] = rep.error_pct;
  j["breakdown"] = {{"compute_s", rep.breakdown.compute_s},
                    {"exposed_communication_s", rep.breakdown.exposed_communication_s},
                    {"memcpy_s", rep.breakdown.memcpy_s},
                    {"idle_s", rep.breakdown.idle_s}};
  auto of = nlohmann::ordered_json::array();
  for (const auto& sr : rep.breakdown_steps) of.push_back({{"step", sr.step}, {"rank", sr.rank}});
  j["breakdown"]["of"] = std::move(of);
  auto iters = nlohmann::ordered_json::array();
  for (const auto& r : rep.iterations)
    // A step not compared (empty, zero length included) has no error: null, not 0.
    iters.push_back({{"name", r.name},
                     {"measured_s", r.measured_s},
                     {"predicted_s", r.predicted_s},
                     {"error_pct", r.empty ? nlohmann::ordered_json() : nlohmann::ordered_json(r.error_pct)},
                     {"warmup", r.warmup},
                     {"empty", r.empty}});
  j["iterations"] = std::move(iters);
  j["has_step_marks"] = rep.has_marks;
  j["ranks"] = res.ranks.size();
  j["simulated_time_s"] = res.makespan_s;
  j["operations_simulated"] = res.ops_simulated;
  j["flows"] = res.flows;
  j["collectives"] = res.collectives;
  j["collectives_replayed_at_measured_duration"] = res.collectives_without_size;
  j["all_to_all_modelled_at_largest_size"] = res.unequal_all_to_all;
  j["collectives_outside_trace_window"] = res.collectives_outside_window;
  j["send_recv_at_measured_duration"] = res.p2p_at_measured_duration;
  j["send_recv_paired"] = res.p2p_paired;
  j["send_recv_paired_without_size"] = res.p2p_paired_without_size;
  j["send_recv_batched_kernels_paired"] = res.p2p_batches_paired;
  for (const auto& [k, v] : meta.items()) j[k] = v;
  if (!rep.notes.empty()) j["notes"] = rep.notes;
  return j.dump(2) + "\n";
}

std::string iterations_csv(const RunReport& rep) {
  std::string s = "iteration,measured_s,predicted_s,error_pct,warmup,empty\n";
  for (const auto& r : rep.iterations)
    s += csv_field(r.name) + "," + fmt(r.measured_s) + "," + fmt(r.predicted_s) + "," + (r.empty ? "" : fmt(r.error_pct)) + "," +
         (r.warmup ? "1" : "0") + "," + (r.empty ? "1" : "0") + "\n";
  return s;
}

std::string links_csv(const ReplayResult& res, const topo::Topology& t) {
  // Utilisation over time: the replay's bins (exact bytes per bin; at most 100, of a width
  // that a doubling made fit the run), for the link directions that carried traffic.
  const double width = res.link_bin_s > 0 ? res.link_bin_s : 1.0;
  const int n = std::max(1, static_cast<int>(std::ceil(res.makespan_s / width - 1e-9)));
  std::string s = "link,from,to,bandwidth_GBps,bin_start_s,bin_end_s,bytes,utilisation\n";
  for (const auto& lb : res.link_bins) {
    const auto& l = t.links()[lb.link];
    const std::string a = t.nodes()[lb.direction == 0 ? l.from : l.to].name, z = t.nodes()[lb.direction == 0 ? l.to : l.from].name;
    for (int k = 0; k < n && k < static_cast<int>(lb.bytes.size()); ++k)
      s += csv_field(l.name) + "," + csv_field(a) + "," + csv_field(z) + "," + fmt(l.bandwidth_Bps / 1e9) + "," + fmt(k * width) + "," + fmt((k + 1) * width) + "," +
           fmt(lb.bytes[k]) + "," + fmt(lb.bytes[k] / (l.bandwidth_Bps * width)) + "\n";
  }
  return s;
}

std::pair<std::string, double> busiest_link(const ReplayResult& res, const topo::Topology& t) {
  std::pair<std::string, double> best{"", 0.0};
  for (size_t i = 0; i < res.link_bytes.size() && i < t.links().size(); ++i)
    for (int d = 0; d < 2; ++d) {
      const auto& l = t.links()[i];
      const double u = res.makespan_s > 0 ? res.link_bytes[i][d] / (l.bandwidth_Bps * res.makespan_s) : 0.0;
      if (u > best.second)
        best = {l.name + " (" + t.nodes()[d == 0 ? l.from : l.to].name + "->" + t.nodes()[d == 0 ? l.to : l.from].name + ")", u};
    }
  return best;
}

void write_timeline_json(std::ostream& out, const std::vector<Workload>& workloads, const ReplayResult& res, const topo::Topology& topology) {
  out << "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"composim\"},\"traceEvents\":[\n";
  bool first = true;
  auto ev = [&](const std::string& body) {
    if (!first) out << ",\n";
    first = false;
    out << body;
  };
  auto q = [](const std::string& s) { return nlohmann::json(s).dump(); };
  for (const auto& rt : res.ranks) {
    const Workload& w = workloads[rt.workload];
    const std::string pid = std::to_string(rt.rank);
    const auto& gpu = topology.nodes()[rt.gpu_node];
    // CPU threads' tracks follow the streams' (tid = CUDA stream id), never sharing one.
    std::int64_t cpu_tid = 1000000;
    for (const auto& s : w.streams) cpu_tid = std::max(cpu_tid, s.id + 1);
    ev("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + pid + ",\"args\":{\"name\":" +
       q("rank " + pid + " on " + gpu.name + " (" + gpu.model + ")") + "}}");
    for (const auto& s : w.streams)
      ev("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + pid + ",\"tid\":" + std::to_string(s.id) +
         ",\"args\":{\"name\":\"stream " + std::to_string(s.id) + "\"}}");
    for (size_t ti = 0; ti < w.threads.size(); ++ti)
      ev("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + pid + ",\"tid\":" + std::to_string(cpu_tid + static_cast<std::int64_t>(ti)) +
         ",\"args\":{\"name\":" + q("CPU thread " + w.threads[ti].id) + "}}");
    for (size_t g = 0; g < w.gpu_ops.size(); ++g) {
      const auto& op = w.gpu_ops[g];
      // A collective's operation, size and process group as the trace gives them; a send's or
      // receive's peer, or a batched kernel's parts (what the replay paired it by).
      std::string coll;
      if (op.kind == trace::GpuOpKind::collective && op.collective >= 0 && static_cast<size_t>(op.collective) < w.collectives.size()) {
        const auto& c = w.collectives[op.collective];
        coll = ",\"collective\":\"" + std::string(collective::to_string(c.kind)) + "\",\"in_bytes\":" + std::to_string(c.in_bytes) +
               ",\"process_group\":" + q(w.communicators[c.communicator].name);
        if (c.p2p_role != trace::P2pRole::none) coll += ",\"p2p\":\"" + std::string(trace::to_string(c.p2p_role)) + "\"";
        if (c.peer >= 0) coll += ",\"peer\":" + std::to_string(c.peer);
        if (!c.batch.empty()) {
          coll += ",\"batch\":[";
          for (size_t k = 0; k < c.batch.size(); ++k)
            coll += std::string(k ? "," : "") + "{\"p2p\":\"" + std::string(trace::to_string(c.batch[k].role)) + "\",\"peer\":" +
                    std::to_string(c.batch[k].peer) + ",\"in_bytes\":" + std::to_string(c.batch[k].in_bytes) + "}";
          coll += "]";
        }
      }
      ev("{\"ph\":\"X\",\"cat\":\"" + std::string(trace::to_string(op.kind)) + "\",\"name\":" + q(w.names[op.name]) +
         ",\"pid\":" + pid + ",\"tid\":" + std::to_string(w.streams[op.stream].id) + ts_dur(rt.gpu_start[g], rt.gpu_end[g]) + ",\"args\":{\"measured_dur_us\":" + us(op.dur_ns * 1e-9) +
         (op.bytes ? ",\"bytes\":" + std::to_string(op.bytes) : "") + coll + "}}");
    }
    for (size_t ti = 0; ti < w.threads.size(); ++ti) {
      const auto& ops = w.threads[ti].ops;
      for (size_t k = 0; k < ops.size(); ++k)
        ev("{\"ph\":\"X\",\"cat\":\"cpu\",\"name\":" + q(w.names[ops[k].name]) + ",\"pid\":" + pid +
           ",\"tid\":" + std::to_string(cpu_tid + static_cast<std::int64_t>(ti)) + ts_dur(rt.cpu_start[ti][k], rt.cpu_end[ti][k]) + "}");
    }
  }
  out << "\n]}\n";
}

std::string csv_field(const std::string& v) {
  if (v.find_first_of(",\"\r\n") == std::string::npos) return v;
  std::string out = "\"";
  for (char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

void check_replaceable(const std::string& path, std::string_view place) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto st = fs::status(path, ec);  // through a link: a link to /dev/null is /dev/null
  if (ec == std::errc::too_many_symbolic_link_levels) input_error(path, place, "is a loop of symbolic links");
  if (ec || !fs::exists(st) || fs::is_regular_file(st)) return;
  input_error(path, place, fs::is_directory(st) ? "is a directory; give the name of a file to write"
                                                : "exists and is not a regular file (a device, FIFO or socket): composim replaces only files");
}

namespace {
// Where writing `path` must land: through a symbolic link, at its target (renaming a new
// file over the link would replace the link and leave the target as it was).
std::filesystem::path write_target(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = path;
  for (int hops = 0; hops < 40 && fs::is_symlink(p, ec); ++hops) {  // a dangling link too
    const fs::path next = fs::read_symlink(p, ec);
    if (ec) return path;
    p = next.is_absolute() ? next : p.parent_path() / next;
  }
  return p;
}
}  // namespace

void write_files_atomically(const std::string& dir, const std::map<std::string, std::string>& files) {
  std::map<std::string, FileWriter> writers;
  for (const auto& [name, content] : files)
    writers.emplace(name, [&content = content](std::ostream& out) { out.write(content.data(), static_cast<std::streamsize>(content.size())); });
  write_streams_atomically(dir, writers);
}

namespace {
// Temporary files being written, removed if a signal that ends the process arrives
// meanwhile (a timeline of gigabytes would otherwise stay behind as .timeline.json.XXXXXX):
// Ctrl-C, kill, a closed terminal or ssh session (SIGHUP), Ctrl-\ (SIGQUIT).
constexpr int kMaxStaged = 16;
constexpr int kStagedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
char staged_paths[kMaxStaged][4096];
volatile std::sig_atomic_t staged_count = 0;
// Directories made for the outputs, deepest first: removed after the files if still empty.
char staged_dirs[kMaxStaged][4096];
volatile std::sig_atomic_t staged_dir_count = 0;
void remove_staged_and_die(int sig) {
  for (int i = 0; i < staged_count; ++i) unlink(staged_paths[i]);
  for (int i = 0; i < staged_dir_count; ++i) rmdir(staged_dirs[i]);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}
// While alive, the process removes the staged files on any of kStagedSignals; one the
// process ignored (a background job's SIGINT, nohup's SIGHUP) stays ignored.
struct StagedGuard {
  void (*old[std::size(kStagedSignals)])(int);
  StagedGuard() {
    for (size_t i = 0; i < std::size(kStagedSignals); ++i) {
      old[i] = std::signal(kStagedSignals[i], remove_staged_and_die);
      if (old[i] == SIG_IGN) std::signal(kStagedSignals[i], SIG_IGN);
    }
  }
  ~StagedGuard() {
    for (size_t i = 0; i < std::size(kStagedSignals); ++i) std::signal(kStagedSignals[i], old[i]);
    staged_count = 0;
    staged_dir_count = 0;
  }
  void add(const std::string& path) {
    if (staged_count >= kMaxStaged || path.size() >= sizeof staged_paths[0]) return;
    std::memcpy(staged_paths[staged_count], path.c_str(), path.size() + 1);
    staged_count = staged_count + 1;
  }
  void add_dir(const std::string& path) {
    if (staged_dir_count >= kMaxStaged || path.size() >= sizeof staged_dirs[0]) return;
    std::memcpy(staged_dirs[staged_dir_count], path.c_str(), path.size() + 1);
    staged_dir_count = staged_dir_count + 1;
  }
};

// A new, empty temporary file beside `target` (mkstemp: never an existing file, such as a
// user's TARGET.tmp), closed; its path. Throws InputError naming `target` and why.
std::filesystem::path create_temp_beside(const std::filesystem::path& target, std::string_view place) {
  std::string name = (target.parent_path() / ("." + target.filename().string() + ".XXXXXX")).string();
  const int fd = mkstemp(name.data());
  if (fd < 0) input_error(target.string(), place, std::string("cannot create a temporary file beside it: ") + std::strerror(errno));
  const mode_t mask = umask(0);  // mkstemp makes it 0600; an output gets what open() would give
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  close(fd);
  return name;
}
}  // namespace

void write_streams_atomically(const std::string& dir, const std::map<std::string, FileWriter>& files) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // The directories this call makes (deepest first): a failure or a signal before the
  // outputs are in place removes them again, leaving the file system as it was.
  std::vector<fs::path> made;
  for (fs::path p = fs::absolute(dir, ec); !p.empty() && !fs::exists(p, ec) && p.has_relative_path(); p = p.parent_path()) made.push_back(p);
  fs::create_directories(dir, ec);
  if (ec) input_error(dir, "", "cannot create output directory: " + ec.message());
  std::vector<std::pair<fs::path, fs::path>> staged;
  StagedGuard guard;
  for (const auto& d : made) guard.add_dir(d.string());
  auto cleanup = [&] {
    for (const auto& [tmp, final_path] : staged) fs::remove(tmp, ec);
    for (const auto& d : made) fs::remove(d, ec);  // only if empty
  };
  try {
    for (const auto& [name, content] : files) check_replaceable((fs::path(dir) / name).string(), "output file");
  } catch (const InputError&) {
    cleanup();
    throw;
  }
  for (const auto& [name, write] : files) {
    const fs::path final_path = write_target(fs::path(dir) / name);
    fs::path tmp;
    try {
      tmp = create_temp_beside(final_path, "");
    } catch (const InputError&) {
      cleanup();
      throw;
    }
    guard.add(tmp.string());
    staged.emplace_back(tmp, final_path);
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    try {
      if (out) write(out);
    } catch (...) {  // a writer's own failure (out of memory, a bad value): nothing stays
      out.close();
      cleanup();
      throw;
    }
    out.close();
    if (!out) {
      const std::string why = std::strerror(errno);
      cleanup();
      input_error(final_path.string(), "", "cannot write output file: " + why);
    }
  }
  for (const auto& [tmp, final_path] : staged) {
    fs::rename(tmp, final_path, ec);
    if (ec) {
      const std::string why = ec.message();
      cleanup();
      input_error(final_path.string(), "", "cannot move output into place: " + why);
    }
  }
}

void write_file_atomically(const std::string& path, const std::string& content, std::string_view place) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // Checked before any directory is made: a failed write leaves nothing behind.
  if (!path.empty() && path.back() == '/') input_error(path, place, "names a directory; give the name of a file to write");
  check_replaceable(path, place);
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec) input_error(path, place, "cannot create its directory: " + ec.message());
  const std::string target = write_target(path).string();
  const std::string tmp = create_temp_beside(target, place).string();
  bool ok = false;
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0) {
    if (gzFile g = gzopen(tmp.c_str(), "wb")) {
      ok = gzwrite(g, content.data(), static_cast<unsigned>(content.size())) == static_cast<int>(content.size());
      ok = gzclose(g) == Z_OK && ok;
    }
  } else {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(content.data(), static_cast<std::streamsize>(content.size()));
    f.close();
    ok = static_cast<bool>(f);
  }
  if (!ok || std::rename(tmp.c_str(), target.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    input_error(path, place, "cannot write: " + why);
  }
}

}  // namespace composim::sim
