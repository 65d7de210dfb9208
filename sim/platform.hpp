// File: sim/platform.hpp
//
// Builds the SimGrid platform of a Topology: one SimGrid host per endpoint (GPU, NIC, host
// memory), one split-duplex link per topology link (UP = from -> to), one SHARED link per
// host memory (reads and writes share DRAM bandwidth), and, for NCCL paths, one link per GPU
// for what it sends to peers through host memory, at NCCL's SHM transport rate
// (collective::shm_transport_Bps()); without NCCL paths, one link per GPU pair whose copies
// the driver stages through host memory, at host::staged_copy_Bps() of the route's
// bottleneck (such a copy's rate alone; concurrent ones share it). Routes are the ones of
// topologies/routing.hpp, added explicitly to a full zone for the endpoint pairs the run
// needs. The network model is CM02 with cross-traffic off.
//
// Latency is not on the SimGrid links: CM02 shares a link among flows in inverse
// proportion to their route latency (TCP's RTT unfairness, network_cm02.cpp's
// sharing_penalty), which PCIe, NVLink and optical links do not have. A flow is started
// after its route's latency (links, switches, root complexes: topo::Route::latency_s) on
// zero-latency links instead, so a lone transfer still takes exactly latency + bytes /
// bottleneck, and flows sharing a link get equal shares (max-min).
//
// Must be called once per process, after the simgrid::s4u::Engine is created and before
// anything else creates a zone.
#pragma once

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Host.hpp>

#include <functional>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "topologies/routing.hpp"

namespace composim::sim {

// Sets CM02, crosstraffic:0 and quiet logging; must run before the first zone is created.
void configure_engine();

class Platform {
 public:
  // `pairs`: (src, dst) endpoint node pairs to route (directed).
  // `nccl_paths`: GPU pairs may route as NCCL does (NVLink through an intermediate GPU);
  // false for plain CUDA copies. `pxn_proxies`: the GPUs that may relay PXN traffic (the
  // job's; topo::route()), nullptr for any.
  //
  // `variants`: other sets of PXN relays, each with the pairs that use it (every one also
  // in `pairs`): a communicator of some of the job's ranks relays only through its own GPUs
  // (NCCL's PXN proxy is a rank of the communicator). Variant i + 1 is variants[i]; 0 is
  // the job's. Where a variant's route differs, its flows leave from a SimGrid host of
  // their own for that source (SimGrid keeps one route per host pair).
  struct RouteVariant {
    const std::vector<char>* pxn_proxies;
    std::vector<std::pair<int, int>> pairs;
  };
  Platform(const topo::Topology& t, const std::vector<std::pair<int, int>>& pairs, bool nccl_paths = true,
           const std::vector<char>* pxn_proxies = nullptr, const std::vector<RouteVariant>& variants = {});

  simgrid::s4u::Host* host_of(int node) const { return hosts_.at(node); }
  // The host a flow from `src` to `dst` under route variant `variant` leaves from.
  simgrid::s4u::Host* source_of(int variant, int src, int dst) const;

  // start()
  //
  // Starts `comm` (made with sendto_init(host_of(src), host_of(dst)), its payload set, not
  // started) after the route's latency; the caller keeps the handle until it completes.
  // `on_start`, if given, runs just before the comm starts moving data.
  void start(const simgrid::s4u::CommPtr& comm, int src, int dst, std::function<void()> on_start = {}) const {
    start(comm, 0, src, dst, std::move(on_start));
  }
  // The same for a comm made with sendto_init(source_of(variant, src, dst), host_of(dst)).
  void start(const simgrid::s4u::CommPtr& comm, int variant, int src, int dst, std::function<void()> on_start = {}) const;
  const topo::Route& route(int src, int dst) const;
  const topo::Route& route(int variant, int src, int dst) const;
  // Name of the topology link (or node) behind a SimGrid link name.
  const topo::Topology& topology() const { return topo_; }

 private:
  const topo::Topology& topo_;
  std::vector<simgrid::s4u::Host*> hosts_;  // by node index; nullptr for transit nodes
  std::map<std::pair<int, int>, topo::Route> routes_;
  std::map<std::tuple<int, int, int>, topo::Route> variant_routes_;  // (variant, src, dst): where it differs
  std::map<std::pair<int, int>, simgrid::s4u::Host*> variant_hosts_;  // (variant, src)
};

}  // namespace composim::sim
