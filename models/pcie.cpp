#include "models/pcie.hpp"

#include <stdexcept>
#include <string>

namespace composim::pcie {

double rate_GTps(int generation) {
  switch (generation) {
    case 1: return 2.5;
    case 2: return 5.0;
    case 3: return 8.0;
    case 4: return 16.0;
    case 5: return 32.0;
    case 6: return 64.0;
    default: throw std::invalid_argument("PCIe generation " + std::to_string(generation) + " is not 1-6");
  }
}

double encoding_efficiency(int generation) {
  if (generation <= 2) return 8.0 / 10.0;
  if (generation <= 5) return 128.0 / 130.0;
  return 236.0 / 256.0;  // Gen6 FLIT: 236 B of TLP per 256 B FLIT (PCIe 6.0 base spec)
}

int tlp_overhead_B_of(int generation) { return generation >= 6 ? kFlitTlpOverhead_B : kTlpOverhead_B; }

double link_bandwidth_Bps(int generation, int lanes, int max_payload_B, int tlp_overhead_B) {
  if (lanes != 1 && lanes != 2 && lanes != 4 && lanes != 8 && lanes != 16 && lanes != 32)
    throw std::invalid_argument("PCIe lanes " + std::to_string(lanes) + " is not one of 1, 2, 4, 8, 16, 32");
  // PCIe's Max_Payload_Size field encodes 128 << n bytes, n = 0..5 (Device Control register).
  if (max_payload_B < 128 || max_payload_B > 4096 || (max_payload_B & (max_payload_B - 1)) != 0)
    throw std::invalid_argument("PCIe max payload " + std::to_string(max_payload_B) + " B is not one of 128, 256, 512, 1024, 2048, 4096");
  const double raw_Bps = lanes * rate_GTps(generation) * 1e9 / 8.0 * encoding_efficiency(generation);
  if (tlp_overhead_B < 0) tlp_overhead_B = tlp_overhead_B_of(generation);
  return raw_Bps * max_payload_B / (max_payload_B + tlp_overhead_B);
}

double switch_latency_s(int generation) {
  if (generation <= 3) return kSwitchLatencyGen3_s;
  if (generation == 4) return kSwitchLatencyGen4_s;
  return kSwitchLatencyGen5_s;
}

ModelInfo link_model_info() {
  return {"pcie.link",
          "PCIe link: payload bandwidth per direction from generation, lanes, line code and TLP overhead",
          "bw = lanes*rate*1e9/8*encoding*mps/(mps+tlp_overhead); Gen3 x16 @256B = 14.40 GB/s",
          {{"tlp_overhead_B", "B", kTlpOverhead_B, "bytes of header, LCRC, sequence and framing per TLP (Gen6 FLIT mode: 16, the header; the FLIT holds the rest)",
            "Intel AN 456 (4-DW header)"},
           {"max_payload_B", "B", kDefaultMaxPayload_B, "default max payload size when a link gives none",
            "PLX PEX8532/PEX8796 datasheets"},
           {"rate_gen3_GTps", "GT/s", 8, "per-lane rate (Gen1 2.5, Gen2 5, Gen4 16, Gen5 32, Gen6 64)",
            "PCI-SIG base specifications"},
           {"encoding_gen3_5", "1", 128.0 / 130.0, "line-code efficiency (8b/10b Gen1-2, FLIT 236/256 Gen6)",
            "Intel AN 708"},
           {"efficiency", "1", 0.914, "achievable fraction of the TLP payload bandwidth (DLLP and flow-control traffic, completions)",
            "NVIDIA/nvbandwidth #50: 6 x A6000 Gen4 x16 copy 26.34 GB/s to a GPU of their group (device_to_device_memcpy_read_ce) "
            "against 28.81 GB/s of TLP payload; consistent with pinned copies (hardware.md: Gen3 12.2-12.9 of 14.40, A100 Gen4 ~25 "
            "of 28.81, H100 Gen5 54.8 of 57.61)", ParamSetting::fraction}}};
}

ModelInfo switch_model_info() {
  return {"pcie.switch",
          "PCIe switch: cut-through latency added to every route through it; bandwidth is the links'",
          "route latency += switch_latency(generation)",
          {{"latency_gen3_s", "s", kSwitchLatencyGen3_s, "x16-to-x16 latency, Gen3 switch", "Broadcom PEX8796 datasheet"},
           {"latency_gen4_s", "s", kSwitchLatencyGen4_s, "x16-to-x16 latency, Gen4 switch",
            "Broadcom PEX88096, Linley Group newsletter 6069 (2019)"},
           {"latency_gen5_s", "s", kSwitchLatencyGen5_s, "x16-to-x16 latency, Gen5 switch", "Broadcom PEX89144 summary"},
           {"retimer_latency_s", "s", kRetimerLatency_s, "latency of a retimer node", "PCIe base spec retimer bound (64 ns)"}}};
}

ModelInfo cable_model_info() {
  return {"cable",
          "Copper or optical cable carrying a PCIe link (or an optical link of a given rate)",
          "latency = length_m * propagation + (optical ? 2 * transceiver_latency : 0); bandwidth from the carried link",
          {{"optical_propagation_s_per_m", "s/m", kOpticalPropagation_s_per_m, "propagation in single-mode fibre",
            "Corning SMF-28, group index 1.468"},
           {"copper_propagation_s_per_m", "s/m", kCopperPropagation_s_per_m, "propagation in twinax copper",
            "velocity factor 0.70 (twinax cable datasheets)"},
           {"transceiver_latency_s", "s", kOpticalTransceiverLatency_s, "per-end optical transceiver latency",
            "assumption: no public figure; set equal to the PCIe retimer bound"}}};
}

}  // namespace composim::pcie
