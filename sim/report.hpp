// File: sim/report.hpp
//
// From a replay to what users read: per-iteration measured vs predicted times, the time
// breakdown, and the output files (summary.json, iterations.csv, timeline.json).
//
// Iterations: each ProfilerStep#N mark is anchored to the CPU operations around it on its
// thread, so its predicted start and end move with the replayed operations. Steps are
// matched across ranks by name; those not in every rank's trace are left out (with a note).
// A step costs what the slowest rank makes it cost (max over ranks). Warm-up steps (the
// first --warmup N; by default the fewest leading steps, at most half, after which every
// step is within 20% of the later steps' median) are reported but excluded from
// the medians, with a note; a note also says when the kept steps vary by more than 20%.
// Steps without a CUDA call on any rank (empty annotations) are excluded too, with a note,
// and so are steps of zero length (nothing was measured); when every step has zero length
// there is nothing to compare, which is an error.
// Traces without marks are one iteration spanning the trace.
//
// Breakdown of the median step (the mean of the two middle steps for an even count), on
// the rank that sets its time, so its parts add up to the predicted iteration time:
//   compute = union of kernel time; exposed communication = collective time not overlapped
//   by compute; memcpy = copy/memset time overlapped by neither; idle = the rest.
//
// Errors: InputError when some ranks' traces have step marks and others none, or no step
// is in every rank's trace, or every step has zero length, or --warmup leaves no step.
#pragma once

#include <functional>
#include <map>
#include <ostream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "sim/replay.hpp"

namespace composim::sim {

struct IterationResult {
  std::string name;
  double measured_s = 0, predicted_s = 0, error_pct = 0;
  bool warmup = false;
  bool empty = false;  // no CUDA call in the step on any rank, or zero length: it times nothing composim models
  bool zero_length = false;  // the step's marks have zero length on every rank: nothing measured to compare
};

struct Breakdown {
  double compute_s = 0, exposed_communication_s = 0, memcpy_s = 0, idle_s = 0;
};

struct RunReport {
  std::vector<IterationResult> iterations;
  bool has_marks = false;
  double predicted_iteration_s = 0, measured_iteration_s = 0, error_pct = 0;
  Breakdown breakdown;
  struct StepRank {
    std::string step;
    int rank;
  };
  std::vector<StepRank> breakdown_steps;  // the step(s) and rank the breakdown is of
  std::vector<std::string> notes;         // for the user: what was left out and why
};

// analyse()
//
// `warmup`: steps to exclude at the start; -1 picks them automatically (see above).
RunReport analyse(const std::vector<trace::Workload>& workloads, const ReplayResult& result, int warmup);

// Output documents. `meta` (an object) goes into summary.json as given (topology, traces, ...).
std::string summary_json(const RunReport& report, const ReplayResult& result, const nlohmann::ordered_json& meta);
std::string iterations_csv(const RunReport& report);
// Utilisation over time: for each link direction that carried traffic, equal time bins
// (51 to 100 cover a run longer than 100 ns; their width is a power-of-two multiple of 1 ns) with the exact
// bytes moved in each and the utilisation (bytes / (bandwidth x width)).
std::string links_csv(const ReplayResult& result, const topo::Topology& topology);
// The most-utilised link direction: (name "link (from->to)", utilisation); ("", 0) if none.
std::pair<std::string, double> busiest_link(const ReplayResult& result, const topo::Topology& topology);
// Chrome-trace timeline of the replay, written to `out` as it is made (a 1,024-rank
// replay's is gigabytes: it is never held whole in memory).
void write_timeline_json(std::ostream& out, const std::vector<trace::Workload>& workloads, const ReplayResult& result,
                         const topo::Topology& topology);

// One CSV field (RFC 4180): quoted when it holds a comma, quote or line break.
std::string csv_field(const std::string& value);

// check_replaceable()
//
// Throws InputError naming `path` and `place` unless `path` is absent or a regular file:
// the writers replace a file by renaming a new one over it, which must not turn a
// directory, device (/dev/null, or a link to it) or FIFO into a plain file.
void check_replaceable(const std::string& path, std::string_view place);

// write_files_atomically()
//
// Writes every (file name, content) into `dir` (created if needed) as temporary files,
// then renames them all into place: a failure leaves no partial output. Throws
// InputError naming the path on failure.
void write_files_atomically(const std::string& dir, const std::map<std::string, std::string>& files);
// The same, for files written by a function to a stream (large outputs made as they go).
using FileWriter = std::function<void(std::ostream&)>;
void write_streams_atomically(const std::string& dir, const std::map<std::string, FileWriter>& files);

// write_file_atomically()
//
// Writes `content` to `path` (parent directories created), gzip-compressed when the name
// ends in ".gz", through a temporary file renamed into place. Throws InputError naming
// `path` and `place` (the option that named it, e.g. "--out") on failure.
void write_file_atomically(const std::string& path, const std::string& content, std::string_view place);

}  // namespace composim::sim
