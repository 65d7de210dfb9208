#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "models/error.hpp"
#include "models/network.hpp"
#include "test_util.hpp"
#include "topologies/routing.hpp"

using namespace composim;

namespace {
int node(const topo::Topology& t, const char* n) { return *t.find_node(n); }
std::string path(const topo::Topology& t, const topo::Route& r) {
  std::string s = t.nodes()[r.src].name;
  for (int n : r.transit) s += ">" + t.nodes()[n].name;
  return s + ">" + t.nodes()[r.dst].name;
}
}  // namespace

TEST(Routing, PeerToPeerTurnsAtLowestCommonSwitch) {
  auto t = topo::Topology::load("pcie-8gpu-gen3");
  auto r = topo::route(t, node(t, "gpu0"), node(t, "gpu1"));
  EXPECT_EQ(path(t, r), "gpu0>sw0>gpu1");
  EXPECT_FALSE(r.staged);
  EXPECT_NEAR(r.bottleneck_Bps / 1e9, 13.16, 0.01);  // Gen3 x16: 14.40 GB/s of TLP payload x 0.914
  EXPECT_DOUBLE_EQ(r.latency_s, 150e-9);  // one Gen3 switch
  // A Gen3 x16 copy of 13.16 MB through one switch: bytes/bandwidth + latency.
  EXPECT_NEAR(topo::transfer_time_s(r, 14.4035e6 * 0.914), 1e-3 + 150e-9, 1e-7);
}

TEST(Routing, AcrossRootPortsIsStagedThroughHostMemory) {
  auto t = topo::Topology::load("pcie-8gpu-gen3");
  auto r = topo::route(t, node(t, "gpu0"), node(t, "gpu4"));
  EXPECT_TRUE(r.staged);
  EXPECT_EQ(path(t, r), "gpu0>sw0>cpu0>cpu1>sw1>gpu4");
  // cpu0's memory is written by gpu0 and read for gpu4: crossed twice.
  ASSERT_EQ(r.memory_hosts.size(), 2u);
  EXPECT_EQ(t.nodes()[r.memory_hosts[0]].name, "cpu0");
  EXPECT_EQ(r.memory_hosts[1], r.memory_hosts[0]);
}

// A staged copy moves each byte through its staging memory twice: a memory slower than
// the links caps it at half its bandwidth, in the route and in the simulated copy (plus the
// driver's hand-off): 10 GB/s of memory, Gen4 x16 links: 1 / (1 / 5 + 1 / 126) GB/s.
TEST(Routing, StagedCopyCrossesItsMemoryTwice) {
  composim::testing::TempDir d;
  const std::string file = d.write("lowmem.json", R"({"schema_version": 1, "name": "lowmem", "nodes": [
    {"name": "cpu0", "type": "host", "memory_bandwidth_Bps": 10e9, "p2p_across_root_ports": false},
    {"name": "gpu0", "type": "gpu", "model": "A100"}, {"name": "gpu1", "type": "gpu", "model": "A100"}],
   "links": [{"from": "cpu0", "to": "gpu0", "type": "pcie", "generation": 4, "lanes": 16},
    {"from": "cpu0", "to": "gpu1", "type": "pcie", "generation": 4, "lanes": 16}]})");
  auto t = topo::Topology::load(file);
  auto r = topo::route(t, node(t, "gpu0"), node(t, "gpu1"));
  EXPECT_TRUE(r.staged);
  EXPECT_DOUBLE_EQ(r.bottleneck_Bps, 5e9);
  auto run = composim::testing::run_cli("p2p --topology " + file + " --out " + d.path());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::ifstream csv(d.path() + "/p2p.csv");
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  const double copy_GBps = std::stod(row.substr(row.find(",gpu1,") + 6));
  const double bytes = 64.0 * 1048576, rate_GBps = 1 / (1 / 5.0 + 1 / 126.0);
  EXPECT_NEAR(copy_GBps, bytes / (r.latency_s + bytes / (rate_GBps * 1e9)) / 1e9, 1e-3);

  // GPUs of two sockets: staged in the source's memory (6 GB/s, crossed twice).
  const std::string two = d.write("twosock.json", R"({"schema_version": 1, "name": "twosock", "nodes": [
    {"name": "cpu0", "type": "host", "memory_bandwidth_Bps": 6e9}, {"name": "cpu1", "type": "host", "memory_bandwidth_Bps": 6e9},
    {"name": "gpu0", "type": "gpu", "model": "A100"}, {"name": "gpu1", "type": "gpu", "model": "A100"}],
   "links": [{"from": "cpu0", "to": "cpu1", "type": "cpu_interconnect", "bandwidth_Bps": 100e9},
    {"from": "cpu0", "to": "gpu0", "type": "pcie", "generation": 4, "lanes": 16},
    {"from": "cpu1", "to": "gpu1", "type": "pcie", "generation": 4, "lanes": 16}]})");
  auto sockets = topo::Topology::load(two);
  EXPECT_DOUBLE_EQ(topo::route(sockets, node(sockets, "gpu0"), node(sockets, "gpu1")).bottleneck_Bps, 3e9);
  // Composed onto the two sockets apart: refused, as sockets of one server are one system
  // (on an NVSwitch server its GPUs would lose NVLink to each other).
  try {
    sockets.set_composition({{"cpu0", {"gpu0"}}, {"cpu1", {"gpu1"}}}, "test");
    ADD_FAILURE() << "two sockets of one server were composed apart";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cpu1 and cpu0 are sockets of one server"), std::string::npos) << e.what();
  }
}

TEST(Routing, P2pDisabledStagesEvenUnderOneSwitch) {
  auto t = topo::Topology::load("pcie-8gpu-gen3");
  t.set_p2p_enabled(false);
  auto r = topo::route(t, node(t, "gpu0"), node(t, "gpu1"));
  EXPECT_TRUE(r.staged);
  EXPECT_EQ(path(t, r), "gpu0>sw0>cpu0>sw0>gpu1");  // crosses the switch uplink up and down
  EXPECT_DOUBLE_EQ(r.latency_s, 150e-9 + 1e-6 + 150e-9);
}

TEST(Routing, HostToDeviceCrossesEverySwitch) {
  auto t = topo::Topology::load("composable-falcon4016");
  auto r = topo::route(t, node(t, "host0"), node(t, "gpu5"));
  EXPECT_EQ(path(t, r), "host0>chassis_sw0>leaf1>gpu5");
  EXPECT_NEAR(r.bottleneck_Bps / 1e9, 13.16, 0.01);  // V100 trains at Gen3 x16
  // Two Gen4 switches, the root complex and 2 m of copper.
  EXPECT_NEAR(r.latency_s, 2 * 105e-9 + 1e-6 + 2 * 4.77e-9, 1e-15);
  auto p = topo::route(t, node(t, "gpu0"), node(t, "gpu12"));
  EXPECT_EQ(path(t, p), "gpu0>leaf0>chassis_sw0>chassis_sw1>leaf3>gpu12");
  EXPECT_FALSE(p.staged);
}

TEST(Routing, NvlinkPreferred) {
  auto t = topo::Topology::load("dgx1-v100");
  auto r = topo::route(t, node(t, "gpu0"), node(t, "gpu3"));
  EXPECT_TRUE(r.nvlink);
  EXPECT_EQ(path(t, r), "gpu0>gpu3");
  EXPECT_DOUBLE_EQ(r.bottleneck_Bps, 50e9 * 22.55 / 25.0);  // 2 NVLink2 links at the measured payload efficiency
  EXPECT_FALSE(r.nvb);
  // gpu0 and gpu5 share no NVLink: NVLink through an intermediate GPU (NCCL's NVB path),
  // the widest one (gpu0 =2= gpu4 -1- gpu5 or gpu0 -1- gpu1 =2= gpu5: 1 link either way).
  auto s = topo::route(t, node(t, "gpu0"), node(t, "gpu5"), /*nccl_paths=*/true);
  EXPECT_TRUE(s.nvlink);
  EXPECT_TRUE(s.nvb);
  EXPECT_EQ(s.transit.size(), 1u);
  EXPECT_EQ(t.nodes()[s.transit[0]].type, topo::NodeType::gpu);
  // A CUDA copy is not forwarded through a GPU: staged over PCIe across the sockets.
  EXPECT_TRUE(topo::route(t, node(t, "gpu0"), node(t, "gpu5")).staged);
  // With P2P off, NCCL stages too.
  t.set_p2p_enabled(false);
  auto st = topo::route(t, node(t, "gpu0"), node(t, "gpu5"), true);
  EXPECT_FALSE(st.nvlink);
  EXPECT_TRUE(st.staged);
  auto a = topo::Topology::load("dgx-a100");
  auto n = topo::route(a, node(a, "gpu0"), node(a, "gpu7"));
  EXPECT_TRUE(n.nvlink);
  EXPECT_EQ(n.transit.size(), 1u);  // through one NVSwitch
}

TEST(Routing, P2pOffDisablesNvlinkToo) {
  auto t = topo::Topology::load("dgx-a100");
  t.set_p2p_enabled(false);
  auto r = topo::route(t, node(t, "gpu0"), node(t, "gpu1"));
  EXPECT_FALSE(r.nvlink);
  EXPECT_TRUE(r.staged);
  EXPECT_EQ(path(t, r), "gpu0>sw0>cpu0>sw0>gpu1");
}

// Composition: GPUs of one chassis attached to two hosts. Copies go to the owning host;
// GPUs of different hosts talk host to host (or through the chassis if it allows it).
TEST(Routing, CompositionDecidesHostAndCrossHostPath) {
  auto t = topo::Topology::load("composable-falcon4016");
  t.set_composition({{"host0", {"gpu0", "gpu1"}}, {"host1", {"gpu4", "gpu12"}}}, "test");
  EXPECT_EQ(t.nodes()[t.host_of(node(t, "gpu4"))].name, "host1");  // nearest would be host0
  EXPECT_EQ(t.attached_gpus().size(), 4u);
  EXPECT_FALSE(t.attached(node(t, "gpu2")));
  auto same = topo::route(t, node(t, "gpu0"), node(t, "gpu1"));
  EXPECT_EQ(path(t, same), "gpu0>leaf0>gpu1");
  auto cross = topo::route(t, node(t, "gpu0"), node(t, "gpu4"));
  EXPECT_TRUE(cross.network);
  EXPECT_EQ(path(t, cross), "gpu0>leaf0>chassis_sw0>host0>host0.nic>eth0>host1.nic>host1>chassis_sw1>chassis_sw0>leaf1>gpu4");
  EXPECT_NEAR(cross.bottleneck_Bps, 100e9 / 8 * network::kRoceFraming, 1e3);  // the hosts' 100 GbE
  // A device attached twice is an error naming both hosts.
  try {
    t.set_composition({{"host0", {"gpu0"}}, {"host1", {"gpu0"}}}, "--compose");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("\"gpu0\" is attached to two hosts: host0 and host1"), std::string::npos) << e.what();
  }
}

// Two hosts' PCIe domains meet only over a socket interconnect: in the composable chassis
// their NICs talk over Ethernet (12.25 GB/s), not through both root complexes and the
// chassis' switches; a host and another host's NIC have no route; a GPU attached to host0
// copies to host0's memory only. Across the sockets of one server PCIe still goes.
TEST(Routing, HostDomainsMeetOnlyOverSocketLinks) {
  auto t = topo::Topology::load("composable-falcon4016");
  auto r = topo::route(t, node(t, "host0.nic"), node(t, "host1.nic"));
  EXPECT_EQ(path(t, r), "host0.nic>eth0>host1.nic");
  EXPECT_TRUE(r.network);
  EXPECT_NEAR(r.bottleneck_Bps / 1e9, 12.25, 0.01);
  EXPECT_THROW(topo::route(t, node(t, "host0.nic"), node(t, "host1")), InputError);
  // Host to host: memory to memory through their NICs.
  auto hosts = topo::route(t, node(t, "host0"), node(t, "host1"));
  EXPECT_EQ(path(t, hosts), "host0>host0.nic>eth0>host1.nic>host1");
  EXPECT_TRUE(hosts.network);
  t.set_composition({{"host0", {"gpu0", "gpu1"}}, {"host1", {"gpu4"}}}, "test");
  EXPECT_EQ(path(t, topo::route(t, node(t, "gpu0"), node(t, "host0"))), "gpu0>leaf0>chassis_sw0>host0");
  try {
    topo::route(t, node(t, "gpu0"), node(t, "host1"));
    ADD_FAILURE() << "gpu0 reached host1's memory";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("gpu0 is attached to host0, whose memory its copies go to"), std::string::npos) << e.what();
  }
  // A device of one host and another host's NIC: the chassis does not join them.
  EXPECT_THROW(topo::route(t, node(t, "gpu4"), node(t, "host0.nic")), InputError);
  EXPECT_EQ(path(t, topo::route(t, node(t, "gpu4"), node(t, "host1.nic"))), "gpu4>leaf1>chassis_sw0>chassis_sw1>host1>host1.nic");
  // 4 sockets in a ring, a switch cabled to cpu0 and cpu2: from cpu0 to cpu2's NIC the
  // path through the switch is as short as the one over the sockets, and is not taken,
  // whatever the order of the links in the file.
  composim::testing::TempDir d;
  nlohmann::json ring = nlohmann::json::parse(R"({"schema_version": 1, "name": "ring4", "nodes": [{"name": "cpu0", "type": "host"},
    {"name": "cpu1", "type": "host"}, {"name": "cpu2", "type": "host"}, {"name": "cpu3", "type": "host"},
    {"name": "sw", "type": "pcie_switch", "generation": 4}, {"name": "gpu0", "type": "gpu", "model": "A100"}, {"name": "nic0", "type": "nic"}],
   "links": [{"from": "cpu0", "to": "sw", "type": "pcie", "generation": 4, "lanes": 16},
    {"from": "cpu2", "to": "sw", "type": "pcie", "generation": 4, "lanes": 16}, {"from": "sw", "to": "gpu0", "type": "pcie", "generation": 4, "lanes": 16},
    {"from": "cpu0", "to": "cpu1", "type": "cpu_interconnect", "bandwidth_Bps": 50e9}, {"from": "cpu1", "to": "cpu2", "type": "cpu_interconnect", "bandwidth_Bps": 50e9},
    {"from": "cpu2", "to": "cpu3", "type": "cpu_interconnect", "bandwidth_Bps": 50e9}, {"from": "cpu3", "to": "cpu0", "type": "cpu_interconnect", "bandwidth_Bps": 50e9},
    {"from": "cpu2", "to": "nic0", "type": "pcie", "generation": 4, "lanes": 16}]})");
  for (int order = 0; order < 2; ++order) {
    auto sockets4 = topo::Topology::load(d.write("ring4-" + std::to_string(order) + ".json", ring.dump()));
    EXPECT_EQ(path(sockets4, topo::route(sockets4, node(sockets4, "cpu0"), node(sockets4, "nic0"))), "cpu0>cpu1>cpu2>nic0") << order;
    std::swap(ring["links"][3], ring["links"][4]);
    std::rotate(ring["links"].begin(), ring["links"].begin() + 1, ring["links"].end());
  }
  auto dgx = topo::Topology::load("2x-dgx-a100-ib");
  EXPECT_EQ(path(dgx, topo::route(dgx, node(dgx, "n0.nic0"), node(dgx, "n0.nic7"))), "n0.nic0>n0.sw0>n0.cpu0>n0.cpu1>n0.sw3>n0.nic7");
}

TEST(Routing, ChassisWithFabricP2pAcrossHosts) {
  auto doc = nlohmann::json::parse(std::ifstream(composim::testing::source_dir() + "/topologies/shipped/composable-falcon4016.json"));
  doc["fabric_p2p_across_hosts"] = true;
  doc["composition"] = {{"host0", {"gpu0"}}, {"host1", {"gpu12"}}};
  auto t = topo::Topology::parse(doc, "falcon-fabric.json");
  auto r = topo::route(t, node(t, "gpu0"), node(t, "gpu12"));
  EXPECT_FALSE(r.network);
  EXPECT_EQ(path(t, r), "gpu0>leaf0>chassis_sw0>chassis_sw1>leaf3>gpu12");  // never through a host
  // A host listed with no devices is an error, not "no composition" (it composed nothing).
  doc["composition"] = {{"host0", nlohmann::json::array()}};
  try {
    topo::Topology::parse(doc, "falcon-fabric.json");
    ADD_FAILURE() << "an empty attachment list was accepted";
  } catch (const composim::InputError& e) {
    EXPECT_EQ(std::string(e.what()), "falcon-fabric.json: composition.host0: no devices; list the GPUs and NICs attached to host0, or leave the host out");
  }
}

// Routing resumes the last search from the same source; every route must be the one a
// search of its own finds (same hops, so the same tie-breaks), whatever the query order.
TEST(Routing, ResumedSearchesFindTheSameRoutesAsFreshOnes) {
  for (const auto& name : topo::Topology::shipped_names())
    for (bool p2p : {true, false}) {
      SCOPED_TRACE(name + (p2p ? "" : " (P2P off)"));
      auto resumed = topo::Topology::load(name), fresh = topo::Topology::load(name);
      resumed.set_p2p_enabled(p2p);
      fresh.set_p2p_enabled(p2p);
      std::vector<int> ends;
      for (size_t i = 0; i < resumed.nodes().size(); ++i)
        if (resumed.nodes()[i].is_endpoint()) ends.push_back(static_cast<int>(i));
      int compared = 0;
      for (int pass = 0; pass < 2; ++pass)  // source-major, then destination-major
        for (int x : ends)
          for (int y : ends) {
            const int a = pass == 0 ? x : y, b = pass == 0 ? y : x;
            if (a == b) continue;
            topo::Route r1, r2;
            try {
              r1 = topo::route(resumed, a, b);
            } catch (const InputError&) {
              fresh.search_states().clear();
              EXPECT_THROW(topo::route(fresh, a, b), InputError);
              continue;
            }
            fresh.search_states().clear();
            r2 = topo::route(fresh, a, b);
            ASSERT_EQ(path(resumed, r1), path(fresh, r2));
            ASSERT_EQ(r1.hops.size(), r2.hops.size());
            for (size_t h = 0; h < r1.hops.size(); ++h) {
              EXPECT_EQ(r1.hops[h].link, r2.hops[h].link);
              EXPECT_EQ(r1.hops[h].forward, r2.hops[h].forward);
            }
            EXPECT_EQ(r1.staged, r2.staged);
            EXPECT_EQ(r1.network, r2.network);
            EXPECT_DOUBLE_EQ(r1.latency_s, r2.latency_s);
            ++compared;
          }
      EXPECT_GT(compared, 10);
    }
}
