// File: sim/nccl_tests.hpp
//
// nccl-tests emulation: one collective per message size, run back to back in one SimGrid
// simulation on the topology (plans from sim/collectives.hpp), reported the way
// nccl-tests reports them: time (us), algbw = size / time, busbw = algbw * factor(op, n)
// (nccl-tests doc/PERFORMANCE.md). `size` is nccl-tests' size: for all_gather the
// gathered output (each rank contributes size / n), for reduce_scatter the input.
#pragma once

#include <optional>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/collectives.hpp"

namespace composim::sim {

struct SweepRow;

struct SweepOptions {
  collective::Kind kind = collective::Kind::all_reduce;
  std::vector<double> sizes_B;
  std::vector<int> gpus;  // topology nodes, rank order
  TunerChoices choices;  // --proto / --algo (NCCL_PROTO / NCCL_ALGO)
  int type_size_B = 4;
  std::string type_name = "float";  // nccl-tests' name, for the type column
  int jobs = 2;  // sizes simulated at once, each in a process of its own
  std::function<void(const SweepRow&)> on_row;  // each finished row, in size order, as it is known
};

struct SweepRow {
  double size_B = 0;
  double count = 0;
  double time_s = 0, algbw_Bps = 0, busbw_Bps = 0;
  collective::Algorithm algorithm = collective::Algorithm::ring;
  collective::Protocol protocol = collective::Protocol::simple;
  int channels = 0;
  std::size_t flows = 0;
  collective::LinkClass link_class = collective::LinkClass::pcie;
  int steps = 0, hop_steps = 0;
  double bandwidth_Bps = 0, bottleneck_bytes = 0, latency_s = 0, processing_s = 0, pipeline_s = 0, channel_rate_s = 0;  // the plan's model terms
  std::string bound_by;  // CollectivePlanner::bound_by() of the plan's flows; "" without flows (CSV "-")
};

// nccl-tests' element types (its -d names) and their sizes in bytes; 0 for a name it does
// not have. The type sets only the element size: composim does not model the reduction's
// arithmetic, which nccl-tests' own figures show is not what limits a collective.
inline constexpr std::string_view kNcclTestsTypes[] = {"int8", "uint8", "int32", "uint32", "int64", "uint64",
                                                       "half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2"};
std::string nccl_tests_type_list();  // "int8, uint8, ..."
int nccl_tests_type_size_B(std::string_view name);

// Runs the sweep. Must be called once per process, with the SimGrid engine created and
// configured (sim/platform.hpp) and no platform built yet: each size is simulated in a
// forked child of this process, which builds the platform it needs (o.jobs at once).
// Throws InputError for bad input and std::runtime_error when a size's simulation fails.
std::vector<SweepRow> run_sweep(const topo::Topology& t, const SweepOptions& o);

// How many of a sweep's sizes to simulate at once, given the first size's child (run alone):
// its peak resident memory `first_peak_B` (bytes) with `first_flows` flows, scaled to the
// size with the most flows `most_flows`, needs 1.25 x that each within `available_B` (the
// machine's and the cgroup's memory left). `wanted` (o.jobs, at most the sizes) when either
// memory figure is unknown (0); between 1 and `wanted` otherwise.
size_t sweep_jobs_for_memory(double available_B, double first_peak_B, size_t first_flows, size_t most_flows, size_t wanted);

// Why a size's child failed, as the error says it: `status` as waitpid() gives it, `said`
// what the child wrote back (its error message). Sets `out_of_memory` when the child ran
// out of memory (its exit status 6) or was killed by SIGKILL (the kernel's out-of-memory
// killer, most likely), which composim reports as a resource error, not a bug.
std::string describe_size_failure(double size_B, int status, const std::string& said, bool& out_of_memory);

// Per-rank input bytes of a collective whose nccl-tests size is `size_B`.
double per_rank_input_B(collective::Kind kind, double size_B, int n);

// "8", "64K", "1M", "1G" (powers of 1024, as nccl-tests reads -b/-e); throws
// std::invalid_argument.
double parse_nccl_size(const std::string& text);

// min:max stepped by factor (nccl-tests -b -e -f). Throws std::invalid_argument.
std::vector<double> size_range(const std::string& spec, double factor);

// p2pBandwidthLatencyTest emulation: one `bytes` copy from src to dst GPU at a time (each
// pair alone, like the CUDA sample), over the topology's route (NVLink, PCIe, or staged
// through host memory when P2P is off). Returns the bandwidth of each copy, bytes/s.
// Same one-simulation-per-process rule as run_sweep().
std::vector<double> run_p2p(const topo::Topology& t, const std::vector<std::pair<int, int>>& pairs, double bytes);

// The table nccl-tests prints, and the same rows as CSV. Both record the model parameters
// a parameter file or option changed (registry's format_overridden_params()): the table in
// a "# model parameters set:" line under the title, the CSV in its last column, `params`.
std::string format_table(const SweepOptions& o, const std::vector<SweepRow>& rows, const std::string& title);
// The same table in pieces, to print rows as they come.
std::string format_table_header(const std::string& title);
std::string format_table_row(const SweepOptions& o, const SweepRow& row);
std::string format_table_footer(const std::vector<SweepRow>& rows);
std::string format_csv(const SweepOptions& o, const std::vector<SweepRow>& rows);

}  // namespace composim::sim
