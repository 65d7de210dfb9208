// File: sim/collectives.hpp
//
// Plans an NCCL collective on a topology: which rings or trees carry it, with which
// protocol, and which point-to-point flows (src GPU, dst GPU, bytes) that makes. The flows
// are then run as SimGrid communications, so collectives contend with each other and with
// copies, and the collective ends when its last flow ends plus NCCL's latency term.
//
// Rings, as NCCL builds them (src/graph/search.cc): inside one machine every channel has
// the same bandwidth, and the set with the most total bandwidth wins. The widest single ring
// sets the top speed b; at b, b/2, b/3 and b/4 a bounded depth-first search finds the most
// rings that fit together on the links' capacities; the best total is kept. Rings come
// from the strictest path tier that has one: NVLink GPU to GPU or through NVSwitches, then
// NVLink through one GPU (NCCL's NVB, P2P/indirect), then PCIe turning at the lowest common
// switch, else staged through host memory (NCCL's SHM transport, capped per GPU). Every GPU
// order is searched for up to 9 GPUs per machine, the topology's order beyond. Data is
// split over rings in proportion to their bandwidth. Across machines, ring c visits each
// machine's GPUs in the intra-machine order rotated by c, and crosses between machines on
// the NIC nearest its exit GPU (one ring per NIC).
//
// Trees (all-reduce across machines only, like NCCL): per ring, a chain through
// each machine's GPUs and NCCL's binary tree between machines' chain heads (ncclGetBtree:
// machine 0 the root, with one child), and NCCL's copy of the channel (ncclTopoPostset
// doubles every searched channel; connectTrees puts the copy on the mirrored tree: the
// double binary tree) on the same chains under ncclGetDtree's second tree (mirrored, or
// shifted by one machine for odd counts); each carries half the channel's share, up and
// down, so there are twice as many tree channels as searched (sjeaugey, NVIDIA/nccl #689: a
// DGX with 8 NICs runs 16 SMs, one per channel); where NCCL duplicates its searched channels
// (ncclTopoDupChannels), each chain carries two of them. In Simple a tree moves chunks of
// NCCL_BUFFSIZE / 8 per channel through its hops up and down: the first one's trip (the
// pipeline fill), each hop at one channel's share of its route among the channels whose
// hops of the same phase (up or down) cross it, less the one chunk time at the trees'
// bottleneck that the flows count, is added after the flows, with NCCL's per-step latency
// less the 256 KiB chunk its tuner folds into it. Sharing a hop only within its phase is
// exact while each channel moves one chunk (all channels climb, then descend, together) and
// optimistic with several, when later chunks climb while the first descends. No channel's
// hop is faster than NCCL's per-channel tree rate (below); with it the one measured
// multi-node sweep (2 x 8 H100, TCPXO) is within 16% from 1 MiB.
//
// Across machines, every network step of NCCL's latency also carries the latency the
// network plugin reports for the NICs crossed (topo::Node::nccl_net_latency_s), twice in
// Simple, as NCCL's tuning.cc adds graphs->latencyInter; point-to-point operations (whose
// latency NCCL's tuner does not model) get it on their one network step too.
//
// Choice: the (algorithm, protocol) pair with the least predicted time
//   t = latency(algorithm, protocol, steps) + bytes_on_busiest_link / (bandwidth * fraction)
// as NCCL's tuner does, with NCCL's own fractions (LL 1/4 or 1/3, LL128 0.92, trees 0.92,
// LL capped at llMaxBw) and caps (2.17-2.18: every busBw at 235 GB/s on Ampere and 370 on
// Hopper; across machines, a tree's busBw at its searched channels x perChMaxTreeBws, and a
// tree's or ring's in LL128 x ll128MaxBwPerCh; a ring's Simple latency x 1.9, 1.5 from Hopper, for all-reduce across
// machines past ranks / 16 x 64 KiB); a protocol or algorithm the trace or the user names is kept. The
// flows then carry the bytes at the fractions achieved (collective::achieved_efficiency():
// LL128 on V100 is slower than NCCL's tuner assumes), so a choice NCCL makes against its own
// interest is reproduced, not corrected.
//
// SHM hops (staged through host memory) also wait, per step, a read round trip over their
// route (2 x its latency): the receiver polls its flag in host memory across PCIe, which
// NCCL's per-step latencies (measured for direct P2P) do not include.
//
// NVLS (all-reduce in one machine on NVSwitch gen3+, NCCL 2.18.3's rules): a ring of flows
// GPU i -> GPU i+1 through the switch, each carrying S(n+1)/n / collective::nvls_efficiency(),
// loads every GPU's up- and down-link as the switch's reduce and multicast do.
//
// NVLS_TREE (all-reduce across machines, each of 3 or more GPUs of compute capability 9.0+
// on NVSwitch gen3+, as many in each; NCCL 2.18+): the same flows in every machine at
// collective::nvls_tree_efficiency(), and between machines, for each of H heads (one per NIC:
// the first GPU whose nearest NIC it is), NCCL's binary tree over machines and its twin, one
// flow per edge carrying S/(2H) up and one down; NCCL's latency
// (collective::nvls_tree_latency_s()). The plan's link class is the part that binds.
//
// Trees across machines: each channel crosses each hop at most at NCCL's per-channel tree
// rate (collective::tree_channel_hop_max_Bps()), in the first chunk's trip (pipeline_s) and
// in the steady flows; SimGrid 3.32 ignores Comm::set_rate on host-to-host communications,
// so what that rate adds beyond the flows' own bound, alone on the links, is channel_rate_s.
//
// Known approximations: NCCL's per-channel caps (LL128, trees) are applied only across
// machines (inside one, composim's ring search finds one ring at an NVSwitch's full speed where NCCL
// counts 12-16 channels, so the channel count it would multiply is not NCCL's; rings keep the
// searched count, which changes no ring's bandwidth); CollNet is not modelled; NVLS_TREE's
// intra-machine and network parts overlap fully (as its chunks pipeline them); ring
// searches beyond 9 GPUs per machine use the topology's GPU order.
#pragma once

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/collective.hpp"
#include "topologies/routing.hpp"

namespace composim::sim {

struct Flow {
  int src = -1, dst = -1;  // GPU nodes
  double bytes = 0;
};

struct CollectivePlan {
  collective::Algorithm algorithm = collective::Algorithm::ring;
  collective::Protocol protocol = collective::Protocol::simple;
  collective::LinkClass link_class = collective::LinkClass::pcie;
  int channels = 0;          // ring channels searched, or NCCL's tree channels (2 x searched channels)
  double latency_s = 0;      // added after the last flow
  double processing_s = 0;   // the GPUs' own time on the bytes, also added after the last flow
                             // (collective::achieved_processing_s(): V100 LL128)
  double pipeline_s = 0;     // a tree's pipeline fill in Simple, also added after the last flow:
                             // the first chunk's trip less one chunk time at the bottleneck
  double channel_rate_s = 0;  // what NCCL's per-channel tree rate adds beyond the flows' own bound
                              // (trees across machines), also after the last flow
  double bandwidth_Bps = 0;  // algorithm bandwidth of the structure (sum over channels)
  double estimated_s = 0;    // the tuner's prediction, before contention
  double bottleneck_bytes = 0;  // bytes the busiest link carries per unit of bandwidth (for calibration)
  int steps = 0;             // steps of the latency term
  int hop_steps = 0;         // of which at link_class's hop latency (across machines: the network steps)
  std::vector<Flow> flows;

  // What is added when the last flow ends: latency, processing, pipeline fill and the
  // trees' channel rate.
  double after_flows_s() const { return latency_s + processing_s + pipeline_s + channel_rate_s; }
};

// The algorithms and protocols the tuner may choose from, as NCCL_ALGO and NCCL_PROTO set
// them. Empty sets: NCCL's defaults (every algorithm; LL128 only where NCCL enables it by
// default, see plan()). A protocol named here is used even where NCCL would not enable it
// by default, as NCCL does when NCCL_PROTO names it.
struct TunerChoices {
  unsigned protocols = 0;   // bit 1 << int(collective::Protocol); 0: NCCL's defaults
  unsigned algorithms = 0;  // bit 1 << int(collective::Algorithm); 0: every algorithm

  static TunerChoices of(std::optional<collective::Protocol> protocol, std::optional<collective::Algorithm> algorithm);
  bool allows(collective::Protocol pr) const { return protocols == 0 || (protocols >> static_cast<int>(pr) & 1u); }
  bool allows(collective::Algorithm a) const { return algorithms == 0 || (algorithms >> static_cast<int>(a) & 1u); }
  bool named(collective::Protocol pr) const { return protocols >> static_cast<int>(pr) & 1u; }
  // `preferred` if allowed, else the first allowed of Simple, LL128, LL.
  collective::Protocol pick(collective::Protocol preferred) const;
};

// parse_protocol_list(), parse_algorithm_list()
//
// NCCL_PROTO / NCCL_ALGO syntax: a comma-separated list of names (case-insensitive), or "^"
// and a list to exclude. Protocols: LL, LL128, Simple; algorithms: Ring, Tree, NVLS,
// NVLSTree. Returns the bit set (never 0). Throws std::invalid_argument naming the offending
// name, for names composim does not model (CollNet, PAT) as well, and when nothing is left.
unsigned parse_protocol_list(const std::string& text);
unsigned parse_algorithm_list(const std::string& text);

class CollectivePlanner {
 public:
  // `pxn_proxies`: the GPUs that may relay PXN traffic, by node (topo::pxn_proxies_of() of
  // the job's GPUs); empty: any GPU. The Platform that runs the plans takes the same.
  explicit CollectivePlanner(const topo::Topology& t, std::vector<char> pxn_proxies = {}) : topo_(t), pxn_proxies_(std::move(pxn_proxies)) {}

  // plan()
  //
  // `gpus`: member GPU nodes in rank order (2 or more; 1 gives an empty plan). `in_bytes`:
  // per-rank input buffer (for all_gather the per-rank contribution). Throws InputError if
  // two members cannot reach each other.
  CollectivePlan plan(collective::Kind kind, double in_bytes, const std::vector<int>& gpus,
                      std::optional<collective::Protocol> protocol = std::nullopt,
                      std::optional<collective::Algorithm> algorithm = std::nullopt) {
    return plan(kind, in_bytes, gpus, TunerChoices::of(protocol, algorithm));
  }
  // As above, choosing among `choices` (NCCL_PROTO / NCCL_ALGO). all_to_all and send_recv
  // are NCCL's point-to-point operations, which neither variable affects: they ignore
  // `choices` (LL up to 16 KiB per peer inside a machine, Simple otherwise).
  CollectivePlan plan(collective::Kind kind, double in_bytes, const std::vector<int>& gpus, const TunerChoices& choices);

  // plan_send()
  //
  // One send of `bytes` from GPU node `src` to `dst` and its matching receive (NCCL's
  // point-to-point: one direct flow, LL up to 16 KiB inside a machine, Simple otherwise,
  // staged through host memory where P2P is off). Empty plan for 0 bytes or src == dst.
  // Throws InputError if dst cannot be reached.
  CollectivePlan plan_send(double bytes, int src, int dst);

  const topo::Route& route(int a, int b);
  // Whether NCCL would run NVLS on these GPUs (one machine on NVSwitch gen3+; see Structure).
  bool nvls_available(const std::vector<int>& gpus) { return gpus.size() >= 3 && structure(gpus).nvls; }
  // Whether NCCL would run NVLS_TREE on these GPUs (machines on NVSwitch gen3+; see Structure).
  bool nvls_tree_available(const std::vector<int>& gpus) { return gpus.size() >= 6 && structure(gpus).nvls_tree; }

  // What binds `flows` alone on the topology (flows_bound_s()'s busiest resource): "links",
  // "shm" (what a GPU sends through host memory, collective::shm_transport_Bps()) or
  // "host_memory" (a host's memory bandwidth). Links win a tie: their efficiency then still
  // sets the time. For calibration: only a links-bound time moves with a link efficiency.
  std::string bound_by(const std::vector<Flow>& flows);

 private:
  CollectivePlan plan_point_to_point(double in_bytes, const std::vector<std::pair<int, int>>& pairs);

  struct Ring {
    std::vector<int> order;  // GPU nodes
    double bandwidth_Bps;
    int channels = 1;  // NCCL channels on this order, each at bandwidth_Bps / channels
  };
  struct Tree {
    std::vector<std::pair<int, int>> edges;  // (child, parent) GPU nodes
    std::vector<std::pair<int, int>> twin_edges;  // NCCL's copy of the channel: the same chains, ncclGetDtree's second tree
    double bandwidth_Bps;
    // The first chunk's trip on this tree or its copy, whichever is slower, up from the
    // deepest leaf and back down, in seconds per byte of chunk: each hop at one channel's
    // share of its route, the route's resources shared among the channels (of every tree)
    // whose hops of the same phase (up or down) cross them.
    double trip_s_per_B = 0;
  };
  struct Structure {
    std::vector<Ring> rings;
    std::vector<Tree> trees;
    double ring_bw = 0, tree_bw = 0;
    collective::LinkClass link_class = collective::LinkClass::pcie;
    int nvlink_generation = 0;  // NVLink generation of the rings when their GPUs are that generation's family; else 0
    int machines = 1;
    int compute_capability = 80;  // lowest of the members' GPUs
    // What SHM hops add to the latency (shm_step_s() of each hop a step crosses; 0 if
    // none): per ring hop, in ring order, for the ring's steps (ring_shm_wait_s()); for the
    // trees, the slowest leaf-to-root path up plus the slowest root-to-leaf path down.
    std::vector<std::vector<double>> ring_shm_waits;
    double tree_shm_wait_s = 0;
    // What cables add (cable_step_s() of each direct hop a step crosses), the same way, less
    // the one crossing the flows' own start already waits.
    std::vector<std::vector<double>> ring_cable_waits;
    double tree_cable_wait_s = 0;
    bool intra_nvlink = true;                 // every machine's rings are direct NVLink (no NVB hop)
    bool intra_nvb = false;                   // some ring hop goes through an intermediate GPU (NVB)
    bool intra_any_nvlink = true;             // every machine's ring hops are NVLink, direct or NVB
    int inter_path = 0;                       // NCCL's typeInter: 0 PCIe switches only (PXB or better), 1 relayed by a GPU (PXN), 2 through a CPU (PHB or worse)
    int tree_depth = 0;                       // every tree's steps from a leaf to the root: chain + ceil(log2 machines)
    int tree_channels = 0;                    // NCCL's channels on the trees: 2 x searched channels (at most kMaxChannels)
    double searched_channels = 1;             // NCCL's searched channels across machines, ncclTopoDupChannels included
    // One tree channel's hop rate at most, in the links' payload terms (before the trees'
    // efficiency): collective::tree_channel_hop_max_Bps() / tree_efficiency(); infinity in one machine.
    double tree_hop_max_Bps = INFINITY;
    // Channels per tree and orientation (the tree or its copy): 1, 2 where NCCL duplicates its
    // searched channels across machines, less where kMaxChannels caps them.
    double channels_per_orientation() const { return trees.empty() ? 0.0 : tree_channels / (2.0 * static_cast<double>(trees.size())); }
    double nccl_net_latency_s = 0;  // the largest the NICs its rings and trees cross state (net_plugin_latency_s())
    bool uniform_compute_capability = true;
    bool amd_cpu = false;  // an AMD host in a member's machine (NCCL's llMaxBws across machines)
    bool ppn_below_2 = false;  // across machines, fewer than 2 ranks per machine on average (NCCL: ppn < 2)
    // NVLS (collective::nvls_efficiency()): one machine, every member on an NVSwitch over
    // NVLink4+; the NVLS flows' bottleneck (payload) and the GPUs' NVLink as NCCL rates it.
    bool nvls = false;
    double nvls_gpu_Bps = 0, nvls_rated_Bps = 0;  // the smallest of the flows' / members'
    // NVLS_TREE (collective::nvls_tree_efficiency()): two or more machines, each as NVLS
    // needs; nvls_gpu_Bps and nvls_rated_Bps over all machines. The members per machine
    // (machine order), the heads (one per NIC rail, the same count in every machine), and
    // the heads' network paths as NCCL rates them (the smallest).
    bool nvls_tree = false;
    std::vector<std::vector<int>> nvls_locals, nvls_heads;
    double nvls_tree_nic_rated_Bps = 0;
  };
  static constexpr int kMaxChannels = 32;  // NCCL's MAXCHANNELS (src/include/device.h)
  bool nvls_machine(const std::vector<int>& local, int cc, double& gpu_Bps, double& rated_Bps);
  const Structure& structure(const std::vector<int>& gpus);
  // NCCL's latency of algorithm a with protocol pr on s (collective::latency_s()): across
  // machines, intra-machine steps at the machine's link class and network steps apart.
  // `tuner`: as NCCL's tuner reckons it, which counts rings through an intermediate GPU at
  // PCIe's hop latency (its intraHw); what runs keeps NVLink's (the 5-V100 sweep agrees).
  // `hop_steps`, if given, receives the steps counted at the structure's link class.
  static double nccl_latency_s(const Structure& s, collective::Kind kind, int n, collective::Protocol pr, collective::Algorithm a, bool tuner,
                               int* hop_steps = nullptr);
  // The machine a node belongs to as NCCL sees it: its server, or in a composition without
  // peer-to-peer across hosts, the host it is attached to (each host is an NCCL node).
  int machine_key(int node) const;
  std::pair<std::vector<int>, std::map<int, std::vector<int>>> group_by_machine(const std::vector<int>& gpus) const;
  CollectivePlan plan_all_to_all(double in_bytes, const std::vector<int>& gpus);
  // A machine's members (rank order) in NCCL's system order: see collectives.cpp.
  std::vector<int> system_order(const std::vector<int>& members) const;
  std::vector<Ring> pack_rings(const std::vector<std::vector<int>>& candidates, std::map<std::pair<int, int>, double>& residual, size_t max);
  // The widest rate the hops share, by search capacities (links only, as NCCL's search).
  double bottleneck(const std::vector<std::pair<int, int>>& hops, const std::map<std::pair<int, int>, double>& residual);
  std::vector<std::pair<int, int>> resources(int a, int b);  // capacity keys of a route
  double capacity(std::pair<int, int> key) const;
  double search_capacity(std::pair<int, int> key) const;  // as NCCL's ring search sees it: links only
  // What a hop from a to b achieves relative to a direct one: below 1 where it goes
  // through an intermediate GPU's memory (NCCL's P2P/indirect on an NVB path).
  double indirect_factor(int a, int b);
  // The latency the network plugin of the route's NICs reports (topo::Node::nccl_net_latency_s;
  // the largest of them), 0 for routes inside a machine.
  double net_plugin_latency_s(int a, int b);
  // Time the flows need on their busiest resource, alone on the topology: max over links,
  // memories and SHM budgets of (bytes crossing it / its capacity), in seconds.
  double flows_bound_s(const std::vector<Flow>& flows);
  std::map<std::pair<int, int>, double> loads(const std::vector<Flow>& flows);  // bytes per capacity key
  double shm_step_s(int a, int b);  // per-step wait of an SHM hop (0 if the route is not SHM)
  double cable_step_s(int a, int b);  // per-step wait of a direct hop for its cables (0 for SHM hops)

  const topo::Topology& topo_;
  std::vector<char> pxn_proxies_;
  std::map<std::pair<int, int>, topo::Route> routes_;
  std::map<std::pair<int, int>, std::vector<std::pair<int, int>>> resources_;
  std::map<std::vector<int>, Structure> structures_;
};

}  // namespace composim::sim
