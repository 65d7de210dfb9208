#include "models/host.hpp"

namespace composim::host {

ModelInfo host_model_info() {
  return {"host",
          "CPU socket: root complex latency, host memory as a shared link, socket-to-socket interconnect",
          "copy to/from host memory: route latency += root_complex_latency; memory link shared by reads and writes",
          {{"root_complex_latency_s", "s", kRootComplexLatency_s, "latency through a CPU root port",
            "community measurement (voipmonitor/rtx6kpro topology.md): 1-2 us vs ~0.1 us via a switch"},
           {"memory_bandwidth_Bps", "B/s", kMemoryBandwidth_Bps, "host memory bandwidth of one socket",
            "6 x DDR4-2666 channels (JEDEC speed bins)"},
           {"cpu_interconnect_latency_s", "s", kCpuInterconnectLatency_s, "latency of a socket-to-socket hop",
            "assumption: no public figure; order of a switch traversal"}}};
}

}  // namespace composim::host
