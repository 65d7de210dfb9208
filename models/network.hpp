// File: models/network.hpp
//
// Ethernet / InfiniBand links, NICs and network switches (enough for topologies to state
// them; multi-node collectives come with the collective model).
//
//   bw = rate_Gbps * 1e9 / 8 * framing
//
// The nominal rate is already the data rate after the 64b/66b line code (IEEE 802.3 clauses
// 49 and 82: 10 and 100 Gb/s are signalled at 10.3125 and 103.125 GBd; IBTA: EDR's 25 Gb/s
// per lane at 25.78125 Gb/s), so no encoding is taken off. What is taken off is each packet's
// headers and gaps around its payload, at 4096-byte payloads (the usual RDMA MTU, which NCCL's
// IB transport uses where the port has it):
//   RoCEv2 (Ethernet): preamble and SFD 8, MAC header 14, FCS 4, inter-frame gap 12 (IEEE
//     802.3), IPv4 20, UDP 8, BTH 12, ICRC 4 (IBTA Annex A17): 82 B, framing 4096/4178;
//   InfiniBand: LRH 8, BTH 12, ICRC 4, VCRC 2 (IBTA vol. 1): 26 B, framing 4096/4122.
#pragma once

#include "models/registry.hpp"

namespace composim::network {

inline constexpr double kRoceFraming = 4096.0 / (4096.0 + 82.0);
inline constexpr double kInfinibandFraming = 4096.0 / (4096.0 + 26.0);
// Port-to-port latency of an InfiniBand HDR switch: 130 ns (NVIDIA Quantum QM8700 datasheet).
inline constexpr double kSwitchLatency_s = 130e-9;
// Per-link latency when none is given: assumption, 100 ns (a few metres of cable plus PHY).
inline constexpr double kLinkLatency_s = 100e-9;

// Payload bandwidth of a link of nominal rate `rate_Gbps`: InfiniBand's framing where
// `infiniband`, else RoCEv2's (Ethernet, and optical links given by a line rate). Throws
// std::invalid_argument for a rate that is not positive.
double link_bandwidth_Bps(double rate_Gbps, bool infiniband);

ModelInfo network_model_info();

}  // namespace composim::network
