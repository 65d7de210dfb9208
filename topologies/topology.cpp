#include "topologies/topology.hpp"

#include <algorithm>
#include <boost/graph/graphviz.hpp>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "models/error.hpp"
#include "models/gpu.hpp"
#include "models/host.hpp"
#include "models/network.hpp"
#include "models/nvlink.hpp"
#include "models/pcie.hpp"
#include "models/registry.hpp"

namespace composim::topo {

using nlohmann::json;

std::string_view to_string(NodeType t) {
  switch (t) {
    case NodeType::host: return "host";
    case NodeType::pcie_switch: return "pcie_switch";
    case NodeType::gpu: return "gpu";
    case NodeType::nic: return "nic";
    case NodeType::nvswitch: return "nvswitch";
    case NodeType::retimer: return "retimer";
    case NodeType::optical_transceiver: return "optical_transceiver";
    case NodeType::network_switch: return "network_switch";
  }
  return "?";
}

std::string_view to_string(LinkType t) {
  switch (t) {
    case LinkType::pcie: return "pcie";
    case LinkType::nvlink: return "nvlink";
    case LinkType::optical: return "optical";
    case LinkType::ethernet: return "ethernet";
    case LinkType::infiniband: return "infiniband";
    case LinkType::cpu_interconnect: return "cpu_interconnect";
  }
  return "?";
}

std::string shipped_topology_dir() {
  if (const char* env = std::getenv("COMPOSIM_TOPOLOGY_DIR")) return env;
  return COMPOSIM_TOPOLOGY_DIR;
}

std::vector<std::string> Topology::shipped_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(shipped_topology_dir(), ec))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

std::string fmt(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// Reads typed fields of one JSON object and rejects keys nobody asked for.
class Fields {
 public:
  Fields(const json& obj, std::string file, std::string place) : obj_(obj), file_(std::move(file)), place_(std::move(place)) {
    if (!obj.is_object()) input_error(file_, place_, "expected a JSON object");
  }
  bool has(const char* key) const { return obj_.contains(key); }
  // what: what the key must hold, for the error when it is missing.
  const json& raw(const char* key, const char* what) {
    used_.insert(key);
    if (!obj_.contains(key)) missing(key, what);
    return obj_[key];
  }
  std::string str(const char* key, std::optional<std::string> def = std::nullopt) {
    used_.insert(key);
    if (!obj_.contains(key)) {
      if (def) return *def;
      missing(key, "a string");
    }
    if (!obj_[key].is_string()) wrong(key, "a string");
    return obj_[key].get<std::string>();
  }
  // A number in [min, max]: the caps keep typos (1e308 s of latency) from reaching the
  // simulation, where they would give infinite times or a stalled engine.
  double num(const char* key, std::optional<double> def = std::nullopt, double min = 0.0, double max = 1e300) {
    used_.insert(key);
    if (!obj_.contains(key)) {
      if (def) return *def;
      missing(key, "a number");
    }
    if (!obj_[key].is_number()) wrong(key, "a number");
    double v = obj_[key].get<double>();
    if (!(v >= min && v <= max)) wrong(key, max < 1e300 ? "a number in [" + fmt(min) + ", " + fmt(max) + "]" : "a number >= " + fmt(min));
    return v;
  }
  int integer(const char* key, std::optional<int> def = std::nullopt) {
    used_.insert(key);
    if (!obj_.contains(key)) {
      if (def) return *def;
      missing(key, "an integer");
    }
    const json& v = obj_[key];
    if (!v.is_number_integer()) wrong(key, "an integer");
    // get<int>() would wrap 4294967300 around to 4.
    const bool fits = v.is_number_unsigned() ? v.get<unsigned long long>() <= 999999999ull
                                             : v.get<long long>() >= -999999999ll && v.get<long long>() <= 999999999ll;
    if (!fits) wrong(key, "an integer of at most 9 digits");
    return v.get<int>();
  }
  bool boolean(const char* key, bool def) {
    used_.insert(key);
    if (!obj_.contains(key)) return def;
    if (!obj_[key].is_boolean()) wrong(key, "true or false");
    return obj_[key].get<bool>();
  }
  void check_unknown() const {
    static const std::set<std::string> kFree = {"description", "source", "sources", "notes"};
    for (auto it = obj_.begin(); it != obj_.end(); ++it)
      if (!used_.count(it.key()) && !kFree.count(it.key()))
        input_error(file_, place_, "unknown key \"" + it.key() + "\" (see topologies/SCHEMA.md)");
  }
  [[noreturn]] void fail(const std::string& what) const { input_error(file_, place_, what); }

 private:
  [[noreturn]] void missing(const char* key, const std::string& what) const {
    input_error(file_, place_, std::string("missing key \"") + key + "\" (expected " + what + ")");
  }
  [[noreturn]] void wrong(const char* key, const std::string& what) const {
    input_error(file_, place_, std::string("\"") + key + "\" must be " + what);
  }
  const json& obj_;
  std::string file_, place_;
  std::set<std::string> used_;
};

std::optional<NodeType> node_type_from(const std::string& s) {
  static const std::map<std::string, NodeType> m = {
      {"host", NodeType::host},       {"pcie_switch", NodeType::pcie_switch}, {"gpu", NodeType::gpu},
      {"nic", NodeType::nic},         {"nvswitch", NodeType::nvswitch},       {"retimer", NodeType::retimer},
      {"optical_transceiver", NodeType::optical_transceiver}, {"network_switch", NodeType::network_switch}};
  auto it = m.find(s);
  if (it == m.end()) return std::nullopt;
  return it->second;
}

std::optional<LinkType> link_type_from(const std::string& s) {
  static const std::map<std::string, LinkType> m = {
      {"pcie", LinkType::pcie},         {"nvlink", LinkType::nvlink},         {"optical", LinkType::optical},
      {"ethernet", LinkType::ethernet}, {"infiniband", LinkType::infiniband}, {"cpu_interconnect", LinkType::cpu_interconnect}};
  auto it = m.find(s);
  if (it == m.end()) return std::nullopt;
  return it->second;
}

// Bounds beyond which a value is a typo, not a system: a second of latency in one switch or
// cable, 10 km of cable (the generator's bound too), 100 Tb/s in one link, 100 TB/s.
constexpr double kMaxLatency_s = 1.0, kMaxLength_m = 10000.0, kMaxRate_Gbps = 1e5, kMaxBandwidth_Bps = 1e14;

// What a PCIe link (copper or optics) carries per direction: TLP payload rate x pcie.link.efficiency.
double pcie_link_Bps(int generation, int lanes, int max_payload_B) {
  return pcie::link_bandwidth_Bps(generation, lanes, max_payload_B) * param("pcie.link.efficiency");
}

// A name is printed in routes, tables (links.csv) and errors, one per line: no control characters.
bool printable_name(const std::string& name) {
  return !name.empty() && std::none_of(name.begin(), name.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; });
}

Node parse_node(const json& j, const std::string& file, const std::string& place) {
  Fields f(j, file, place);
  Node n;
  n.name = f.str("name");
  if (!printable_name(n.name)) f.fail("\"name\" must be a non-empty name without control characters (newlines, tabs)");
  const std::string type = f.str("type");
  auto t = node_type_from(type);
  if (!t)
    f.fail("unknown node type \"" + type +
           "\" (expected host, pcie_switch, gpu, nic, nvswitch, retimer, optical_transceiver or network_switch)");
  n.type = *t;
  switch (n.type) {
    case NodeType::host:
      n.memory_bandwidth_Bps = f.num("memory_bandwidth_Bps", host::kMemoryBandwidth_Bps, 1.0, kMaxBandwidth_Bps);
      n.latency_s = f.num("root_complex_latency_s", host::kRootComplexLatency_s, 0.0, kMaxLatency_s);
      n.p2p_across_root_ports = f.boolean("p2p_across_root_ports", false);
      if (const std::string v = f.str("cpu_vendor", std::string("intel")); v == "amd")
        n.amd_cpu = true;
      else if (v != "intel" && v != "other")
        f.fail("\"cpu_vendor\" must be \"intel\", \"amd\" or \"other\" (NCCL's tuner tells AMD apart), got \"" + v + "\"");
      break;
    case NodeType::pcie_switch:
      n.generation_given = f.has("generation");
      n.generation = f.integer("generation", 3);
      if (n.generation < 1 || n.generation > 6) f.fail("\"generation\" must be 1-6");
      n.latency_s = f.num("latency_s", pcie::switch_latency_s(n.generation), 0.0, kMaxLatency_s);
      break;
    case NodeType::gpu: {
      n.model = f.str("model");
      bool known = false;
      const gpu::GpuSpec spec = gpu::find_gpu_spec(n.model, &known);
      // The model sets the GPU's PCIe generation, P2P support and compute capability (what
      // NCCL's tables are indexed by): a name nobody knows would get a guess.
      if (!known)
        f.fail("unknown GPU model \"" + n.model + "\" (known: " + gpu::known_gpu_models() + "; a new model goes in models/gpu.cpp's table)");
      // GeForce cards: the driver disables PCIe P2P unless the topology says otherwise.
      n.p2p = f.boolean("p2p", spec.pcie_p2p);
      break;
    }
    case NodeType::nic:
      n.latency_s = f.num("latency_s", 0.0, 0.0, kMaxLatency_s);
      n.nccl_net_latency_s = f.num("nccl_net_latency_s", 0.0, 0.0, kMaxLatency_s);
      break;
    case NodeType::nvswitch: n.latency_s = f.num("latency_s", nvlink::kNvSwitchLatency_s, 0.0, kMaxLatency_s); break;
    case NodeType::retimer: n.latency_s = f.num("latency_s", pcie::kRetimerLatency_s, 0.0, kMaxLatency_s); break;
    case NodeType::optical_transceiver: n.latency_s = f.num("latency_s", pcie::kOpticalTransceiverLatency_s, 0.0, kMaxLatency_s); break;
    case NodeType::network_switch: n.latency_s = f.num("latency_s", network::kSwitchLatency_s, 0.0, kMaxLatency_s); break;
  }
  f.check_unknown();
  if (n.name.empty()) f.fail("\"name\" must not be empty");
  // --placement and --compose name nodes in comma-separated lists of host:gpu and host=gpus.
  if (n.name.find_first_of(",:= \t") != std::string::npos)
    f.fail("node name \"" + n.name + "\" has a comma, colon, equals sign or blank, which --placement and --compose cannot name");
  return n;
}

Link parse_link(const json& j, const std::string& file, const std::string& place,
                const std::map<std::string, int>& index) {
  Fields f(j, file, place);
  Link l;
  const std::string from = f.str("from"), to = f.str("to");
  l.name = f.str("name", from + "-" + to);
  if (!printable_name(l.name)) f.fail("\"name\" must be a non-empty name without control characters (newlines, tabs)");
  const std::string type = f.str("type");
  auto t = link_type_from(type);
  if (!t) f.fail("unknown link type \"" + type + "\" (expected pcie, nvlink, optical, ethernet, infiniband or cpu_interconnect)");
  l.type = *t;
  auto endpoint = [&](const std::string& n, const char* key) {
    auto it = index.find(n);
    if (it == index.end()) f.fail(std::string("link to unknown node \"") + n + "\" in \"" + key + "\"");
    return it->second;
  };
  l.from = endpoint(from, "from");
  l.to = endpoint(to, "to");
  if (l.from == l.to) f.fail("link from \"" + from + "\" to itself");
  try {
    switch (l.type) {
      case LinkType::pcie: {
        l.generation = f.integer("generation");
        l.lanes = f.integer("lanes");
        l.max_payload_B = f.integer("max_payload_B", pcie::kDefaultMaxPayload_B);
        l.length_m = f.num("length_m", 0.0, 0.0, kMaxLength_m);
        l.medium = f.str("medium", std::string("copper"));
        if (l.medium != "copper" && l.medium != "optical") f.fail("\"medium\" must be \"copper\" or \"optical\"");
        if (l.medium == "copper" && l.length_m > pcie::kMaxCopperLength_m)
          f.fail("a copper PCIe segment of " + fmt(l.length_m) + " m: copper reaches " + fmt(pcie::kMaxCopperLength_m) +
                 " m at most (use \"medium\": \"optical\", or retimers)");
        const double trx = l.medium == "optical" ? f.num("transceiver_latency_s", pcie::kOpticalTransceiverLatency_s, 0.0, kMaxLatency_s) : 0.0;
        l.bandwidth_Bps = pcie_link_Bps(l.generation, l.lanes, l.max_payload_B);
        l.latency_s = l.length_m * (l.medium == "optical" ? pcie::kOpticalPropagation_s_per_m : pcie::kCopperPropagation_s_per_m) +
                      2.0 * trx;
        break;
      }
      case LinkType::optical: {
        l.medium = "optical";
        l.length_m = f.num("length_m", std::nullopt, 0.0, kMaxLength_m);
        const double trx = f.num("transceiver_latency_s", pcie::kOpticalTransceiverLatency_s, 0.0, kMaxLatency_s);
        if (f.has("rate_Gbps")) {
          for (const char* k : {"generation", "lanes", "max_payload_B"})
            if (f.has(k))
              f.fail(std::string("an optical link is given either by \"rate_Gbps\" (a network line rate) or by \"generation\" and "
                                 "\"lanes\" (PCIe over optics), not both: remove \"") + k + "\" or \"rate_Gbps\"");
          l.rate_Gbps = f.num("rate_Gbps", std::nullopt, 1e-9, kMaxRate_Gbps);
          // A network rate, taken as an Ethernet link's (RoCEv2 framing and network.efficiency).
          l.bandwidth_Bps = network::link_bandwidth_Bps(l.rate_Gbps, /*infiniband=*/false) * param("network.efficiency");
        } else {
          // PCIe over optics: as a PCIe link of that generation and width.
          l.generation = f.integer("generation");
          l.lanes = f.integer("lanes");
          l.max_payload_B = f.integer("max_payload_B", pcie::kDefaultMaxPayload_B);
          l.bandwidth_Bps = pcie_link_Bps(l.generation, l.lanes, l.max_payload_B);
        }
        l.latency_s = l.length_m * pcie::kOpticalPropagation_s_per_m + 2.0 * trx;
        break;
      }
      case LinkType::nvlink:
        l.generation = f.integer("generation");
        l.links = f.integer("links");
        l.bandwidth_Bps = nvlink::payload_bandwidth_Bps(l.generation, l.links);
        l.latency_s = f.num("latency_s", nvlink::kLinkLatency_s, 0.0, kMaxLatency_s);
        break;
      case LinkType::ethernet:
      case LinkType::infiniband:
        l.rate_Gbps = f.num("rate_Gbps", std::nullopt, 1e-9, kMaxRate_Gbps);
        l.bandwidth_Bps = network::link_bandwidth_Bps(l.rate_Gbps, l.type == LinkType::infiniband) * param("network.efficiency");
        l.latency_s = f.num("latency_s", network::kLinkLatency_s, 0.0, kMaxLatency_s);
        break;
      case LinkType::cpu_interconnect:
        l.bandwidth_Bps = f.num("bandwidth_Bps", std::nullopt, 1.0, kMaxBandwidth_Bps);
        l.latency_s = f.num("latency_s", host::kCpuInterconnectLatency_s, 0.0, kMaxLatency_s);
        break;
    }
  } catch (const std::invalid_argument& e) {
    f.fail(e.what());
  }
  f.check_unknown();
  return l;
}

}  // namespace

std::string Topology::file_of(const std::string& name_or_path) {
  if (std::filesystem::exists(name_or_path)) return name_or_path;
  const std::string shipped = shipped_topology_dir() + "/" + name_or_path + ".json";
  if (name_or_path.find('/') == std::string::npos && std::filesystem::exists(shipped)) return shipped;
  return "";
}

Topology Topology::load(const std::string& name_or_path) {
  const std::string path = file_of(name_or_path);
  if (path.empty()) {
    std::string names;
    for (const auto& n : shipped_names()) names += (names.empty() ? "" : ", ") + n;
    input_error(name_or_path, "", "no such file, and not a shipped topology (shipped: " + names + ")");
  }
  if (std::filesystem::is_directory(path)) input_error(path, "", "is a directory, not a topology file");
  std::ifstream in(path);
  if (!in) input_error(path, "", "cannot open for reading");
  return parse(parse_json_input(in, path), path);
}

namespace {

// Which nodes a link of each type may join; anything else is a typo the routes would ignore.
void check_link_ends(const Link& l, const std::vector<Node>& nodes, const std::string& file, const std::string& place) {
  const NodeType a = nodes[l.from].type, b = nodes[l.to].type;
  auto either = [&](auto pred) { return pred(a) || pred(b); };
  auto both = [&](auto pred) { return pred(a) && pred(b); };
  auto device = [](NodeType n) { return n == NodeType::gpu || n == NodeType::nic; };
  const char* why = nullptr;
  switch (l.type) {
    case LinkType::nvlink:
      if (!both([](NodeType n) { return n == NodeType::gpu || n == NodeType::nvswitch; })) why = "NVLink joins GPUs and NVSwitches";
      break;
    case LinkType::ethernet:
    case LinkType::infiniband:
      if (!both([](NodeType n) {
            return n == NodeType::nic || n == NodeType::network_switch || n == NodeType::optical_transceiver || n == NodeType::retimer;
          }))
        why = "a network link joins NICs, network switches, transceivers and retimers";
      break;
    case LinkType::cpu_interconnect:
      if (a != NodeType::host || b != NodeType::host) why = "a CPU interconnect joins two hosts (CPU sockets)";
      break;
    case LinkType::pcie:
      if (either([](NodeType n) { return n == NodeType::nvswitch || n == NodeType::network_switch; }))
        why = "PCIe does not reach NVSwitches or network switches";
      else if (both(device) || (a == NodeType::host && b == NodeType::host))
        why = "PCIe joins a device to a switch, retimer, transceiver or root complex, not two devices or two hosts";
      break;
    case LinkType::optical: {
      // PCIe over optics (generation and lanes) joins what PCIe joins; a line rate
      // (rate_Gbps) is a network link and joins what a network link joins: a GPU's or a
      // switch's PCIe rate comes from its generation, which a line rate would bypass.
      auto network_end = [](NodeType n) {
        return n == NodeType::nic || n == NodeType::network_switch || n == NodeType::optical_transceiver || n == NodeType::retimer;
      };
      auto pcie_end = [](NodeType n) { return n != NodeType::nvswitch && n != NodeType::network_switch; };
      if (either([](NodeType n) { return n == NodeType::nvswitch; })) why = "an optical link does not reach NVSwitches";
      else if (l.generation > 0 && !(both(pcie_end) && !both(device) && !(a == NodeType::host && b == NodeType::host)))
        why = "PCIe over optics joins a device to a switch, retimer, transceiver or root complex, not two devices or two hosts, nor a "
              "network switch";
      else if (l.generation == 0 && !both(network_end))
        why = "an optical link given by rate_Gbps is a network link between NICs, network switches, transceivers and retimers (for "
              "PCIe over optics give \"generation\" and \"lanes\")";
      break;
    }
  }
  if (why)
    input_error(file, place, std::string(to_string(l.type)) + " link between a " + std::string(to_string(a)) + " and a " +
                                 std::string(to_string(b)) + ": " + why);
}

// What the GPUs can carry, and PCIe's shape. A PCIe link trains at the lowest generation of
// its ends (a GPU's, a switch's stated one) and a GPU's 16 lanes at most (a V100 runs Gen3 in
// a Gen4 slot: hardware.md), so links are set to that, with a note. A GPU's NVLink links are
// of its generation and no more than it has. PCIe is a tree below each root complex: a GPU
// has one upstream port, switches form no loop and a host reaches each tree once (routes
// would be ambiguous); loops through two hosts and a NIC on two sockets are real systems.
void check_devices_and_tree(const std::vector<Node>& nodes, std::vector<Link>& links, const std::string& file) {
  std::vector<int> nvlinks(nodes.size(), 0), uplinks(nodes.size(), 0);  // uplinks: 1 + the GPU's first PCIe link
  std::vector<int> parent(nodes.size());
  for (size_t v = 0; v < nodes.size(); ++v) parent[v] = static_cast<int>(v);
  auto root = [&](int v) {
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
  };
  std::vector<size_t> host_links;
  for (size_t i = 0; i < links.size(); ++i) {
    Link& l = links[i];
    const std::string place = "links[" + std::to_string(i) + "]";
    if (l.type == LinkType::nvlink) {
      for (int end : {l.from, l.to}) {
        const Node& n = nodes[end];
        if (n.type != NodeType::gpu) continue;
        const gpu::GpuSpec spec = gpu::find_gpu_spec(n.model);
        if (spec.nvlink_links == 0) input_error(file, place, "NVLink at " + n.name + " (" + spec.name + "), which has no NVLink");
        if (l.generation != spec.nvlink_generation)
          input_error(file, place, "NVLink generation " + std::to_string(l.generation) + " at " + n.name + " (" + spec.name +
                                       "), whose NVLink is generation " + std::to_string(spec.nvlink_generation));
        if ((nvlinks[end] += l.links) > spec.nvlink_links)
          input_error(file, place, n.name + " (" + spec.name + ") has " + std::to_string(spec.nvlink_links) +
                                       " NVLink links; its NVLink links add up to " + std::to_string(nvlinks[end]) + " here");
        // A GPU whose links run slower than its generation's (GA102) sets the link's rate.
        if (spec.nvlink_link_Bps > 0 && spec.nvlink_link_Bps < nvlink::per_link_Bps(l.generation))
          l.bandwidth_Bps = std::min(l.bandwidth_Bps, nvlink::payload_bandwidth_Bps(l.generation, l.links) * spec.nvlink_link_Bps /
                                                          nvlink::per_link_Bps(l.generation));
      }
      continue;
    }
    // PCIe, on copper or optics (an optical link with a generation); the rest is network.
    if (!l.is_pcie()) continue;
    int gen = l.generation, lanes = l.lanes;
    std::string why;
    for (int end : {l.from, l.to}) {
      const Node& n = nodes[end];
      if (n.type == NodeType::gpu) {
        const gpu::GpuSpec spec = gpu::find_gpu_spec(n.model);
        if (spec.pcie_generation < gen || lanes > 16)
          why += (why.empty() ? "" : "; ") + n.name + " (" + spec.name + ") is Gen" + std::to_string(spec.pcie_generation) + " x16";
        gen = std::min(gen, spec.pcie_generation);
        lanes = std::min(lanes, 16);
      } else if (n.type == NodeType::pcie_switch && n.generation_given && n.generation < gen) {
        why += (why.empty() ? "" : "; ") + n.name + " is a Gen" + std::to_string(n.generation) + " switch";
        gen = n.generation;
      }
    }
    if (gen != l.generation || lanes != l.lanes) {
      l.trained = "written Gen" + std::to_string(l.generation) + " x" + std::to_string(l.lanes) + ", trains at Gen" + std::to_string(gen) +
                  " x" + std::to_string(lanes) + ": " + why;
      l.generation = gen;
      l.lanes = lanes;
      l.bandwidth_Bps = pcie_link_Bps(gen, lanes, l.max_payload_B);
    }
    // A GPU has one host interface (a NIC may have two: Socket Direct, multi-host).
    for (int end : {l.from, l.to})
      if (nodes[end].type == NodeType::gpu) {
        if (uplinks[end] > 0)
          input_error(file, place, "a second PCIe link at " + nodes[end].name + " (links[" + std::to_string(uplinks[end] - 1) +
                                       "] is the first): a GPU has one upstream port");
        uplinks[end] = static_cast<int>(i) + 1;
      }
    // Switches, retimers and transceivers form trees below each root complex.
    if (nodes[l.from].type == NodeType::host || nodes[l.to].type == NodeType::host) {
      host_links.push_back(i);
      continue;
    }
    const int a = root(l.from), b = root(l.to);
    if (a == b)
      input_error(file, place, "closes a loop of PCIe links between switches (through " + nodes[l.from].name + " and " +
                                   nodes[l.to].name + "): below the root complexes PCIe is a tree, and a loop would make routes ambiguous");
    parent[a] = b;
  }
  // A root complex reaches each tree once; a loop through two hosts' root complexes (hosts
  // cabled to several chassis switches, as composable fabrics are) is fine.
  std::map<std::pair<int, int>, size_t> reached;  // (host, tree) -> first link
  for (size_t i : host_links) {
    const Link& l = links[i];
    const int host = nodes[l.from].type == NodeType::host ? l.from : l.to, other = host == l.from ? l.to : l.from;
    if (auto [it, fresh] = reached.emplace(std::make_pair(host, root(other)), i); !fresh)
      input_error(file, "links[" + std::to_string(i) + "]",
                  "closes a loop of PCIe links through " + nodes[host].name + " (links[" + std::to_string(it->second) +
                      "] reaches the same switches): below a root complex PCIe is a tree, and a loop would make routes ambiguous");
  }
}

}  // namespace

Topology Topology::parse(const json& doc, const std::string& file) {
  Topology t;
  Fields top(doc, file, "top level");
  const int version = top.integer("schema_version");
  if (version != 1) top.fail("schema_version " + std::to_string(version) + " is not supported (expected 1)");
  t.name_ = top.str("name");
  if (t.name_.empty()) top.fail("\"name\" is empty (it titles every output)");
  t.p2p_ = top.boolean("p2p", true);
  t.fabric_p2p_across_hosts_ = top.boolean("fabric_p2p_across_hosts", false);
  const json& nodes = top.raw("nodes", "an array of nodes");
  const json& links = top.raw("links", "an array of links");
  const json* composition = top.has("composition") ? &top.raw("composition", "an object") : nullptr;
  top.check_unknown();
  if (!nodes.is_array() || nodes.empty()) top.fail("\"nodes\" must be a non-empty array");
  if (!links.is_array()) top.fail("\"links\" must be an array");

  std::map<std::string, int> index;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string place = "nodes[" + std::to_string(i) + "]";
    Node n = parse_node(nodes[i], file, place);
    if (!index.emplace(n.name, static_cast<int>(t.nodes_.size())).second)
      input_error(file, place, "duplicate node name \"" + n.name + "\"");
    t.nodes_.push_back(std::move(n));
  }
  std::set<std::string> link_names;
  std::map<std::pair<int, int>, size_t> link_between;  // unordered node pair -> first link
  for (size_t i = 0; i < links.size(); ++i) {
    const std::string place = "links[" + std::to_string(i) + "]";
    Link l = parse_link(links[i], file, place, index);
    if (!link_names.insert(l.name).second) input_error(file, place, "duplicate link name \"" + l.name + "\"");
    check_link_ends(l, t.nodes_, file, place);
    const auto pair = std::minmax(l.from, l.to);
    if (auto [it, fresh] = link_between.emplace(pair, i); !fresh)
      input_error(file, place, "a second link between \"" + t.nodes_[l.from].name + "\" and \"" + t.nodes_[l.to].name + "\" (links[" +
                                   std::to_string(it->second) + "] is the first): routes take one link per pair, so write one link "
                                   "with its lanes, NVLink links or rate added up");
    t.links_.push_back(std::move(l));
  }
  check_devices_and_tree(t.nodes_, t.links_, file);
  t.finish(file);
  if (composition) {
    if (!composition->is_object()) input_error(file, "composition", "expected an object of host name -> list of device names");
    std::vector<std::pair<std::string, std::vector<std::string>>> spec;
    for (auto it = composition->begin(); it != composition->end(); ++it) {
      if (!it->is_array()) input_error(file, "composition." + it.key(), "expected a list of device names");
      // An empty list would read as "this host has nothing" but composed nothing apart.
      if (it->empty()) input_error(file, "composition." + it.key(), "no devices; list the GPUs and NICs attached to " + it.key() + ", or leave the host out");
      std::vector<std::string> devices;
      for (const auto& d : *it) {
        if (!d.is_string()) input_error(file, "composition." + it.key(), "expected a list of device names");
        devices.push_back(d.get<std::string>());
      }
      spec.emplace_back(it.key(), devices);
    }
    t.set_composition(spec, file + ": composition");
  }
  return t;
}

// BFS from `host` over PCIe-class links through switches, retimers and transceivers only
// (never another host's root complex, never a GPU or NIC).
bool Topology::reaches_without_other_host(int host, int device) const {
  std::vector<char> seen(nodes_.size(), 0);
  std::deque<int> q{host};
  seen[host] = 1;
  while (!q.empty()) {
    const int v = q.front();
    q.pop_front();
    if (v == device) return true;
    if (v != host && nodes_[v].type != NodeType::pcie_switch && nodes_[v].type != NodeType::retimer &&
        nodes_[v].type != NodeType::optical_transceiver)
      continue;
    for (auto [e, end] = boost::out_edges(v, graph_); e != end; ++e) {
      const Link& l = links_[graph_[*e]];
      if (l.type != LinkType::pcie && l.type != LinkType::optical) continue;
      const int w = static_cast<int>(boost::target(*e, graph_));
      if (!seen[w]) seen[w] = 1, q.push_back(w);
    }
  }
  return false;
}

int Topology::host_of(int device) const {
  auto it = owner_.find(device);
  return it != owner_.end() ? it->second : nearest_host_.at(device);
}

std::vector<int> Topology::attached_gpus() const {
  if (owner_.empty()) return gpus_;
  std::vector<int> out;
  for (int d : composition_order_)
    if (nodes_[d].type == NodeType::gpu) out.push_back(d);
  return out;
}

void Topology::set_composition(const std::vector<std::pair<std::string, std::vector<std::string>>>& spec, const std::string& place) {
  std::map<int, int> owner;
  std::vector<int> order;
  for (const auto& [host_name, devices] : spec) {
    auto h = find_node(host_name);
    if (!h || nodes_[*h].type != NodeType::host) input_error("", place, "\"" + host_name + "\" is not a host of topology \"" + name_ + "\"");
    // Sockets of one server (joined by a CPU interconnect) are one operating system, not
    // hosts that devices are composed to apart: their GPUs would be staged through memory.
    for (const auto& [other_name, other_devices] : spec) {
      if (other_name == host_name) break;
      const auto o = find_node(other_name);
      for (auto [e, end] = boost::out_edges(*h, graph_); o && e != end; ++e)
        if (static_cast<int>(boost::target(*e, graph_)) == *o && links_[graph_[*e]].type == LinkType::cpu_interconnect)
          input_error("", place, host_name + " and " + other_name + " are sockets of one server (a CPU interconnect joins them), not hosts to compose apart");
    }
    for (const auto& dev : devices) {
      auto d = find_node(dev);
      if (!d) input_error("", place, "unknown device \"" + dev + "\" attached to " + host_name);
      if (nodes_[*d].type != NodeType::gpu && nodes_[*d].type != NodeType::nic)
        input_error("", place, "\"" + dev + "\" is a " + std::string(to_string(nodes_[*d].type)) + "; only GPUs and NICs are attached");
      if (auto prev = owner.find(*d); prev != owner.end())
        input_error("", place, prev->second == *h ? "\"" + dev + "\" is listed twice for " + host_name
                                                  : "\"" + dev + "\" is attached to two hosts: " + nodes_[prev->second].name + " and " + host_name);
      if (!reaches_without_other_host(*h, *d))
        input_error("", place, "\"" + dev + "\" cannot be attached to " + host_name + ": no PCIe path from it that avoids other hosts");
      owner[*d] = *h;
      order.push_back(*d);
    }
  }
  owner_ = std::move(owner);
  composition_order_ = std::move(order);
}

void Topology::finish(const std::string& file) {
  file_ = file;
  graph_ = Graph(nodes_.size());
  for (size_t v = 0; v < nodes_.size(); ++v) {
    graph_[v] = static_cast<int>(v);
    if (nodes_[v].type == NodeType::gpu) gpus_.push_back(static_cast<int>(v));
    if (nodes_[v].type == NodeType::host) hosts_.push_back(static_cast<int>(v));
    if (nodes_[v].type == NodeType::nic) nics_.push_back(static_cast<int>(v));
  }
  for (size_t i = 0; i < links_.size(); ++i) boost::add_edge(links_[i].from, links_[i].to, static_cast<int>(i), graph_);
  if (hosts_.empty()) input_error(file, "nodes", "no node of type \"host\": GPUs need a host");

  // Nearest host over PCIe-class links, by BFS from all hosts at once; GPUs and NICs do not
  // forward.
  nearest_host_.assign(nodes_.size(), -1);
  std::deque<int> queue;
  for (int h : hosts_) {
    nearest_host_[h] = h;
    queue.push_back(h);
  }
  while (!queue.empty()) {
    int v = queue.front();
    queue.pop_front();
    if (nodes_[v].type == NodeType::gpu || nodes_[v].type == NodeType::nic) continue;
    for (auto [e, end] = boost::out_edges(v, graph_); e != end; ++e) {
      const Link& l = links_[graph_[*e]];
      if (l.type != LinkType::pcie && l.type != LinkType::optical && l.type != LinkType::cpu_interconnect) continue;
      int w = static_cast<int>(boost::target(*e, graph_));
      if (nearest_host_[w] < 0) {
        nearest_host_[w] = nearest_host_[v];
        queue.push_back(w);
      }
    }
  }
  for (int g : gpus_)
    if (nearest_host_[g] < 0)
      input_error(file, "node \"" + nodes_[g].name + "\"", "unreachable GPU: no PCIe path to any host");

  // Machines: components over every link but the network ones.
  machine_.assign(nodes_.size(), -1);
  for (size_t s = 0; s < nodes_.size(); ++s) {
    if (machine_[s] >= 0 || nodes_[s].type == NodeType::network_switch) continue;
    std::deque<int> q{static_cast<int>(s)};
    machine_[s] = machines_;
    while (!q.empty()) {
      int v = q.front();
      q.pop_front();
      for (auto [e, end] = boost::out_edges(v, graph_); e != end; ++e) {
        const Link& l = links_[graph_[*e]];
        if (l.type == LinkType::ethernet || l.type == LinkType::infiniband) continue;
        int w = static_cast<int>(boost::target(*e, graph_));
        if (machine_[w] < 0 && nodes_[w].type != NodeType::network_switch) {
          machine_[w] = machines_;
          q.push_back(w);
        }
      }
    }
    ++machines_;
  }
  // Across machines, a NIC is the way out: one without a network link would be chosen as a
  // GPU's nearest NIC and leave no path in one direction (the route back fails, every
  // collective across machines with it), so it is an error here, naming it.
  std::set<int> host_machines;  // machines with a host: an unlinked NIC is a component of its own
  for (int h : hosts_) host_machines.insert(machine_[h]);
  if (host_machines.size() > 1)
    for (int n : nics_) {
      bool wired = false;
      for (auto [e, end] = boost::out_edges(n, graph_); e != end && !wired; ++e) {
        const Link& l = links_[graph_[*e]];
        wired = l.type == LinkType::ethernet || l.type == LinkType::infiniband;
      }
      if (!wired)
        input_error(file, "node \"" + nodes_[n].name + "\"",
                    "a NIC with no network link (ethernet or infiniband) in a topology of " + std::to_string(host_machines.size()) +
                        " machines: link it to the network, or leave it out");
    }
}

std::optional<int> Topology::find_node(std::string_view name) const {
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].name == name) return static_cast<int>(i);
  return std::nullopt;
}

int Topology::nearest_host(int n) const { return nearest_host_.at(n); }

std::string Topology::to_dot() const {
  std::ostringstream out;
  // A DOT string keeps a quote or a backslash only escaped (names are free text).
  auto escaped = [](const std::string& s) {
    std::string e;
    for (char c : s) {
      if (c == '"' || c == '\\') e += '\\';
      e += c;
    }
    return e;
  };
  auto vertex_writer = [this, &escaped](std::ostream& o, Graph::vertex_descriptor v) {
    const Node& n = nodes_[graph_[v]];
    const char* shape = n.type == NodeType::gpu ? "box" : n.type == NodeType::host ? "house" : "ellipse";
    o << "[label=\"" << escaped(n.name) << "\\n" << to_string(n.type) << (n.model.empty() ? "" : "\\n" + escaped(n.model))
      << "\", shape=" << shape << "]";
  };
  auto edge_writer = [this](std::ostream& o, Graph::edge_descriptor e) {
    const Link& l = links_[graph_[e]];
    char bw[32];
    std::snprintf(bw, sizeof bw, "%.1f GB/s", l.bandwidth_Bps / 1e9);
    o << "[label=\"" << to_string(l.type) << "\\n" << bw << "\"" << (l.type == LinkType::nvlink ? ", color=green" : "") << "]";
  };
  boost::write_graphviz(out, graph_, vertex_writer, edge_writer);
  return out.str();
}

}  // namespace composim::topo
