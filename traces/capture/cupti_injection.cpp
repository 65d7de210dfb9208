// composim's CUPTI tracer: an injection library (CUDA_INJECTION64_PATH, or LD_PRELOAD with
// COMPOSIM_CAPTURE_PRELOAD=1) that records a CUDA process with the CUPTI Activity API and
// writes one PyTorch-profiler-compatible trace per process at exit
// (capture_trace.hpp). Records: kernels (CONCURRENT_KERNEL), copies (MEMCPY), peer copies
// (MEMCPY2), memsets, runtime and driver API calls, synchronisation, NVTX ranges (MARKER;
// needs NVTX_INJECTION64_PATH pointing at libcupti, which `composim capture` sets) and
// device properties. Buffers are flushed at exit, on SIGUSR1 (by a helper thread, not in
// the signal handler), and by calling composim_capture_flush().
//
// Built only when the CUDA Toolkit with CUPTI is found.
#include <cupti.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "traces/capture/capture_trace.hpp"

namespace {

using namespace composim::capture;

constexpr size_t kBufferSize = 8 << 20;  // 8 MiB per CUPTI buffer
constexpr size_t kAlign = 8;

std::mutex g_mutex;
CaptureTrace* g_trace = nullptr;
std::atomic<bool> g_started{false};
std::atomic<int> g_flush_requests{0};

void warn(const char* what, CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  std::fprintf(stderr, "composim capture: %s failed: %s\n", what, s ? s : "?");
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  auto* raw = static_cast<uint8_t*>(std::aligned_alloc(kAlign, kBufferSize));
  *buffer = raw;
  *size = raw ? kBufferSize : 0;
  *max_records = 0;
}

MemoryKind memory_kind(uint8_t k) { return k <= 5 ? static_cast<MemoryKind>(k) : MemoryKind::unknown; }

std::string callback_name(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  const char* name = nullptr;
  if (cuptiGetCallbackName(domain, cbid, &name) == CUPTI_SUCCESS && name) return name;
  return "cbid_" + std::to_string(cbid);
}

// The fields every GPU activity record shares (kernel, copy, memset).
template <class Record, class Activity>
Record gpu_record(const Activity* a) {
  Record r;
  r.device = a->deviceId;
  r.context = a->contextId;
  r.stream = a->streamId;
  r.correlation = a->correlationId;
  r.start_ns = a->start;
  r.end_ns = a->end;
  return r;
}

// Memcpy (MEMCPY) and peer copies (MEMCPY2) share all but the kind and the peer devices.
template <class Activity>
Memcpy copy_record(const Activity* m) {
  Memcpy r = gpu_record<Memcpy>(m);
  r.src = memory_kind(m->srcKind);
  r.dst = memory_kind(m->dstKind);
  r.bytes = m->bytes;
  return r;
}

void record(const CUpti_Activity* a) {
  switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(a);
      Kernel r = gpu_record<Kernel>(k);
      r.name = k->name ? k->name : "?";
      r.grid[0] = k->gridX, r.grid[1] = k->gridY, r.grid[2] = k->gridZ;
      r.block[0] = k->blockX, r.block[1] = k->blockY, r.block[2] = k->blockZ;
      r.registers_per_thread = k->registersPerThread;
      r.shared_memory_B = k->staticSharedMemory + k->dynamicSharedMemory;
      g_trace->add(r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(a);
      Memcpy r = copy_record(m);
      r.copy = static_cast<CopyKind>(m->copyKind <= 10 ? m->copyKind : 0);
      g_trace->add(r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(a);
      Memcpy r = copy_record(m);
      r.copy = CopyKind::ptop;
      r.src_device = static_cast<int>(m->srcDeviceId);
      r.dst_device = static_cast<int>(m->dstDeviceId);
      g_trace->add(r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(a);
      Memset r = gpu_record<Memset>(m);
      r.bytes = m->bytes;
      r.memory = memory_kind(static_cast<uint8_t>(m->memoryKind));
      g_trace->add(r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto* c = reinterpret_cast<const CUpti_ActivityAPI*>(a);
      ApiCall r;
      r.driver = a->kind == CUPTI_ACTIVITY_KIND_DRIVER;
      r.name = callback_name(r.driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, c->cbid);
      r.cbid = c->cbid;
      r.start_ns = c->start;
      r.end_ns = c->end;
      r.pid = c->processId;
      r.tid = c->threadId;
      r.correlation = c->correlationId;
      g_trace->add(r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* s = reinterpret_cast<const CUpti_ActivitySynchronization2*>(a);
      Sync r;
      r.kind = s->type <= 4 ? static_cast<SyncKind>(s->type) : SyncKind::unknown;
      r.start_ns = s->start;
      r.end_ns = s->end;
      r.correlation = s->correlationId;
      r.context = s->contextId;
      r.stream = s->streamId;
      r.event = s->cudaEventId;
      g_trace->add(r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMarker2*>(a);
      Marker r;
      r.id = m->id;
      r.start = (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) || (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS);
      r.end = (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) || (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS);
      r.ts_ns = m->timestamp;
      r.name = m->name ? m->name : "";
      r.domain = m->domain ? m->domain : "";
      if (m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || m->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS) {
        r.pid = m->objectId.pt.processId;
        r.tid = m->objectId.pt.threadId;
      }
      g_trace->add(r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      const auto* d = reinterpret_cast<const CUpti_ActivityDevice5*>(a);
      Device r;
      r.id = d->id;
      r.name = d->name ? d->name : "?";
      r.sms = d->numMultiprocessors;
      r.memory_B = d->globalMemorySize;
      r.cc_major = d->computeCapabilityMajor;
      r.cc_minor = d->computeCapabilityMinor;
      g_trace->add(r);
      break;
    }
    default: break;
  }
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    CUpti_Activity* a = nullptr;
    while (valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &a) == CUPTI_SUCCESS) record(a);
  }
  std::free(buffer);
}

long process_id() { return static_cast<long>(getpid()); }

void write_trace() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> lock(g_mutex);
  const char* dir = std::getenv("COMPOSIM_CAPTURE_DIR");
  const Environment env = environment_from([](const char* n) { return std::getenv(n); });
  const std::string path = output_file(dir && *dir ? dir : ".", env, process_id());
  if (g_trace->gpu_activity_count() == 0) {
    std::fprintf(stderr, "composim capture: process %ld recorded no GPU activity; no trace written\n", process_id());
    return;
  }
  if (!g_trace->write(path, env, process_id()))
    std::fprintf(stderr, "composim capture: cannot write %s\n", path.c_str());
  else
    std::fprintf(stderr, "composim capture: wrote %s\n", path.c_str());
}

void on_sigusr1(int) { g_flush_requests.fetch_add(1); }

void flush_thread() {
  int seen = 0;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const int now = g_flush_requests.load();
    if (now != seen) {
      seen = now;
      cuptiActivityFlushAll(0);
    }
  }
}

}  // namespace

extern "C" {

// Flushes CUPTI's buffers into the trace now (the file is still written at exit).
void composim_capture_flush() { cuptiActivityFlushAll(0); }

// Entry point the CUDA driver calls for CUDA_INJECTION64_PATH.
int InitializeInjection(void) {
  if (g_started.exchange(true)) return 1;
  g_trace = new CaptureTrace();
  CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  if (r != CUPTI_SUCCESS) {
    warn("cuptiActivityRegisterCallbacks", r);
    return 0;
  }
  const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                      CUPTI_ACTIVITY_KIND_MEMCPY2,           CUPTI_ACTIVITY_KIND_MEMSET,
                                      CUPTI_ACTIVITY_KIND_RUNTIME,           CUPTI_ACTIVITY_KIND_DRIVER,
                                      CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,   CUPTI_ACTIVITY_KIND_MARKER,
                                      CUPTI_ACTIVITY_KIND_DEVICE};
  int enabled = 0;
  for (auto k : kinds) {
    r = cuptiActivityEnable(k);
    if (r == CUPTI_SUCCESS) ++enabled;
  }
  if (enabled == 0) {
    warn("cuptiActivityEnable (no CUDA driver or GPU?); nothing will be recorded:", r);
    return 0;
  }
  if (enabled < static_cast<int>(sizeof kinds / sizeof kinds[0]))
    std::fprintf(stderr, "composim capture: %d of %zu activity kinds could not be enabled\n",
                 static_cast<int>(sizeof kinds / sizeof kinds[0]) - enabled, sizeof kinds / sizeof kinds[0]);
  std::atexit(write_trace);
  signal(SIGUSR1, on_sigusr1);
  std::thread(flush_thread).detach();
  return 1;
}

}  // extern "C"

// LD_PRELOAD fallback: initialise when loaded, if the launcher asked for it.
__attribute__((constructor)) static void composim_capture_preload() {
  const char* p = std::getenv("COMPOSIM_CAPTURE_PRELOAD");
  if (p && std::strcmp(p, "1") == 0) InitializeInjection();
}
