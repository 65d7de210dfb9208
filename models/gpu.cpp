#include "models/gpu.hpp"

#include <algorithm>
#include <cctype>

namespace composim::gpu {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// Key (lower case) -> spec. Order matters: more specific keys first.
// Sources: NVIDIA V100/A100/H100/H200/B200 datasheets (host link, HBM) as tabulated in
// hardware.md; P2P: GeForce cards (2080 Ti, 4090) have PCIe P2P disabled by the driver
// (NVIDIA/nccl issues #814 and #1309); compute capability: CUDA C Programming Guide, table of
// compute capabilities. NVLink generation and links: hardware.md (V100 2 x 6, A100 3 x 12,
// H100/H200 4 x 18, B200 5 x 18); RTX 2080 Ti 2 x 2 and RTX A6000 3 x 4 (their NVLink
// bridges, product pages); RTX 4090 and T4 have none. GA102 (RTX A6000) runs its four x4
// NVLink3 links at 14.0625 GB/s each per direction, 112.5 GB/s both ways in all (NVIDIA
// Ampere GA102 GPU architecture whitepaper; RTX A6000 datasheet: NVLink 112.5 GB/s), not
// A100's 25.
struct Entry {
  const char* key;
  GpuSpec spec;
};
const Entry kTable[] = {
    {"v100-pcie", {"V100", 3, true, 900e9, 70, 0, 0}},  // the PCIe card has no NVLink
    {"v100 pcie", {"V100", 3, true, 900e9, 70, 0, 0}},
    {"v100", {"V100", 3, true, 900e9, 70, 2, 6}},
    {"a100", {"A100", 4, true, 1555e9, 80, 3, 12}},
    {"h100", {"H100", 5, true, 3350e9, 90, 4, 18}},
    {"h200", {"H200", 5, true, 4800e9, 90, 4, 18}},
    {"b200", {"B200", 6, true, 8000e9, 100, 5, 18}},
    {"2080 ti", {"RTX 2080 Ti", 3, false, 616e9, 75, 2, 2}},
    {"4090", {"RTX 4090", 4, false, 1008e9, 89, 0, 0}},
    {"t4", {"T4", 3, true, 320e9, 75, 0, 0}},
    {"a6000", {"RTX A6000", 4, true, 768e9, 86, 3, 4, 14.0625e9}},
};

}  // namespace

GpuSpec find_gpu_spec(std::string_view model_name, bool* known) {
  const std::string l = lower(model_name);
  for (const auto& e : kTable) {
    if (l.find(e.key) != std::string::npos) {
      if (known) *known = true;
      return e.spec;
    }
  }
  if (known) *known = false;
  return {std::string(model_name), 4, true, 1000e9, 80, 0, 0};
}

std::string known_gpu_models() {
  std::string out;
  for (const auto& e : kTable)
    if ((", " + out + ",").find(", " + e.spec.name + ",") == std::string::npos) out += (out.empty() ? "" : ", ") + e.spec.name;
  return out;
}

ModelInfo gpu_model_info() {
  return {"gpu",
          "GPU: kernels replay at measured duration; operations become eligible after the launch latency",
          "start = max(launch_return + launch_latency, stream free, awaited events); end = start + measured duration; "
          "a launch returns no earlier than the end of the stream's operation launch_queue_depth before it",
          {{"launch_latency_s", "s", kLaunchLatency_s, "launch-call return to kernel start on an idle stream",
            "measured in the shared traces: 1.75 us A100, 2.26 us V100"},
           {"duration_scale", "1", 1.0, "multiplier on measured kernel durations", "identity: replay on the measured GPU"},
           {"launch_queue_depth", "operations", static_cast<double>(kLaunchQueueDepth),
            "operations a stream holds launched but unfinished; a further launch on it waits for the oldest to end",
            "measured, about 1000 kernels per stream: NVIDIA developer forums (2018) and Stack Overflow 53970187"}}};
}

}  // namespace composim::gpu
