#include "sim/collectives.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>

#include "models/error.hpp"
#include "models/gpu.hpp"
#include "models/nvlink.hpp"

namespace composim::sim {

using collective::Algorithm;
using collective::Kind;
using collective::LinkClass;
using collective::Protocol;

namespace {
constexpr size_t kMaxRings = 16;
constexpr size_t kExhaustiveLimit = 9;  // GPUs per machine searched over all orders

std::string lower(std::string v) {
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return v;
}

// NCCL's list syntax (src/graph/tuning.cc parseList): "a,b" enables those, "^a,b" all but
// those. `names` maps a lower-case name to its bit; `unmodelled` are NCCL names composim
// does not model.
unsigned parse_list(const std::string& text, const std::vector<std::pair<std::string, unsigned>>& names,
                    const std::vector<std::string>& unmodelled, const char* what) {
  std::string body = text;
  const bool exclude = !body.empty() && body[0] == '^';
  if (exclude) body.erase(0, 1);
  unsigned all = 0, listed = 0;
  for (const auto& [name, bit] : names) all |= bit;
  size_t start = 0;
  while (start <= body.size()) {
    const size_t comma = std::min(body.find(',', start), body.size());
    std::string item = body.substr(start, comma - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    start = comma + 1;
    const std::string key = lower(item);
    auto it = std::find_if(names.begin(), names.end(), [&](const auto& e) { return e.first == key; });
    if (it != names.end()) {
      listed |= it->second;
      continue;
    }
    std::string known;
    for (const auto& [name, bit] : names) known += (known.empty() ? "" : ", ") + name;
    const bool known_to_nccl = std::find(unmodelled.begin(), unmodelled.end(), key) != unmodelled.end();
    if (known_to_nccl && exclude) continue;  // excluding what composim never chooses changes nothing
    if (known_to_nccl)
      throw std::invalid_argument(std::string(what) + " \"" + item + "\" is not modelled by composim (it models " + known + ")");
    throw std::invalid_argument("unknown " + std::string(what) + " \"" + item + "\" in \"" + text + "\" (expected a comma-separated list of " +
                                known + ", optionally after ^ to exclude them)");
  }
  const unsigned set = exclude ? all & ~listed : listed;
  if (set == 0) throw std::invalid_argument("\"" + text + "\" leaves no " + std::string(what) + " to choose from");
  return set;
}
}  // namespace

TunerChoices TunerChoices::of(std::optional<Protocol> protocol, std::optional<Algorithm> algorithm) {
  TunerChoices c;
  if (protocol) c.protocols = 1u << static_cast<int>(*protocol);
  if (algorithm) c.algorithms = 1u << static_cast<int>(*algorithm);
  return c;
}

Protocol TunerChoices::pick(Protocol preferred) const {
  if (allows(preferred)) return preferred;
  for (Protocol pr : {Protocol::simple, Protocol::ll128, Protocol::ll})
    if (allows(pr)) return pr;
  return preferred;
}

unsigned parse_protocol_list(const std::string& text) {
  return parse_list(text,
                    {{"ll", 1u << static_cast<int>(Protocol::ll)},
                     {"ll128", 1u << static_cast<int>(Protocol::ll128)},
                     {"simple", 1u << static_cast<int>(Protocol::simple)}},
                    {}, "protocol");
}

unsigned parse_algorithm_list(const std::string& text) {
  return parse_list(text,
                    {{"ring", 1u << static_cast<int>(Algorithm::ring)},
                     {"tree", 1u << static_cast<int>(Algorithm::tree)},
                     {"nvls", 1u << static_cast<int>(Algorithm::nvls)},
                     {"nvlstree", 1u << static_cast<int>(Algorithm::nvls_tree)}},
                    {"collnetdirect", "collnetchain", "collnet", "pat"}, "algorithm");
}

int CollectivePlanner::machine_key(int node) const {
  return topo_.composed() && !topo_.fabric_p2p_across_hosts() ? topo_.host_of(node) : topo_.machine_of(node);
}

// Members grouped by machine, machines in order of their first member (rank order).
std::pair<std::vector<int>, std::map<int, std::vector<int>>> CollectivePlanner::group_by_machine(const std::vector<int>& gpus) const {
  std::vector<int> machine_ids;
  std::map<int, std::vector<int>> by_machine;
  for (int g : gpus) {
    const int m = machine_key(g);
    if (!by_machine.count(m)) machine_ids.push_back(m);
    by_machine[m].push_back(g);
  }
  return {machine_ids, by_machine};
}

// NCCL numbers a machine's GPUs by walking its PCIe tree depth first from the CPUs, each
// node's children in the order the ranks first reach them (each rank adds its GPU's PCIe path
// to the topology, rank by rank: topo.cc's ncclTopoFillGpu and ncclTopoFuseXml, then
// ncclTopoGetSystemFromXml). So a GPU's place is set by its host's first rank, then its
// switches' first ranks, top down, then its own rank: GPUs of one socket or switch are
// neighbours whatever the rank order.
std::vector<int> CollectivePlanner::system_order(const std::vector<int>& members) const {
  if (members.size() <= 2) return members;
  std::vector<std::vector<int>> ancestors(members.size());  // host first, then switches down
  for (size_t i = 0; i < members.size(); ++i) {
    const int host = topo_.host_of(members[i]);
    if (host < 0) return members;
    try {
      const auto up = topo::route(topo_, members[i], host);
      ancestors[i].push_back(host);
      for (auto it = up.transit.rbegin(); it != up.transit.rend(); ++it) ancestors[i].push_back(*it);
    } catch (const InputError&) {
      return members;  // no PCIe path to its host: keep the rank order
    }
  }
  std::map<int, size_t> first;  // node -> the first rank under it
  for (size_t i = 0; i < members.size(); ++i)
    for (int a : ancestors[i]) first.emplace(a, i);
  std::vector<std::vector<size_t>> key(members.size());
  for (size_t i = 0; i < members.size(); ++i) {
    for (int a : ancestors[i]) key[i].push_back(first.at(a));
    key[i].push_back(i);
  }
  std::vector<size_t> idx(members.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return key[a] < key[b]; });
  std::vector<int> out;
  for (size_t i : idx) out.push_back(members[i]);
  return out;
}

const topo::Route& CollectivePlanner::route(int a, int b) {
  auto it = routes_.find({a, b});
  if (it == routes_.end()) it = routes_.emplace(std::make_pair(a, b), topo::route(topo_, a, b, /*nccl_paths=*/true, pxn_proxies_.empty() ? nullptr : &pxn_proxies_)).first;
  return it->second;
}

// Capacity keys: (link, direction) for links, (-1 - host, 0) for a host's memory, (-1 - gpu,
// 2) for what a GPU sends through host memory (SHM transport, as the platform).
std::vector<std::pair<int, int>> CollectivePlanner::resources(int a, int b) {
  auto it = resources_.find({a, b});
  if (it != resources_.end()) return it->second;
  const auto& r = route(a, b);
  std::vector<std::pair<int, int>> keys;
  for (const auto& h : r.hops) keys.emplace_back(h.link, h.forward ? 0 : 1);
  for (int h : r.memory_hosts) keys.emplace_back(-1 - h, 0);
  if (r.shm()) keys.emplace_back(-1 - a, 2);
  resources_.emplace(std::make_pair(a, b), keys);
  return keys;
}

double CollectivePlanner::capacity(std::pair<int, int> key) const {
  if (key.first < 0 && key.second >= 2) return collective::shm_transport_Bps();
  if (key.first < 0) return topo_.nodes()[-1 - key.first].memory_bandwidth_Bps;
  return topo_.links()[key.first].bandwidth_Bps;
}

// The network plugin's own latency on one network step; twice in Simple (NCCL's tuning.cc:
// "Also add the flush extra latency").
static double plugin_step_s(Protocol pr, double plugin_latency_s) { return (pr == Protocol::simple ? 2 : 1) * plugin_latency_s; }

double CollectivePlanner::net_plugin_latency_s(int a, int b) {
  const auto& r = route(a, b);
  double l = 0;
  if (r.network)
    for (int v : r.transit) l = std::max(l, topo_.nodes()[v].nccl_net_latency_s);
  return l;
}

double CollectivePlanner::indirect_factor(int a, int b) { return route(a, b).nvb ? collective::indirect_nvlink_efficiency() : 1.0; }

// SHM hops: the receiver polls its flag in host memory across PCIe, so each step of the
// algorithm also waits a read round trip over the staged route (twice its one-way latency),
// which NCCL's per-step latency (measured for direct P2P) does not include. 0 otherwise.

double CollectivePlanner::shm_step_s(int a, int b) {
  const auto& r = route(a, b);
  return r.shm() ? 2 * r.latency_s : 0.0;
}

// Cables on a direct hop: NCCL's per-step latency was measured inside a server, so what a
// PCIe cable adds (propagation over its length, its transceivers, retimers on the path)
// is waited at every step that crosses the hop, as each step's data must arrive before the
// next is sent. Network links are not counted (NCCL's network step latency is measured over
// a fabric's cables), but a hop across machines counts the PCIe cables between its GPUs and
// NICs. 0 for SHM hops, whose round trip (shm_step_s) includes them.
double CollectivePlanner::cable_step_s(int a, int b) {
  const auto& r = route(a, b);
  if (r.shm()) return 0.0;
  double s = 0;
  for (const auto& h : r.hops) {
    const auto& l = topo_.links()[h.link];
    if (l.is_pcie()) s += l.latency_s;
  }
  for (int v : r.transit) {
    // Retimers are PCIe's; a transceiver node on a route across machines may be the network's.
    const auto& n = topo_.nodes()[v];
    if (n.type == topo::NodeType::retimer || (n.type == topo::NodeType::optical_transceiver && !r.network)) s += n.latency_s;
  }
  return s;
}

std::map<std::pair<int, int>, double> CollectivePlanner::loads(const std::vector<Flow>& flows) {
  std::map<std::pair<int, int>, double> load;
  for (const auto& f : flows)
    for (const auto& key : resources(f.src, f.dst)) load[key] += f.bytes;
  return load;
}

double CollectivePlanner::flows_bound_s(const std::vector<Flow>& flows) {
  double t = 0;
  for (const auto& [key, bytes] : loads(flows)) t = std::max(t, bytes / capacity(key));
  return t;
}

std::string CollectivePlanner::bound_by(const std::vector<Flow>& flows) {
  double links = 0, other = 0;
  bool shm = false;
  for (const auto& [key, bytes] : loads(flows)) {
    const double t = bytes / capacity(key);
    if (key.first >= 0) {
      links = std::max(links, t);
    } else if (t > other) {
      other = t;
      shm = key.second >= 2;
    }
  }
  if (other <= links * (1 + 1e-9)) return "links";
  return shm ? "shm" : "host_memory";
}

// NCCL's search (src/graph/search.cc) knows links only: neither a host's memory bandwidth
// nor the SHM transport's rate is in its topology, so it neither spreads a ring's hops
// through host memory over several GPUs to share that rate, nor counts it in a channel's
// speed. The flows meet both.
double CollectivePlanner::search_capacity(std::pair<int, int> key) const { return key.first < 0 ? INFINITY : capacity(key); }

double CollectivePlanner::bottleneck(const std::vector<std::pair<int, int>>& hops, const std::map<std::pair<int, int>, double>& residual) {
  std::map<std::pair<int, int>, int> uses;
  for (auto [a, b] : hops)
    for (const auto& key : resources(a, b)) ++uses[key];
  double bw = INFINITY;
  for (const auto& [key, n] : uses) {
    auto it = residual.find(key);
    const double left = it == residual.end() ? search_capacity(key) : it->second;
    bw = std::min(bw, left / n);
  }
  return bw;
}

std::vector<CollectivePlanner::Ring> CollectivePlanner::pack_rings(const std::vector<std::vector<int>>& candidates,
                                                                   std::map<std::pair<int, int>, double>& residual, size_t max) {
  // Dense form of every candidate: resource ids and use counts.
  std::map<std::pair<int, int>, int> ids;
  std::vector<double> start;
  struct Cand {
    std::vector<std::pair<int, int>> uses;  // (resource id, count)
    int tier;  // 0: NVLink GPU to GPU or through NVSwitches; 1: also through a GPU (NVB); 2: not NVLink
  };
  std::vector<Cand> cands;
  cands.reserve(candidates.size());
  for (const auto& order : candidates) {
    std::map<int, int> count;
    bool nv = true, nvb = false;
    for (size_t i = 0; i < order.size(); ++i) {
      const int a = order[i], b = order[(i + 1) % order.size()];
      nv = nv && route(a, b).nvlink;
      nvb = nvb || route(a, b).nvb;
      for (const auto& key : resources(a, b)) {
        auto [it, inserted] = ids.emplace(key, static_cast<int>(start.size()));
        if (inserted) {
          auto r = residual.find(key);
          start.push_back(r == residual.end() ? search_capacity(key) : r->second);
        }
        ++count[it->second];
      }
    }
    cands.push_back({std::vector<std::pair<int, int>>(count.begin(), count.end()), !nv ? 2 : nvb ? 1 : 0});
  }
  const std::vector<double> cap(start);
  // NCCL's search (src/graph/search.cc) gives every channel of a graph the same bandwidth
  // and keeps the solution with the most total bandwidth (channels x speed).
  auto fits = [&](const Cand& c, double b, const std::vector<double>& left) {
    for (auto [id, n] : c.uses)
      if (left[id] < b * n * (1 - 1e-9)) return false;
    return true;
  };
  // The widest single ring of each path tier (NVLink; NVLink through a GPU; anything),
  // a ring of tier t using only hops of tier <= t, as NCCL's typeIntra bounds a path type.
  double top[3] = {0, 0, 0};
  for (const auto& c : cands) {
    double bw = INFINITY;
    for (auto [id, n] : c.uses) bw = std::min(bw, cap[id] / n);
    if (!(bw > 0)) continue;
    for (int t = c.tier; t < 3; ++t) top[t] = std::max(top[t], bw);
  }
  if (!(top[2] > 0)) return {};
  // Egress bound: every ring leaves every GPU once, on a resource that is the first hop
  // of some route from that GPU.
  std::map<int, std::map<int, double>> egress;  // GPU -> first-hop resource id -> capacity
  for (size_t c = 0; c < candidates.size(); ++c) {
    const auto& order = candidates[c];
    for (size_t i = 0; i < order.size(); ++i) {
      const auto keys = resources(order[i], order[(i + 1) % order.size()]);
      if (!keys.empty()) egress[order[i]][ids.at(keys.front())] = cap[ids.at(keys.front())];
    }
  }
  // Most rings of speed b that fit together: depth-first over candidates (in index order,
  // repeats allowed, so each multiset is tried once), each level keeping only the
  // candidates that still fit; stops at the egress bound or after a budget of fit checks
  // (NCCL's search also stops on a time limit and keeps the best so far).
  auto pack_at = [&](double b, int tier, std::vector<double>& left) {
    size_t bound = max;
    for (const auto& [g, res] : egress) {
      double sum = 0;
      for (const auto& [id, c] : res) sum += c;
      bound = std::min(bound, static_cast<size_t>(std::floor(sum / b * (1 + 1e-9))));
    }
    std::vector<int> chosen, best;
    long budget = 4'000'000;
    std::vector<int> all;
    for (size_t c = 0; c < cands.size(); ++c)
      if (cands[c].tier <= tier) all.push_back(static_cast<int>(c));
    std::function<void(const std::vector<int>&)> dfs = [&](const std::vector<int>& feasible) {
      if (chosen.size() > best.size()) best = chosen;
      if (best.size() >= bound || budget <= 0) return;
      for (size_t i = 0; i < feasible.size() && budget > 0 && best.size() < bound; ++i) {
        const int c = feasible[i];
        for (auto [id, n] : cands[c].uses) left[id] -= b * n;
        std::vector<int> next;
        for (size_t j = i; j < feasible.size(); ++j) {
          --budget;
          if (fits(cands[feasible[j]], b, left)) next.push_back(feasible[j]);
        }
        chosen.push_back(c);
        dfs(next);
        chosen.pop_back();
        for (auto [id, n] : cands[c].uses) left[id] += b * n;
      }
    };
    std::vector<int> first;
    for (int c : all)
      if (fits(cands[c], b, left)) first.push_back(c);
    dfs(first);
    std::vector<Ring> rings;
    for (int c : best) {
      for (auto [id, n] : cands[c].uses) left[id] -= b * n;
      // Merge with an identical ring already taken.
      auto same = std::find_if(rings.begin(), rings.end(), [&](const Ring& r) { return r.order == candidates[c]; });
      if (same != rings.end()) {
        same->bandwidth_Bps += b;
        ++same->channels;
      } else {
        rings.push_back({candidates[c], b, 1});
      }
    }
    return std::make_pair(rings, static_cast<double>(best.size()) * b);
  };
  // NCCL's search order (search.cc, ncclTopoCompute): speeds from the highest down; at
  // each speed the strictest path type first, relaxed only while nothing is found or the
  // type stays stricter than the best so far; lower speeds are tried while above half the
  // best one, and a solution replaces the best only with more total bandwidth. Speeds here:
  // each tier's widest ring divided by 1 to 4.
  std::vector<double> speeds;
  for (int t = 0; t < 3; ++t)
    for (int d = 1; d <= 4 && top[t] > 0; ++d) speeds.push_back(top[t] / d);
  std::sort(speeds.begin(), speeds.end(), std::greater<>());
  speeds.erase(std::unique(speeds.begin(), speeds.end(), [](double x, double y) { return std::abs(x - y) <= 1e-9 * x; }), speeds.end());
  std::vector<Ring> best_rings;
  std::vector<double> best_left;
  double best_total = 0, best_speed = 0;
  int best_tier = 3;
  for (double b : speeds) {
    if (best_total > 0 && b < 0.49 * best_speed) break;
    for (int t = 0; t < 3 && t <= best_tier; ++t) {
      if (top[t] < b * (1 - 1e-9)) continue;
      std::vector<double> left = cap;
      auto [rings, total] = pack_at(b, t, left);
      if (rings.empty()) continue;
      if (total > best_total * (1 + 1e-6)) {
        best_total = total;
        best_speed = b;
        best_tier = t;
        best_rings = std::move(rings);
        best_left = std::move(left);
      }
      break;  // a solution at this speed: looser types are not tried
    }
  }
  if (best_rings.empty()) return {};
  for (const auto& [key, id] : ids) residual[key] = best_left[id];
  return best_rings;
}

// The slowest leaf-to-root path up plus the slowest root-to-leaf path down of a tree given
// as (child, parent) edges, each hop costing cost(from, to, phase) (phase 0 up, 1 down).
static double up_down_s(const std::vector<std::pair<int, int>>& edges, const std::function<double(int, int, int)>& cost) {
  std::map<int, std::vector<int>> children;
  std::set<int> has_parent;
  for (auto [child, parent] : edges) {
    children[parent].push_back(child);
    has_parent.insert(child);
  }
  std::function<std::pair<double, double>(int)> walk = [&](int v) {
    std::pair<double, double> worst{0, 0};
    auto it = children.find(v);
    if (it == children.end()) return worst;
    for (int c : it->second) {
      const auto below = walk(c);
      worst.first = std::max(worst.first, below.first + cost(c, v, 0));
      worst.second = std::max(worst.second, cost(v, c, 1) + below.second);
    }
    return worst;
  };
  double worst = 0;
  for (const auto& [v, kids] : children)
    if (!has_parent.count(v)) {
      const auto [up, down] = walk(v);
      worst = std::max(worst, up + down);
    }
  return worst;
}

// What per-hop waits `w` (in ring order) add to a ring's `steps` steps: each step waits on
// the hop it crosses, the steps going round the ring; the slowest starting hop. An open
// chain (broadcast, reduce: `open`) crosses its hops from the ring's first GPU once each,
// never the closing one.
static double ring_walk_s(const std::vector<double>& w, int steps, bool open) {
  const size_t n = w.size();
  double total = 0;
  for (double x : w) total += x;
  if (open) return total - w.back();
  const double full = static_cast<double>(steps / static_cast<int>(n)) * total;
  const size_t rest = static_cast<size_t>(steps) % n;
  double window = 0, best = 0;
  for (size_t i = 0; i < rest; ++i) window += w[i];
  best = window;
  for (size_t start = 1; start < n && rest > 0; ++start) {
    window += w[(start + rest - 1) % n] - w[start - 1];
    best = std::max(best, window);
  }
  return full + best;
}

// What SHM hops add to a ring's steps: the slowest ring's walk.
static double ring_shm_wait_s(const std::vector<std::vector<double>>& rings, int steps, bool open) {
  double worst = 0;
  for (const auto& w : rings) worst = std::max(worst, ring_walk_s(w, steps, open));
  return worst;
}

// What cables add to a ring's steps (the same walk), less the one crossing that the flows'
// own start already waits (the longest of those the walk crosses: the hops' flows start
// together; an open chain never crosses the ring's closing hop).
static double ring_cable_wait_s(const std::vector<std::vector<double>>& rings, int steps, bool open) {
  double worst = 0;
  for (const auto& w : rings) {
    const auto crossed_end = open && w.size() > 1 ? w.end() - 1 : w.end();
    worst = std::max(worst, ring_walk_s(w, steps, open) - *std::max_element(w.begin(), crossed_end));
  }
  return std::max(0.0, worst);
}

namespace {
// NCCL's binary tree over M machines (src/graph/trees.cc, ncclGetBtree): machine 0 the root;
// machine r's parent is r with its lowest set bit b cleared and 2b set, or just cleared if
// that is out of range. -1 for the root.
int btree_parent(int r, int M) {
  if (r == 0) return -1;
  const int bit = r & -r;
  const int up = (r ^ bit) | (bit << 1);
  return up < M ? up : r ^ bit;
}

// ncclGetDtree's second tree: the first mirrored (even M) or shifted by one (odd M).
int dtree_twin_parent(int r, int M) {
  const int up = btree_parent(M % 2 ? (r - 1 + M) % M : M - 1 - r, M);
  return up < 0 ? -1 : M % 2 ? (up + 1) % M : M - 1 - up;
}
}  // namespace

// NVLS (NCCL 2.18.3 nvls.cc / search.cc) on one machine's GPUs `local`: 3 or more GPUs of
// compute capability 9.0+ (`cc`, the lowest), each on NVSwitches over NVLink4 or later, with
// peer-to-peer, and every NVLS flow (GPU i to GPU i+1) routed over NVLink through a switch.
// On success lowers `gpu_Bps` to the flows' bottleneck and `rated_Bps` to the GPUs' NVLink to
// the switches as NCCL rates it.
bool CollectivePlanner::nvls_machine(const std::vector<int>& local, int cc, double& gpu_Bps, double& rated_Bps) {
  if (local.size() < 3 || cc < 90 || !topo_.p2p_enabled()) return false;
  double flows = INFINITY, rated = INFINITY;
  for (size_t i = 0; i < local.size(); ++i) {
    const auto& r = route(local[i], local[(i + 1) % local.size()]);
    bool via_switch = false;
    for (const auto& h : r.hops) {
      const auto& l = topo_.links()[h.link];
      via_switch = via_switch || topo_.nodes()[h.forward ? l.to : l.from].type == topo::NodeType::nvswitch;
    }
    if (!r.nvlink || r.nvb || !via_switch) return false;
    flows = std::min(flows, r.bottleneck_Bps);
  }
  for (int g : local) {
    double payload = 0, g_rated = 0;
    for (const auto& l : topo_.links()) {
      if (l.type != topo::LinkType::nvlink || (l.from != g && l.to != g)) continue;
      const int other = l.from == g ? l.to : l.from;
      if (topo_.nodes()[other].type != topo::NodeType::nvswitch || l.generation < 4) continue;
      payload += l.bandwidth_Bps;
      g_rated += nvlink::link_bandwidth_Bps(l.generation, std::max(1, l.links)) * collective::tuner_bandwidth_fraction(LinkClass::nvlink);
    }
    if (!(payload > 0)) return false;
    rated = std::min(rated, g_rated);
  }
  gpu_Bps = std::min(gpu_Bps > 0 ? gpu_Bps : INFINITY, flows);
  rated_Bps = std::min(rated_Bps > 0 ? rated_Bps : INFINITY, rated);
  return true;
}

const CollectivePlanner::Structure& CollectivePlanner::structure(const std::vector<int>& gpus) {
  auto it = structures_.find(gpus);
  if (it != structures_.end()) return it->second;
  Structure s;
  auto [machine_ids, by_machine] = group_by_machine(gpus);
  const size_t machines = machine_ids.size();
  s.machines = static_cast<int>(machines);
  s.compute_capability = std::numeric_limits<int>::max();
  int max_cc = 0;
  for (int g : gpus) {
    const int cc = gpu::find_gpu_spec(topo_.nodes()[g].model).compute_capability;
    s.compute_capability = std::min(s.compute_capability, cc);
    max_cc = std::max(max_cc, cc);
  }
  s.uniform_compute_capability = max_cc == s.compute_capability;
  // NCCL's tuner tells AMD CPUs apart (its llMaxBws across machines; cpuVendor is each
  // rank's own CPU, and NCCL 2.19+ count a mix as AMD): an AMD host in any member's machine.
  for (int h : topo_.hosts())
    if (topo_.nodes()[h].amd_cpu)
      for (int g : gpus)
        if (topo_.machine_of(g) == topo_.machine_of(h)) s.amd_cpu = true;
  // NCCL's ppn = nRanks / nNodes (tuning.cc: "if ppn < 2, then we are sending/receiving at
  // the same GPU through the NIC, apply some bw discount").
  s.ppn_below_2 = machines > 1 && gpus.size() < 2 * machines;
  // Intra-machine ring orders.
  std::vector<std::vector<int>> local;
  std::vector<std::vector<Ring>> local_rings;
  for (int m : machine_ids) {
    const auto members = system_order(by_machine[m]);
    std::vector<std::vector<int>> candidates;
    if (members.size() <= kExhaustiveLimit && members.size() > 2) {
      // Every order from the first member, NCCL's system order first: among rings that fit
      // as well, the one nearest that order is taken, as NCCL's search first tries the GPUs
      // in that order (FORCED_ORDER_PCI in search.cc). Placed gpu4-7 then gpu0-3, the ring is
      // 4 5 6 7 0 1 2 3, and a broadcast from gpu4 crosses the sockets once in its chain, as
      // from gpu0; placed gpu0,gpu4,gpu1,gpu5, it is 0 1 4 5 and crosses twice, not 4 times.
      std::vector<size_t> rest(members.size() - 1);
      for (size_t k = 0; k < rest.size(); ++k) rest[k] = k + 1;
      do {
        std::vector<int> order{members[0]};
        for (size_t k : rest) order.push_back(members[k]);
        candidates.push_back(std::move(order));
      } while (std::next_permutation(rest.begin(), rest.end()));
    } else {
      candidates.push_back(members);
      if (members.size() > 2) candidates.emplace_back(members.rbegin(), members.rend());
      // Too many GPUs for every order: also the nearest-neighbour order (next, the widest
      // then shortest route from the last), which keeps GPUs of one switch together as
      // NCCL's search does, and its reverse.
      if (members.size() > 2) {
        std::vector<int> nn{members[0]};
        std::vector<bool> used(members.size(), false);
        used[0] = true;
        for (size_t k = 1; k < members.size(); ++k) {
          size_t pick = 0;
          double best_bw = -1, best_lat = INFINITY;
          for (size_t j = 0; j < members.size(); ++j) {
            if (used[j]) continue;
            const auto& r = route(nn.back(), members[j]);
            if (r.bottleneck_Bps > best_bw * (1 + 1e-9) || (r.bottleneck_Bps >= best_bw * (1 - 1e-9) && r.latency_s < best_lat - 1e-12)) {
              best_bw = r.bottleneck_Bps;
              best_lat = r.latency_s;
              pick = j;
            }
          }
          used[pick] = true;
          nn.push_back(members[pick]);
        }
        if (nn != members) {
          candidates.push_back(nn);
          candidates.emplace_back(nn.rbegin(), nn.rend());
        }
      }
    }
    std::map<std::pair<int, int>, double> residual;
    auto rings = members.size() >= 2 ? pack_rings(candidates, residual, kMaxRings) : std::vector<Ring>{{members, INFINITY}};
    if (rings.empty()) rings.push_back({members, 0.0});
    local.push_back(rings.front().order);
    for (const auto& r : rings)
      for (size_t i = 0; r.order.size() > 1 && i < r.order.size(); ++i)
        {
          const auto& hop = route(r.order[i], r.order[(i + 1) % r.order.size()]);
          s.intra_nvlink = s.intra_nvlink && hop.nvlink && !hop.nvb;
          s.intra_nvb = s.intra_nvb || hop.nvb;
          s.intra_any_nvlink = s.intra_any_nvlink && hop.nvlink;
        }
    local_rings.push_back(std::move(rings));
  }
  // Across machines, ring c's entry (and tree c's head) in each machine: a local position.
  std::vector<std::vector<size_t>> entry_pos;
  if (machines == 1) {
    s.rings = local_rings.front();
    bool nv = true;
    const auto& order = s.rings.front().order;
    for (size_t i = 0; i < order.size(); ++i) nv = nv && route(order[i], order[(i + 1) % order.size()]).nvlink;
    s.link_class = nv ? LinkClass::nvlink : LinkClass::pcie;
    if (nv)
      for (const auto& r : s.rings)
        for (size_t i = 0; i < r.order.size(); ++i)
          for (const auto& h : route(r.order[i], r.order[(i + 1) % r.order.size()]).hops) {
            const auto& l = topo_.links()[h.link];
            if (l.type == topo::LinkType::nvlink && l.generation > 0)
              s.nvlink_generation = s.nvlink_generation ? std::min(s.nvlink_generation, l.generation) : l.generation;
          }
    // The achieved LL128 and Simple figures are per GPU family, each measured on its
    // datacenter GPU (V100: compute capability 7.0 on NVLink2; A100: 8.0 on NVLink3; H100:
    // 9.0 on NVLink4; B200: 10.x on NVLink5): other GPUs on such links (RTX 2080 Ti, 7.5, on
    // NVLink2; RTX 3090 / A6000, 8.6, on NVLink3) keep NCCL's own figures.
    const int cc = s.compute_capability;
    const int family_generation = cc == 70 ? 2 : cc == 80 ? 3 : cc == 90 ? 4 : cc >= 100 && cc < 110 ? 5 : -1;
    // NVLS where the rings are NVLink (nvls_machine()).
    if (s.link_class == LinkClass::nvlink && nvls_machine(gpus, s.compute_capability, s.nvls_gpu_Bps, s.nvls_rated_Bps)) s.nvls = true;
    if (!s.uniform_compute_capability || s.nvlink_generation != family_generation) s.nvlink_generation = 0;
  } else {
    s.link_class = LinkClass::network;
    size_t nics = SIZE_MAX, smallest = SIZE_MAX;
    for (size_t m = 0; m < machines; ++m) {
      size_t n = 0;
      for (int nic : topo_.nics())
        if (machine_key(nic) == machine_ids[m]) ++n;
      nics = std::min(nics, n);
      smallest = std::min(smallest, local[m].size());
    }
    // At most MAXCHANNELS / 2 searched channels, as NCCL's search (its copies make the rest).
    const size_t R = std::max<size_t>(1, std::min({nics, smallest, static_cast<size_t>(kMaxChannels / 2)}));
    std::vector<std::vector<int>> candidates;
    std::set<int> exits;  // GPUs that are the last of a ring's part in their machine
    // Ring c's entry GPU in each machine: on the rail (the index of its NIC in its machine)
    // of the c-th of R evenly spread GPUs of the smallest machine, so that every machine
    // uses the same NICs; else (no GPU there on that rail) the c-th evenly spread position,
    // or the next one no other ring enters at.
    size_t small = 0;
    for (size_t m = 1; m < machines; ++m)
      if (local[m].size() < local[small].size()) small = m;
    std::map<int, int> nic_index;  // NIC -> its index among its machine's NICs
    {
      std::map<int, int> count;
      for (int x : topo_.nics()) nic_index[x] = count[topo_.machine_of(x)]++;
    }
    auto rail = [&](int gpu) {
      auto it = nic_index.find(topo::nearest_nic(topo_, gpu));
      return it == nic_index.end() ? -1 : it->second;
    };
    // The rails wanted: the c-th spread GPU's, or where an earlier ring has that one (NICs
    // that all hang off one CPU are the nearest of several spread GPUs), the next rail not
    // yet used that a GPU of the smallest machine is on: one NIC per ring, as NCCL's search
    // gives each channel its own NIC.
    std::vector<int> wants;
    {
      std::set<int> rails_present;
      for (int g : local[small])
        if (rail(g) >= 0) rails_present.insert(rail(g));
      for (size_t c = 0; c < R; ++c) {
        int want = rail(local[small][c * local[small].size() / R]);
        if (std::find(wants.begin(), wants.end(), want) != wants.end())
          for (int r : rails_present)
            if (std::find(wants.begin(), wants.end(), r) == wants.end()) {
              want = r;
              break;
            }
        wants.push_back(want);
      }
    }
    entry_pos.assign(machines, {});
    for (size_t m = 0; m < machines; ++m) {
      const auto& l = local[m];
      std::vector<bool> taken(l.size(), false);
      for (size_t c = 0; c < R; ++c) {
        const int want = wants[c];
        size_t p = l.size();
        for (size_t k = 0; k < l.size() && p == l.size(); ++k)
          if (!taken[k] && want >= 0 && rail(l[k]) == want) p = k;
        for (size_t k = c * l.size() / R; p == l.size(); k = (k + 1) % l.size())
          if (!taken[k]) p = k;
        taken[p] = true;
        entry_pos[m].push_back(p);
      }
    }
    for (size_t c = 0; c < R; ++c) {
      // As NCCL's rings (search.cc, NCCL_CROSS_NIC=0): ring c enters every machine at its
      // c-th of R evenly spread GPUs, whose NIC it also leaves by (the route from the
      // machine's last GPU to the next machine's first takes that rail; see routing.hpp).
      // Each machine's part runs its ring order from there, in the direction whose last GPU
      // reaches that NIC best: its neighbour under the same PCIe switch where there is one,
      // not through the CPU or NVLink (PXN). Distinct entry GPUs keep the rings' NICs apart
      // when machines have different numbers of GPUs.
      std::vector<int> order;
      auto entry = [&](size_t m) { return local[m][entry_pos[m][c]]; };
      for (size_t m = 0; m < machines; ++m) {
        const auto& l = local[m];
        const size_t L = l.size(), p = entry_pos[m][c];
        const int next = entry((m + 1) % machines);
        bool backward = false;
        if (L > 2) {
          const int fe = l[(p + L - 1) % L], be = l[(p + 1) % L];
          const auto& f = route(fe, next);
          const auto& b = route(be, next);
          // A GPU that is already another ring's last sends that ring's data out too.
          const bool fu = exits.count(fe) > 0, bu = exits.count(be) > 0;
          backward = fu != bu ? fu
                   : f.pxn != b.pxn ? f.pxn
                   : b.bottleneck_Bps > f.bottleneck_Bps * (1 + 1e-9) ||
                         (b.bottleneck_Bps >= f.bottleneck_Bps * (1 - 1e-9) && b.latency_s < f.latency_s - 1e-12);
        }
        for (size_t k = 0; k < L; ++k) order.push_back(l[backward ? (p + L - k) % L : (p + k) % L]);
        exits.insert(order.back());
      }
      candidates.push_back(std::move(order));
    }
    // NCCL's search gives every channel across machines one speed (search.cc tries speeds
    // from the highest down and keeps the largest channels x speed), and NCCL splits the
    // data evenly over its channels: the first c candidates, at the speed all c fit at
    // together, for the c that moves the most. (Rings packed one after another at what
    // each had left could differ in speed; SimGrid shares a link equally among flows, not
    // in the ratio planned, so such rings ran slower than planned where they met.)
    std::vector<std::pair<int, int>> hops;
    double best_total = 0, best_speed = 0;
    size_t best_count = 0;
    for (size_t c = 0; c < candidates.size(); ++c) {
      const auto& o = candidates[c];
      for (size_t i = 0; i < o.size(); ++i) hops.emplace_back(o[i], o[(i + 1) % o.size()]);
      const double speed = bottleneck(hops, {});
      if (speed > 0 && std::isfinite(speed) && speed * static_cast<double>(c + 1) > best_total * (1 + 1e-9)) {
        best_total = speed * static_cast<double>(c + 1);
        best_speed = speed;
        best_count = c + 1;
      }
    }
    for (size_t c = 0; c < best_count; ++c) s.rings.push_back({candidates[c], best_speed, 1});
    // NVLS_TREE (NCCL 2.18+): every machine as NVLS needs (nvls_machine()), all with as many
    // GPUs (NVLS hung on 7 + 8 GPUs: NVIDIA/nccl #2385); one head per NIC (NCCL's "NVLS Head"
    // lines: one per NIC, NVIDIA/nccl #1357): for each of a machine's NICs in order, the
    // first of its GPUs whose nearest NIC it is, so that no two heads share a NIC; as many
    // heads in every machine (the fewest), each of which must reach its counterparts in the
    // other machines over the network.
    s.nvls_tree = true;
    for (size_t m = 0; m < machines && s.nvls_tree; ++m)
      s.nvls_tree = local[m].size() == local[0].size() && nvls_machine(local[m], s.compute_capability, s.nvls_gpu_Bps, s.nvls_rated_Bps);
    if (s.nvls_tree) {
      s.nvls_locals = local;
      s.nvls_heads.assign(machines, {});
      size_t heads = SIZE_MAX;
      for (size_t m = 0; m < machines; ++m) {
        for (int nic : topo_.nics()) {
          if (topo_.machine_of(nic) != topo_.machine_of(local[m].front())) continue;
          for (int g : local[m])
            if (topo::nearest_nic(topo_, g) == nic) {
              s.nvls_heads[m].push_back(g);
              break;
            }
        }
        heads = std::min(heads, s.nvls_heads[m].size());
      }
      for (auto& h : s.nvls_heads) h.resize(heads);
      s.nvls_tree = heads > 0;
      s.nvls_tree_nic_rated_Bps = INFINITY;
      for (size_t c = 0; c < heads && s.nvls_tree; ++c)
        for (size_t m = 0; m < machines && s.nvls_tree; ++m) {
          const auto& r = route(s.nvls_heads[m][c], s.nvls_heads[(m + 1) % machines][c]);
          s.nvls_tree = r.network && r.bottleneck_Bps > 0;
          s.nvls_tree_nic_rated_Bps = std::min(s.nvls_tree_nic_rated_Bps, r.bottleneck_Bps * collective::tuner_bandwidth_fraction(LinkClass::network));
        }
    }
    if (!s.nvls_tree) {
      s.nvls_locals.clear();
      s.nvls_heads.clear();
      s.nvls_gpu_Bps = s.nvls_rated_Bps = s.nvls_tree_nic_rated_Bps = 0;
    }
  }
  for (const auto& r : s.rings) s.ring_bw += r.bandwidth_Bps;
  for (const auto& r : s.rings) {
    std::vector<double> waits(r.order.size());
    bool any = false;
    for (size_t i = 0; i < r.order.size(); ++i) any = (waits[i] = shm_step_s(r.order[i], r.order[(i + 1) % r.order.size()])) > 0 || any;
    if (any) s.ring_shm_waits.push_back(std::move(waits));
    std::vector<double> cables(r.order.size());
    any = false;
    for (size_t i = 0; i < r.order.size(); ++i) any = (cables[i] = cable_step_s(r.order[i], r.order[(i + 1) % r.order.size()])) > 0 || any;
    if (any) s.ring_cable_waits.push_back(std::move(cables));
  }

  // Trees: one per ring channel (at least one), each a chain through every machine's local
  // order and a binary tree between machines.
  size_t chain_len = 0;
  for (const auto& l : local) chain_len = std::max(chain_len, l.size() - 1);
  s.tree_depth = static_cast<int>(chain_len) + static_cast<int>(std::ceil(std::log2(static_cast<double>(machines))));
  const size_t channels = std::max<size_t>(1, s.rings.size());
  // The trees' bandwidths are shared max-min fairly (as concurrent flows share links): all
  // grow together until a resource fills, then those crossing it stop. Symmetric trees get
  // one speed, as NCCL's search gives its channels; a tree over a slow NIC gets its share
  // without holding back the others. (Packing them one by one, each taking what the last
  // left, had left later trees little or nothing: 4 of 8 on 2 x 8 H100.)
  std::vector<std::map<std::pair<int, int>, double>> tree_use;  // per tree: resource -> bytes/s per tree B/s
  for (size_t c = 0; c < channels; ++c) {
    Tree t;
    std::vector<int> heads;
    for (size_t m = 0; m < machines; ++m) {
      const auto& l = local[m];
      // Across machines on the rings' rails (their entry GPUs), so that each tree's heads
      // use one NIC rail in every machine.
      const bool on_rails = m < entry_pos.size() && c < entry_pos[m].size();
      const size_t shift = on_rails ? entry_pos[m][c] : c * l.size() / channels;
      std::vector<int> chain;
      for (size_t k = 0; k < l.size(); ++k) chain.push_back(l[(k + shift) % l.size()]);
      for (size_t k = 1; k < chain.size(); ++k) t.edges.emplace_back(chain[k], chain[k - 1]);
      heads.push_back(chain.front());
    }
    // NCCL's double binary tree over machines (btree_parent(), dtree_twin_parent()): the
    // twin, NCCL's copy of the channel, on the same chains.
    const int M = static_cast<int>(machines);
    t.twin_edges = t.edges;
    for (int r = 0; r < M; ++r) {
      if (const int up = btree_parent(r, M); up >= 0) t.edges.emplace_back(heads[r], heads[up]);
      if (const int up = dtree_twin_parent(r, M); up >= 0) t.twin_edges.emplace_back(heads[r], heads[up]);
    }
    // The channel and its copy each carry half of the channel pair's data, up and down.
    std::vector<std::pair<int, int>> hops;
    for (const auto* edges : {&t.edges, &t.twin_edges})
      for (auto [a, b] : *edges) {
        hops.emplace_back(a, b);
        hops.emplace_back(b, a);
      }
    if (hops.empty()) continue;
    // The channel and its copy each carry half of a channel pair's data: each hop uses half
    // of the pair's bandwidth.
    std::map<std::pair<int, int>, double> use;
    for (auto [a, b] : hops)
      for (const auto& key : resources(a, b)) use[key] += 0.5;
    tree_use.push_back(std::move(use));
    s.trees.push_back(std::move(t));
  }
  std::map<std::pair<int, int>, double> left;
  for (const auto& use : tree_use)
    for (const auto& [key, u] : use) left.emplace(key, search_capacity(key));  // as NCCL's search: links only
  std::vector<char> growing(s.trees.size(), 1);
  for (size_t active = s.trees.size(); active > 0;) {
    std::map<std::pair<int, int>, double> load;
    for (size_t i = 0; i < s.trees.size(); ++i)
      if (growing[i])
        for (const auto& [key, u] : tree_use[i]) load[key] += u;
    double step = INFINITY;
    for (const auto& [key, l] : load) step = std::min(step, left[key] / l);
    if (!std::isfinite(step)) break;
    for (const auto& [key, l] : load) left[key] -= step * l;
    for (size_t i = 0; i < s.trees.size(); ++i) {
      if (!growing[i]) continue;
      s.trees[i].bandwidth_Bps += step;
      for (const auto& [key, u] : tree_use[i])
        if (left[key] <= 1e-9 * capacity(key)) growing[i] = 0;
      if (!growing[i]) --active;
    }
  }
  std::erase_if(s.trees, [](const Tree& t) { return !(t.bandwidth_Bps > 0); });
  for (const auto& t : s.trees) s.tree_bw += t.bandwidth_Bps;
  for (const auto& t : s.trees)
    for (const auto* edges : {&t.edges, &t.twin_edges}) {
      s.tree_shm_wait_s = std::max(s.tree_shm_wait_s, up_down_s(*edges, [&](int a, int b, int) { return shm_step_s(a, b); }));
      double longest = 0;  // the crossing the flows' start pays
      for (auto [child, parent] : *edges) longest = std::max({longest, cable_step_s(child, parent), cable_step_s(parent, child)});
      s.tree_cable_wait_s =
          std::max(s.tree_cable_wait_s, std::max(0.0, up_down_s(*edges, [&](int a, int b, int) { return cable_step_s(a, b); }) - longest));
    }
  // The network plugin's latency: that of the NICs the rings and trees cross.
  for (const auto& r : s.rings)
    for (size_t i = 0; i < r.order.size(); ++i)
      s.nccl_net_latency_s = std::max(s.nccl_net_latency_s, net_plugin_latency_s(r.order[i], r.order[(i + 1) % r.order.size()]));
  for (const auto& t : s.trees)
    for (const auto* edges : {&t.edges, &t.twin_edges})
      for (auto [child, parent] : *edges)
        s.nccl_net_latency_s = std::max({s.nccl_net_latency_s, net_plugin_latency_s(child, parent), net_plugin_latency_s(parent, child)});
  {
    // NCCL's searched channels across machines, which its per-channel caps multiply:
    // composim's rings (one per NIC rail, as NCCL searches them), doubled as
    // ncclTopoDupChannels (search.cc, 2.17-2.18) does where each runs at 25 GB/s or more,
    // unless the GPUs are above compute capability 8.0 and there are more than 4 below 50
    // GB/s; at most MAXCHANNELS / 2. A tree search stops at the rings' count (its maxChannels).
    const double rings = std::max<double>(1.0, static_cast<double>(s.rings.size()));
    const double speed = s.rings.empty() ? 0.0 : s.rings.front().bandwidth_Bps;
    const bool dup = speed >= 25e9 && !(s.compute_capability > 80 && speed < 50e9 && rings > 4);
    s.searched_channels = dup ? std::min(2 * rings, kMaxChannels / 2.0) : rings;
  }
  if (!s.trees.empty()) {
    // NCCL runs every searched channel twice (ncclTopoPostset: "Duplication should be
    // complete now", nChannels * 2, at most MAXCHANNELS = 32), the copy on the mirrored tree
    // (connectTrees): the tree and its twin; across machines, its searched channels are
    // those duplicated as above, so each of composim's trees carries that many over 2 x
    // trees of its own channels.
    s.tree_channels = std::min(kMaxChannels, 2 * static_cast<int>(s.machines > 1 ? std::lround(s.searched_channels) : s.trees.size()));
    const double per_orientation = s.channels_per_orientation();
    // The first chunk's trip: each hop at one channel's share of its route, shared with the
    // hops of the same phase (up or down) of every channel that crosses the same resource.
    // All channels start together and, at one chunk per channel, move in step: going up,
    // nothing has come down yet, and coming down, nothing is going up any more.
    std::map<std::pair<int, int>, double> load[2];  // 0: up (child -> parent), 1: down
    for (const auto& t : s.trees)
      for (const auto* edges : {&t.edges, &t.twin_edges})
        for (auto [child, parent] : *edges) {
          for (const auto& key : resources(child, parent)) load[0][key] += per_orientation;
          for (const auto& key : resources(parent, child)) load[1][key] += per_orientation;
        }
    // No channel's hop beyond NCCL's per-channel tree rate (across machines), which is
    // achieved, hence over the trees' efficiency in the links' payload terms.
    s.tree_hop_max_Bps = collective::tree_channel_hop_max_Bps(s.compute_capability, s.machines) / collective::tree_efficiency();
    auto hop_s_per_B = [&](int a, int b, int phase) {
      double rate = s.tree_hop_max_Bps;
      for (const auto& key : resources(a, b)) rate = std::min(rate, capacity(key) / load[phase][key]);
      return 1.0 / (rate * indirect_factor(a, b));
    };
    for (auto& t : s.trees)
      for (const auto* edges : {&t.edges, &t.twin_edges}) t.trip_s_per_B = std::max(t.trip_s_per_B, up_down_s(*edges, hop_s_per_B));
  }
  // NCCL's typeInter: the path from the GPUs that use a NIC to it. NCCL's search (rings and
  // trees alike) starts from the closest type and takes a machine's GPUs nearest its NICs as
  // the ones that leave it, so a machine's type is that of its best placed member, on its
  // route out of the machine up to the NIC: PCIe switches alone (PATH_PXB or better, 0),
  // relayed over NVLink by another GPU (PATH_PXN, 1), or through a CPU (PATH_PHB or worse,
  // 2). The collective's is its worst machine's.
  if (s.machines > 1)
    for (size_t mi = 0; mi < machines; ++mi) {
      const auto& here = by_machine[machine_ids[mi]];
      const auto& there = by_machine[machine_ids[(mi + 1) % machines]];
      int best = 2;
      for (size_t i = 0; i < here.size(); ++i) {
        // To the GPU at the same place in the next machine (its rail): on a rail-only network
        // another rail may have no route at all.
        const topo::Route* out = nullptr;
        try {
          out = &route(here[i], there[i % there.size()]);
        } catch (const InputError&) {
          continue;
        }
        int type = 0;
        for (int node : out->transit) {
          const auto kind = topo_.nodes()[node].type;
          if (kind == topo::NodeType::nic) break;
          if (kind == topo::NodeType::host) type = 2;
          else if (kind == topo::NodeType::gpu) type = std::max(type, 1);
        }
        best = std::min(best, type);
      }
      s.inter_path = std::max(s.inter_path, best);
    }
  return structures_.emplace(gpus, std::move(s)).first->second;
}

double CollectivePlanner::nccl_latency_s(const Structure& s, Kind kind, int n, Protocol pr, Algorithm a, bool tuner, int* hop_steps) {
  const auto sched = collective::ring_schedule(kind, n, 1.0);
  const int m = s.machines;
  const auto intra_class = s.intra_nvb && tuner ? LinkClass::pcie : s.intra_any_nvlink ? LinkClass::nvlink : LinkClass::pcie;
  // What runs of a tree in Simple: NCCL's per-step latency less the chunk it stands for
  // (collective::tree_simple_chunk_latency_s()); the plan adds the actual chunks' pipeline.
  const bool chunkless = !tuner && a == Algorithm::tree && pr == Protocol::simple;
  auto hop_s = [&](LinkClass c) {
    return chunkless ? std::min(collective::hop_latency_s(pr, c, a), collective::tree_simple_chunk_latency_s()) : 0.0;
  };
  if (m <= 1) {
    const int steps = a == Algorithm::ring ? sched.steps : 2 * s.tree_depth;
    if (hop_steps) *hop_steps = steps;
    const auto c = s.link_class == LinkClass::nvlink ? intra_class : s.link_class;
    return std::max(0.0, collective::latency_s(pr, c, steps, a) - steps * hop_s(c));
  }
  int intra = 0, inter = 0;
  if (a == Algorithm::tree) {
    int levels = 0;
    while ((2 << levels) <= m) ++levels;  // floor(log2 m), as NCCL's log2i
    intra = 2 * (n / m - 1);              // NCCL: 2 x (nRanks / nNodes - 1), integer division
    inter = 2 * levels;
  } else {
    // NCCL counts 2 x machines network steps for all-reduce, machines - 1 for reduce-scatter
    // and all-gather. Broadcast and reduce (a chain, not a closed ring) cross machines - 1
    // times; NCCL's model counts them otherwise (one hop, or every step at the tree's
    // latency). With one GPU per machine NCCL's all-reduce count leaves -2 intra steps;
    // composim counts 0.
    inter = kind == Kind::all_reduce ? 2 * m : m - 1;
    inter = std::min(inter, sched.steps);
    intra = sched.steps - inter;
  }
  if (hop_steps) *hop_steps = inter;
  return std::max(0.0, collective::latency_s(pr, a, intra_class, intra, inter) - intra * hop_s(intra_class) - inter * hop_s(LinkClass::network)) +
         inter * plugin_step_s(pr, s.nccl_net_latency_s);
}

// All-to-all. Inside a machine: one flow per GPU pair. Across machines of equal size with
// one NIC per GPU (rail-optimised), as NCCL does with PXN: a GPU first sends, over NVLink,
// what it has for the GPUs at local position k of other machines to its own machine's GPU
// k, which sends it on rail k (where the route has no PXN, each GPU sends its own through
// its NIC; the network flows are the same, but a GPU's traffic to other rails is taken to
// stay on its rail, so a spine's load is then too low). The network part is aggregated: per (source GPU, group of
// destination machines) one flow to a representative GPU of the group; NIC loads are those
// of the N^2 flows and every NIC receives as much as it would, with far fewer flows (up to
// 8 groups). Approximation: traffic to a group crosses the network on the representative's
// path (leaf or core), not spread over every destination's path.
// NCCL's point-to-point protocol: LL when the bytes to one peer are at most
// NCCL_P2P_LL_THRESHOLD (default 16384), Simple above (src/enqueue.cc, `bytes <=
// ncclParamP2pLLThreshold()`, as in NCCL 2.12-2.18). Later versions compare the bytes
// with the peer's channels x threshold, which keeps LL for larger messages on several
// channels: not modelled. LL also needs the connection's LL buffer (enqueue.cc:
// `conn->buffs[NCCL_PROTO_LL] != nullptr`), which a network connection for point-to-point
// has only with NCCL_ALLOC_P2P_NET_LL_BUFFERS=1 (default 0; transport/net.cc): across
// machines, point-to-point runs Simple at every size. NCCL_PROTO does not apply.
constexpr double kP2pLLThreshold_B = 16384;
// The most GPU pairs an all-to-all across machines simulates as pairwise flows (32 GPUs):
// past that, many all-to-alls in flight (a replay) slow SimGrid down (128 GPUs: a replay of
// 20 of them took 83 s pairwise, 0.5 s aggregated).
constexpr double kPairwiseAllToAllFlows = 1024;

Protocol p2p_protocol(double bytes_per_peer, bool network) {
  return bytes_per_peer <= kP2pLLThreshold_B && !network ? Protocol::ll : Protocol::simple;
}

CollectivePlan CollectivePlanner::plan_all_to_all(double in_bytes, const std::vector<int>& gpus) {
  CollectivePlan p;
  const int n = static_cast<int>(gpus.size());
  auto [machine_ids, by_machine] = group_by_machine(gpus);
  const size_t M = machine_ids.size(), L = by_machine[machine_ids[0]].size();
  bool uniform = true;
  for (int m : machine_ids) uniform = uniform && by_machine[m].size() == L;
  // NCCL's point-to-point operations use LL only for small messages per peer, and not across
  // machines (PXN sends every remote peer's share over the network).
  p.protocol = p2p_protocol(in_bytes / n, M > 1);
  const double eff = collective::protocol_efficiency(p.protocol, Kind::all_to_all, M > 1);
  const double unit = in_bytes / n / eff;  // bytes from one GPU to one other GPU
  std::map<std::pair<int, int>, double> merged;
  // Pairwise flows are exact: each shares its links with the others as one of the N^2 it
  // stands for, and its route relays through a GPU on the peer's rail where NCCL does (PXN).
  // Aggregated, a GPU's one network flow per group gets a single flow's share where it meets
  // its machine's flows (under PCIe sharing per flow, 20-25% slower on 2 hosts of 4 GPUs).
  // So machines are aggregated only past kPairwiseAllToAllFlows (32 GPUs).
  if (M == 1 || !uniform || static_cast<double>(n) * (n - 1) <= kPairwiseAllToAllFlows) {
    // Pairwise flows cost more than their number (SimGrid 3.32 rescans its list of
    // communications as each one ends): 65,280 flows (256 GPUs) take about 16 s per size,
    // 159,600 (400) about 4 minutes, 1,000 GPUs hours. Refused up front past 100,000.
    if (const double flows = static_cast<double>(n) * (n - 1); flows > 1e5)
      input_error(topo_.file(), "all_to_all",
                  std::to_string(n) + " GPUs " + (M == 1 ? "in one machine" : "in machines of unequal size") + " are " +
                      std::to_string(static_cast<long long>(flows)) +
                      " pairwise flows, more than composim simulates (100,000: up to 316 GPUs, about a minute per size); "
                      "use fewer GPUs" + (M == 1 ? ", or machines joined by a network (their all-to-all is aggregated)" : ", or machines of equal size (aggregated)"));
    for (int a : gpus)
      for (int b : gpus)
        if (a != b) merged[{a, b}] += unit;
  } else {
    for (size_t mi = 0; mi < M; ++mi) {
      const auto& local = by_machine[machine_ids[mi]];
      const auto& next = by_machine[machine_ids[(mi + 1) % M]];
      for (size_t i = 0; i < L; ++i)
        for (size_t k = 0; k < L; ++k) {
          if (i == k) continue;
          // Its own machine's share, and, where NCCL relays (PXN: the route to a remote GPU
          // on rail k leaves through local GPU k over NVLink), what goes to rail k of the
          // other machines. Without PXN (no NVLink, P2P off, or one NIC for all) each GPU
          // sends its own through its NIC: the network flows below are then its own.
          const bool pxn = route(local[i], next[k]).pxn;
          merged[{local[i], local[k]}] += unit * (pxn ? static_cast<double>(M) : 1.0);
        }
    }
    // Group g of source machine mi covers destination machines mi+1+g*block ... (mod M);
    // its representative is mi+1+g*block, so in each group every machine receives exactly
    // one flow per rail (a permutation): loads stay symmetric and the flows of a group end
    // together, which keeps the number of simulation events small.
    const size_t groups = std::min<size_t>(M - 1, 8);
    const size_t block = (M - 1 + groups - 1) / groups;
    for (size_t mi = 0; mi < M; ++mi) {
      const auto& src = by_machine[machine_ids[mi]];
      for (size_t g = 0; g < groups; ++g) {
        const size_t first = g * block, last = std::min(M - 1, first + block);
        if (first >= last) continue;
        const size_t rep = (mi + 1 + first) % M;
        const auto& dst = by_machine[machine_ids[rep]];
        for (size_t k = 0; k < L; ++k) merged[{src[k], dst[k]}] += unit * static_cast<double>(L * (last - first));
      }
    }
  }
  bool nv = true;
  double shm_step = 0, plugin = 0;
  for (const auto& [pair, bytes] : merged) {
    p.flows.push_back({pair.first, pair.second, bytes / indirect_factor(pair.first, pair.second)});
    nv = nv && route(pair.first, pair.second).nvlink;
    shm_step = std::max(shm_step, shm_step_s(pair.first, pair.second));
    plugin = std::max(plugin, net_plugin_latency_s(pair.first, pair.second));
  }
  // Reported as channels: the GPUs of the smallest machine (the flows per GPU and group of
  // machines), whatever the order of the GPUs.
  size_t smallest = L;
  for (int m : machine_ids) smallest = std::min(smallest, by_machine[m].size());
  p.channels = static_cast<int>(smallest);
  p.link_class = M > 1 ? LinkClass::network : nv ? LinkClass::nvlink : LinkClass::pcie;
  p.latency_s = collective::latency_s(p.protocol, p.link_class, 1) + shm_step + plugin_step_s(p.protocol, plugin);
  p.steps = p.hop_steps = 1;
  // No structure: the model's bandwidth is the one the busiest link allows the whole
  // exchange (each rank's buffer in the time that link needs for its share).
  if (const double bound_s = flows_bound_s(p.flows); bound_s > 0) {
    p.bandwidth_Bps = in_bytes / bound_s;
    p.bottleneck_bytes = in_bytes;
  }
  return p;
}

CollectivePlan CollectivePlanner::plan_send(double bytes, int src, int dst) {
  if (bytes <= 0 || src == dst) return {};
  return plan_point_to_point(bytes, {{src, dst}});
}

// One direct flow per (sender, receiver) pair, not NCCL's ring channels; the slowest pair
// sets the protocol and the latency.
CollectivePlan CollectivePlanner::plan_point_to_point(double in_bytes, const std::vector<std::pair<int, int>>& pairs) {
  CollectivePlan p;
  const Kind kind = Kind::send_recv;
  bool network = false, nv = true;
  double bw = INFINITY;
  double shm_step = 0, plugin = 0;
  for (const auto& [a, b] : pairs) {
    const auto& r = route(a, b);
    network = network || r.network;
    nv = nv && r.nvlink;
    bw = std::min(bw, r.bottleneck_Bps);
    if (r.shm()) bw = std::min(bw, collective::shm_transport_Bps());
    shm_step = std::max(shm_step, shm_step_s(a, b));
    plugin = std::max(plugin, net_plugin_latency_s(a, b));
  }
  // One network hop makes it Simple for all.
  p.protocol = p2p_protocol(in_bytes, network);
  const double eff = collective::protocol_efficiency(p.protocol, kind, network);
  for (const auto& [a, b] : pairs) p.flows.push_back({a, b, in_bytes / eff / indirect_factor(a, b)});
  p.link_class = network ? LinkClass::network : nv ? LinkClass::nvlink : LinkClass::pcie;
  p.channels = 1;
  p.bandwidth_Bps = bw;
  p.bottleneck_bytes = flows_bound_s(p.flows) * bw;
  p.steps = 1;
  p.hop_steps = 1;
  p.latency_s = collective::latency_s(p.protocol, p.link_class, 1) + shm_step + plugin_step_s(p.protocol, plugin);
  return p;
}

CollectivePlan CollectivePlanner::plan(Kind kind, double in_bytes, const std::vector<int>& gpus, const TunerChoices& choices) {
  CollectivePlan p;
  const int n = static_cast<int>(gpus.size());
  if (n <= 1 || in_bytes <= 0) return p;
  if (kind == Kind::all_to_all) return plan_all_to_all(in_bytes, gpus);
  if (kind == Kind::send_recv) {
    // Every rank sends its buffer to the next rank and receives from the previous one (as
    // nccl-tests' sendrecv_perf does).
    std::vector<std::pair<int, int>> pairs;
    for (int i = 0; i < n; ++i) pairs.emplace_back(gpus[i], gpus[(i + 1) % n]);
    return plan_point_to_point(in_bytes, pairs);
  }
  const Structure& s = structure(gpus);
  p.link_class = s.link_class;
  const auto sched = collective::ring_schedule(kind, n, in_bytes);
  // NCCL's searched channels across machines, which its per-channel caps multiply (see
  // structure()).
  const double searched_channels = s.searched_channels;
  // The bandwidth of algorithm a in protocol pr with NCCL's refinements (tuning.cc,
  // 2.17-2.18), in the order NCCL applies them, from a base protocol efficiency: the graph's
  // busBw (`scale` x a ring's bandwidth; twice a tree's algbw); trees reach
  // collective::tree_efficiency() (0.92) of it, LL 1/3.8 of that and LL128 7/9 inside a
  // machine or 120/128 across; a ring's LL128 0.7 with ppn < 2; LL capped at llMaxBw. With
  // `caps` (the tuner's view only), also the GPU generation's busBw cap and, across
  // machines, the per-channel caps. Returns a ring's busBw and a tree's algbw (busBw / 2, as
  // NCCL converts).
  auto nccl_bw = [&](Algorithm a, Protocol pr, double base, double scale, bool caps) {
    const double ll_max = collective::ll_max_busbw_Bps(s.compute_capability, s.machines, s.amd_cpu);
    const bool per_channel = caps && s.machines > 1;
    double bus = scale * (a == Algorithm::ring ? s.ring_bw : 2 * s.tree_bw);
    if (caps) bus = std::min(bus, collective::tuner_busbw_cap_Bps(s.compute_capability));
    if (a == Algorithm::ring) {
      if (pr == Protocol::ll) return std::min(ll_max, bus * base);
      if (pr == Protocol::ll128) {
        bus *= s.ppn_below_2 ? base * 0.7 / collective::protocol_efficiency(pr, kind, false) : base;
        if (per_channel) bus = std::min(bus, searched_channels * collective::ll128_max_busbw_per_channel_Bps(s.compute_capability));
        return bus;
      }
      return bus * base;
    }
    bus *= collective::tree_efficiency();
    if (per_channel) bus = std::min(bus, searched_channels * collective::tree_max_busbw_per_channel_Bps(s.compute_capability, s.machines));
    if (pr == Protocol::ll) bus = std::min(bus * base / (3.8 * collective::protocol_efficiency(pr, kind, s.machines > 1)), ll_max);
    if (pr == Protocol::ll128) {
      bus *= base * (s.machines > 1 ? 120.0 / 128.0 : 7.0 / 9.0) / collective::protocol_efficiency(pr, kind, false);
      if (per_channel) bus = std::min(bus, searched_channels * collective::ll128_max_busbw_per_channel_Bps(s.compute_capability));
    }
    if (pr == Protocol::simple) bus *= base;
    return bus / 2;
  };
  // The tuner: least predicted time over the allowed (algorithm, protocol) pairs, with NCCL's
  // own protocol efficiencies and caps.
  const double scale = collective::tuner_bandwidth_fraction(s.link_class);
  auto tuner_bw = [&](Algorithm a, Protocol pr) {
    return nccl_bw(a, pr, collective::protocol_efficiency(pr, kind, s.link_class == LinkClass::network), scale, true);
  };
  double best = INFINITY;
  const bool tree_forced = !choices.allows(Algorithm::ring);
  for (Algorithm a : {Algorithm::ring, Algorithm::tree}) {
    // NCCL never disables the ring for operations other than all-reduce (tuning.cc: "That
    // allows to run real apps with NCCL_ALGO=TREE"): they run on it whatever NCCL_ALGO says.
    if (!choices.allows(a) && !(a == Algorithm::ring && kind != Kind::all_reduce)) continue;
    // NCCL's trees are for all-reduce across machines; inside one machine a "tree" is a chain
    // and NCCL's tuner keeps the ring there (unless the ring is excluded).
    if (a == Algorithm::tree && (kind != Kind::all_reduce || s.trees.empty() || (!tree_forced && s.link_class != LinkClass::network)))
      continue;
    for (Protocol pr : {Protocol::ll, Protocol::ll128, Protocol::simple}) {
      if (!choices.allows(pr)) continue;
      // NCCL enables LL128 by default only over direct NVLink inside machines (not through
      // an intermediate GPU: typeIntra <= PATH_NVL, NCCL 2.14-2.18.1), across machines only
      // where the GPUs that use the NICs reach them without crossing a CPU (typeInter <=
      // PATH_PXB, or PATH_PXN on compute capability 9.0+), on GPUs of one compute capability among 7.0,
      // 8.0 and 9.0 (tuning.cc: other cases "may cause silent data corruption"); a protocol
      // the user or the trace names is kept.
      if (!choices.named(pr) && pr == Protocol::ll128 &&
          !(s.intra_nvlink && (s.inter_path == 0 || (s.inter_path == 1 && s.compute_capability >= 90)) && s.uniform_compute_capability &&
            (s.compute_capability == 70 || s.compute_capability == 80 || s.compute_capability == 90)))
        continue;
      double t;
      if (a == Algorithm::ring) {
        if (s.ring_bw <= 0) continue;
        double lat = nccl_latency_s(s, kind, n, pr, a, true);
        // NCCL's "plateau effect of ring" (2.17-2.18's threshold: ranks / 16 x 64 KiB).
        if (pr == Protocol::simple && s.machines > 1 && kind == Kind::all_reduce && in_bytes >= n / 16.0 * 65536)
          lat *= collective::ring_plateau_latency_factor(s.compute_capability);
        t = lat + sched.bytes_per_rank / tuner_bw(a, pr);
      } else {
        t = nccl_latency_s(s, kind, n, pr, a, true) + in_bytes / (tuner_bw(a, pr) * collective::tree_correction_factor(pr, in_bytes));
      }
      if (t < best) {
        best = t;
        p.algorithm = a;
        p.protocol = pr;
      }
    }
  }
  // NVLS (NCCL 2.18.3): Simple, all-reduce, one machine; NCCL's estimate is its latency plus
  // bytes / (busBw x 5/6), busBw from its NVLS graph (collective::nvls_tuner_busbw_Bps()).
  if (kind == Kind::all_reduce && s.nvls && choices.allows(Algorithm::nvls) && choices.allows(Protocol::simple)) {
    const double bus = std::min(collective::nvls_tuner_busbw_Bps(n, s.nvls_rated_Bps), collective::tuner_busbw_cap_Bps(s.compute_capability));
    const double t = collective::latency_s(Protocol::simple, LinkClass::nvlink, 0, Algorithm::nvls) + in_bytes / (bus * 5.0 / 6.0);
    if (bus > 0 && t < best) {
      best = t;
      p.algorithm = Algorithm::nvls;
      p.protocol = Protocol::simple;
    }
  }
  // NVLS_TREE (NCCL 2.18+): Simple, all-reduce, across machines; NCCL's estimate is its
  // latency plus bytes / (busBw x 5/6), busBw from its NVLS graph
  // (collective::nvls_tree_tuner_busbw_Bps()).
  if (kind == Kind::all_reduce && s.nvls_tree && choices.allows(Algorithm::nvls_tree) && choices.allows(Protocol::simple)) {
    const int heads = static_cast<int>(s.nvls_heads.front().size());
    const double bus = std::min(collective::nvls_tree_tuner_busbw_Bps(heads, s.machines, s.nvls_rated_Bps, s.nvls_tree_nic_rated_Bps),
                                collective::tuner_busbw_cap_Bps(s.compute_capability));
    const double t = collective::nvls_tree_latency_s(s.machines, s.nccl_net_latency_s) + in_bytes / (bus * 5.0 / 6.0);
    if (bus > 0 && t < best) {
      best = t;
      p.algorithm = Algorithm::nvls_tree;
      p.protocol = Protocol::simple;
    }
  }
  if (!std::isfinite(best) && choices.algorithms == 1u << static_cast<int>(Algorithm::nvls_tree)) {
    if (!choices.allows(Protocol::simple)) input_error(topo_.file(), "--algo", "only NVLSTree is allowed, and NVLS_TREE runs only in Simple, which --proto excludes");
    // Which condition fails, first.
    auto [ids, by] = group_by_machine(gpus);
    std::string why;
    std::string counts;
    bool unequal = false, small = false;
    for (int m : ids) {
      counts += (counts.empty() ? "" : " + ") + std::to_string(by[m].size());
      unequal = unequal || by[m].size() != by[ids.front()].size();
      small = small || by[m].size() < 3;
    }
    if (ids.size() < 2) why = "they are in one machine";
    else if (unequal) why = "their machines hold different numbers of them (" + counts + ")";
    else if (small) why = "their machines hold fewer than 3 each (" + counts + ")";
    else if (s.compute_capability < 90) why = "their compute capability is " + std::to_string(s.compute_capability / 10) + "." + std::to_string(s.compute_capability % 10);
    else if (!topo_.p2p_enabled()) why = "peer-to-peer is off";
    else why = "not every machine's GPUs reach each other over NVLink4+ through an NVSwitch, or they have no NIC";
    input_error(topo_.file(), "--algo",
                "only NVLSTree is allowed, and NVLS_TREE runs all_reduce in Simple across machines of 3 or more GPUs each, as many in each, of compute "
                "capability 9.0+ attached to NVSwitches over NVLink4 or later, with peer-to-peer and a NIC per head (NCCL 2.18+); on these " +
                    std::to_string(n) + " GPUs " + why);
  }
  if (!std::isfinite(best) && choices.algorithms == 1u << static_cast<int>(Algorithm::nvls)) {
    // The place is --algo as given: "^ring,tree,nvlstree" leaves NVLS alone without naming it.
    if (!choices.allows(Protocol::simple)) input_error(topo_.file(), "--algo", "only NVLS is allowed, and NVLS runs only in Simple, which --proto excludes");
    input_error(topo_.file(), "--algo",
                "only NVLS is allowed, and NVLS runs all_reduce in Simple on one machine of 3 or more GPUs of compute capability 9.0+ attached to NVSwitches over "
                "NVLink4 or later, with peer-to-peer (NCCL 2.18); these " + std::to_string(n) + " GPUs are not that");
  }
  if (!std::isfinite(best) && !choices.allows(Algorithm::ring))
    input_error(topo_.file(), "--algo", "the ring is excluded and no other algorithm allowed can run " + std::string(collective::to_string(kind)) +
                                            " on these " + std::to_string(n) + " GPUs");
  if (!std::isfinite(best)) {
    // Forced tree on a non-all-reduce, or nothing reachable: fall back to the ring.
    p.algorithm = Algorithm::ring;
    p.protocol = choices.pick(Protocol::simple);
    best = collective::latency_s(p.protocol, s.link_class, sched.steps) + sched.bytes_per_rank / std::max(s.ring_bw, 1.0);
  }
  p.estimated_s = best;
  if (p.algorithm == Algorithm::nvls) {
    const double bytes = in_bytes * (n + 1) / n / collective::nvls_efficiency();
    for (int i = 0; i < n; ++i) p.flows.push_back({gpus[i], gpus[(i + 1) % n], bytes});
    p.link_class = LinkClass::nvlink;
    p.channels = n;  // NCCL's NVLS graph in one machine: one channel per GPU (search.cc)
    p.bandwidth_Bps = s.nvls_gpu_Bps;
    p.latency_s = collective::latency_s(Protocol::simple, LinkClass::nvlink, 0, Algorithm::nvls);
    p.bottleneck_bytes = bytes;
    p.steps = 1;
    p.hop_steps = 0;  // NCCL's NVLS latency is one term, with no per-step part
    return p;
  }
  if (p.algorithm == Algorithm::nvls_tree) {
    // In each machine NVLS's flows at NVLS_TREE's efficiency; between machines, head c of
    // every machine on the double binary tree and its twin, half the head's 1/H share each,
    // up and down.
    std::map<std::pair<int, int>, double> merged;
    for (const auto& l : s.nvls_locals) {
      const double k = static_cast<double>(l.size());
      const double bytes = in_bytes * (k + 1) / k / collective::nvls_tree_efficiency();
      for (size_t i = 0; i < l.size(); ++i) merged[{l[i], l[(i + 1) % l.size()]}] += bytes;
    }
    for (const auto& [pair, bytes] : merged) p.flows.push_back({pair.first, pair.second, bytes});
    const double intra_s = flows_bound_s(p.flows);
    // One flow per edge of each tree, not merged where the tree and its twin share an edge:
    // a merged flow would get one share of the NIC where two are due (max-min sharing).
    const int M = s.machines;
    const size_t heads = s.nvls_heads.front().size();
    const double share = in_bytes / static_cast<double>(heads) / 2;
    std::vector<Flow> net;
    for (size_t c = 0; c < heads; ++c)
      for (int r = 0; r < M; ++r)
        for (int up : {btree_parent(r, M), dtree_twin_parent(r, M)}) {
          if (up < 0) continue;
          const int child = s.nvls_heads[r][c], parent = s.nvls_heads[up][c];
          net.push_back({child, parent, share});
          net.push_back({parent, child, share});
        }
    // The link class is the part that binds: NVLink (at efficiency_nvls_tree) or the
    // network (at its links' efficiency), which calibrate fits accordingly.
    const bool network_bound = flows_bound_s(net) > intra_s;
    p.flows.insert(p.flows.end(), net.begin(), net.end());
    p.link_class = network_bound ? LinkClass::network : LinkClass::nvlink;
    p.channels = static_cast<int>(heads);
    p.bandwidth_Bps = network_bound ? s.nvls_tree_nic_rated_Bps / collective::tuner_bandwidth_fraction(LinkClass::network) : s.nvls_gpu_Bps;
    p.latency_s = collective::nvls_tree_latency_s(M, s.nccl_net_latency_s);
    p.bottleneck_bytes = flows_bound_s(p.flows) * p.bandwidth_Bps;
    p.steps = 1;
    p.hop_steps = collective::nvls_tree_network_steps(M);  // whatever the link class
    return p;
  }
  // What runs: the efficiencies achieved, no tuner caps, as a fraction of the structure's
  // bandwidth.
  const double raw_bw = p.algorithm == Algorithm::ring ? s.ring_bw : s.tree_bw;
  const double achieved = collective::achieved_efficiency(p.protocol, kind, s.link_class == LinkClass::network, s.nvlink_generation);
  const double eff = raw_bw > 0 ? nccl_bw(p.algorithm, p.protocol, achieved, 1.0, false) / raw_bw : achieved;
  std::map<std::pair<int, int>, double> merged;
  double channel_bound_s = 0;  // trees: the slowest merged flow at its channels' hop rate (0: no such rate)
  if (p.algorithm == Algorithm::ring) {
    // One flow per channel and hop, not merged across channels: SimGrid shares a link
    // equally among its flows (max-min), so equal channels get the equal shares the search
    // planned, where one merged flow carrying two channels' bytes would get one share.
    const bool open = kind == Kind::broadcast || kind == Kind::reduce || kind == Kind::send_recv;
    int channels = 0;
    for (const auto& r : s.rings) {
      const double share = s.ring_bw > 0 ? r.bandwidth_Bps / s.ring_bw : 1.0 / s.rings.size();
      const int k = std::max(1, r.channels);
      channels += k;
      const size_t hops = open ? r.order.size() - 1 : r.order.size();
      for (int c = 0; c < k; ++c)
        for (size_t i = 0; i < hops; ++i) {
          const int a = r.order[i], b = r.order[(i + 1) % r.order.size()];
          const double f = indirect_factor(a, b);
          p.flows.push_back({a, b, share / k * sched.bytes_per_rank / eff / f});
        }
    }
    p.channels = channels;
    p.bandwidth_Bps = s.ring_bw;
    p.latency_s = nccl_latency_s(s, kind, n, p.protocol, Algorithm::ring, false, &p.hop_steps) +
                  collective::achieved_extra_latency_s(p.protocol, s.nvlink_generation) + ring_shm_wait_s(s.ring_shm_waits, sched.steps, open) +
                  ring_cable_wait_s(s.ring_cable_waits, sched.steps, open);
    p.processing_s = collective::achieved_processing_s(p.protocol, s.nvlink_generation, sched.bytes_per_rank);
    p.bottleneck_bytes = flows_bound_s(p.flows) * p.bandwidth_Bps;
    p.steps = sched.steps;
  } else {
    // Flows merged per hop across trees; each carries its channels' bytes, at most at those
    // channels' hop rate (tree_hop_max_Bps, in the flow's own bytes: over eff and the hop's
    // indirect factor, as its bytes are).
    std::map<std::pair<int, int>, double> channels_on;
    const double per_orientation = s.channels_per_orientation();
    for (const auto& t : s.trees) {
      const double share = t.bandwidth_Bps / s.tree_bw / 2;  // half on the tree, half on its twin
      for (const auto* edges : {&t.edges, &t.twin_edges})
        for (auto [child, parent] : *edges) {
          merged[{child, parent}] += share * in_bytes / eff / indirect_factor(child, parent);
          merged[{parent, child}] += share * in_bytes / eff / indirect_factor(parent, child);
          channels_on[{child, parent}] += per_orientation;
          channels_on[{parent, child}] += per_orientation;
        }
    }
    // One channel's rate in its flow's bytes: NCCL caps a tree's busBw before the protocol's
    // factor (LL's 1/3.8, LL128's 120/128), which the flows' bytes (over eff) carry, so the
    // payload rate is the same in every protocol; LL128 also at NCCL's ll128MaxBwPerCh per
    // searched channel, half per channel as the tree rate, after its factor.
    double channel_rate = s.tree_hop_max_Bps;
    if (p.protocol == Protocol::ll128 && s.machines > 1)
      channel_rate = std::min(channel_rate, collective::ll128_max_busbw_per_channel_Bps(s.compute_capability) / 2 / eff);
    if (std::isfinite(channel_rate))
      for (const auto& [pair, bytes] : merged)
        channel_bound_s = std::max(channel_bound_s, bytes * indirect_factor(pair.first, pair.second) / (channels_on[pair] * channel_rate));
    p.channels = s.tree_channels;
    p.bandwidth_Bps = s.tree_bw;
    p.latency_s = nccl_latency_s(s, kind, n, p.protocol, Algorithm::tree, false, &p.hop_steps) +
                  collective::achieved_extra_latency_s(p.protocol, s.nvlink_generation) + s.tree_shm_wait_s + s.tree_cable_wait_s;
    p.processing_s = collective::achieved_processing_s(p.protocol, s.nvlink_generation, 2 * in_bytes);  // up and down the tree
    p.steps = 2 * s.tree_depth;
    if (p.protocol == Protocol::simple && !s.trees.empty()) {
      // Pipeline fill: a chunk (or each channel's whole share, if smaller) crosses the hops
      // up and down one after another, each at its channel's share of the hop; the flows
      // account for one chunk time at the trees' bottleneck, the fill for the rest of the
      // first chunk's trip.
      // Per tree: its channels carry its share of the data (the flows' split), so a slow
      // tree's chunks are as small as its share.
      const double per_orientation = s.channels_per_orientation();
      for (const auto& t : s.trees) {
        const double channel_Bps = t.bandwidth_Bps / (2 * per_orientation);
        const double chunk = std::min(collective::tree_simple_chunk_B(), in_bytes * (t.bandwidth_Bps / s.tree_bw) / (2 * per_orientation));
        p.pipeline_s = std::max(p.pipeline_s, chunk * (t.trip_s_per_B - 1.0 / std::min(channel_Bps, s.tree_hop_max_Bps)) / eff);
      }
    }
  }
  for (const auto& [pair, bytes] : merged) p.flows.push_back({pair.first, pair.second, bytes});
  // The channels' hop rate bounds the flows too; SimGrid 3.32 ignores Comm::set_rate on
  // host-to-host communications, so the time it adds beyond the flows' own bound, alone on
  // the links, comes after them (under contention, where the flows are slower anyway, this
  // overstates the time by up to that much).
  if (p.algorithm == Algorithm::tree) {
    const double flows_s = flows_bound_s(p.flows);
    if (channel_bound_s > 0) p.channel_rate_s = std::max(0.0, channel_bound_s - flows_s);
    p.bottleneck_bytes = flows_s * p.bandwidth_Bps;
  }
  return p;
}

}  // namespace composim::sim
