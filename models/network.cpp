#include "models/network.hpp"

#include <stdexcept>

namespace composim::network {

double link_bandwidth_Bps(double rate_Gbps, bool infiniband) {
  if (!(rate_Gbps > 0)) throw std::invalid_argument("network rate must be positive");
  return rate_Gbps * 1e9 / 8.0 * (infiniband ? kInfinibandFraming : kRoceFraming);
}

ModelInfo network_model_info() {
  return {"network",
          "Ethernet / InfiniBand link, NIC and switch",
          "bw = rate_Gbps*1e9/8*framing (the rate is after 64b/66b); route latency += switch latency per switch",
          {{"framing_roce", "1", kRoceFraming, "RoCEv2 payload per wire byte, 4096-byte payloads (82 B of headers and gaps)",
            "IEEE 802.3 (preamble, MAC header, FCS, inter-frame gap); IBTA Annex A17 (IPv4, UDP, BTH, ICRC)"},
           {"framing_infiniband", "1", kInfinibandFraming, "InfiniBand payload per wire byte, 4096-byte payloads (26 B: LRH, BTH, ICRC, VCRC)",
            "IBTA Architecture Specification vol. 1"},
           {"switch_latency_s", "s", kSwitchLatency_s, "port-to-port latency of a network switch",
            "NVIDIA Quantum QM8700 (HDR) datasheet: 130 ns"},
           {"link_latency_s", "s", kLinkLatency_s, "latency of a network link", "assumption: PHY plus a few metres"},
           {"efficiency", "1", 1.0, "achievable fraction of the rate after framing (transport overheads)",
            "identity by default; set by calibration", ParamSetting::fraction}}};
}

}  // namespace composim::network
