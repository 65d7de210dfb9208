// File: models/collective.hpp
//
// Collective communication model (NCCL): the schedule, protocol fractions and latencies that
// sim/collectives.hpp turns into flows on the topology.
//
// A collective of kind k over n ranks moves, from every rank to its ring successor,
//   all_reduce      2(n-1)/n * S      (S = bytes per rank)
//   reduce_scatter   (n-1)/n * S
//   all_gather       (n-1)/n * S_out  (S_out = n * S_in)
//   broadcast/reduce          S       (pipelined ring)
//   all_to_all       S/n to each of the n-1 others
//   send_recv                 S       (to the peer)
// as concurrent SimGrid flows on the topology's routes (so they contend with each other and
// with memcpys), each inflated by the protocol's efficiency (protocol_efficiency()). The collective then completes
// after a latency of base_latency(algorithm, protocol) + steps * hop_latency(link class,
// protocol), NCCL's own cost model. All member ranks' kernels end together.
//
// Tree (all-reduce only, as NCCL): a chain through each node's GPUs and a binary tree
// between nodes; every edge carries the buffer up (reduce) and down (broadcast) at once.
// The algorithm and protocol are those with the least predicted time, as NCCL's tuner
// picks them, unless the trace or the command line says which.
//
// Sources: NVIDIA/nccl src/graph/tuning.cc (baseLat, hwLat; values of NCCL 2.14-2.17),
// src/device/prims_ll.h and prims_ll128.h (line formats), nccl-tests doc/PERFORMANCE.md
// (bytes moved per algorithm).
#pragma once

#include <string>
#include <string_view>

#include "models/registry.hpp"

namespace composim::collective {

enum class Kind { all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all, send_recv, unknown };
enum class Protocol { ll, ll128, simple };
enum class Algorithm { ring, tree, nvls, nvls_tree };
enum class LinkClass { nvlink, pcie, network };

std::string_view to_string(Algorithm a);

// nccl-tests' bus-bandwidth factor (doc/PERFORMANCE.md): busbw = algbw * factor.
// all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n; others 1.
double busbw_factor(Kind kind, int n);

std::string_view to_string(Kind k);
std::string_view to_string(Protocol p);

// parse_kind()
//
// Kind from a name as written by NCCL kernels ("AllReduce"), the profiler's
// "Collective name" arg ("allreduce", "_allgather_base", "reduce_scatter_tensor_coalesced")
// or our IR ("all_reduce"). Returns Kind::unknown if none matches.
Kind parse_kind(std::string_view name);

// kind_named()
//
// Kind from its own name exactly ("all_reduce", as to_string() writes it), for what users
// and our IR write; Kind::unknown otherwise (parse_kind() would read "alreduce" as a reduce).
Kind kind_named(std::string_view name);
// The names kind_named() takes, comma-separated, for messages and help.
inline constexpr const char* kKindNames = "all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all, send_recv";

// NcclKernelInfo: what an NCCL kernel name says. Names: "ncclKernel_AllReduce_RING_LL_Sum_float(...)"
// (NCCL <= 2.18) and "ncclDevKernel_AllGather_RING_LL(...)" (2.19+). In NCCL <= 2.18 the
// protocol in the name is the kernel's entry specialisation, not necessarily the protocol
// used, so `protocol_reliable` is false for that naming.
struct NcclKernelInfo {
  bool is_nccl = false;
  Kind kind = Kind::unknown;
  std::string algorithm;  // "RING", "TREE", ... or empty
  Protocol protocol = Protocol::simple;
  bool protocol_reliable = false;
};
NcclKernelInfo parse_nccl_kernel_name(std::string_view name);

// The algorithm names NCCL's kernel names carry (what NcclKernelInfo::algorithm holds when
// not empty), comma-separated for messages; is_nccl_algorithm_name() tests one.
inline constexpr const char* kNcclAlgorithmNames = "RING, TREE, NVLS, NVLS_TREE, COLLNET, COLLNET_DIRECT, COLLNET_CHAIN, PAT";
bool is_nccl_algorithm_name(std::string_view name);
// Whether NCCL runs the named algorithm only in Simple (NVLS, NVLS_TREE).
bool runs_only_in_simple(std::string_view algorithm_name);

// Size in bytes of one element of a profiler dtype name ("Float", "BFloat16", "Half",
// "Double", "Int", "Long", "Byte", "Char", "Bool"); 0 if unknown.
int dtype_size_B(std::string_view dtype);
// One name per element type, whatever the spelling ("Float", "float32" and "float" are
// "float32"; PyTorch's Byte is uint8 and Char int8); "" if unknown.
std::string canonical_dtype(std::string_view dtype);

// Bytes each rank sends to its ring successor, and the ring's number of steps.
struct RingSchedule {
  double bytes_per_rank = 0;
  int steps = 0;
};
// in_bytes: bytes per rank in the input buffer; n: ranks.
RingSchedule ring_schedule(Kind kind, int n, double in_bytes);

// Protocol NCCL picks by message size when the trace does not say (thresholds of NCCL's
// tuning for a single node: LL below 64 KiB, LL128 below 4 MiB on NVLink, Simple above).
Protocol choose_protocol(double bytes, LinkClass link_class);

// Fraction of the structure's bandwidth a protocol achieves, as NCCL's tuning models it:
// LL 1/4 for all-reduce, reduce and across machines, else 1/3 (8-byte stores with a flag,
// polled by the receiver); LL128 0.92 (120 of 128 bytes carry data, minus flag polling);
// Simple 1. The LL and LL128 values are the parameters collective.efficiency_LL_allreduce
// (the 1/3 case scales it by 4/3) and collective.efficiency_LL128, which a parameter file
// may set.
double protocol_efficiency(Protocol p, Kind kind, bool multi_node);

// achieved_efficiency()
//
// The fraction of the links a protocol achieves when it runs, which is what the flows carry;
// NCCL's tuner chooses with protocol_efficiency(), its own estimate, and the two differ where
// measurements say so. LL128 on NVLink generation g (2-5) is the parameter
// collective.efficiency_LL128_achieved_nvlink_gen<g>: on V100 (gen2) LL128's wire efficiency,
// 120/128, with achieved_processing_s() in series; other generations have no measurement and
// keep the tuner's 0.92. Elsewhere equal to protocol_efficiency().
// nvlink_generation: 0 when the structure is not NVLink.
double achieved_efficiency(Protocol p, Kind kind, bool multi_node, int nvlink_generation);

// achieved_processing_s()
//
// Time, in seconds, each GPU spends on a ring's bus bytes (bytes per rank of the ring
// schedule) beyond the links' time, for LL128 on NVLink generation g: bus_bytes /
// collective.ll128_gpu_rate_nvlink_gen<g>_Bps (0 for other protocols, or a rate of 0).
// V100: 294 GB/s, so LL128 runs below Simple on a DGX-1 where NCCL's tuner, which assumes
// 0.92 of the links, still picks it (up to 4 MiB on 4 GPUs, 13 MiB on 8). Why a term in
// series: one fraction of the links cannot fit the vTrain sweeps (2-ring structures reach
// 0.85 of their links, 4 rings 0.63-0.67, 6 rings 0.61); a fixed per-GPU rate added to the
// links' time fits 4, 7 and 8 GPUs within 5.4% (time) and predicts the held-out 3 and 6 GPUs'
// LL128 points within 5.1% and 7.3%. Its mechanism is not established. Measured only for
// ring all-reduce inside a DGX-1: other ring collectives get the same term on their bus
// bytes, trees get it on 2 x their input, and it is a delay per collective, not a resource
// that concurrent collectives on one GPU share.
double achieved_processing_s(Protocol p, int nvlink_generation, double bus_bytes);

// Latency a protocol adds, when it runs, beyond NCCL's latency model (latency_s()), in
// seconds: collective.extra_latency_LL128_achieved_nvlink_gen<g>_s for LL128 on NVLink
// generation g (V100: 23.3 us, fitted with the rate above) and
// collective.extra_latency_Simple_achieved_nvlink_gen2_s for Simple on V100 (5.0 us), else 0.
double achieved_extra_latency_s(Protocol p, int nvlink_generation);
double wire_efficiency(Protocol p);

// Latency term in seconds: base_latency(algorithm, protocol) + steps * hop_latency(link
// class, algorithm, protocol), NCCL's model. NVLS (Simple, NVLink only): one term whatever
// the steps, NCCL 2.18.3's 23 us (collective.base_latency_nvls_Simple_s).
double latency_s(Protocol p, LinkClass link_class, int steps, Algorithm a = Algorithm::ring);

// NCCL's per-step latency of a link class for an algorithm and protocol (hwLat), seconds;
// 0 for NVLS, whose latency has no per-step part.
double hop_latency_s(Protocol p, LinkClass link_class, Algorithm a);

// NCCL's latency across machines: base + intra_steps x the intra-machine hop latency (x 1.8
// for LL, as NCCL 2.14-2.17 do across machines) + inter_steps x the network hop latency.
// NCCL's ring all-reduce counts 2 x machines network steps of its 2(n-1); its tree
// 2 x (GPUs per machine - 1) intra and 2 x floor(log2 machines) network steps.
double latency_s(Protocol p, Algorithm a, LinkClass intra, int intra_steps, int inter_steps);

// ll_max_busbw_Bps()
//
// NCCL's cap on what the LL protocol moves, in bus bandwidth (bytes/s), from tuning.cc's
// llMaxBws (NCCL 2.14-2.18): inside one machine by GPU generation (Volta 39, Ampere and
// Hopper 87.7 GB/s), across machines by CPU vendor (Intel 39 for 2 machines, 20.4 for more;
// AMD 22.5 and 19.0). LL's 8-byte stores carry 4 bytes of data and a flag the receiver
// polls, so what limits it is the GPUs and CPUs, not the links: the cap bounds both the
// tuner's estimate and the flows (a ring's busbw; a tree's algbw is half of it, as NCCL
// converts). Parameters collective.ll_max_busbw_*.
// compute_capability: the lowest of the members' (70, 80, 90, ...); machines: 1, 2, more.
double ll_max_busbw_Bps(int compute_capability, int machines, bool amd_cpu = false);

// NCCL's tuner caps (tuning.cc of NCCL 2.17-2.18, "Various model refinements"), bus
// bandwidth in bytes/s. They bound only NCCL's estimate, so composim applies them only to
// its choice of algorithm and protocol; what runs is the flows.
// compute_capability: the lowest of the members'; machines: 1, 2, more (NCCL's N1/N2/N4).
// NCCL 2.17-2.18 predate Blackwell (10.x), which no version of these tables fits: composim
// takes no caps there (2.19+ dropped the 235/370 caps; their per-channel tables differ by
// version) and 2.17-2.18's Hopper plateau, a hybrid of no NCCL version.
//
// tuner_busbw_cap_Bps(): every algorithm's busBw before the protocol's fraction: Ampere
// (8.x) 235 GB/s, Hopper (9.x) 370 GB/s, none before Ampere or on Blackwell (infinity). NCCL 2.14-2.16
// apply 235 only when every GPU is 8.0 and have no Hopper cap. Parameters
// collective.tuner_busbw_cap_{ampere,hopper}_Bps.
double tuner_busbw_cap_Bps(int compute_capability);
//
// tree_max_busbw_per_channel_Bps(): a tree's busBw is at most its searched channels x this
// (perChMaxTreeBws): Volta 18.5 / 10.0, Ampere 23.6 / 17.8, Hopper 41.4 / 33.0 GB/s for 2 /
// more machines; infinity on Blackwell and inside one machine (see below). On 2 x 8 A100 with 8 trees it caps a tree's
// algbw at 8 x 23.6 / 2 = 94.4 GB/s, below a ring's over 8 x 200 Gb/s NICs (106.7), so
// NCCL's tuner takes the ring for large messages there. Parameters
// collective.tree_max_busbw_per_channel_{volta,ampere,hopper}_{2nodes,4nodes}_Bps.
double tree_max_busbw_per_channel_Bps(int compute_capability, int machines);
//
// tree_channel_hop_max_Bps(): the most one channel of a tree that spans machines moves over
// any of its hops (NVLink hops inside each machine as well as network hops), at the rates
// trees achieve (after tree_efficiency() and before a protocol's factor), in the chunks'
// trip up and down the tree and in the steady flows alike. NCCL computes a tree's busBw as
// nChannels x bw, bw the link bandwidth one searched channel takes on every hop, and caps it
// as min(busBw x 0.92, nChannels x perChMaxTreeBw) (tuning.cc 2.17-2.28), nChannels counted
// after ncclTopoDupChannels: the table is thus one searched channel's hop rate, in the units
// of bw x 0.92; NCCL runs each searched channel as two (the tree and its mirror,
// ncclTopoPostset) on the same links, so one channel gets half:
// tree_max_busbw_per_channel_Bps() / 2 (Hopper, 2 machines: 20.7 GB/s). Reading the table
// as a per-hop rate, not only as a cap on NCCL's estimate, is composim's, chosen after the
// 2 x 8 H100 TCPXO sweep's 1-16 MiB points were seen 20-23% fast; with it they are within
// 16%, mostly through its 14 NVLink hops (a channel's share there is 26.9 GB/s of NVLink
// and 24.2 of a NIC, both above this rate; capping the 2 network hops alone leaves 1-16 MiB
// 19-22% fast). If it is a GPU's per-channel rate, NCCL's one-machine
// column (Hopper 38.7) would bound trees inside one machine too; composim applies none
// there (its channel count inside a machine is not NCCL's). Hopper on 3 or more machines
// is 2.17-2.18's 33.0 (36.0 from 2.19), as the tuner's. Infinity inside one machine and on
// Blackwell, as tree_max_busbw_per_channel_Bps().
double tree_channel_hop_max_Bps(int compute_capability, int machines);
//
// ll128_max_busbw_per_channel_Bps(): LL128's busBw is at most the searched channels x this
// (ll128MaxBwPerCh): Volta and Ampere 20, Hopper 36.7 GB/s (infinity on Blackwell). composim
// applies it, and tree_max_busbw_per_channel_Bps(), across machines, where its rings and
// trees are NCCL's searched channels (one per NIC rail), not inside one machine: there its
// ring search does not reproduce NCCL's channel count on NVSwitch systems (it finds one ring
// at the switch's full speed where NCCL counts 12-16 channels), so a per-channel cap would
// be wrong by that ratio. Parameters
// collective.ll128_max_busbw_per_channel_{volta,ampere,hopper}_Bps.
double ll128_max_busbw_per_channel_Bps(int compute_capability);
//
// ring_plateau_latency_factor(): NCCL multiplies a ring's latency in Simple by this for
// all-reduce across machines once the message reaches ranks / 16 x 64 KiB ("Plateau
// effect of ring", ncclTopoGetAlgoTime): 1.9 before Hopper, 1.5 from Hopper. Parameters
// collective.ring_plateau_factor_{volta_ampere,hopper}.
double ring_plateau_latency_factor(int compute_capability);

// tree_simple_chunk_B()
//
// Bytes of one Simple chunk of a tree, per channel: NCCL_BUFFSIZE / NCCL_STEPS (8), the
// parameter collective.nccl_buffsize_B (NCCL's default 4 MiB: 512 KiB chunks). NCCL 2.22+
// (enqueue.cc, calcCollChunking) keeps this size for every message; NCCL 2.12 to 2.21
// (computeColl) halved it, down to 32 KiB, for messages too small to give each channel
// depth x 8 chunks, which composim does not model.
double tree_simple_chunk_B();

// tree_simple_chunk_latency_s()
//
// The part of NCCL's per-step latency for trees in Simple (hwLat 28 us, every link class)
// that stands for moving one chunk: tuning.cc says "Tree/Simple is the latency a 256kB
// chunk, which is ~ base lat + 256k/12GB/s", so 262144 B / 12 GB/s = 21.8 us of it. NCCL's
// tuner counts it whatever the message; a running tree moves its actual chunks instead:
// composim's runtime latency leaves it out and adds the tree's pipeline fill, (hops - 1) x
// chunk / channel bandwidth (sim/collectives.cpp), so small messages are not charged for
// chunks they do not have. The parameter collective.tree_simple_chunk_latency_s: other
// latency tables (RCCL 2.8's tree steps are 3.8-19.5 us) set it to what their step holds.
double tree_simple_chunk_latency_s();

// Fraction of a tree's bandwidth NCCL's trees reach (tuning.cc: tree busBw x 0.92), the
// parameter collective.efficiency_tree; applied to every protocol on trees, in the tuner
// and the flows. The 2 x 8 H100 source reaches 184 GB/s algbw on 200 GB/s of NICs: 0.92.
double tree_efficiency();

// tree_correction_factor()
//
// NCCL's correction of a tree's bandwidth in its tuner, by protocol and message size
// (tuning.cc, treeCorrectionFactor: "Trees are not perfectly sticking to the model for
// medium sizes"): powers of two of the message's bytes from 64 B (index log2(bytes / 64))
// to 256 MiB, 0.4-1.0; 1 beyond. The table of NCCL 2.20-2.21 (23 entries; later versions
// add a 24th). Only the tuner's choice uses it: what runs is the flows and the pipeline.
double tree_correction_factor(Protocol p, double bytes);

// tuner_bandwidth_fraction()
//
// The fraction of a structure's link bandwidth that NCCL's tuner assumes: NCCL rates links
// with its own figures (topo.h), about 0.8 of the signalling rate, while flows run at the
// links' rates. Only the choice of algorithm and protocol uses it. Parameters
// collective.tuner_bandwidth_fraction_{nvlink,pcie}; 1 across machines. The PCIe parameter
// is a fraction of the data rate (NCCL: 12 GB/s of Gen3 x16's 15.75), while a structure's
// bandwidth is its links' rate, after TLP overhead (at 256 B MPS) and pcie.link.efficiency:
// the fraction returned is converted to that, so a ring bound by a Gen3 x16 link is rated
// 12 GB/s. A ring bound by something else (the SHM transport's rate, a host's memory) gets
// the same factor.
double tuner_bandwidth_fraction(LinkClass link_class);

// shm_transport_Bps()
//
// Rate, in bytes/s, at which one GPU sends to its peers through host memory (NCCL's SHM
// transport: P2P disabled or impossible; both GPUs' kernels copy through a host buffer
// over PCIe), whatever the PCIe links would allow: the parameter
// collective.shm_transport_Bps. Default 5.2 GB/s, fitted to the only measurement we have
// (DGX A100, 4 GPUs, NCCL_P2P_DISABLE=1: 5.2 GB/s busbw at 1-8 GiB, NCCL 2.16); of the
// same order as two published runs we cannot replay: NVIDIA/nccl #1817 (8 x L20, Gen4, SHM,
// 6.1 GB/s average busbw over 8 B-512 MiB) and #384 (Gen3, one channel, 3.9 GB/s). Why it is
// so much lower than PCIe: the receiving GPU's kernel reads host memory across PCIe
// (non-posted reads, few in flight per channel) while the sending one writes to it, and
// CPUs handle such bidirectional traffic poorly (sjeaugey in #384).
double shm_transport_Bps();

// indirect_nvlink_efficiency()
//
// What a ring hop through an intermediate GPU (NCCL's PATH_NVB: P2P/indirect, the data
// staged in the intermediate GPU's memory and read from there by the receiver) moves,
// relative to a direct NVLink hop on the same links: such a flow carries its bytes divided
// by this. Parameter collective.efficiency_indirect_nvlink, 0.825: fitted to the only
// measurement with such hops (5 V100s of a DGX-1, vTrain, 64 MiB-1 GiB: 37.2 GB/s busbw
// where the links allow 45).
double indirect_nvlink_efficiency();

// NVLS: NVLink SHARP all-reduce inside one machine on NVSwitch gen3+ (H100 and newer). Each
// GPU reduces its 1/n slice in the switch (multimem.ld_reduce: the switch reads that slice
// from every GPU) and multicasts the result (multimem.st): per GPU, S(n+1)/n bytes go up to
// the switch and S(n+1)/n come down, against a ring's 2S(n-1)/n each way (NCCL's
// all_reduce.h NVLS kernel; "transmit size in one direction and 1/N*size in the other" per
// phase, sjeaugey in NVIDIA/nccl #1506). NCCL 2.18.3's rules: Simple only, all-reduce only,
// one machine of 3 or more GPUs of compute capability 9.0+ on an NVSwitch.

// nvls_efficiency()
//
// What NVLS moves relative to the GPU's NVLink payload bandwidth: the flows carry
// S(n+1)/n / this each way. Parameter collective.efficiency_nvls, 0.818: fitted to one
// published figure, 8 x H100 SXM at 480 GB/s busbw (275 algbw; sjeaugey, NVIDIA/nccl-tests
// #212); with it 5-7 H100s come out within 2.3% of NVIDIA/nccl #1455's 420, 440 and 460
// GB/s (a test asserts them; on 4, NCCL's tuner and composim's keep the ring).
double nvls_efficiency();

// nvls_tuner_busbw_Bps()
//
// NCCL's estimate of NVLS's bus bandwidth on n GPUs (2.18.3 search.cc and tuning.cc): its
// graph search gives each of n channels the largest speed s of sm90SpeedArrayIntra {60, 40,
// 30, 24, 20, 15, 12, 6, 3} GB/s such that a GPU, head of one channel (2s) and member of
// the others (s each), needs (n+1)s <= its NVLink bandwidth as NCCL rates it
// (`gpu_rated_Bps`); busBw = n x s. The tuner then takes busBw x 5/6 as the algorithm
// bandwidth. Returns 0 if no speed fits.
double nvls_tuner_busbw_Bps(int n, double gpu_rated_Bps);

// NVLS_TREE: all-reduce across machines of NVSwitch gen3+ GPUs (NCCL 2.18+, the default for
// large all-reduces on H100 clusters with NVLS). In each machine the GPUs reduce through the
// switch as NVLS does (S(k+1)/k each way per GPU on k GPUs); H head GPUs, one per NIC
// ("NVLS Head" in NCCL's log, one per NIC: NVIDIA/nccl #1357), each own 1/H of the data and
// run NCCL's double binary tree between machines with it (S/H up and down per head on 2
// machines; up to 2S/H on an interior machine of the tree and its twin); the result is
// multicast back through the switch (NCCL's all_reduce.h, runTreeSplit with NVLS).

// nvls_tree_efficiency()
//
// What NVLS_TREE's NVLink part moves relative to the GPU's NVLink payload bandwidth (the
// in-machine flows carry S(k+1)/k / this each way). Parameter collective.efficiency_nvls_tree,
// 0.687: efficiency_nvls x 0.84, the ratio NCCL 2.18's own tuner puts between the two on 2
// machines (tuning.cc: NVLS_TREE's algbw is 0.70 of its graph's busBw there, NVLS's 5/6; as
// copied in openxla/xla mock_nccl_utils.cc). Not fitted: 2 x 8 H100 then come out at 431 GB/s
// busbw where NVIDIA/nccl #1221 measured 430 (NCCL 2.19.3, 8 x 400 Gb/s RoCE per machine; a
// test asserts it).
double nvls_tree_efficiency();

// nvls_tree_tuner_busbw_Bps()
//
// NCCL's estimate of NVLS_TREE's bus bandwidth (search.cc and tuning.cc, 2.18): its NVLS graph
// has one channel per head, all at the largest speed s of sm90SpeedArrayInter {48, 45, 42,
// 40, 30, 24, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12} GB/s that a head's NVLink ((H+1)s
// <= `gpu_rated_Bps`, as NVLS) and its NIC (s <= `nic_rated_Bps`) carry; busBw = H x s, or
// H x s/2 on 3 or more machines (an interior machine's NIC carries both trees; NCCL 2.20's
// tuning.cc, bwInter/2). The tuner takes busBw x 5/6 as the algorithm bandwidth. Returns 0 if
// no speed fits.
double nvls_tree_tuner_busbw_Bps(int heads, int machines, double gpu_rated_Bps, double nic_rated_Bps);

// nvls_tree_latency_s()
//
// NCCL's latency of NVLS_TREE (tuning.cc, NVIDIA/nccl b647562, 2.20): the in-machine NVLS
// part, 23 us (collective.base_latency_nvls_Simple_s), plus 2 log2(machines) network steps
// of 14 us (collective.hop_latency_network_nvls_tree_Simple_s) each, plus twice the network
// plugin's latency per step (its latencyInter, counted again for Simple's flush). 2 x 8 H20
// measured 46-47 us at 4 B-1 KiB (NVIDIA/nccl #1244, NCCL 2.21.5); this gives 51 us.
// (NCCL 2.18 counted 2(machines-1) steps of 19 us, linear in the machines.)
double nvls_tree_latency_s(int machines, double plugin_latency_s);
// Its network steps: 2 log2(machines), rounded down as NCCL's log2i.
int nvls_tree_network_steps(int machines);

ModelInfo collective_model_info();

}  // namespace composim::collective
