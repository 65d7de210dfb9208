#include "models/nvlink.hpp"

#include <stdexcept>
#include <string>

namespace composim::nvlink {

double per_link_Bps(int generation) {
  switch (generation) {
    case 1: return 20e9;
    case 2: return 25e9;
    case 3: return 25e9;
    case 4: return 25e9;
    case 5: return 50e9;
    default: throw std::invalid_argument("NVLink generation " + std::to_string(generation) + " is not 1-5");
  }
}

double link_bandwidth_Bps(int generation, int links) {
  if (links < 1 || links > 18) throw std::invalid_argument("NVLink link count " + std::to_string(links) + " is not 1-18");
  return links * per_link_Bps(generation);
}

double payload_bandwidth_Bps(int generation, int links) {
  return link_bandwidth_Bps(generation, links) * param("nvlink.payload_efficiency_gen" + std::to_string(generation));
}

ModelInfo nvlink_model_info() {
  return {"nvlink",
          "NVLink bundle and NVSwitch: bandwidth from generation and link count",
          "bw = links * per_link(generation) * payload_efficiency; per link one direction: 20 (1), 25 (2,3,4), 50 (5) GB/s",
          {{"per_link_gen2_Bps", "B/s", 25e9, "NVLink2 (V100) per link, one direction", "NVIDIA Volta whitepaper"},
           {"per_link_gen3_Bps", "B/s", 25e9, "NVLink3 (A100) per link, one direction", "NVIDIA Ampere whitepaper"},
           {"per_link_gen4_Bps", "B/s", 25e9, "NVLink4 (H100) per link, one direction", "NVIDIA Hopper whitepaper"},
           {"per_link_gen5_Bps", "B/s", 50e9, "NVLink5 (Blackwell) per link, one direction", "NVIDIA Blackwell whitepaper"},
           {"payload_efficiency_gen1", "1", kPayloadEfficiency, "achievable payload fraction, NVLink1", "measured on NVLink4 (H100 SXM P2P writes 376.6 of 450 GB/s, NVIDIA/nccl #1264); no per-generation measurement", ParamSetting::fraction},
           {"payload_efficiency_gen2", "1", kPayloadEfficiencyGen2, "achievable payload fraction, NVLink2",
            "measured: 2 x V100 over one link, all-reduce busbw 22.55 of 25 GB/s at 1 GiB (vTrain LUT; fitted to that one case)", ParamSetting::fraction},
           {"payload_efficiency_gen3", "1", kPayloadEfficiencyGen3, "achievable payload fraction, NVLink3",
            "NCCL on A100: ~230 of 300 GB/s over 12 links, SM 128-byte payloads (S. Jeaugey, NVIDIA/nccl-tests #149)", ParamSetting::fraction},
           {"payload_efficiency_gen4", "1", kPayloadEfficiency, "achievable payload fraction, NVLink4", "measured: H100 SXM P2P writes 376.6 of 450 GB/s (NVIDIA/nccl #1264)", ParamSetting::fraction},
           {"payload_efficiency_gen5", "1", kPayloadEfficiency, "achievable payload fraction, NVLink5", "as gen1", ParamSetting::fraction},
           {"link_latency_s", "s", kLinkLatency_s, "latency of one NVLink hop", "assumption: no public figure"},
           {"nvswitch_latency_s", "s", kNvSwitchLatency_s, "latency through an NVSwitch", "assumption: no public figure"}}};
}

}  // namespace composim::nvlink
