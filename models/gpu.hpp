// File: models/gpu.hpp
//
// GPU model for trace replay.
//
// A kernel replays at its measured duration (duration_scale = 1; cross-GPU scaling is a
// later model). A GPU operation becomes eligible launch_latency_s after its launch call
// returns, and a launch call on a stream with kLaunchQueueDepth operations pending returns
// only after the oldest of them ends; concurrent streams of one GPU do not slow each other down, because measured
// durations already include their interference. Properties of known GPU models (host link
// generation, PCIe peer-to-peer support) come from the table in gpu.cpp.
#pragma once

#include <string>
#include <string_view>

#include "models/registry.hpp"

namespace composim::gpu {

// Measured: median gap between a launch call's return and the start of the kernel it
// launched, on an idle stream, in the shared real traces: 1.75 us (A100,
// hta/nccl_parser_config), 2.26 us (V100, hta/ns_resolution_trace), 3 us (V100-DGXS,
// kineto_tb/resnet50). The A100/V100 middle value is used.
inline constexpr double kLaunchLatency_s = 2.0e-6;

// Operations a stream holds launched but not finished before a further launch call on it
// blocks until the oldest finishes. Measured, not documented by NVIDIA: "about 1000"
// kernels per stream, each stream its own queue, not changed by
// cudaLimitDevRuntimePendingLaunchCount (NVIDIA developer forums, "CUDA stream are blocked
// when launching lots of kernels (>1000)", 2018; Stack Overflow question 53970187). This
// is what keeps a CPU that never synchronizes from running more than a bounded way ahead
// of a slower GPU.
inline constexpr int kLaunchQueueDepth = 1024;

struct GpuSpec {
  std::string name;        // canonical model name
  int pcie_generation;     // generation of its host interface
  bool pcie_p2p;           // peer-to-peer over PCIe supported by the device and driver
  double hbm_bandwidth_Bps;
  int compute_capability;  // major * 10 + minor (NCCL's tuning tables are indexed by it)
  int nvlink_generation;   // 0: no NVLink
  int nvlink_links;        // NVLink links the GPU has, at most (0: none)
  // One-direction rate of one of its NVLink links, bytes/s, where it is below its
  // generation's (nvlink::per_link_Bps); 0: the generation's.
  double nvlink_link_Bps = 0;
};

// find_gpu_spec()
//
// The spec of the first table entry whose key occurs in `model_name` (case-insensitive),
// e.g. "Tesla V100-SXM2-32GB" -> V100. Unknown names get a generic Gen4, P2P-capable entry
// named after the input, and `known` is set to false.
GpuSpec find_gpu_spec(std::string_view model_name, bool* known = nullptr);

// The canonical names of the table's models, comma-separated, for error messages.
std::string known_gpu_models();

ModelInfo gpu_model_info();

}  // namespace composim::gpu
