// File: models/nvlink.hpp
//
// NVLink and NVSwitch model.
//
//   bw = links * per_link_Bps(generation)   (one direction)
//
// Per link, one direction: NVLink1 (P100) 20 GB/s, NVLink2 (V100) 25 GB/s, NVLink3 (A100)
// 25 GB/s, NVLink4 (H100/H200) 25 GB/s, NVLink5 (Blackwell) 50 GB/s. Sources: NVIDIA
// Pascal/Volta/Ampere/Hopper/Blackwell architecture whitepapers (in hardware.md).
//
// Topologies use the achievable payload bandwidth, links * per_link * payload_efficiency:
// the signalling rate less packet headers and flow control. payload_efficiency = 0.837 is
// measured: p2pBandwidthLatencyTest P2P writes on an 8x H100 SXM HGX reach 376.6 GB/s of
// the 450 GB/s signalling rate (NVIDIA/nccl issue #1264, in measured/p2p_bandwidth.csv); it
// is applied to every generation (no per-generation measurement in our data).
// Latency of a link or an NVSwitch traversal has no public figure; the defaults below are
// assumptions, small against the per-step latencies that collectives add (collective.hpp).
#pragma once

#include "models/registry.hpp"

namespace composim::nvlink {

// One-direction bandwidth of one link of generation g in bytes/s; throws
// std::invalid_argument for g outside 1..5.
double per_link_Bps(int generation);
// Signalling bandwidth of `links` bundled links, bytes/s (no payload efficiency).
double link_bandwidth_Bps(int generation, int links);

// Measured on NVLink4: HGX H100 SXM P2P writes 376.6 of 450 GB/s (NVIDIA/nccl #1264).
inline constexpr double kPayloadEfficiency = 376.6 / 450.0;
// Measured on NVLink2: all-reduce of 1 GiB between 2 V100s joined by one link, 22.55 of
// 25 GB/s busbw (vTrain AR_GPU2 LUT, ../shared/data/measured/vtrain_v100_allreduce). This
// makes the 2-GPU vTrain case a calibration point; 3-8 GPUs stay independent checks.
inline constexpr double kPayloadEfficiencyGen2 = 22.55 / 25.0;
// NVLink3 as NCCL's kernels drive it: SMs write 128-byte payloads, ~20 of 25 GB/s per link,
// and "other bottlenecks on the GPUs" hold A100 at ~230 GB/s over 12 links (S. Jeaugey,
// NVIDIA/nccl-tests #149). Copy engines (256-byte payloads) get more; we have no A100
// copy measurement, so the SM figure is used for all NVLink3 traffic.
inline constexpr double kPayloadEfficiencyGen3 = 230.0 / 300.0;

// What a topology link carries: link_bandwidth_Bps * payload_efficiency (the parameter in
// force: kPayloadEfficiency unless a parameter file overrides it).
double payload_bandwidth_Bps(int generation, int links);

// Assumption (no public figure): 100 ns per NVLink hop and per NVSwitch traversal.
inline constexpr double kLinkLatency_s = 100e-9;
inline constexpr double kNvSwitchLatency_s = 100e-9;

ModelInfo nvlink_model_info();

}  // namespace composim::nvlink
