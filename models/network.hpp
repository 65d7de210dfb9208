// File: models/network.hpp
//
// Ethernet / InfiniBand links, NICs and network switches (enough for topologies to state
// them; multi-node collectives come with the collective model).
//
//   bw = rate_Gbps * 1e9 / 8 * encoding   (64b/66b for 10G-and-faster Ethernet and for
//   InfiniBand EDR/HDR/NDR, IEEE 802.3 clause 49 / IBTA spec)
#pragma once

#include "models/registry.hpp"

namespace composim::network {

inline constexpr double kEncoding = 64.0 / 66.0;
// Port-to-port latency of an InfiniBand HDR switch: 130 ns (NVIDIA Quantum QM8700 datasheet).
inline constexpr double kSwitchLatency_s = 130e-9;
// Per-link latency when none is given: assumption, 100 ns (a few metres of cable plus PHY).
inline constexpr double kLinkLatency_s = 100e-9;

double link_bandwidth_Bps(double rate_Gbps);

ModelInfo network_model_info();

}  // namespace composim::network
