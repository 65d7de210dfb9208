#include "models/network.hpp"

#include <stdexcept>

namespace composim::network {

double link_bandwidth_Bps(double rate_Gbps) {
  if (!(rate_Gbps > 0)) throw std::invalid_argument("network rate must be positive");
  return rate_Gbps * 1e9 / 8.0 * kEncoding;
}

ModelInfo network_model_info() {
  return {"network",
          "Ethernet / InfiniBand link, NIC and switch",
          "bw = rate_Gbps*1e9/8*64/66; route latency += switch latency per switch",
          {{"encoding", "1", kEncoding, "64b/66b line code", "IEEE 802.3 clause 49; IBTA (EDR and later)"},
           {"switch_latency_s", "s", kSwitchLatency_s, "port-to-port latency of a network switch",
            "NVIDIA Quantum QM8700 (HDR) datasheet: 130 ns"},
           {"link_latency_s", "s", kLinkLatency_s, "latency of a network link", "assumption: PHY plus a few metres"},
           {"efficiency", "1", 1.0, "achievable fraction of the line rate after encoding (transport overheads)",
            "identity by default; set by calibration", ParamSetting::fraction}}};
}

}  // namespace composim::network
