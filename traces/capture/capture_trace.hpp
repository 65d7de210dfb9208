// File: traces/capture/capture_trace.hpp
//
// The CPU-only half of `composim capture`: what the CUPTI injection library records, as
// plain structs (one per CUPTI activity kind it enables), and their conversion into a
// PyTorch-profiler-compatible Chrome trace that `composim run --trace` replays and
// Perfetto opens. Keeping this free of CUDA lets it build and be tested on machines
// without a GPU or the CUDA Toolkit; cupti_injection.cpp fills these structs from
// CUpti_Activity* records.
//
// Output (Kineto schema, as traces/kineto.hpp reads it): "kernel", "gpu_memcpy",
// "gpu_memset" on pid = device, tid = stream; "cuda_runtime" / "cuda_driver" on the
// calling process and thread; "cuda_sync" for synchronisation; "ac2g" flows from each call
// to the GPU work it launched (by correlation id); NVTX ranges as "user_annotation"
// (iteration ranges named "step N", "iteration N" or "iter N" become "ProfilerStep#N");
// "deviceProperties"; and "distributedInfo" when the launcher's environment names a rank.
// Times: CUPTI nanoseconds, written as microseconds with 3 decimals.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace composim::capture {

// CUPTI's CUpti_ActivityMemcpyKind values (cupti_activity.h).
enum class CopyKind : std::uint8_t { unknown = 0, htod = 1, dtoh = 2, htoa = 3, atoh = 4, atoa = 5, atod = 6, dtoa = 7, dtod = 8, htoh = 9, ptop = 10 };
// CUPTI's CUpti_ActivityMemoryKind values.
enum class MemoryKind : std::uint8_t { unknown = 0, pageable = 1, pinned = 2, device = 3, array = 4, managed = 5 };
// CUPTI's CUpti_ActivitySynchronizationType values.
enum class SyncKind : std::uint8_t { unknown = 0, event_synchronize = 1, stream_wait_event = 2, stream_synchronize = 3, context_synchronize = 4 };

struct ApiCall {
  bool driver = false;  // cuda_driver vs cuda_runtime
  std::string name;     // as CUPTI names it, e.g. "cudaLaunchKernel_v7000" (suffix is dropped)
  std::uint32_t cbid = 0;
  std::uint64_t start_ns = 0, end_ns = 0;
  std::uint32_t pid = 0, tid = 0, correlation = 0;
};

struct Kernel {
  std::string name;
  std::uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  std::uint64_t start_ns = 0, end_ns = 0;
  int grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  std::uint32_t registers_per_thread = 0;
  std::int32_t shared_memory_B = 0;
};

struct Memcpy {
  CopyKind copy = CopyKind::unknown;
  MemoryKind src = MemoryKind::unknown, dst = MemoryKind::unknown;
  std::uint64_t bytes = 0;
  std::uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  std::uint64_t start_ns = 0, end_ns = 0;
  int src_device = -1, dst_device = -1;  // peer-to-peer copies (CUPTI MEMCPY2)
};

struct Memset {
  std::uint64_t bytes = 0;
  MemoryKind memory = MemoryKind::device;
  std::uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  std::uint64_t start_ns = 0, end_ns = 0;
};

struct Sync {
  SyncKind kind = SyncKind::unknown;
  std::uint64_t start_ns = 0, end_ns = 0;
  std::uint32_t correlation = 0, context = 0, stream = 0, event = 0;
};

// One NVTX marker record: a range start (with its name), a range end (same id) or an
// instant mark (start and end set).
struct Marker {
  std::uint32_t id = 0;
  bool start = false, end = false;
  std::uint64_t ts_ns = 0;
  std::string name, domain;
  std::uint32_t pid = 0, tid = 0;
};

struct Device {
  std::uint32_t id = 0;
  std::string name;
  std::uint32_t sms = 0;
  std::uint64_t memory_B = 0;
  std::uint32_t cc_major = 0, cc_minor = 0;
};

// Rank and world size as the usual launchers set them.
struct Environment {
  int rank = -1, local_rank = -1, world_size = -1;
};

// environment_from()
//
// Reads RANK, then OMPI_COMM_WORLD_RANK, SLURM_PROCID, PMI_RANK; LOCAL_RANK,
// OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID; WORLD_SIZE, OMPI_COMM_WORLD_SIZE, SLURM_NTASKS,
// PMI_SIZE. `getenv` is injectable for tests. Values that are not whole numbers are ignored.
Environment environment_from(const std::function<const char*(const char*)>& getenv);

// Output file of one process: DIR/rank<R>.<pid>.pt.trace.json.gz (or
// DIR/proc.<pid>.pt.trace.json.gz without a rank), the naming of the PyTorch profiler.
std::string output_file(const std::string& dir, const Environment& env, long pid);

// launcher_environment()
//
// Variables `composim capture` sets for the child: CUDA_INJECTION64_PATH (the injection
// library), NVTX_INJECTION64_PATH (CUPTI, so NVTX ranges are recorded), COMPOSIM_CAPTURE_DIR;
// with `preload`, LD_PRELOAD gets the library prepended to `current_ld_preload` and
// COMPOSIM_CAPTURE_PRELOAD=1 (for programs that do not honour the injection variable).
std::map<std::string, std::string> launcher_environment(const std::string& out_dir, const std::string& injection_lib,
                                                        const std::string& cupti_lib, bool preload,
                                                        const std::string& current_ld_preload);

class CaptureTrace {
 public:
  void add(const ApiCall& r) { calls_.push_back(r); }
  void add(const Kernel& r) { kernels_.push_back(r); }
  void add(const Memcpy& r) { copies_.push_back(r); }
  void add(const Memset& r) { memsets_.push_back(r); }
  void add(const Sync& r) { syncs_.push_back(r); }
  void add(const Marker& r) { markers_.push_back(r); }
  void add(const Device& r) { devices_.push_back(r); }
  std::size_t gpu_activity_count() const { return kernels_.size() + copies_.size() + memsets_.size(); }

  // The Chrome trace document. `pid` is the process id for events without one.
  std::string to_kineto_json(const Environment& env, long pid) const;
  // Writes it gzip-compressed to `path` (via a temporary file renamed into place).
  // Returns false on an I/O error.
  bool write(const std::string& path, const Environment& env, long pid) const;

 private:
  std::vector<ApiCall> calls_;
  std::vector<Kernel> kernels_;
  std::vector<Memcpy> copies_;
  std::vector<Memset> memsets_;
  std::vector<Sync> syncs_;
  std::vector<Marker> markers_;
  std::vector<Device> devices_;
};

}  // namespace composim::capture
