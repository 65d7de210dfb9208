#include "topologies/routing.hpp"

#include <algorithm>
#include <map>
#include <cstdio>
#include <deque>
#include <limits>

#include "models/error.hpp"
#include "models/pcie.hpp"

namespace composim::topo {
namespace {

enum class Class { nvlink, pcie, network, fabric, sockets };
std::vector<Hop> bfs(const Topology& t, int src, int dst, enum Class c);

bool link_in_class(LinkType t, Class c) {
  if (c == Class::nvlink) return t == LinkType::nvlink;
  if (c == Class::fabric) return t == LinkType::pcie || t == LinkType::optical;
  if (c == Class::sockets) return t == LinkType::cpu_interconnect;
  if (c == Class::network) return t == LinkType::ethernet || t == LinkType::infiniband || t == LinkType::optical;
  return t == LinkType::pcie || t == LinkType::optical || t == LinkType::cpu_interconnect;
}

bool transit_in_class(NodeType t, Class c) {
  if (c == Class::nvlink) return t == NodeType::nvswitch;
  // A composable chassis' own switches, never a host's root complex.
  if (c == Class::fabric) return t == NodeType::pcie_switch || t == NodeType::retimer || t == NodeType::optical_transceiver;
  if (c == Class::sockets) return t == NodeType::host;
  if (c == Class::network) return t == NodeType::network_switch || t == NodeType::optical_transceiver || t == NodeType::retimer;
  return t == NodeType::pcie_switch || t == NodeType::host || t == NodeType::retimer ||
         t == NodeType::optical_transceiver;
}

// The NIC for `gpu`'s traffic to other machines: the nearest over PCIe (fewest hops); when
// several are equally near (two NICs under the GPU's switch, as in DGX servers), the GPUs
// sharing that switch take them in order, so each GPU gets its own NIC (one rail per GPU).
int nearest_nic_uncached(const Topology& t, int gpu) {
  std::vector<int> best;
  size_t best_hops = SIZE_MAX;
  for (int nic : t.nics()) {
    if (t.machine_of(nic) != t.machine_of(gpu)) continue;
    auto hops = bfs(t, gpu, nic, Class::pcie);
    if (hops.empty()) continue;
    if (hops.size() < best_hops) {
      best_hops = hops.size();
      best.clear();
    }
    if (hops.size() == best_hops) best.push_back(nic);
  }
  if (best.empty()) return -1;
  if (best.size() == 1) return best.front();
  // GPUs with the same first hop (their switch) and the same nearest NICs, in file order.
  // A GPU with one PCIe link has that link's other end as its first hop: no search, which
  // would make this quadratic in the GPUs of a machine.
  auto first_hop = [&](int g) {
    const auto& graph = t.graph();
    int only = -1, links = 0;
    for (auto [e, end] = boost::out_edges(g, graph); e != end; ++e)
      if (link_in_class(t.links()[graph[*e]].type, Class::pcie) && links++ == 0) only = static_cast<int>(boost::target(*e, graph));
    if (links == 1) return only;
    auto h = bfs(t, g, best.front(), Class::pcie);
    const Link& l = t.links()[h.front().link];
    return h.front().forward ? l.to : l.from;
  };
  const int parent = first_hop(gpu);
  size_t position = 0;
  for (int g : t.gpus()) {
    if (g == gpu) break;
    if (t.machine_of(g) == t.machine_of(gpu) && first_hop(g) == parent) ++position;
  }
  return best[position % best.size()];
}

// Fewest-hop path from src to dst using only links and transit nodes of class c. Ties are
// broken by the order of links in the file, so routes are deterministic. The search from
// src is kept and resumed for the next destination from the same src: the same order of
// visits, so the same paths, as a search of its own.
std::vector<Hop> bfs(const Topology& t, int src, int dst, Class c) {
  const auto& g = t.graph();
  const size_t n = t.nodes().size();
  auto& states = t.search_states();
  if (states.size() != 5) states.assign(5, {});
  auto& st = states[static_cast<size_t>(c)];
  if (st.seen.size() != n) {
    st = {};
    st.seen.assign(n, 0);
    st.via_link.assign(n, -1);
  }
  if (st.src != src) {
    if (++st.stamp == 0) {  // wrapped: clear the marks of 2^32 searches ago
      std::fill(st.seen.begin(), st.seen.end(), 0);
      st.stamp = 1;
    }
    st.src = src;
    st.queue.assign(1, src);
    st.seen[src] = st.stamp;
  }
  auto seen = [&](int v) { return st.seen[v] == st.stamp; };
  std::vector<std::pair<int, int>> next;  // (link, node)
  while (!seen(dst) && !st.queue.empty()) {
    const int v = st.queue.front();
    st.queue.pop_front();
    if (v != src && !transit_in_class(t.nodes()[v].type, c)) continue;
    next.clear();
    for (auto [e, end] = boost::out_edges(v, g); e != end; ++e) {
      const int li = g[*e];
      if (!link_in_class(t.links()[li].type, c)) continue;
      next.emplace_back(li, static_cast<int>(boost::target(*e, g)));
    }
    std::sort(next.begin(), next.end());
    for (auto [li, w] : next) {
      if (seen(w)) continue;
      st.seen[w] = st.stamp;
      st.via_link[w] = li;
      st.queue.push_back(w);
    }
  }
  const auto& via_link = st.via_link;
  std::vector<Hop> hops;
  if (!seen(dst)) return hops;
  for (int v = dst; v != src;) {
    const Link& l = t.links()[via_link[v]];
    const bool forward = l.to == v;
    hops.push_back({via_link[v], forward});
    v = forward ? l.from : l.to;
  }
  std::reverse(hops.begin(), hops.end());
  return hops;
}

int hop_target(const Topology& t, const Hop& h) {
  const Link& l = t.links()[h.link];
  return h.forward ? l.to : l.from;
}

void append(const Topology& t, Route& r, const std::vector<Hop>& hops) {
  for (size_t i = 0; i < hops.size(); ++i) {
    r.hops.push_back(hops[i]);
    if (i + 1 < hops.size()) r.transit.push_back(hop_target(t, hops[i]));
  }
}

// Appends path segments joined at the given nodes: seg[0], via[0], seg[1], via[1], ...
void chain(const Topology& t, Route& r, const std::vector<std::vector<Hop>>& segments, const std::vector<int>& via) {
  for (size_t i = 0; i < segments.size(); ++i) {
    append(t, r, segments[i]);
    if (i < via.size()) r.transit.push_back(via[i]);
  }
}

void finish(const Topology& t, Route& r) {
  r.bottleneck_Bps = std::numeric_limits<double>::infinity();
  r.latency_s = 0;
  for (const Hop& h : r.hops) {
    const Link& l = t.links()[h.link];
    r.bottleneck_Bps = std::min(r.bottleneck_Bps, l.bandwidth_Bps);
    r.latency_s += l.latency_s;
  }
  for (int n : r.transit) r.latency_s += t.nodes()[n].latency_s;
  std::map<int, int> crossings;  // a staging memory is listed once per crossing
  for (int h : r.memory_hosts) ++crossings[h];
  for (const auto& [h, n] : crossings) {
    r.bottleneck_Bps = std::min(r.bottleneck_Bps, t.nodes()[h].memory_bandwidth_Bps / n);
    // A host at an end of the route adds its root complex latency (transit hosts already did).
    if (std::find(r.transit.begin(), r.transit.end(), h) == r.transit.end()) r.latency_s += t.nodes()[h].latency_s;
  }
}

[[noreturn]] void no_route(const Topology& t, int src, int dst, const std::string& why) {
  input_error(t.file(), "route " + t.nodes()[src].name + " -> " + t.nodes()[dst].name, why);
}

// The NIC host `h` sends through: the nearest over PCIe of those not attached to another
// host of a composition; -1 if none.
int nic_of_host(const Topology& t, int h) {
  int best = -1;
  size_t hops = SIZE_MAX;
  for (int nic : t.nics()) {
    if (t.composed() && t.attached(nic) && t.host_of(nic) != h) continue;
    auto p = bfs(t, h, nic, Class::pcie);
    if (!p.empty() && p.size() < hops) hops = p.size(), best = nic;
  }
  return best;
}

// Whether `path` from `src` goes from one host's root complex to another's through
// something other than a direct host-to-host hop (a socket interconnect): through switches,
// as between the hosts of a composable chassis.
bool leaves_host_domain(const Topology& t, int src, const std::vector<Hop>& path) {
  const auto& nodes = t.nodes();
  int last_host = nodes[src].type == NodeType::host ? src : -1;
  bool last_was_host = last_host >= 0;
  for (const Hop& h : path) {
    const int n = hop_target(t, h);
    const bool is_host = nodes[n].type == NodeType::host;
    if (is_host && last_host >= 0 && n != last_host && !last_was_host) return true;
    if (is_host) last_host = n;
    last_was_host = is_host;
  }
  return false;
}

}  // namespace

int nearest_nic(const Topology& t, int gpu) {
  int& cached = t.nic_cache(gpu);
  if (cached == -2) cached = nearest_nic_uncached(t, gpu);
  return cached;
}

Route route(const Topology& t, int src, int dst, bool nccl_paths, const std::vector<char>* pxn_proxies) {
  const auto& nodes = t.nodes();
  if (!nodes[src].is_endpoint() || !nodes[dst].is_endpoint())
    no_route(t, src, dst, "routes join endpoints (gpu, nic, host), not transit nodes");
  if (src == dst) no_route(t, src, dst, "source and destination are the same node");
  Route r;
  r.src = src;
  r.dst = dst;
  const bool gpu_pair = nodes[src].type == NodeType::gpu && nodes[dst].type == NodeType::gpu;
  if (gpu_pair && t.composed() && t.host_of(src) != t.host_of(dst)) {
    // GPUs attached to different hosts of a composable system.
    if (t.fabric_p2p_across_hosts() && t.p2p_enabled() && nodes[src].p2p && nodes[dst].p2p) {
      auto path = bfs(t, src, dst, Class::fabric);
      if (path.empty()) no_route(t, src, dst, "the chassis allows P2P across hosts but no switch path joins them");
      append(t, r, path);
      finish(t, r);
      return r;
    }
    // Host to host: up to the owner's memory, out of its NIC, over the network, down.
    const int ha = t.host_of(src), hb = t.host_of(dst);
    const int na = nic_of_host(t, ha), nb = nic_of_host(t, hb);
    auto net = na >= 0 && nb >= 0 ? bfs(t, na, nb, Class::network) : std::vector<Hop>{};
    if (net.empty()) {
      // Hosts that are sockets of one server: over the socket link, staged in the source's
      // host memory.
      auto sock = bfs(t, ha, hb, Class::sockets);
      if (!sock.empty()) {
        chain(t, r, {bfs(t, src, ha, Class::pcie), sock, bfs(t, hb, dst, Class::pcie)}, {ha, hb});
        // Staged in the source's host memory, as a staged copy within one host: written
        // there, read from there across the socket link.
        r.memory_hosts = {ha, ha};
        r.staged = true;
        finish(t, r);
        return r;
      }
    }
    if (net.empty())
      no_route(t, src, dst, "they are attached to different hosts (" + nodes[ha].name + ", " + nodes[hb].name +
                                "), the chassis does not allow P2P across hosts (fabric_p2p_across_hosts) and the hosts share no network");
    chain(t, r, {bfs(t, src, ha, Class::pcie), bfs(t, ha, na, Class::pcie), net, bfs(t, nb, hb, Class::pcie), bfs(t, hb, dst, Class::pcie)},
          {ha, na, nb, hb});
    r.memory_hosts = {ha, ha, hb, hb};  // each written, then read (by the NIC, by the GPU)
    r.staged = true;
    r.network = true;
    finish(t, r);
    return r;
  }
  // With P2P off (NCCL_P2P_DISABLE, or a system without P2P) NVLink is not used either.
  if (gpu_pair && t.p2p_enabled()) {
    auto nv = bfs(t, src, dst, Class::nvlink);
    if (nv.empty() && nccl_paths) {
      r.nvb = true;
      // NVLink through one intermediate GPU (NCCL's PATH_NVB), the widest such path.
      double best = 0;
      for (auto [e, end] = boost::out_edges(src, t.graph()); e != end; ++e) {
        const Link& l1 = t.links()[t.graph()[*e]];
        const int mid = static_cast<int>(boost::target(*e, t.graph()));
        if (l1.type != LinkType::nvlink || t.nodes()[mid].type != NodeType::gpu || mid == dst) continue;
        for (auto [f, fend] = boost::out_edges(mid, t.graph()); f != fend; ++f) {
          const Link& l2 = t.links()[t.graph()[*f]];
          if (l2.type != LinkType::nvlink || static_cast<int>(boost::target(*f, t.graph())) != dst) continue;
          const double bw = std::min(l1.bandwidth_Bps, l2.bandwidth_Bps);
          if (bw > best) {
            best = bw;
            nv = {{t.graph()[*e], l1.from == src}, {t.graph()[*f], l2.from == mid}};
          }
        }
      }
    }
    r.nvb = r.nvb && !nv.empty();
    if (!nv.empty()) {
      append(t, r, nv);
      r.nvlink = true;
      finish(t, r);
      return r;
    }
  }
  if (gpu_pair && t.machine_of(src) != t.machine_of(dst)) {
    // Across machines: GPU -> NIC (GPUDirect RDMA) -> network -> the destination's nearest
    // NIC -> GPU. The source side leaves on the destination's rail, as NCCL does: its rings
    // and trees enter and leave a machine on one NIC (NCCL_CROSS_NIC=0, search.cc), and its
    // point-to-point traffic goes through the GPU on the peer's rail (PXN, NCCL 2.12+). So
    // when a NIC of the source's machine has a shorter network path to that NIC than the
    // source's own (on a rail-optimised or rail-only fabric: the same rail, without the
    // spine), the data takes it: over PCIe if that does not cross a CPU, else over NVLink
    // to the GPU nearest that NIC (PXN), else by its own NIC and the spine (none without a
    // spine: an error).
    const int own = nearest_nic(t, src), b = nearest_nic(t, dst);
    if (own < 0 || b < 0) no_route(t, src, dst, "the GPUs are in different machines and one of them has no NIC");
    int a = own;
    auto net = bfs(t, own, b, Class::network);
    // Fewer than 3 hops is NIC -> switch -> NIC: no NIC does better.
    if (net.empty() || net.size() > 2) {
      size_t best = net.empty() ? SIZE_MAX : net.size();
      for (int nic : t.nics()) {
        if (nic == own || t.machine_of(nic) != t.machine_of(src)) continue;
        auto p = bfs(t, b, nic, Class::network);  // one search from b, resumed for each NIC
        if (!p.empty() && p.size() < best) best = p.size(), a = nic;
      }
      if (a != own) net = bfs(t, a, b, Class::network);
    }
    if (net.empty()) no_route(t, src, dst, "no network path between NICs " + t.nodes()[own].name + " and " + t.nodes()[b].name);
    r.network = true;
    std::vector<std::vector<Hop>> segments;
    std::vector<int> via;
    auto to_nic = bfs(t, src, a, Class::pcie);
    bool through_cpu = false;
    for (size_t i = 0; i + 1 < to_nic.size(); ++i) through_cpu = through_cpu || nodes[hop_target(t, to_nic[i])].type == NodeType::host;
    if (a != own && through_cpu && t.p2p_enabled() && nodes[src].p2p) {
      for (int g : t.gpus()) {
        if (g == src || t.machine_of(g) != t.machine_of(src) || nearest_nic(t, g) != a || !nodes[g].p2p) continue;
        if (pxn_proxies && (static_cast<size_t>(g) >= pxn_proxies->size() || !(*pxn_proxies)[g])) continue;
        auto nv = bfs(t, src, g, Class::nvlink);
        if (nv.empty()) continue;
        segments = {nv, bfs(t, g, a, Class::pcie)};
        via = {g};
        r.pxn = true;
        break;
      }
    }
    if (segments.empty() && a != own && through_cpu) {
      // No PXN (P2P off, no NVLink to that NIC's GPU, or that GPU is not in the communicator):
      // NCCL does not send GPUDirect through a CPU (NCCL_NET_GDR_LEVEL defaults to PXB), so
      // the source's own NIC and the spine; on a network without one (rail-only), no route,
      // as NCCL could not connect those NICs either.
      auto own_net = bfs(t, own, b, Class::network);
      if (own_net.empty())
        no_route(t, src, dst,
                 "its NIC " + nodes[own].name + " has no network path to " + nodes[b].name + " (no spine joins their rails), and no GPU " +
                     (!t.p2p_enabled() || !nodes[src].p2p ? "can relay over NVLink to the NIC on that rail (P2P is off)"
                      : pxn_proxies                        ? "of the communicator near the NIC on that rail can relay over NVLink (PXN)"
                                                           : "near the NIC on that rail can relay over NVLink (PXN)") +
                     "; NCCL sends no GPUDirect through a CPU");
      a = own;
      net = std::move(own_net);
      to_nic = bfs(t, src, own, Class::pcie);
    }
    if (segments.empty()) segments = {to_nic};
    segments.push_back(net);
    segments.push_back(bfs(t, b, dst, Class::pcie));
    via.push_back(a);
    via.push_back(b);
    chain(t, r, segments, via);
    finish(t, r);
    return r;
  }
  if ((nodes[src].type == NodeType::nic || nodes[dst].type == NodeType::nic) && !gpu_pair && t.machine_of(src) != t.machine_of(dst) &&
      nodes[src].type != NodeType::host && nodes[dst].type != NodeType::host) {
    // A NIC and a NIC or GPU of another machine: the GPU's nearest NIC, the network.
    const int a = nodes[src].type == NodeType::nic ? src : nearest_nic(t, src);
    const int b = nodes[dst].type == NodeType::nic ? dst : nearest_nic(t, dst);
    if (a < 0 || b < 0) no_route(t, src, dst, "the GPU's machine has no NIC");
    auto net = bfs(t, a, b, Class::network);
    if (net.empty()) no_route(t, src, dst, "no network path between NICs " + nodes[a].name + " and " + nodes[b].name);
    std::vector<std::vector<Hop>> segments;
    std::vector<int> via;
    if (a != src) segments.push_back(bfs(t, src, a, Class::pcie)), via.push_back(a);
    segments.push_back(net);
    if (b != dst) via.push_back(b), segments.push_back(bfs(t, b, dst, Class::pcie));
    chain(t, r, segments, via);
    r.network = true;
    finish(t, r);
    return r;
  }
  if (nodes[src].type == NodeType::host && nodes[dst].type == NodeType::host) {
    // Host to host: over the socket interconnect, or host NIC to host NIC; root complexes
    // do not talk to each other through a PCIe chassis.
    auto sock = bfs(t, src, dst, Class::sockets);
    if (!sock.empty()) {
      append(t, r, sock);
      r.memory_hosts = {src, dst};
      finish(t, r);
      return r;
    }
    // Else memory to memory through each host's NIC and the network.
    const int na = nic_of_host(t, src), nb = nic_of_host(t, dst);
    auto net = na >= 0 && nb >= 0 && na != nb ? bfs(t, na, nb, Class::network) : std::vector<Hop>{};
    if (net.empty()) no_route(t, src, dst, "hosts talk over a socket interconnect or their NICs, and these hosts share neither");
    chain(t, r, {bfs(t, src, na, Class::pcie), net, bfs(t, nb, dst, Class::pcie)}, {na, nb});
    r.memory_hosts = {src, dst};
    r.network = true;
    finish(t, r);
    return r;
  }
  auto path = bfs(t, src, dst, Class::pcie);
  if (path.empty()) no_route(t, src, dst, "no PCIe or NVLink path between them");
  if (!gpu_pair) {
    // Two hosts' PCIe domains meet only over a socket interconnect: a path that leaves one
    // host's root complex for another's through switches (a composable chassis between its
    // hosts) does not exist. Two NICs of such hosts talk over their network.
    const bool crosses_domains = leaves_host_domain(t, src, path);
    // A device attached to a host of a composition copies to that host's memory only, and
    // reaches another host's devices only where the chassis joins the hosts (two NICs of
    // different hosts talk over their network, below).
    const int device = nodes[src].type == NodeType::host ? dst : src, host = device == src ? dst : src;
    if (t.composed() && nodes[host].type == NodeType::host && nodes[device].type != NodeType::host && t.attached(device) &&
        t.host_of(device) != host)
      no_route(t, src, dst, nodes[device].name + " is attached to " + nodes[t.host_of(device)].name + ", whose memory its copies go to");
    const bool two_devices = nodes[src].type != NodeType::host && nodes[dst].type != NodeType::host;
    const bool two_nics = nodes[src].type == NodeType::nic && nodes[dst].type == NodeType::nic;
    if (t.composed() && two_devices && !two_nics && t.host_of(src) >= 0 && t.host_of(dst) >= 0 && t.host_of(src) != t.host_of(dst) &&
        !t.fabric_p2p_across_hosts())
      no_route(t, src, dst,
               "they are attached to different hosts (" + nodes[t.host_of(src)].name + ", " + nodes[t.host_of(dst)].name +
                   ") and the chassis does not allow P2P across hosts (fabric_p2p_across_hosts)");
    if (crosses_domains) {
      // The shortest path went through a switch between hosts; one as short or longer may
      // go over the socket interconnect instead: up to the nearest host, across, down.
      const int hs = nodes[src].type == NodeType::host ? src : t.nearest_host(src);
      const int hd = nodes[dst].type == NodeType::host ? dst : t.nearest_host(dst);
      auto sock = hs >= 0 && hd >= 0 && hs != hd ? bfs(t, hs, hd, Class::sockets) : std::vector<Hop>{};
      auto up = hs >= 0 && hs != src ? bfs(t, src, hs, Class::pcie) : std::vector<Hop>{};
      auto down = hd >= 0 && hd != dst ? bfs(t, hd, dst, Class::pcie) : std::vector<Hop>{};
      if (!sock.empty() && (hs == src || !up.empty()) && (hd == dst || !down.empty())) {
        std::vector<std::vector<Hop>> segments;
        std::vector<int> via;
        if (hs != src) segments.push_back(up), via.push_back(hs);
        segments.push_back(sock);
        if (hd != dst) via.push_back(hd), segments.push_back(down);
        chain(t, r, segments, via);
        if (nodes[src].type == NodeType::host) r.memory_hosts.push_back(src);
        if (nodes[dst].type == NodeType::host) r.memory_hosts.push_back(dst);
        finish(t, r);
        return r;
      }
      if (nodes[src].type == NodeType::nic && nodes[dst].type == NodeType::nic) {
        auto net = bfs(t, src, dst, Class::network);
        if (net.empty()) no_route(t, src, dst, "the NICs are in different hosts' PCIe domains and no network joins them");
        append(t, r, net);
        r.network = true;
        finish(t, r);
        return r;
      }
      no_route(t, src, dst, "the path leaves one host's PCIe domain for another's, which only a socket interconnect joins");
    }
  }
  if (gpu_pair) {
    int hosts_crossed = 0;
    bool blocked = !t.p2p_enabled() || !nodes[src].p2p || !nodes[dst].p2p;
    for (size_t i = 0; i + 1 < path.size(); ++i) {
      const Node& n = nodes[hop_target(t, path[i])];
      if (n.type == NodeType::host) {
        ++hosts_crossed;
        if (!n.p2p_across_root_ports) blocked = true;
      }
    }
    if (hosts_crossed > 1) blocked = true;
    if (blocked) {
      const int h = t.host_of(src);
      auto up = bfs(t, src, h, Class::pcie);
      auto down = bfs(t, h, dst, Class::pcie);
      if (up.empty() || down.empty()) no_route(t, src, dst, "P2P is not possible and there is no staging path through host memory");
      r.staged = true;
      chain(t, r, {up, down}, {h});
      r.memory_hosts = {h, h};  // written by the source, read by the destination
      finish(t, r);
      return r;
    }
  }
  append(t, r, path);
  if (nodes[src].type == NodeType::host) r.memory_hosts.push_back(src);
  if (nodes[dst].type == NodeType::host) r.memory_hosts.push_back(dst);
  finish(t, r);
  return r;
}

std::vector<char> pxn_proxies_of(const Topology& t, const std::vector<int>& gpus) {
  std::vector<char> mask(t.nodes().size(), 0);
  for (int g : gpus) mask.at(g) = 1;
  return mask;
}

std::string describe(const Topology& t, const Route& r) {
  std::string s = t.nodes()[r.src].name;
  int at = r.src;
  for (const Hop& h : r.hops) {
    at = hop_target(t, h);
    s += " -> " + t.nodes()[at].name;
    if (r.staged && std::find(r.memory_hosts.begin(), r.memory_hosts.end(), at) != r.memory_hosts.end()) s += "(memory)";
  }
  char tail[200];
  const bool hosts = t.nodes()[r.src].type == NodeType::host && t.nodes()[r.dst].type == NodeType::host;
  const char* kind = r.nvlink ? "NVLink" : r.pxn ? "network, through a GPU on the peer's rail (PXN)" : r.network ? "network" : r.staged ? "staged via host memory" : hosts ? "socket interconnect" : "PCIe";
  std::snprintf(tail, sizeof tail, "  [%s, bottleneck %.2f GB/s, latency %.3f us]", kind, r.bottleneck_Bps / 1e9,
                r.latency_s * 1e6);
  return s + tail;
}

double transfer_time_s(const Route& r, double bytes) { return r.latency_s + bytes / r.bottleneck_Bps; }

std::vector<std::string> long_reach_notes(const Topology& t) {
  std::vector<std::string> notes;
  // `what` (a link, or a GPU's route to its host) holds more in flight than reads cover?
  auto check = [&](const std::string& what, double latency_s, double bandwidth_Bps, const char* rate_of) {
    const double rtt_s = 2 * latency_s, in_flight_B = rtt_s * bandwidth_Bps;
    if (!(in_flight_B > pcie::kOutstandingReadWindow_B)) return false;
    char buf[640];
    std::snprintf(buf, sizeof buf,
                  "%s: its %.2f us round trip holds %.0f KiB at its %.2f GB/s, more than the 384 KiB of 768 outstanding 512-byte reads "
                  "(PCIe 10-bit tags) cover; composim models neither read tags nor flow-control credits, so %s is an upper bound "
                  "(reads alone would reach about %.2f GB/s)",
                  what.c_str(), rtt_s * 1e6, in_flight_B / 1024, bandwidth_Bps / 1e9, rate_of, pcie::kOutstandingReadWindow_B / rtt_s / 1e9);
    notes.push_back(buf);
    return true;
  };
  std::vector<char> long_link(t.links().size(), 0);
  for (size_t i = 0; i < t.links().size(); ++i) {
    const Link& l = t.links()[i];
    if (!l.is_pcie()) continue;
    char what[320];
    std::snprintf(what, sizeof what, "link %s (%g m)", l.name.c_str(), l.length_m);
    long_link[i] = check(what, l.latency_s, l.bandwidth_Bps, "its rate over this link");
  }
  for (int g : t.gpus()) {
    const int host = t.host_of(g);
    if (host < 0) continue;
    Route r;
    try {
      r = route(t, g, host);
    } catch (const InputError&) {
      continue;
    }
    if (std::any_of(r.hops.begin(), r.hops.end(), [&](const Hop& h) { return long_link[h.link] != 0; })) continue;  // said above
    check(t.nodes()[g].name + "'s route to " + t.nodes()[host].name, r.latency_s, r.bottleneck_Bps, "its copies' rate");
  }
  return notes;
}

}  // namespace composim::topo
