// File: models/host.hpp
//
// Host model: a CPU socket's root complex, its memory and the link between sockets.
//
// A copy to or from host memory crosses the root complex (adding root_complex_latency_s)
// and the memory, modelled as one shared link of memory_bandwidth_Bps that reads and writes
// share (DRAM bandwidth is not split by direction). Staged GPU-to-GPU copies cross it on
// the way up and on the way down. Sockets are joined by a cpu_interconnect link
// (UPI / QPI / Infinity Fabric) whose bandwidth the topology states.
#pragma once

#include "models/registry.hpp"

namespace composim::host {

// Latency through a CPU root port: ~1-2 us measured against ~0.1 us through a switch
// (community measurement, voipmonitor/rtx6kpro hardware/topology.md, in hardware.md).
inline constexpr double kRootComplexLatency_s = 1.0e-6;
// Memory bandwidth of one socket when a topology gives none: 6 channels of DDR4-2666,
// 6 * 21.33 GB/s = 128 GB/s (JEDEC DDR4 speed bins; Intel Xeon Scalable Gen1/2 datasheet).
inline constexpr double kMemoryBandwidth_Bps = 128e9;
// Latency between sockets when a cpu_interconnect link gives none: assumption, ~100 ns
// per UPI hop (no datasheet figure; same order as a switch traversal).
inline constexpr double kCpuInterconnectLatency_s = 100e-9;

// Default of host.staged_copy_handoff_Bps (see staged_copy_Bps()).
inline constexpr double kStagedCopyHandoff_Bps = 126e9;

// staged_copy_Bps()
//
// Rate of a GPU-to-GPU copy that the CUDA driver stages through host memory
// (cudaMemcpyPeer without P2P: device to host into a pinned buffer, then host to device, in
// chunks), alone on a route whose links allow `bottleneck_Bps`: 1 / (1 / bottleneck_Bps +
// 1 / host.staged_copy_handoff_Bps). The second term is the time per byte the driver adds
// between the two legs (the hand-off of each chunk); it is not a link, so it is the same
// on Gen4 and Gen5. Default 126 GB/s, fitted to one measurement: 8 x H100 SXM, P2P
// disabled, 37.1 GB/s mean over 56 pairs on Gen5 x16 links that allow 52.6 (NVIDIA/nccl
// #1264, p2pBandwidthLatencyTest). Held out: 6 x RTX 4090 on Gen4 x16, P2P disabled
// (NVIDIA/nccl #814): predicted 21.8 GB/s, measured 20.1-22.4 (mean 22.0). NCCL's own
// staging (its SHM transport) is collective::shm_transport_Bps(), not this.
double staged_copy_Bps(double bottleneck_Bps);

ModelInfo host_model_info();

}  // namespace composim::host
