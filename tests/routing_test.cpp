#include <gtest/gtest.h>

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
  EXPECT_NEAR(r.bottleneck_Bps / 1e9, 14.40, 0.01);
  EXPECT_DOUBLE_EQ(r.latency_s, 150e-9);  // one Gen3 switch
  // A Gen3 x16 copy of 14.4 MB through one switch: bytes/bandwidth + latency.
  EXPECT_NEAR(topo::transfer_time_s(r, 14.4035e6), 1e-3 + 150e-9, 1e-7);
}

TEST(Routing, AcrossRootPortsIsStagedThroughHostMemory) {
  auto t = topo::Topology::load("pcie-8gpu-gen3");
  auto r = topo::route(t, node(t, "gpu0"), node(t, "gpu4"));
  EXPECT_TRUE(r.staged);
  EXPECT_EQ(path(t, r), "gpu0>sw0>cpu0>cpu1>sw1>gpu4");
  ASSERT_EQ(r.memory_hosts.size(), 1u);
  EXPECT_EQ(t.nodes()[r.memory_hosts[0]].name, "cpu0");
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
  EXPECT_NEAR(r.bottleneck_Bps / 1e9, 14.40, 0.01);  // V100 trains at Gen3 x16
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
  EXPECT_DOUBLE_EQ(r.bottleneck_Bps, 50e9 * 376.6 / 450.0);  // 2 NVLink2 links at the measured payload efficiency
  // gpu0 and gpu5 share no NVLink: NVLink through an intermediate GPU (NCCL's NVB path),
  // the widest one (gpu0 =2= gpu4 -1- gpu5 or gpu0 -1- gpu1 =2= gpu5: 1 link either way).
  auto s = topo::route(t, node(t, "gpu0"), node(t, "gpu5"));
  EXPECT_TRUE(s.nvlink);
  EXPECT_EQ(s.transit.size(), 1u);
  EXPECT_EQ(t.nodes()[s.transit[0]].type, topo::NodeType::gpu);
  // With P2P off it is staged over PCIe, across the sockets.
  t.set_p2p_enabled(false);
  auto st = topo::route(t, node(t, "gpu0"), node(t, "gpu5"));
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
