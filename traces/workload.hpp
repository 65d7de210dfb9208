// File: traces/workload.hpp
//
// The workload IR: what one rank of a training job did, as composim replays it.
//
//   CPU threads  -> ordered CPU operations (CUDA runtime/driver calls). The time between
//                   two calls on a thread (the gap) is CPU work replayed as measured.
//   streams      -> ordered GPU operations (kernel, memcpy, memset, collective kernel).
//   edges        -> launch (CPU op -> the GPU op it enqueues), stream order (implicit in
//                   each stream's order), event waits (GPU op -> GPU ops on other streams it
//                   must follow: cudaEventRecord + cudaStreamWaitEvent), synchronisation
//                   (a blocking CPU op -> the GPU ops it waits for: stream/device/event
//                   synchronize, blocking memcpy).
//   collectives  -> kind, bytes per rank, dtype, communicator, sequence number within the
//                   communicator (how ranks are matched).
//   iterations   -> ProfilerStep#N marks with their measured duration.
//
// Times are integer nanoseconds from the start of the trace. Indices are into the vectors
// of the same Workload. `composim import TRACE --out FILE` writes it as JSON
// (workload_json.hpp), which `composim run --trace` also reads.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/collective.hpp"

namespace composim::trace {

enum class GpuOpKind : std::uint8_t { kernel, memcpy, memset, collective };
enum class CopyKind : std::uint8_t { none, htod, dtoh, dtod, ptop, htoh };
enum class P2pRole : std::uint8_t { none, send, recv };

std::string_view to_string(GpuOpKind k);
std::string_view to_string(CopyKind k);
std::string_view to_string(P2pRole r);

// Ranks as messages and notes print them: "0, 1, 2", the first `max_shown` then
// ", ... (N ranks)".
std::string rank_list_text(const std::vector<int>& ranks, std::size_t max_shown = SIZE_MAX);

struct CpuOp {
  std::uint32_t name = 0;         // index into Workload::names
  std::int64_t ts_ns = 0, dur_ns = 0;
  std::int32_t gpu_op = -1;       // GPU op this call enqueues, or -1
  bool blocking = false;          // the call waits for `waits` to finish before returning
  std::vector<std::int32_t> waits;  // GPU ops this call waits for (blocking calls only)
};

struct CpuThread {
  std::string id;  // "pid/tid" as in the trace
  std::vector<CpuOp> ops;
};

struct Stream {
  std::int64_t id = 0;  // CUDA stream id as in the trace
  int device = 0;
  std::vector<std::int32_t> ops;  // GPU ops in execution order
};

struct GpuOp {
  GpuOpKind kind = GpuOpKind::kernel;
  CopyKind copy = CopyKind::none;
  bool pageable = false;             // memcpy from/to pageable host memory
  std::uint32_t name = 0;
  std::int32_t stream = 0;           // index into Workload::streams
  std::int64_t ts_ns = 0, dur_ns = 0;
  std::uint64_t bytes = 0;           // memcpy / memset bytes
  std::int32_t launch_thread = -1;   // launching CPU op, or -1 if the trace has none
  std::int32_t launch_op = -1;
  std::vector<std::int32_t> waits;   // event waits: GPU ops on other streams to follow
  std::int32_t collective = -1;      // index into Workload::collectives
};

struct Communicator {
  std::string name;        // process group name ("0") or "world"
  std::vector<int> ranks;  // global ranks; empty means all ranks of the job
  bool ranks_guessed = false;  // the trace gives only the group's size: ranks are consecutive ones
  // Its collectives' seq are PyTorch's own numbers ("Seq" of record_param_comms, recorded
  // since March 2026, pytorch/pytorch#177148): the same on every rank for one collective, and they need not start at 0 (a
  // profiler window starts mid-job). Otherwise seq is the collective's order in this trace.
  bool seq_from_trace = false;
};

// One send or receive of a batched send/recv kernel: NCCL runs a group of them
// (torch.distributed.batch_isend_irecv, Megatron's pipeline stages) as one kernel, and
// PyTorch records each one's record_param_comms, peer and size before the kernel is
// launched, which names none (pytorch/pytorch#194693).
struct P2pPart {
  P2pRole role = P2pRole::send;
  int peer = -1;               // the other end's global rank
  std::uint64_t in_bytes = 0;  // 0: the trace does not say
};

struct Collective {
  collective::Kind kind = collective::Kind::unknown;
  std::string algorithm;                 // from the kernel name ("RING")
  collective::Protocol protocol = collective::Protocol::simple;
  bool protocol_from_trace = false;      // the name says which protocol ran (NCCL >= 2.19)
  std::uint64_t in_bytes = 0;            // per rank input bytes; 0 when the trace does not say
  std::string dtype;
  int group_size = 0;                    // ranks in the communicator (0: unknown)
  std::int32_t communicator = 0;         // index into Workload::communicators
  std::uint64_t seq = 0;                 // number within its communicator (Communicator::seq_from_trace: PyTorch's;
                                         // else its order on this rank; send/recv counted apart, always by order)
  std::int32_t gpu_op = -1;
  // A send or a receive ("Collective name" send / recv, kind send_recv): which, and the
  // global rank of its other end ("Dst Rank" / "Src Rank", PyTorch 2.4+). peer -1: not
  // given (a batched send/recv, or an older trace); then the traces cannot pair it.
  P2pRole p2p_role = P2pRole::none;
  int peer = -1;
  // A batched send/recv (kind send_recv, p2p_role none, peer -1): its sends and receives in
  // the order they were issued; in_bytes is their sum. Empty for every other kernel.
  std::vector<P2pPart> batch;
};

struct Iteration {
  std::string name;  // "ProfilerStep#4"
  std::int64_t ts_ns = 0, dur_ns = 0;
  std::int32_t thread = -1;  // thread carrying the mark
};

struct Workload {
  std::string source;        // file it was read from (named in errors)
  std::string origin;        // for an IR file: the trace it was imported from ("" otherwise)
  std::string format;        // "kineto", "kineto-legacy", "composim-ir"
  bool synthetic = false;    // the file says it was generated, not measured
  int rank = 0;
  bool rank_known = true;  // false: the trace does not give its rank (taken as 0)
  int world_size = 1;
  bool world_size_given = true;  // false: the trace does not give its world size (distributedInfo.world_size)
  bool world_size_from_groups = false;  // no distributedInfo: world_size is the collectives' largest group size
  std::vector<std::string> notes;       // what the importer left out or inferred, for the user (not in IR files)
  // Sends' and receives' record_param_comms of no kernel in the trace (a profiler window
  // ending inside a batch_isend_irecv, or kernels the profiler lost); named in a missing-send
  // error. Not in IR files.
  std::size_t p2p_records_without_kernel = 0;
  std::string gpu_model;
  std::int64_t base_ns = 0;  // absolute time of ts 0 in the source, ns (informational)
  std::vector<std::string> names;
  std::vector<CpuThread> threads;
  std::vector<Stream> streams;
  std::vector<GpuOp> gpu_ops;
  std::vector<Communicator> communicators;
  std::vector<Collective> collectives;
  std::vector<Iteration> iterations;

  std::size_t count(GpuOpKind k) const;
  // What is wrong with a send's or receive's peer (its own rank, outside the job, outside its
  // process group), as "is ...", or "" if nothing: check() and the importer say where.
  std::string peer_problem(const Collective& c) const { return peer_problem(c.p2p_role, c.peer, c.communicator); }
  std::string peer_problem(P2pRole role, int peer, std::int32_t communicator) const;
  std::size_t cpu_op_count() const;
  // Kernels including collective kernels (what profilers count as "kernel" events).
  std::size_t kernel_count() const { return count(GpuOpKind::kernel) + count(GpuOpKind::collective); }
  // Index of `s` in `names`, adding it if new.
  std::uint32_t intern(const std::string& s);
  // Checks what the replay relies on and an importer cannot guarantee by construction:
  // iterations in time order without overlap (a step's end is the next one's earliest
  // start), and at most one collective per (communicator, sequence number), the key ranks
  // are matched by. Throws InputError naming `source` and the place.
  void check() const;
  std::unordered_map<std::string, std::uint32_t> name_index;  // cache for intern()
};

}  // namespace composim::trace
