#include "models/host.hpp"

namespace composim::host {

double staged_copy_Bps(double bottleneck_Bps) { return 1.0 / (1.0 / bottleneck_Bps + 1.0 / param("host.staged_copy_handoff_Bps")); }

ModelInfo host_model_info() {
  return {"host",
          "CPU socket: root complex latency, host memory as a shared link, socket-to-socket interconnect, driver-staged copies",
          "copy to/from host memory: route latency += root_complex_latency; memory link shared by reads and writes; staged GPU-to-GPU "
          "copy rate = 1 / (1 / bottleneck + 1 / staged_copy_handoff)",
          {{"root_complex_latency_s", "s", kRootComplexLatency_s, "latency through a CPU root port",
            "community measurement (voipmonitor/rtx6kpro topology.md): 1-2 us vs ~0.1 us via a switch"},
           {"memory_bandwidth_Bps", "B/s", kMemoryBandwidth_Bps, "host memory bandwidth of one socket",
            "6 x DDR4-2666 channels (JEDEC speed bins)"},
           {"cpu_interconnect_latency_s", "s", kCpuInterconnectLatency_s, "latency of a socket-to-socket hop",
            "assumption: no public figure; order of a switch traversal"},
           {"staged_copy_handoff_Bps", "B/s", kStagedCopyHandoff_Bps,
            "a driver-staged GPU-to-GPU copy (cudaMemcpyPeer without P2P) runs at 1 / (1 / link bottleneck + 1 / this)",
            "fitted: 8 x H100 SXM, P2P disabled, 37.1 GB/s on 52.6 GB/s of Gen5 links (NVIDIA/nccl #1264); held out: 6 x RTX 4090, Gen4 "
            "(#814), 21.8 predicted, 20.1-22.4 measured", ParamSetting::rate}}};
}

}  // namespace composim::host
