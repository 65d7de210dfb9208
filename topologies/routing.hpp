// File: topologies/routing.hpp
//
// Routing with PCIe semantics on a Topology.
//
// * GPU to GPU: a direct NVLink link; else NVLink through NVSwitches; else the PCIe path,
//   which in a switch tree turns at the lowest common switch. When that path crosses a
//   host's root complex without P2P forwarding (p2p_across_root_ports false), crosses two
//   hosts, or P2P is off (globally or on either GPU), the route is *staged*: up to the
//   source GPU's nearest host memory and back down, crossing that memory twice.
// * GPU to GPU in two machines: to the source GPU's nearest NIC over PCIe (GPUDirect RDMA),
//   over the network (Ethernet / InfiniBand links and switches), from the destination's
//   nearest NIC down to it. When another NIC of the source's machine has a shorter network
//   path to the destination's NIC (the peer's rail, without the spine), the route leaves
//   through it, as NCCL does (rings and trees keep to one NIC per machine; point-to-point
//   uses PXN): over PCIe unless that crosses a CPU, then over NVLink to the GPU nearest
//   that NIC (`pxn`), which must be one of the job's GPUs when the caller says which they
//   are (NCCL's PXN proxy is a rank); without such a GPU, its own NIC and the spine, and
//   no route (InputError) on a network without a spine.
// * GPU to host memory, host memory to GPU: the PCIe path through every switch on it; in a
//   composition, a device reaches only the memory of the host it is attached to.
// * Other endpoint pairs (NICs, hosts) take the PCIe path, which leaves one host's PCIe
//   domain for another's only over a socket interconnect: two NICs of the hosts of a
//   composable chassis talk over their network, a host and another host's NIC not at all;
//   two hosts over their socket interconnect, else memory to memory through their NICs.
// GPUs and NICs are endpoints and never transit nodes.
#pragma once

#include <string>
#include <vector>

#include "topologies/topology.hpp"

namespace composim::topo {

struct Hop {
  int link;
  bool forward;  // traversed from link.from to link.to
};

struct Route {
  int src = -1, dst = -1;
  std::vector<Hop> hops;
  std::vector<int> transit;      // transit nodes in order (each adds its latency)
  std::vector<int> memory_hosts; // hosts whose memory the route crosses, once per crossing
                                 // (endpoints once; a staging memory is written and read)
  bool staged = false;           // GPU-to-GPU staged through host memory
  bool nvlink = false;           // uses NVLink only
  bool nvb = false;              // NVLink through an intermediate GPU (NCCL's PATH_NVB)
  bool network = false;          // crosses machines over NICs and the network
  bool pxn = false;              // ... leaving through a GPU on the peer's rail over NVLink
  double bottleneck_Bps = 0;     // min over links and crossed memories
  double latency_s = 0;          // links + transit nodes + root complexes of memory hosts

  // GPU to GPU through host memory without crossing a network: what NCCL's SHM transport
  // carries (only GPU pairs are ever staged).
  bool shm() const { return staged && !network; }
};

// nearest_nic()
//
// The NIC of `gpu`'s machine that carries its traffic to other machines (its rail): the
// nearest over PCIe; GPUs under one switch with several equally near NICs take them in file
// order. -1 if the machine has none.
int nearest_nic(const Topology& t, int gpu);

// route()
//
// The route between two endpoint nodes (GPU, NIC or host). Throws InputError naming both
// when there is none, or when an endpoint is a transit-only node.
// `pxn_proxies`: indexed by node, non-zero for the GPUs that may relay another GPU's
// traffic to its NIC (PXN): the job's GPUs, since NCCL's proxy is a rank of the
// communicator. Without one of them on the peer's rail, the source's own NIC (and the
// spine) carries it. nullptr: any GPU of the machine may relay.
Route route(const Topology& t, int src, int dst, bool nccl_paths = false, const std::vector<char>* pxn_proxies = nullptr);

// The `pxn_proxies` mask of route() for a job on `gpus` (node indices).
std::vector<char> pxn_proxies_of(const Topology& t, const std::vector<int>& gpus);

// Human-readable one-line description: "gpu0 -> sw0 -> gpu1 [PCIe P2P, 14.40 GB/s, 0.150 us]".
std::string describe(const Topology& t, const Route& r);

// Time to move `bytes` along the route alone, in seconds: latency + bytes / bottleneck.
double transfer_time_s(const Route& r, double bytes);

// long_reach_notes()
//
// Notes on PCIe reach: one per PCIe link (copper or optical) whose round trip (2 x its
// latency) times its bandwidth exceeds pcie::kOutstandingReadWindow_B, and one per GPU whose
// route to its host does so end to end (reads cross the whole route) though none of its
// links alone does. Over such a reach, read tags and flow-control credits, which composim
// does not model, bound a real link below the rate composim gives it. Empty for every
// shipped topology.
std::vector<std::string> long_reach_notes(const Topology& t);

}  // namespace composim::topo
