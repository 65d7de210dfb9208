#include "models/collective.hpp"

#include "models/pcie.hpp"
#include "models/registry.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

namespace composim::collective {
namespace {

std::string normalise(std::string_view s) {
  std::string out;
  for (unsigned char c : s)
    if (std::isalnum(c)) out.push_back(static_cast<char>(std::tolower(c)));
  return out;
}

// NCCL tuning.cc, 2.14-2.17 (NVIDIA/nccl 2.14.3, c4e2aa6; 2.17.1 has the same values):
// latencies in microseconds, protocols LL/LL128/Simple. The measured single-node sources ran
// these versions (vTrain: NCCL 2.14; LLM-Insights: 2.16). 2.18.1 raised ring LL128's base to
// 14 us (and ring LL's NVLink hop to 0.6 us); later versions changed the tree rows.
constexpr double kBaseLat_us[2][3] = {/* ring */ {3.6, 10.0, 8.4}, /* tree */ {4.4, 4.4, 0.0}};
// hwLat per link class (NVLink, PCI, network), algorithm (ring, tree), protocol.
constexpr double kHwLat_us[3][2][3] = {
    /* NVLink  */ {{0.47, 1.9, 3.4}, {0.52, 1.25, 28.0}},
    /* PCI     */ {{1.0, 2.5, 5.7}, {1.0, 1.9, 28.0}},
    /* network */ {{2.7, 4.0, 9.6}, {5.0, 8.5, 28.0}}};

// V100 LL128: least-squares fit (relative) of t = latency_s() + extra + bus bytes x
// (1 / (ring bandwidth x 120/128) + 1 / gpu rate) to the vTrain V100 all-reduce times at every
// 1 MiB where NCCL ran LL128 on 4 GPUs (1-4 MiB), 7 GPUs (1-8 MiB) and 8 GPUs (1-13 MiB):
// rms 3.0%, max 5.4%; 3 and 6 GPUs held out (LL128 at 1 MiB and 1-3 MiB: within 5.1% and 7.3%
// in time, 4.8% and 6.8% in busbw). The link fraction is
// LL128's wire efficiency, not fitted. One rate for all ring counts fits where one link
// fraction could not: 2-ring structures (3, 6 GPUs) reach 0.85 of their links, 4 rings 0.63-0.67,
// 6 rings 0.61 (a constant fraction, 0.688, missed the held-out 3 and 6 GPUs by 14%).
constexpr double kAchievedLL128Gen2 = 120.0 / 128.0;
constexpr double kExtraLatencyLL128Gen2_s = 23.3e-6;
constexpr double kLL128GpuRateGen2_Bps = 294e9;
// Mean residual (measured - modelled) of the same sweeps where NCCL ran Simple, 1-32 MiB,
// 2, 3, 4, 6, 7 and 8 GPUs, each point weighted by 1/time^2 (least relative squares).
constexpr double kExtraLatencySimpleGen2_s = 5.0e-6;

}  // namespace

std::string_view to_string(Kind k) {
  switch (k) {
    case Kind::all_reduce: return "all_reduce";
    case Kind::all_gather: return "all_gather";
    case Kind::reduce_scatter: return "reduce_scatter";
    case Kind::broadcast: return "broadcast";
    case Kind::reduce: return "reduce";
    case Kind::all_to_all: return "all_to_all";
    case Kind::send_recv: return "send_recv";
    case Kind::unknown: break;
  }
  return "unknown";
}

std::string_view to_string(Protocol p) {
  switch (p) {
    case Protocol::ll: return "LL";
    case Protocol::ll128: return "LL128";
    case Protocol::simple: return "Simple";
  }
  return "Simple";
}

Kind parse_kind(std::string_view name) {
  const std::string n = normalise(name);
  // Order matters: "reducescatter" before "reduce", "allreduce" before "reduce".
  if (n.find("allreduce") != std::string::npos) return Kind::all_reduce;
  if (n.find("reducescatter") != std::string::npos) return Kind::reduce_scatter;
  if (n.find("allgather") != std::string::npos) return Kind::all_gather;
  if (n.find("alltoall") != std::string::npos) return Kind::all_to_all;
  if (n.find("broadcast") != std::string::npos) return Kind::broadcast;
  if (n.find("sendrecv") != std::string::npos || n == "send" || n == "recv" || n.find("p2p") != std::string::npos)
    return Kind::send_recv;
  if (n.find("reduce") != std::string::npos) return Kind::reduce;
  return Kind::unknown;
}

Kind kind_named(std::string_view name) {
  const Kind k = parse_kind(name);
  return k != Kind::unknown && to_string(k) == name ? k : Kind::unknown;
}

NcclKernelInfo parse_nccl_kernel_name(std::string_view name) {
  NcclKernelInfo info;
  std::string_view rest;
  if (name.rfind("ncclDevKernel_", 0) == 0) {
    rest = name.substr(14);
    info.protocol_reliable = true;
  } else if (name.rfind("ncclKernel_", 0) == 0) {
    rest = name.substr(11);
  } else if (name.rfind("nccl", 0) == 0 && name.find("Kernel") < name.find('(')) {
    // NCCL before 2.8: nccl<Kind>[<Algorithm>][LL|LL128]Kernel_<op>_<type>, e.g.
    // ncclAllReduceRingLLKernel_sum_f32(CollectiveArgs) (2.3 had no algorithm:
    // ncclAllReduceLLKernel_sum_f32); Simple has no protocol field. Only names that begin with
    // an operation: other nccl...Kernel names (ncclCustomAllReduceKernel) are not NCCL's.
    std::string_view head = name.substr(4, name.find("Kernel") - 4);
    std::string_view kind_word;
    for (std::string_view k : {"AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce", "SendRecv", "Send", "Recv", "AllToAll"})
      if (head.rfind(k, 0) == 0) {
        kind_word = k;
        break;
      }
    if (kind_word.empty()) return info;
    info.kind = parse_kind(kind_word);
    info.is_nccl = true;
    head.remove_prefix(kind_word.size());
    for (auto [word, algorithm] : {std::pair<std::string_view, const char*>{"CollNet", "COLLNET"}, {"Ring", "RING"}, {"Tree", "TREE"}})
      if (head.rfind(word, 0) == 0) {
        info.algorithm = algorithm;
        head.remove_prefix(word.size());
        break;
      }
    info.protocol = head == "LL" ? Protocol::ll : head == "LL128" ? Protocol::ll128 : Protocol::simple;
    // As with ncclKernel_ names, a kernel may run other protocols than its name's.
    return info;
  } else {
    return info;
  }
  info.is_nccl = true;
  rest = rest.substr(0, rest.find('('));
  // Fields separated by '_': the kind first, then the algorithm (one or two fields:
  // NVLS_TREE, COLLNET_DIRECT) followed by the protocol, with the reduction and type before
  // them (2.19+: AllReduce_Sum_bf16_RING_LL) or after (<= 2.18: AllReduce_RING_LL_Sum_float).
  std::vector<std::string> fields;
  while (!rest.empty()) {
    const auto pos = rest.find('_');
    fields.emplace_back(rest.substr(0, pos));
    rest = pos == std::string_view::npos ? std::string_view() : rest.substr(pos + 1);
  }
  if (fields.empty()) return info;
  info.kind = parse_kind(fields[0]);
  std::string proto;
  for (size_t i = 1; i < fields.size(); ++i) {
    const std::string& f = fields[i];
    if (f != "RING" && f != "TREE" && f != "NVLS" && f != "COLLNET" && f != "PAT") continue;
    info.algorithm = f;
    size_t next = i + 1;
    if (next < fields.size() && ((f == "NVLS" && fields[next] == "TREE") || (f == "COLLNET" && (fields[next] == "DIRECT" || fields[next] == "CHAIN"))))
      info.algorithm += "_" + fields[next++];
    if (next < fields.size()) proto = fields[next];
    break;
  }
  if (proto == "LL") info.protocol = Protocol::ll;
  else if (proto == "LL128") info.protocol = Protocol::ll128;
  else if (proto == "SIMPLE") info.protocol = Protocol::simple;
  else info.protocol_reliable = false;
  return info;
}

bool runs_only_in_simple(std::string_view algorithm_name) { return algorithm_name == "NVLS" || algorithm_name == "NVLS_TREE"; }

bool is_nccl_algorithm_name(std::string_view name) {
  for (std::string_view rest = kNcclAlgorithmNames; !rest.empty();) {
    const auto comma = rest.find(", ");
    if (rest.substr(0, comma) == name) return true;
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 2);
  }
  return false;
}

int dtype_size_B(std::string_view dtype) {
  const std::string d = normalise(dtype);
  if (d == "float" || d == "float32" || d == "int" || d == "int32" || d == "uint32") return 4;
  if (d == "double" || d == "float64" || d == "long" || d == "int64" || d == "uint64") return 8;
  if (d == "half" || d == "float16" || d == "bfloat16" || d == "short" || d == "int16") return 2;
  if (d == "byte" || d == "char" || d == "bool" || d == "int8" || d == "uint8" || d.find("float8") == 0 || d == "f8e4m3" || d == "f8e5m2") return 1;
  return 0;
}

std::string canonical_dtype(std::string_view dtype) {
  if (dtype_size_B(dtype) == 0) return "";
  const std::string d = normalise(dtype);
  static const std::pair<const char*, const char*> kSynonyms[] = {{"float", "float32"}, {"int", "int32"},   {"double", "float64"}, {"long", "int64"},
                                                                   {"half", "float16"}, {"short", "int16"}, {"byte", "uint8"},     {"char", "int8"}};
  for (const auto& [name, canonical] : kSynonyms)
    if (d == name) return canonical;
  return d;
}

RingSchedule ring_schedule(Kind kind, int n, double in_bytes) {
  if (n <= 1) return {0.0, 0};
  const double frac = static_cast<double>(n - 1) / n;
  switch (kind) {
    case Kind::all_reduce: return {2.0 * frac * in_bytes, 2 * (n - 1)};
    case Kind::reduce_scatter: return {frac * in_bytes, n - 1};
    case Kind::all_gather: return {frac * in_bytes * n, n - 1};
    case Kind::broadcast:
    case Kind::reduce: return {in_bytes, n - 1};
    case Kind::all_to_all: return {frac * in_bytes, 1};
    case Kind::send_recv: return {in_bytes, 1};
    case Kind::unknown: break;
  }
  return {0.0, 0};
}

Protocol choose_protocol(double bytes, LinkClass link_class) {
  if (bytes < 64.0 * 1024) return Protocol::ll;
  if (bytes < 4.0 * 1024 * 1024 && link_class != LinkClass::network) return Protocol::ll128;
  return Protocol::simple;
}

double wire_efficiency(Protocol p) {
  switch (p) {
    case Protocol::ll: return 0.5;
    case Protocol::ll128: return 120.0 / 128.0;
    case Protocol::simple: return 1.0;
  }
  return 1.0;
}

double protocol_efficiency(Protocol p, Kind kind, bool multi_node) {
  switch (p) {
    case Protocol::ll:  // an efficiency above 1 (a parameter file's 0.8 x 4/3) would beat the link
      return std::min(1.0, param("collective.efficiency_LL_allreduce") * ((multi_node || kind == Kind::all_reduce || kind == Kind::reduce) ? 1.0 : 4.0 / 3.0));
    case Protocol::ll128: return param("collective.efficiency_LL128");
    case Protocol::simple: return 1.0;
  }
  return 1.0;
}

double achieved_efficiency(Protocol p, Kind kind, bool multi_node, int nvlink_generation) {
  if (p == Protocol::ll128 && nvlink_generation >= 2 && nvlink_generation <= 5)
    return param("collective.efficiency_LL128_achieved_nvlink_gen" + std::to_string(nvlink_generation));
  return protocol_efficiency(p, kind, multi_node);
}

double achieved_extra_latency_s(Protocol p, int nvlink_generation) {
  if (p == Protocol::ll128 && nvlink_generation >= 2 && nvlink_generation <= 5)
    return param("collective.extra_latency_LL128_achieved_nvlink_gen" + std::to_string(nvlink_generation) + "_s");
  if (p == Protocol::simple && nvlink_generation == 2) return param("collective.extra_latency_Simple_achieved_nvlink_gen2_s");
  return 0.0;
}

double achieved_processing_s(Protocol p, int nvlink_generation, double bus_bytes) {
  if (p != Protocol::ll128 || nvlink_generation < 2 || nvlink_generation > 5) return 0.0;
  const double rate = param("collective.ll128_gpu_rate_nvlink_gen" + std::to_string(nvlink_generation) + "_Bps");
  return rate > 0 ? bus_bytes / rate : 0.0;
}

double shm_transport_Bps() { return param("collective.shm_transport_Bps"); }

double indirect_nvlink_efficiency() { return param("collective.efficiency_indirect_nvlink"); }

double tree_simple_chunk_B() { return param("collective.nccl_buffsize_B") / 8.0; }  // NCCL_STEPS

double tree_simple_chunk_latency_s() { return param("collective.tree_simple_chunk_latency_s"); }

double ll_max_busbw_Bps(int compute_capability, int machines, bool amd_cpu) {
  if (machines <= 1) {
    if (compute_capability >= 90) return param("collective.ll_max_busbw_1node_hopper_Bps");
    if (compute_capability >= 80) return param("collective.ll_max_busbw_1node_ampere_Bps");
    return param("collective.ll_max_busbw_1node_volta_Bps");
  }
  const std::string scale = machines == 2 ? "2nodes" : "4nodes";
  return param("collective.ll_max_busbw_" + scale + (amd_cpu ? "_amd" : "_intel") + "_Bps");
}

namespace {
const char* tuner_generation(int compute_capability) { return compute_capability >= 90 ? "hopper" : compute_capability >= 80 ? "ampere" : "volta"; }
const char* tuner_scale(int machines) { return machines == 2 ? "2nodes" : "4nodes"; }
}  // namespace

double tuner_busbw_cap_Bps(int compute_capability) {
  if (compute_capability >= 100) return INFINITY;  // NCCL 2.17-2.18 predate Blackwell; later versions have no such cap
  if (compute_capability >= 90) return param("collective.tuner_busbw_cap_hopper_Bps");
  if (compute_capability >= 80) return param("collective.tuner_busbw_cap_ampere_Bps");
  return INFINITY;
}

double tree_max_busbw_per_channel_Bps(int compute_capability, int machines) {
  if (compute_capability >= 100 || machines <= 1) return INFINITY;
  return param(std::string("collective.tree_max_busbw_per_channel_") + tuner_generation(compute_capability) + "_" + tuner_scale(machines) + "_Bps");
}

double tree_channel_hop_max_Bps(int compute_capability, int machines) {
  return tree_max_busbw_per_channel_Bps(compute_capability, machines) / 2;  // the tree and its mirror
}

double ll128_max_busbw_per_channel_Bps(int compute_capability) {
  if (compute_capability >= 100) return INFINITY;
  return param(std::string("collective.ll128_max_busbw_per_channel_") + tuner_generation(compute_capability) + "_Bps");
}

double ring_plateau_latency_factor(int compute_capability) {
  return param(compute_capability >= 90 ? "collective.ring_plateau_factor_hopper" : "collective.ring_plateau_factor_volta_ampere");
}

double tree_efficiency() { return param("collective.efficiency_tree"); }

double tree_correction_factor(Protocol p, double bytes) {
  static constexpr double kFactor[3][23] = {
      {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},  // LL
      {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},  // LL128
      {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};       // Simple
  // NCCL: log2i(nBytes >> 6), the floor of the logarithm (0 for 0 and 1).
  auto units = static_cast<unsigned long long>(std::max(0.0, bytes)) >> 6;
  int log_size = 0;
  while (units >>= 1) ++log_size;
  return log_size < 23 ? kFactor[static_cast<int>(p)][log_size] : 1.0;
}

double tuner_bandwidth_fraction(LinkClass link_class) {
  if (link_class == LinkClass::nvlink) return param("collective.tuner_bandwidth_fraction_nvlink");
  if (link_class == LinkClass::pcie) {
    // The parameter is of the data rate (after the line code); a structure's PCIe bandwidth
    // is the links' rate, after TLP overhead (at the default MPS) and pcie.link.efficiency.
    const double tlp = static_cast<double>(pcie::kDefaultMaxPayload_B) / (pcie::kDefaultMaxPayload_B + pcie::kTlpOverhead_B);
    return param("collective.tuner_bandwidth_fraction_pcie") / (tlp * param("pcie.link.efficiency"));
  }
  return 1.0;
}

namespace {
const char* kProto[3] = {"LL", "LL128", "Simple"};
const char* kAlgo[2] = {"ring", "tree"};
const char* kClass[3] = {"nvlink", "pcie", "network"};

// The latencies in force (registry defaults or a parameter file), read once.
struct LatencyTable {
  double base[2][3], hop[3][2][3];
  LatencyTable() {
    for (int a = 0; a < 2; ++a)
      for (int p = 0; p < 3; ++p) {
        base[a][p] = param(std::string("collective.base_latency_") + kAlgo[a] + "_" + kProto[p] + "_s");
        for (int l = 0; l < 3; ++l) hop[l][a][p] = param(std::string("collective.hop_latency_") + kClass[l] + "_" + kAlgo[a] + "_" + kProto[p] + "_s");
      }
  }
};
}  // namespace

double latency_s(Protocol p, LinkClass link_class, int steps, Algorithm a) {
  if (a == Algorithm::nvls || a == Algorithm::nvls_tree) {  // one term, whatever the steps (NCCL 2.18.3); NVLS_TREE's network steps: nvls_tree_latency_s()
    static const double base = param("collective.base_latency_nvls_Simple_s");
    return base;
  }
  static const LatencyTable t;
  return t.base[static_cast<int>(a)][static_cast<int>(p)] + steps * hop_latency_s(p, link_class, a);
}

double hop_latency_s(Protocol p, LinkClass link_class, Algorithm a) {
  if (a == Algorithm::nvls || a == Algorithm::nvls_tree) return 0.0;
  static const LatencyTable t;
  return t.hop[static_cast<int>(link_class)][static_cast<int>(a)][static_cast<int>(p)];
}

double latency_s(Protocol p, Algorithm a, LinkClass intra, int intra_steps, int inter_steps) {
  const double ll_factor = p == Protocol::ll && inter_steps > 0 ? 1.8 : 1.0;
  return latency_s(p, intra, 0, a) + intra_steps * hop_latency_s(p, intra, a) * ll_factor + inter_steps * hop_latency_s(p, LinkClass::network, a);
}

std::string_view to_string(Algorithm a) {
  switch (a) {
    case Algorithm::ring: return "RING";
    case Algorithm::tree: return "TREE";
    case Algorithm::nvls: return "NVLS";
    case Algorithm::nvls_tree: return "NVLS_TREE";
  }
  return "RING";
}

double nvls_efficiency() { return param("collective.efficiency_nvls"); }

double nvls_tuner_busbw_Bps(int n, double gpu_rated_Bps) {
  static constexpr double kSm90SpeedArrayIntra_GBps[] = {60, 40, 30, 24, 20, 15, 12, 6, 3};
  if (n < 2) return 0.0;
  for (double s : kSm90SpeedArrayIntra_GBps)
    if ((n + 1) * s * 1e9 <= gpu_rated_Bps * (1 + 1e-9)) return n * s * 1e9;
  return 0.0;
}

double nvls_tree_efficiency() { return param("collective.efficiency_nvls_tree"); }

double nvls_tree_tuner_busbw_Bps(int heads, int machines, double gpu_rated_Bps, double nic_rated_Bps) {
  static constexpr double kSm90SpeedArrayInter_GBps[] = {48, 45, 42, 40, 30, 24, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
  if (heads < 1 || machines < 2) return 0.0;
  for (double s : kSm90SpeedArrayInter_GBps) {
    const double speed = s * 1e9;
    if ((heads + 1) * speed <= gpu_rated_Bps * (1 + 1e-9) && speed <= nic_rated_Bps * (1 + 1e-9))
      return heads * (machines <= 2 ? speed : speed / 2);
  }
  return 0.0;
}

double nvls_tree_latency_s(int machines, double plugin_latency_s) {
  return param("collective.base_latency_nvls_Simple_s") +
         nvls_tree_network_steps(machines) * (param("collective.hop_latency_network_nvls_tree_Simple_s") + 2 * plugin_latency_s);
}

int nvls_tree_network_steps(int machines) {
  int steps = 0;
  for (int m = machines; m > 1; m >>= 1) steps += 2;
  return steps;
}

double busbw_factor(Kind kind, int n) {
  if (n <= 1) return 1.0;
  switch (kind) {
    case Kind::all_reduce: return 2.0 * (n - 1) / n;
    case Kind::all_gather:
    case Kind::reduce_scatter:
    case Kind::all_to_all: return static_cast<double>(n - 1) / n;
    default: return 1.0;
  }
}

ModelInfo collective_model_info() {
  ModelInfo m{"collective",
              "NCCL collectives as rings, trees or NVLS of flows on the topology, plus NCCL's latency model",
              "flow bytes = schedule bytes / protocol efficiency; t = last flow's end + base + steps * hop + extra latency + bus bytes / per-GPU rate (V100 LL128)",
              {{"efficiency_LL_allreduce", "1", 0.25, "LL bandwidth fraction (all-reduce, reduce, multi-node; x 4/3, at most 1, otherwise: 1/3 by default)",
                "NCCL tuning.cc (LL busBw scaling)", ParamSetting::fraction},
               {"efficiency_LL128", "1", 0.92, "LL128 bandwidth fraction", "NCCL tuning.cc (LL128 busBw scaling)", ParamSetting::fraction},
               {"efficiency_LL128_achieved_nvlink_gen2", "1", kAchievedLL128Gen2, "LL128 bandwidth fraction achieved on NVLink2 (V100) links; the tuner still assumes efficiency_LL128",
                "LL128's wire efficiency (120 data bytes per 128-byte line, NCCL prims_ll128.h); not fitted", ParamSetting::fraction},
               {"ll128_gpu_rate_nvlink_gen2_Bps", "B/s", kLL128GpuRateGen2_Bps,
                "V100 LL128: each GPU processes the ring's bus bytes at this rate, in series with the links (t += bus bytes / rate); 0: no such term",
                "fitted to vTrain V100 all-reduce, 4, 7 and 8 GPUs, every 1 MiB where NCCL ran LL128 (../shared/data/measured/vtrain_v100_allreduce); 3 and 6 GPUs held out; mechanism not established", ParamSetting::rate_or_off},
               {"ll128_gpu_rate_nvlink_gen3_Bps", "B/s", 0.0, "as gen2, A100", "no measurement", ParamSetting::rate_or_off},
               {"ll128_gpu_rate_nvlink_gen4_Bps", "B/s", 0.0, "as gen2, H100", "no measurement", ParamSetting::rate_or_off},
               {"ll128_gpu_rate_nvlink_gen5_Bps", "B/s", 0.0, "as gen2, B200", "no measurement", ParamSetting::rate_or_off},
               {"efficiency_tree", "1", 0.92, "fraction of a tree's bandwidth NCCL's trees reach (all protocols)", "NCCL tuning.cc (tree busBw x 0.92)", ParamSetting::fraction},
               {"ll_max_busbw_1node_volta_Bps", "B/s", 39.0e9, "LL bus bandwidth cap, one machine, Volta (and older)", "NCCL tuning.cc llMaxBws (2.14-2.18)", ParamSetting::rate},
               {"ll_max_busbw_1node_ampere_Bps", "B/s", 87.7e9, "LL bus bandwidth cap, one machine, Ampere", "NCCL tuning.cc llMaxBws (2.14-2.18)", ParamSetting::rate},
               {"ll_max_busbw_1node_hopper_Bps", "B/s", 87.7e9, "LL bus bandwidth cap, one machine, Hopper and newer", "NCCL tuning.cc llMaxBws (2.14-2.18)", ParamSetting::rate},
               {"ll_max_busbw_2nodes_intel_Bps", "B/s", 39.0e9, "LL bus bandwidth cap, 2 machines, Intel CPUs", "NCCL tuning.cc llMaxBws (2.14-2.18)", ParamSetting::rate},
               {"ll_max_busbw_2nodes_amd_Bps", "B/s", 22.5e9, "LL bus bandwidth cap, 2 machines, AMD CPUs", "NCCL tuning.cc llMaxBws (2.14-2.18)", ParamSetting::rate},
               {"ll_max_busbw_4nodes_intel_Bps", "B/s", 20.4e9, "LL bus bandwidth cap, 3 or more machines, Intel CPUs", "NCCL tuning.cc llMaxBws (2.14-2.18)", ParamSetting::rate},
               {"ll_max_busbw_4nodes_amd_Bps", "B/s", 19.0e9, "LL bus bandwidth cap, 3 or more machines, AMD CPUs", "NCCL tuning.cc llMaxBws (2.14-2.18)", ParamSetting::rate},
               {"tuner_busbw_cap_ampere_Bps", "B/s", 235e9, "the tuner's cap on any algorithm's bus bandwidth, Ampere (8.x); choice only",
                "NCCL tuning.cc (2.17-2.18: busBw = min(busBw, 235) for Ampere)", ParamSetting::rate},
               {"tuner_busbw_cap_hopper_Bps", "B/s", 370e9, "the tuner's cap on any algorithm's bus bandwidth, Hopper (9.x; none on Blackwell); choice only",
                "NCCL tuning.cc (2.17-2.18: busBw = min(busBw, 370) for Hopper)", ParamSetting::rate},
               {"ll128_max_busbw_per_channel_volta_Bps", "B/s", 20e9, "the tuner's LL128 bus bandwidth per searched channel (rings and trees across machines), Volta; its half also caps one LL128 tree channel's hop rate across machines", "NCCL tuning.cc ll128MaxBwPerCh (2.17-2.18)", ParamSetting::rate},
               {"ll128_max_busbw_per_channel_ampere_Bps", "B/s", 20e9, "as volta, Ampere", "NCCL tuning.cc ll128MaxBwPerCh (2.17-2.18)", ParamSetting::rate},
               {"ll128_max_busbw_per_channel_hopper_Bps", "B/s", 36.7e9, "as volta, Hopper (9.x; none on Blackwell)", "NCCL tuning.cc ll128MaxBwPerCh (2.17-2.18)", ParamSetting::rate},
               {"ring_plateau_factor_volta_ampere", "1", 1.9,
                "the tuner multiplies a ring's Simple latency by this for all-reduce across machines of at least ranks / 16 x 64 KiB, before Hopper; choice only",
                "NCCL tuning.cc ncclTopoGetAlgoTime, \"Plateau effect of ring\" (2.17-2.18)", ParamSetting::latency_factor},
               {"ring_plateau_factor_hopper", "1", 1.5, "as volta_ampere, Hopper and newer", "NCCL tuning.cc ncclTopoGetAlgoTime (2.17-2.18)", ParamSetting::latency_factor},
               {"tuner_bandwidth_fraction_nvlink", "1", 0.85, "NCCL's tuner reckons an NVLink at this fraction of its signalling rate",
                "fitted to vTrain V100 LL128/Simple switch points (3-8 GPUs; 0.8455-0.851 reproduce all five) within NCCL topo.h's range: 20-22 GB/s per 25 GB/s link", ParamSetting::fraction},
               {"tuner_bandwidth_fraction_pcie", "1", 12.0 / 15.75, "NCCL's tuner reckons PCIe at this fraction of its data rate",
                "NCCL topo.h: PCI_BW 12 GB/s for Gen3 x16 (15.75 GB/s after 128b/130b)", ParamSetting::fraction},
               {"efficiency_indirect_nvlink", "1", 0.825, "what a hop through an intermediate GPU's memory (NCCL's P2P/indirect on an NVB path) moves relative to a direct NVLink hop",
                "fitted to vTrain V100 all-reduce, 5 GPUs (GPU4's only NVLink peer is GPU0), 64 MiB-1 GiB: the only source with such a hop", ParamSetting::fraction},
               {"nccl_buffsize_B", "B", 4194304.0, "NCCL_BUFFSIZE: Simple's buffer per channel and peer; a tree moves Simple in chunks of 1/8 of it",
                "NCCL DEFAULT_BUFFSIZE (4 MiB) and enqueue.cc (stepSize = buffSize / NCCL_STEPS; a tree's Simple chunk is one step)", ParamSetting::buffer_size},
               {"tree_simple_chunk_latency_s", "s", 262144.0 / 12e9,
                "the part of a tree's per-step latency in Simple that stands for one chunk; a running tree moves its actual chunks instead",
                "NCCL tuning.cc: \"Tree/Simple is the latency a 256kB chunk, which is ~ base lat + 256k/12GB/s\" (21.8 us of its 28 us step); "
                "0 for latency tables whose tree step has no such part (models/params/rccl-2.8.json)", ParamSetting::latency},
               {"shm_transport_Bps", "B/s", 5.2e9, "what one GPU sends to its peers through host memory, in all (SHM transport)",
                "fitted to DGX A100 4 GPUs with NCCL_P2P_DISABLE=1 (LLM-Insights, NCCL 2.16): 5.2 GB/s busbw; NVIDIA/nccl #1817 (8 x L20, 6.1 GB/s avg) and #384 (Gen3, 3.9 GB/s, 1 channel) agree in order", ParamSetting::rate},
               {"extra_latency_LL128_achieved_nvlink_gen2_s", "s", kExtraLatencyLL128Gen2_s, "LL128 latency on NVLink2 (V100) beyond NCCL's latency model",
                "fitted with ll128_gpu_rate_nvlink_gen2_Bps (same data)", ParamSetting::latency},
               {"extra_latency_Simple_achieved_nvlink_gen2_s", "s", kExtraLatencySimpleGen2_s, "Simple latency on NVLink2 (V100) beyond NCCL's latency model",
                "fitted to vTrain V100 all-reduce, 2-8 GPUs but 5, every 1 MiB up to 32 MiB where NCCL ran Simple", ParamSetting::latency},
               {"extra_latency_LL128_achieved_nvlink_gen3_s", "s", 0.0, "as gen2, NVLink3", "no measurement", ParamSetting::latency},
               {"extra_latency_LL128_achieved_nvlink_gen4_s", "s", 0.0, "as gen2, NVLink4", "no measurement", ParamSetting::latency},
               {"extra_latency_LL128_achieved_nvlink_gen5_s", "s", 0.0, "as gen2, NVLink5", "no measurement", ParamSetting::latency},
               {"efficiency_LL128_achieved_nvlink_gen3", "1", 0.92, "LL128 bandwidth fraction achieved on NVLink3 (A100)", "no measurement: NCCL tuning.cc's value", ParamSetting::fraction},
               {"efficiency_LL128_achieved_nvlink_gen4", "1", 0.92, "LL128 bandwidth fraction achieved on NVLink4 (H100)", "no measurement: NCCL tuning.cc's value", ParamSetting::fraction},
               {"efficiency_LL128_achieved_nvlink_gen5", "1", 0.92, "LL128 bandwidth fraction achieved on NVLink5 (B200)", "no measurement: NCCL tuning.cc's value", ParamSetting::fraction},
               {"efficiency_nvls", "1", 0.818, "what NVLS all-reduce moves relative to the GPU's NVLink payload bandwidth (flows carry S(n+1)/n / this each way)",
                "fitted to 8 x H100 SXM, 480 GB/s busbw (sjeaugey, NVIDIA/nccl-tests #212); 5-7 GPUs (NVIDIA/nccl #1455) within 2.3%", ParamSetting::fraction},
               {"base_latency_nvls_Simple_s", "s", 23e-6, "NVLS latency (Simple, one machine; no per-step part)",
                "NCCL tuning.cc baseLat (2.18.1-2.18.3; 2.20-2.21 put 23-25 us in hwLat instead)", ParamSetting::latency},
               {"efficiency_nvls_tree", "1", 0.687,
                "what NVLS_TREE's in-machine part moves relative to the GPU's NVLink payload bandwidth (flows carry S(k+1)/k / this each way)",
                "efficiency_nvls x 0.84, NCCL 2.18 tuning.cc's NVLS_TREE algbw ratio on 2 machines (0.70) over NVLS's (5/6); 2 x 8 H100 within 0.3% of "
                "NVIDIA/nccl #1221's 430 GB/s",
                ParamSetting::fraction},
               {"hop_latency_network_nvls_tree_Simple_s", "s", 14e-6, "NVLS_TREE latency per network step (2 log2(machines) steps)",
                "NCCL tuning.cc hwLat NET NVLSTree Simple (NVIDIA/nccl b647562, 2.20)", ParamSetting::latency}}};
  // NCCL's one-machine column (26.5, 24.0, 38.7) is left out: inside one machine composim's
  // channel count is not NCCL's (tree_max_busbw_per_channel_Bps()).
  static constexpr double kPerChMaxTreeBw_GBps[3][2] = {{18.5, 10.0}, {23.6, 17.8}, {41.4, 33.0}};
  const char* kGeneration[3] = {"volta", "ampere", "hopper"};
  const char* kScale[2] = {"2nodes", "4nodes"};
  const char* kScaleText[2] = {"2 machines", "3 or more machines"};
  for (int g = 0; g < 3; ++g)
    for (int n = 0; n < 2; ++n)
      m.params.push_back({std::string("tree_max_busbw_per_channel_") + kGeneration[g] + "_" + kScale[n] + "_Bps", "B/s", kPerChMaxTreeBw_GBps[g][n] * 1e9,
                          std::string("the tuner's tree bus bandwidth per searched channel, ") + kGeneration[g] + (g == 2 ? " (9.x; none on Blackwell)" : "") + ", " + kScaleText[n] +
                              "; its half caps one tree channel's hop rate (tree_channel_hop_max_Bps)",
                          std::string("NCCL tuning.cc perChMaxTreeBws (2.17-2.18") + (g == 2 && n == 1 ? "; 36.0 from 2.19)" : "; the same to 2.28)"), ParamSetting::rate});
  for (int a = 0; a < 2; ++a)
    for (int p = 0; p < 3; ++p) {
      m.params.push_back({std::string("base_latency_") + kAlgo[a] + "_" + kProto[p] + "_s", "s", kBaseLat_us[a][p] * 1e-6,
                          std::string(kAlgo[a]) + " base latency, " + kProto[p], "NCCL tuning.cc baseLat (2.14-2.17)", ParamSetting::latency});
    }
  for (int l = 0; l < 3; ++l)
    for (int a = 0; a < 2; ++a)
      for (int p = 0; p < 3; ++p)
        m.params.push_back({std::string("hop_latency_") + kClass[l] + "_" + kAlgo[a] + "_" + kProto[p] + "_s", "s", kHwLat_us[l][a][p] * 1e-6,
                            std::string("per-step latency, ") + kClass[l] + ", " + kAlgo[a] + ", " + kProto[p], "NCCL tuning.cc hwLat (2.14-2.17)", ParamSetting::latency});
  return m;
}

}  // namespace composim::collective
