#include "sim/platform.hpp"

#include "models/collective.hpp"
#include "models/host.hpp"

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace composim::sim {

namespace sg4 = simgrid::s4u;

void configure_engine() {
  // LV08 (the default) is calibrated for TCP; PCIe, NVLink and optical links are not TCP.
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
}

Platform::Platform(const topo::Topology& t, const std::vector<std::pair<int, int>>& pairs, bool nccl_paths,
                   const std::vector<char>* pxn_proxies, const std::vector<RouteVariant>& variants)
    : topo_(t) {
  auto* zone = sg4::create_full_zone(t.name());
  const auto& nodes = t.nodes();
  hosts_.assign(nodes.size(), nullptr);
  // SimGrid aborts on a link name used twice, and topology link names are free text (a
  // split-duplex link also takes NAME_UP and NAME_DOWN): every name is made unused here.
  auto unused = [](std::string name, bool split_duplex) {
    auto taken = [&](const std::string& n) {
      return sg4::Link::by_name_or_null(n) || (split_duplex && (sg4::Link::by_name_or_null(n + "_UP") || sg4::Link::by_name_or_null(n + "_DOWN")));
    };
    while (taken(name)) name += "'";
    return name;
  };
  std::vector<sg4::Link*> links;
  for (const auto& l : t.links())
    links.push_back(zone->create_split_duplex_link(unused(l.name, true), l.bandwidth_Bps)->set_latency(0)->seal());
  std::vector<sg4::Link*> memory(nodes.size(), nullptr), shm(nodes.size(), nullptr);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    if (n.is_endpoint()) hosts_[i] = zone->create_host(n.name, 1e9)->seal();
    if (n.type == topo::NodeType::host)
      memory[i] = zone->create_link(unused(n.name + ":memory", false), n.memory_bandwidth_Bps)->set_latency(0)->seal();
  }

  // The SimGrid route of `r` (from src to dst), from host `from`.
  auto add_route = [&](sg4::Host* from, int src, int dst, const topo::Route& r) {
    std::vector<sg4::LinkInRoute> path;
    auto add_memory = [&](int h) {
      if (memory[h]) path.emplace_back(memory[h]);
    };
    if (nodes[src].type == topo::NodeType::host) add_memory(src);
    size_t transit_i = 0;
    for (size_t h = 0; h < r.hops.size(); ++h) {
      const auto& hop = r.hops[h];
      path.emplace_back(links[hop.link], hop.forward ? sg4::LinkInRoute::Direction::UP : sg4::LinkInRoute::Direction::DOWN);
      if (h + 1 < r.hops.size()) {
        const int n = r.transit[transit_i++];
        if (r.staged && nodes[n].type == topo::NodeType::host)
          for (auto c = std::count(r.memory_hosts.begin(), r.memory_hosts.end(), n); c > 0; --c) add_memory(n);
      }
    }
    if (nodes[dst].type == topo::NodeType::host) add_memory(dst);
    // NCCL's SHM transport: what a GPU sends to other GPUs through host memory moves at most
    // at collective::shm_transport_Bps(), shared by all its peers.
    if (nccl_paths && r.shm()) {
      if (!shm[src]) shm[src] = zone->create_link(unused(nodes[src].name + ":shm", false), collective::shm_transport_Bps())->set_latency(0)->seal();
      path.emplace_back(shm[src]);
    }
    // A plain CUDA copy staged through host memory (cudaMemcpyPeer without P2P): a link of
    // its own caps it at host::staged_copy_Bps() of the route's bottleneck, the driver's
    // hand-off between the two legs (a serial cost, which shared links cannot express).
    if (!nccl_paths && r.staged)
      path.emplace_back(zone->create_link(unused(from->get_name() + "->" + nodes[dst].name + ":staging", false), host::staged_copy_Bps(r.bottleneck_Bps))
                            ->set_latency(0)
                            ->seal());
    zone->add_route(from->get_netpoint(), hosts_[dst]->get_netpoint(), nullptr, nullptr, path, false);
  };
  for (auto [src, dst] : pairs) {
    if (src == dst) continue;
    if (routes_.count({src, dst})) continue;
    topo::Route r = topo::route(t, src, dst, nccl_paths, pxn_proxies);
    add_route(hosts_[src], src, dst, r);
    routes_.emplace(std::make_pair(src, dst), std::move(r));
  }
  auto same_hops = [](const topo::Route& a, const topo::Route& b) {
    if (a.hops.size() != b.hops.size()) return false;
    for (size_t i = 0; i < a.hops.size(); ++i)
      if (a.hops[i].link != b.hops[i].link || a.hops[i].forward != b.hops[i].forward) return false;
    return true;
  };
  for (size_t v = 0; v < variants.size(); ++v) {
    const int variant = static_cast<int>(v) + 1;
    for (auto [src, dst] : variants[v].pairs) {
      if (src == dst || variant_routes_.count({variant, src, dst})) continue;
      topo::Route r = topo::route(t, src, dst, nccl_paths, variants[v].pxn_proxies);
      if (same_hops(r, route(src, dst))) continue;
      sg4::Host*& from = variant_hosts_[{variant, src}];
      if (!from) {
        std::string name = nodes[src].name + " (PXN relays of variant " + std::to_string(variant) + ")";
        while (sg4::Host::by_name_or_null(name)) name += "'";
        from = zone->create_host(name, 1e9)->seal();
      }
      add_route(from, src, dst, r);
      variant_routes_.emplace(std::make_tuple(variant, src, dst), std::move(r));
    }
  }
  zone->seal();
}

sg4::Host* Platform::source_of(int variant, int src, int dst) const {
  if (variant > 0 && variant_routes_.count({variant, src, dst})) return variant_hosts_.at({variant, src});
  return host_of(src);
}

void Platform::start(const sg4::CommPtr& comm, int variant, int src, int dst, std::function<void()> on_start) const {
  const double latency = src == dst ? 0.0 : route(variant, src, dst).latency_s;
  if (latency <= 0) {
    if (on_start) on_start();
    comm->start();
    return;
  }
  simgrid::kernel::timer::Timer::set(sg4::Engine::get_clock() + latency, [comm, on_start = std::move(on_start)] {
    if (on_start) on_start();
    comm->start();
  });
}

const topo::Route& Platform::route(int src, int dst) const {
  auto it = routes_.find({src, dst});
  if (it == routes_.end()) throw std::logic_error("route not built");
  return it->second;
}

const topo::Route& Platform::route(int variant, int src, int dst) const {
  if (variant > 0)
    if (auto it = variant_routes_.find({variant, src, dst}); it != variant_routes_.end()) return it->second;
  return route(src, dst);
}

}  // namespace composim::sim
