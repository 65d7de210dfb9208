#include "traces/capture/capture_trace.hpp"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <regex>
#include <unordered_map>

namespace composim::capture {

using nlohmann::json;

namespace {

bool parse_int(const char* s, int* out) {
  if (!s || !*s) return false;
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (*end != '\0' || v < 0 || v > 1 << 30) return false;
  *out = static_cast<int>(v);
  return true;
}

int first_of(const std::function<const char*(const char*)>& getenv, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    int v = -1;
    if (parse_int(getenv(n), &v)) return v;
  }
  return -1;
}

double us(std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; }

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel" (CUPTI adds the API version; PyTorch does not).
std::string api_name(const std::string& n) {
  static const std::regex suffix("_v[0-9]+$");
  return std::regex_replace(n, suffix, "");
}

const char* copy_name(CopyKind k) {
  switch (k) {
    case CopyKind::htod: return "HtoD";
    case CopyKind::dtoh: return "DtoH";
    case CopyKind::htoa: return "HtoA";
    case CopyKind::atoh: return "AtoH";
    case CopyKind::atoa: return "AtoA";
    case CopyKind::atod: return "AtoD";
    case CopyKind::dtoa: return "DtoA";
    case CopyKind::dtod: return "DtoD";
    case CopyKind::htoh: return "HtoH";
    case CopyKind::ptop: return "PtoP";
    case CopyKind::unknown: break;
  }
  return "Unknown";
}

const char* memory_name(MemoryKind k) {
  switch (k) {
    case MemoryKind::pageable: return "Pageable";
    case MemoryKind::pinned: return "Pinned";
    case MemoryKind::device: return "Device";
    case MemoryKind::array: return "Array";
    case MemoryKind::managed: return "Managed";
    case MemoryKind::unknown: break;
  }
  return "Unknown";
}

const char* sync_name(SyncKind k) {
  switch (k) {
    case SyncKind::event_synchronize: return "Event Sync";
    case SyncKind::stream_wait_event: return "Stream Wait Event";
    case SyncKind::stream_synchronize: return "Stream Sync";
    case SyncKind::context_synchronize: return "Context Sync";
    case SyncKind::unknown: break;
  }
  return "Unknown Sync";
}

// NVTX range names that mark iterations become the profiler's step names.
std::string step_name(const std::string& n) {
  static const std::regex step("^(?:step|iteration|iter)[ #_:]*([0-9]+)$", std::regex::icase);
  std::smatch m;
  if (std::regex_match(n, m, step)) return "ProfilerStep#" + m[1].str();
  return n;
}

}  // namespace

Environment environment_from(const std::function<const char*(const char*)>& getenv) {
  Environment e;
  e.rank = first_of(getenv, {"RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK"});
  e.local_rank = first_of(getenv, {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"});
  e.world_size = first_of(getenv, {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS", "PMI_SIZE"});
  return e;
}

std::string output_file(const std::string& dir, const Environment& env, long pid) {
  const std::string base = env.rank >= 0 ? "rank" + std::to_string(env.rank) + "." + std::to_string(pid) : "proc." + std::to_string(pid);
  return dir + "/" + base + ".pt.trace.json.gz";
}

std::map<std::string, std::string> launcher_environment(const std::string& out_dir, const std::string& injection_lib,
                                                        const std::string& cupti_lib, bool preload,
                                                        const std::string& current_ld_preload) {
  std::map<std::string, std::string> env;
  env["COMPOSIM_CAPTURE_DIR"] = out_dir;
  env["CUDA_INJECTION64_PATH"] = injection_lib;
  if (!cupti_lib.empty()) env["NVTX_INJECTION64_PATH"] = cupti_lib;
  if (preload) {
    env["LD_PRELOAD"] = current_ld_preload.empty() ? injection_lib : injection_lib + ":" + current_ld_preload;
    env["COMPOSIM_CAPTURE_PRELOAD"] = "1";
  }
  return env;
}

std::string CaptureTrace::to_kineto_json(const Environment& env, long pid) const {
  json events = json::array();
  std::unordered_map<std::uint32_t, const ApiCall*> call_by_corr;
  for (const auto& c : calls_) call_by_corr[c.correlation] = &c;
  std::unordered_map<std::uint32_t, std::uint32_t> device_of_context;
  for (const auto& k : kernels_) device_of_context[k.context] = k.device;

  // NVTX ranges: pair start and end records by id.
  struct Range {
    std::string name;
    std::uint64_t start, end;
    std::uint32_t pid, tid;
  };
  std::vector<Range> ranges;
  {
    std::unordered_map<std::uint32_t, const Marker*> open;
    for (const auto& m : markers_) {
      if (m.start && m.end) {
        ranges.push_back({m.name, m.ts_ns, m.ts_ns, m.pid, m.tid});
      } else if (m.start) {
        open[m.id] = &m;
      } else if (m.end) {
        if (auto it = open.find(m.id); it != open.end()) {
          ranges.push_back({it->second->name, it->second->ts_ns, m.ts_ns, it->second->pid, it->second->tid});
          open.erase(it);
        }
      }
    }
  }

  auto flow = [&](std::uint32_t corr, std::uint32_t device, std::uint32_t stream, std::uint64_t start) {
    auto it = call_by_corr.find(corr);
    if (it == call_by_corr.end()) return;
    const ApiCall& c = *it->second;
    events.push_back({{"ph", "s"}, {"id", corr}, {"pid", c.pid}, {"tid", c.tid}, {"ts", us(c.start_ns)}, {"cat", "ac2g"}, {"name", "ac2g"}});
    events.push_back({{"ph", "f"}, {"id", corr}, {"pid", device}, {"tid", stream}, {"ts", us(start)}, {"cat", "ac2g"}, {"name", "ac2g"}, {"bp", "e"}});
  };

  for (const auto& c : calls_)
    events.push_back({{"ph", "X"}, {"cat", c.driver ? "cuda_driver" : "cuda_runtime"}, {"name", api_name(c.name)}, {"pid", c.pid}, {"tid", c.tid},
                      {"ts", us(c.start_ns)}, {"dur", us(c.end_ns - c.start_ns)}, {"args", {{"cbid", c.cbid}, {"correlation", c.correlation}}}});
  for (const auto& k : kernels_) {
    json args = {{"device", k.device},
                 {"context", k.context},
                 {"stream", k.stream},
                 {"correlation", k.correlation},
                 {"registers per thread", k.registers_per_thread},
                 {"shared memory", k.shared_memory_B},
                 {"grid", {k.grid[0], k.grid[1], k.grid[2]}},
                 {"block", {k.block[0], k.block[1], k.block[2]}}};
    // NCCL kernels: NCCL's own NVTX range around the launch names the collective.
    if (k.name.rfind("nccl", 0) == 0) {
      if (auto it = call_by_corr.find(k.correlation); it != call_by_corr.end()) {
        const ApiCall& c = *it->second;
        for (const auto& r : ranges)
          if (r.tid == c.tid && r.start <= c.start_ns && c.start_ns <= r.end && r.name.rfind("nccl", 0) == 0) {
            std::string coll = r.name.substr(4);
            std::transform(coll.begin(), coll.end(), coll.begin(), [](unsigned char ch) { return std::tolower(ch); });
            args["Collective name"] = coll;
          }
      }
    }
    events.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", k.name}, {"pid", k.device}, {"tid", k.stream},
                      {"ts", us(k.start_ns)}, {"dur", us(k.end_ns - k.start_ns)}, {"args", std::move(args)}});
    flow(k.correlation, k.device, k.stream, k.start_ns);
  }
  for (const auto& m : copies_) {
    char name[96];
    std::snprintf(name, sizeof name, "Memcpy %s (%s -> %s)", copy_name(m.copy), memory_name(m.src), memory_name(m.dst));
    const double dur = us(m.end_ns - m.start_ns);
    json args = {{"device", m.device}, {"context", m.context}, {"stream", m.stream}, {"correlation", m.correlation}, {"bytes", m.bytes},
                 {"memory bandwidth (GB/s)", dur > 0 ? m.bytes / (dur * 1e3) : 0.0}};
    if (m.src_device >= 0) args["src device"] = m.src_device;
    if (m.dst_device >= 0) args["dst device"] = m.dst_device;
    events.push_back({{"ph", "X"}, {"cat", "gpu_memcpy"}, {"name", name}, {"pid", m.device}, {"tid", m.stream}, {"ts", us(m.start_ns)},
                      {"dur", dur}, {"args", std::move(args)}});
    flow(m.correlation, m.device, m.stream, m.start_ns);
  }
  for (const auto& m : memsets_) {
    const std::string name = std::string("Memset (") + memory_name(m.memory) + ")";
    events.push_back({{"ph", "X"}, {"cat", "gpu_memset"}, {"name", name}, {"pid", m.device}, {"tid", m.stream}, {"ts", us(m.start_ns)},
                      {"dur", us(m.end_ns - m.start_ns)},
                      {"args", {{"device", m.device}, {"context", m.context}, {"stream", m.stream}, {"correlation", m.correlation}, {"bytes", m.bytes}}}});
    flow(m.correlation, m.device, m.stream, m.start_ns);
  }
  for (const auto& s : syncs_) {
    const auto dev = device_of_context.count(s.context) ? device_of_context[s.context] : 0u;
    json args = {{"cuda_sync_kind", sync_name(s.kind)}, {"device", dev}, {"context", s.context}, {"correlation", s.correlation}};
    if (s.stream != 0xffffffffu) args["stream"] = s.stream;
    if (s.event != 0xffffffffu) args["cuda_event_id"] = s.event;
    events.push_back({{"ph", "X"}, {"cat", "cuda_sync"}, {"name", sync_name(s.kind)}, {"pid", dev}, {"tid", s.stream},
                      {"ts", us(s.start_ns)}, {"dur", us(s.end_ns - s.start_ns)}, {"args", std::move(args)}});
  }
  for (const auto& r : ranges)
    events.push_back({{"ph", "X"}, {"cat", "user_annotation"}, {"name", step_name(r.name)}, {"pid", r.pid ? r.pid : static_cast<std::uint32_t>(pid)},
                      {"tid", r.tid}, {"ts", us(r.start)}, {"dur", us(r.end - r.start)}, {"args", json::object()}});

  json doc;
  doc["schemaVersion"] = 1;
  doc["traceName"] = "composim capture";
  doc["composim_capture"] = 1;
  json devices = json::array();
  for (const auto& d : devices_)
    devices.push_back({{"id", d.id}, {"name", d.name}, {"totalGlobalMem", d.memory_B}, {"computeMajor", d.cc_major},
                       {"computeMinor", d.cc_minor}, {"numSms", d.sms}});
  doc["deviceProperties"] = std::move(devices);
  if (env.rank >= 0) {
    doc["distributedInfo"] = {{"backend", "nccl"}, {"rank", env.rank}, {"world_size", env.world_size > 0 ? env.world_size : env.rank + 1}};
    if (env.local_rank >= 0) doc["distributedInfo"]["local_rank"] = env.local_rank;
  }
  doc["displayTimeUnit"] = "ms";
  doc["traceEvents"] = std::move(events);
  return doc.dump();
}

bool CaptureTrace::write(const std::string& path, const Environment& env, long pid) const {
  const std::string text = to_kineto_json(env, pid);
  const std::string tmp = path + ".tmp";
  gzFile f = gzopen(tmp.c_str(), "wb");
  if (!f) return false;
  const bool ok = gzwrite(f, text.data(), static_cast<unsigned>(text.size())) == static_cast<int>(text.size());
  if (gzclose(f) != Z_OK || !ok) {
    std::remove(tmp.c_str());
    return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace composim::capture
