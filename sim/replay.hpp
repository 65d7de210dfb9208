// File: sim/replay.hpp
//
// The replay engine: runs the workload graph of every rank on a SimGrid platform and
// records when each operation started and ended.
//
// Semantics (see README "How a replay works"):
//   * CPU operations of a thread run in trace order; each starts `gap` after the previous
//     one ended (the measured CPU time between them) and lasts its measured duration.
//   * A launch makes its GPU operation eligible launch_latency_s after the call returns.
//   * A launch call returns no earlier than the end of its stream's operation
//     gpu::kLaunchQueueDepth before the one it launches (CUDA's launch queue).
//   * A GPU operation starts when its stream is free, it is eligible, and the events it
//     waits for have completed; kernels, memsets and device-local copies last their
//     measured duration; host<->device copies move their bytes over the topology as
//     SimGrid flows (so they contend for shared switch uplinks).
//   * A blocking call (synchronize, blocking memcpy) returns when the awaited GPU work has
//     ended (plus the measured return latency), or after its own duration if it never
//     waited in the measurement.
//   * A collective kernel starts moving data when every member rank has reached it; its
//     ring flows run on the topology, then all members end together after NCCL's latency.
//   * A send whose trace names its peer pairs with the peer's receive (the k-th from a to b
//     on a process group with the k-th b receives from a): one flow from a's GPU to b's
//     once both have launched. Other sends and receives last their measured duration.
//
// SimGrid is the event engine: fixed durations are SimGrid kernel timers and data
// movement is SimGrid communications; this file only tracks dependencies.
//
// Errors: Replay's constructor throws InputError for inconsistent inputs (more ranks than
// GPUs, a collective some rank never reaches, mismatched collective sizes, a send without
// its receive or of another size); run() throws
// InputError if the simulation stops with operations that never ran (a deadlock), naming
// the collectives and ranks involved.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sim/platform.hpp"
#include "traces/workload.hpp"

namespace composim::sim {

struct ReplayOptions {
  int ranks = 0;                    // 0: the traces' world size (single trace) or trace count
  std::vector<int> placement;       // GPU node per rank; empty: the topology's GPUs in order
  double launch_latency_s = -1;     // < 0: the GPU model's default
  // Process groups (by name) that are data-parallel: scaled to another rank count, they
  // grow with it as the whole job's collectives do (a group evenly strided over the job,
  // as data parallelism across tensor-parallel ranks is: [0, 2] of 4 becomes [0, 2, 4, 6]
  // of 8). Others keep their size.
  std::vector<std::string> dp_groups;
};

// Start and end, seconds of simulated time, of every operation of one rank. The views
// point into start_s_ and end_s_, the simulation's own arrays moved here rather than
// copied (a copy was a fifth of a large replay's time), so a RankTimes can be moved but
// not copied.
struct RankTimes {
  int rank = 0;
  int workload = 0;            // index of the workload this rank replays
  int gpu_node = -1;           // topology node
  std::vector<std::span<const double>> cpu_start, cpu_end;  // [thread][op]
  std::span<const double> gpu_start, gpu_end;               // [gpu op]

  RankTimes() = default;
  RankTimes(RankTimes&&) = default;
  RankTimes& operator=(RankTimes&&) = default;
  RankTimes(const RankTimes&) = delete;
  RankTimes& operator=(const RankTimes&) = delete;

  std::vector<double> start_s_, end_s_;  // storage of the views, indexed by graph node
};

// Bytes a link direction carried per time bin: bin k is [k, k + 1) x ReplayResult::link_bin_s.
struct LinkBins {
  int link, direction;
  std::vector<double> bytes;
};

struct ReplayResult {
  std::vector<RankTimes> ranks;
  double makespan_s = 0;
  std::uint64_t ops_simulated = 0;    // CPU + GPU operations over all ranks
  std::uint64_t flows = 0;            // SimGrid communications started
  std::uint64_t collectives = 0;      // collective instances completed
  std::uint64_t collectives_without_size = 0;  // replayed at measured duration
  std::uint64_t unequal_all_to_all = 0;        // all_to_allv: sizes differ across ranks, modelled at the largest
  std::uint64_t collectives_outside_window = 0;  // kernels outside another member's trace window (by "Seq"): at measured duration
  std::uint64_t p2p_at_measured_duration = 0;  // sends and receives not paired, each at its measured duration; of which:
  std::uint64_t p2p_without_peer = 0;          //   the trace does not name the peer
  std::uint64_t p2p_peer_without_trace = 0;    //   the peer's trace was not given
  std::uint64_t p2p_replicated = 0;            //   of a replicated trace (its peers are the capture's ranks)
  std::uint64_t p2p_peer_batched = 0;          //   of a rank pair whose counts differ where the short side's batched ones may be the missing ones
  std::uint64_t p2p_paired = 0;                // sends paired with their receives (each a flow between the two GPUs)
  std::uint64_t p2p_paired_without_size = 0;   //   of which of no size in the traces: at the shorter measured duration
  std::uint64_t p2p_batches_paired = 0;        // batched send/recv kernels (batch_isend_irecv) whose parts were paired (among p2p_paired)
  std::uint64_t p2p_parts_left_out = 0;        //   their parts not paired (the peer's trace not given, or unpairable): not modelled
  std::vector<std::string> notes;              // what the replay assumed (e.g. a group layout it could not copy)
  // Bytes carried by each topology link: [link][0] from -> to, [link][1] to -> from.
  std::vector<std::array<double, 2>> link_bytes;
  double link_bin_s = 0;              // width of the bins of link_bins (at most 100 cover the run)
  std::vector<LinkBins> link_bins;    // link directions that carried traffic, in link order
};

class Replay {
 public:
  // `workloads`: one per trace. With one workload, it is replicated to `ranks` ranks; with
  // several, each is one rank (ordered by its recorded rank).
  Replay(const topo::Topology& topology, std::vector<trace::Workload> workloads, ReplayOptions options);
  ~Replay();

  ReplayResult run();

  const std::vector<trace::Workload>& workloads() const;
  int rank_count() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace composim::sim
