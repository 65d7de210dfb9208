// File: topologies/topology.hpp
//
// Topology: the physical system as a graph of devices (nodes) and cables/lanes (links),
// loaded from the JSON format of topologies/SCHEMA.md into a Boost.Graph adjacency list,
// validated, with every link's bandwidth and latency computed by the component models.
//
//   Topology t = Topology::load("pcie-8gpu-gen3");   // shipped name or a path
//   for (int g : t.gpus()) ...
//
// Errors: load() and parse() throw InputError naming the file and the item (unknown node
// type, unknown or missing key, duplicate name, dangling link, a GPU that reaches no host,
// a NIC without a network link in a topology of several machines).
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <nlohmann/json_fwd.hpp>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace composim::topo {

enum class NodeType { host, pcie_switch, gpu, nic, nvswitch, retimer, optical_transceiver, network_switch };
enum class LinkType { pcie, nvlink, optical, ethernet, infiniband, cpu_interconnect };

std::string_view to_string(NodeType t);
std::string_view to_string(LinkType t);

struct Node {
  std::string name;
  NodeType type;
  std::string model;                   // GPU model name (gpu only)
  bool p2p = true;                     // gpu: device supports PCIe peer-to-peer
  bool p2p_across_root_ports = false;  // host: root complex forwards P2P between its ports
  bool amd_cpu = false;                // host: an AMD CPU (NCCL's tuner caps LL across machines lower: llMaxBws)
  double latency_s = 0;                // added to every route through (or ending at a host)
  double memory_bandwidth_Bps = 0;     // host only
  int generation = 0;                  // pcie_switch only
  bool generation_given = false;       // pcie_switch: the file states it (else 3, for its latency only)
  // nic: the latency NCCL's network plugin reports for it (ncclNetProperties.latency), which
  // NCCL adds to every network step of its latency model, twice in Simple (the flush). NCCL's
  // own InfiniBand and socket transports report 0 ("not set"); third-party plugins may not.
  double nccl_net_latency_s = 0;
  bool is_endpoint() const { return type == NodeType::gpu || type == NodeType::nic || type == NodeType::host; }
};

struct Link {
  std::string name;
  LinkType type;
  int from = -1, to = -1;  // node indices; "forward" is from -> to
  double bandwidth_Bps = 0;  // per direction
  double latency_s = 0;
  // As given, except that a PCIe link's generation and lanes are those it trains at: the
  // lowest generation of its ends (a GPU's model, a switch's stated "generation") and at
  // most a GPU's 16 lanes. `trained` says why when that is below what the file gives.
  int generation = 0, lanes = 0, links = 0, max_payload_B = 0;
  double length_m = 0, rate_Gbps = 0;
  std::string medium;
  std::string trained;
  // A PCIe link: copper, or optical given by generation and lanes (not a network line rate).
  bool is_pcie() const { return type == LinkType::pcie || (type == LinkType::optical && generation > 0); }
};

// Vertex property: node index; edge property: link index (both index into the vectors).
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, int, int>;

class Topology {
 public:
  // load()
  //
  // `name_or_path`: a path to a JSON file, or the name of a shipped topology
  // (topologies/shipped/<name>.json). Throws InputError.
  static Topology load(const std::string& name_or_path);
  // file_of(): the file load() reads for `name_or_path` (a path, or a shipped topology's
  // file); "" when there is none.
  static std::string file_of(const std::string& name_or_path);
  // parse(): from a JSON document; `file` names it in errors.
  static Topology parse(const nlohmann::json& doc, const std::string& file);
  // Names of the shipped topologies.
  static std::vector<std::string> shipped_names();

  const std::string& name() const { return name_; }
  const std::string& file() const { return file_; }
  bool p2p_enabled() const { return p2p_; }
  void set_p2p_enabled(bool on) { p2p_ = on; }
  // P2P on for the system and on every GPU, also those whose model or node says they lack it
  // (GeForce drivers): a what-if of a P2P-enabling driver. Root complexes still forward P2P
  // between their ports only as their hosts state. Call before routing.
  void force_p2p_on() {
    p2p_ = true;
    for (auto& n : nodes_)
      if (n.type == NodeType::gpu) n.p2p = true;
  }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Link>& links() const { return links_; }
  const Graph& graph() const { return graph_; }
  // Node indices of GPUs and hosts, in file order.
  const std::vector<int>& gpus() const { return gpus_; }
  const std::vector<int>& hosts() const { return hosts_; }
  std::optional<int> find_node(std::string_view name) const;
  // The host nearest to node `n` over PCIe (fewest hops); -1 if none.
  int nearest_host(int n) const;

  // Composition: which pooled devices (GPUs, NICs) are attached to which host, as a
  // composable system's management server sets it. Without one, every device belongs to its
  // nearest host. host_of() is the host that owns a device (its copies to host memory go
  // there); attached() tells whether a device is in the composition (always true without one).
  int host_of(int device) const;
  bool composed() const { return !owner_.empty(); }
  bool attached(int device) const { return owner_.empty() || owner_.count(device) > 0; }
  // GPUs in composition order (host by host), or all GPUs without a composition.
  std::vector<int> attached_gpus() const;
  // Peer-to-peer between GPUs attached to different hosts through the chassis' switches
  // (a property of the chassis); without it, such traffic goes host to host over NICs.
  bool fabric_p2p_across_hosts() const { return fabric_p2p_across_hosts_; }

  // set_composition()
  //
  // `spec`: host name -> device names. Throws InputError naming `place` and both hosts for a
  // device attached twice, and for unknown names, non-hosts, non-devices, or a device its
  // host cannot reach over PCIe.
  void set_composition(const std::vector<std::pair<std::string, std::vector<std::string>>>& spec, const std::string& place);
  // Machine (server) of a node: its connected component without the network links
  // (Ethernet / InfiniBand). GPUs of one machine talk over PCIe or NVLink; GPUs of two
  // machines over NICs and the network.
  int machine_of(int n) const { return machine_.at(n); }
  int machine_count() const { return machines_; }
  const std::vector<int>& nics() const { return nics_; }
  // Cache of routing's NIC choice per node (-2: not computed yet).
  int& nic_cache(int node) const {
    if (nic_cache_.size() != nodes_.size()) nic_cache_.assign(nodes_.size(), -2);
    return nic_cache_[node];
  }

  // Routing's breadth-first search state, one per link class: the last source's search,
  // resumed when the next query has the same source (ring searches ask one GPU about all
  // the others), and visit marks stamped per search, so a search costs what it explores,
  // not the size of the topology. A topology's graph never changes after loading.
  struct SearchState {
    int src = -1;
    std::uint32_t stamp = 0;
    std::vector<std::uint32_t> seen;  // == stamp: reached in this search
    std::vector<int> via_link;
    std::deque<int> queue;
  };
  std::vector<SearchState>& search_states() const { return search_states_; }

  // GraphViz text of the topology (boost::write_graphviz).
  std::string to_dot() const;

 private:
  std::string name_, file_;
  bool p2p_ = true;
  std::vector<Node> nodes_;
  std::vector<Link> links_;
  std::vector<int> gpus_, hosts_, nics_;
  std::vector<int> nearest_host_;
  std::vector<int> machine_;
  int machines_ = 0;
  std::map<int, int> owner_;
  std::vector<int> composition_order_;
  bool fabric_p2p_across_hosts_ = false;
  mutable std::vector<int> nic_cache_;
  mutable std::vector<SearchState> search_states_;
  Graph graph_;
  void finish(const std::string& file);
  bool reaches_without_other_host(int host, int device) const;
};

std::string shipped_topology_dir();

}  // namespace composim::topo
