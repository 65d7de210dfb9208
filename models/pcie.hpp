// File: models/pcie.hpp
//
// PCIe link, switch and cable model.
//
// Effective one-direction bandwidth of a link of `lanes` lanes at generation g, carrying
// memory-write TLPs of `max_payload_B` bytes each:
//
//   bw = lanes * rate_GTps(g) * 1e9 / 8 * encoding(g) * mps / (mps + tlp_overhead_B)
//
// encoding: 8b/10b for Gen1-2, 128b/130b for Gen3-5, FLIT 236/256 for Gen6 (whose TLPs then
// add 16 B of header, not 24: the FLIT holds CRC, sequence number and framing). A Gen3 x16 link
// at MPS 256 B with 24 B of TLP overhead gives 15.754 GB/s * 256/280 = 14.40 GB/s (the
// "x16 payload ceiling" in hardware.md). What links carry in the topology is that times
// pcie.link.efficiency (0.914: DLLP and flow-control traffic; 6 A6000s on Gen4 x16 copy
// 26.34 GB/s to each other, NVIDIA/nvbandwidth #50), so a Gen3 x16 link moves 13.16 GB/s
// and Gen4 x16 26.33 (measured pinned copies: 12.2-12.9 on Gen3, ~25 on A100 Gen4).
//
// A switch adds its cut-through latency to every route through it; a cable adds its
// propagation delay, length_m * propagation_s_per_m, and an optical cable adds one
// transceiver latency per end.
//
// Sources: PCI-SIG base specifications (rates), Intel AN 708 (128b/130b), Intel AN 456
// (TLP overhead), Broadcom PEX8796 / PEX88096 / PEX89144 datasheets (switch latency).
#pragma once

#include "models/registry.hpp"

namespace composim::pcie {

// Per-lane transfer rate in GT/s. Throws std::invalid_argument for g outside 1..6.
double rate_GTps(int generation);

// Line-code efficiency (payload bits per transferred bit) for generation g.
double encoding_efficiency(int generation);

// Effective one-direction payload bandwidth in bytes/s. Throws std::invalid_argument for an
// unknown generation, lanes not in {1,2,4,8,16,32}, or a payload size not a power of two
// in 128..4096 B (the sizes PCIe's Max_Payload_Size field can encode).
// tlp_overhead_B < 0: the generation's (tlp_overhead_B_of).
double link_bandwidth_Bps(int generation, int lanes, int max_payload_B = 256,
                          int tlp_overhead_B = -1);

// Cut-through latency of a switch of generation g, seconds (datasheet figures below).
double switch_latency_s(int generation);

// TLP overhead with a 4-DW header (64-bit addresses): 16 B header + 4 B LCRC + 2 B sequence
// number + 2 B framing. Intel AN 456.
inline constexpr int kTlpOverhead_B = 24;
// Gen6 in FLIT mode: the FLIT carries the CRC, sequence number and framing (its 236/256),
// so a TLP adds only its 16 B header (PCIe 6.0 base specification, FLIT mode).
inline constexpr int kFlitTlpOverhead_B = 16;
// TLP overhead of generation g: kFlitTlpOverhead_B for Gen6, kTlpOverhead_B below.
int tlp_overhead_B_of(int generation);
// Typical max payload size of root ports and switches. PLX PEX8532 / PEX8796 datasheets.
inline constexpr int kDefaultMaxPayload_B = 256;
// Switch latencies, x16 to x16, cut-through. PEX8796 datasheet: 150 ns; PEX88096 (Gen4):
// 105 ns (Linley Group newsletter 6069, 2019); PEX89144 (Gen5): 115 ns (vendor summary).
inline constexpr double kSwitchLatencyGen3_s = 150e-9;
inline constexpr double kSwitchLatencyGen4_s = 105e-9;
inline constexpr double kSwitchLatencyGen5_s = 115e-9;
// Signal propagation in single-mode fibre: 4.9 ns/m (group index ~1.468, Corning SMF-28).
inline constexpr double kOpticalPropagation_s_per_m = 4.9e-9;
// Propagation in copper twinax cable at a velocity factor of 0.70: 1/(0.70 c) = 4.77 ns/m.
// Source: typical twinax velocity of propagation (Molex/Amphenol cable datasheets: 0.70-0.78).
inline constexpr double kCopperPropagation_s_per_m = 4.77e-9;
// Longest copper PCIe cable segment a topology may state, in metres. PCIe's channel budget
// (~36 dB at Gen4) is spent by tens of cm of board trace (hardware.md, "copper reach");
// external twinax cables reach a few metres, active ones several more: 10 m is an outer
// bound, beyond which a segment needs retimers or optics.
inline constexpr double kMaxCopperLength_m = 10.0;
// Retimer latency: the PCIe base specification bounds a retimer's latency at 64 ns
// (PCIe 4.0/5.0 base spec, retimer section); used as the default for retimer nodes.
inline constexpr double kRetimerLatency_s = 64e-9;
// Optical transceiver latency per end. No public figure was found (hardware.md); an active
// optical PCIe cable contains a retimer-class CDR, so the retimer bound is used. Sweep it.
inline constexpr double kOpticalTransceiverLatency_s = 64e-9;

// What a requester's outstanding reads cover: 768 non-posted requests (10-bit tags, PCIe
// 4.0 base specification) of 512 B (the usual max read request size), 384 KiB. A link
// whose round trip holds more in flight than that (long optical reach) cannot be filled by
// reads, and its flow-control credits, which composim does not model either, are sized for
// short links: its modelled rate is then an upper bound (long_reach_notes() says so).
inline constexpr double kOutstandingReadWindow_B = 768.0 * 512.0;

ModelInfo link_model_info();
ModelInfo switch_model_info();
ModelInfo cable_model_info();

}  // namespace composim::pcie
