#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "models/error.hpp"
#include "test_util.hpp"
#include "topologies/topology.hpp"

using namespace composim;
using nlohmann::json;

namespace {

json small() {
  return json::parse(R"({
    "schema_version": 1, "name": "small",
    "nodes": [
      {"name": "cpu0", "type": "host"},
      {"name": "sw0", "type": "pcie_switch", "generation": 4},
      {"name": "gpu0", "type": "gpu", "model": "A100"},
      {"name": "gpu1", "type": "gpu", "model": "A100"}
    ],
    "links": [
      {"from": "cpu0", "to": "sw0", "type": "pcie", "generation": 4, "lanes": 16},
      {"from": "sw0", "to": "gpu0", "type": "pcie", "generation": 4, "lanes": 16},
      {"from": "sw0", "to": "gpu1", "type": "pcie", "generation": 4, "lanes": 16, "medium": "optical", "length_m": 10}
    ]})");
}

std::string error_of(const json& doc) {
  try {
    topo::Topology::parse(doc, "t.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Topology, LoadsAndComputesLinkModels) {
  auto t = topo::Topology::parse(small(), "t.json");
  EXPECT_EQ(t.gpus().size(), 2u);
  EXPECT_EQ(boost::num_vertices(t.graph()), 4u);
  EXPECT_EQ(boost::num_edges(t.graph()), 3u);
  EXPECT_NEAR(t.links()[1].bandwidth_Bps / 1e9, 28.81 * 0.914, 0.01);  // Gen4 x16 TLP payload x pcie.link.efficiency
  // 10 m of fibre at 4.9 ns/m plus one 64 ns transceiver at each end.
  EXPECT_NEAR(t.links()[2].latency_s, 10 * 4.9e-9 + 2 * 64e-9, 1e-15);
  EXPECT_DOUBLE_EQ(t.nodes()[1].latency_s, 105e-9);
  EXPECT_EQ(t.nearest_host(*t.find_node("gpu1")), *t.find_node("cpu0"));
}

TEST(Topology, ErrorsNameFileAndItem) {
  auto doc = small();
  doc["nodes"][1]["type"] = "pcie_swich";
  EXPECT_EQ(error_of(doc).rfind("t.json: nodes[1]: unknown node type \"pcie_swich\"", 0), 0u) << error_of(doc);

  doc = small();
  doc["links"][0]["to"] = "sw9";
  EXPECT_NE(error_of(doc).find("links[0]: link to unknown node \"sw9\""), std::string::npos) << error_of(doc);

  doc = small();
  doc["nodes"][3]["name"] = "gpu0";
  EXPECT_NE(error_of(doc).find("nodes[3]: duplicate node name \"gpu0\""), std::string::npos) << error_of(doc);

  doc = small();
  doc["links"][2]["bandwith_Bps"] = 1;
  EXPECT_NE(error_of(doc).find("links[2]: unknown key \"bandwith_Bps\""), std::string::npos) << error_of(doc);

  doc = small();
  doc["links"][1].erase("lanes");
  EXPECT_NE(error_of(doc).find("links[1]: missing key \"lanes\""), std::string::npos) << error_of(doc);

  for (const char* key : {"nodes", "links"}) {
    doc = small();
    doc.erase(key);
    EXPECT_NE(error_of(doc).find(std::string("t.json: top level: missing key \"") + key + "\" (expected an array"), std::string::npos)
        << error_of(doc);
  }

  doc = small();
  doc["links"].push_back({{"from", "gpu0"}, {"to", "sw0"}, {"type", "nvlink"}, {"generation", 3}, {"links", 2}});
  EXPECT_NE(error_of(doc).find("links[3]: nvlink link between a gpu and a pcie_switch: NVLink joins GPUs and NVSwitches"),
            std::string::npos)
      << error_of(doc);

  doc = small();
  doc["links"].push_back({{"from", "gpu0"}, {"to", "gpu1"}, {"type", "ethernet"}, {"rate_Gbps", 100}});
  EXPECT_NE(error_of(doc).find("links[3]: ethernet link between a gpu and a gpu"), std::string::npos) << error_of(doc);

  doc = small();
  doc["links"].push_back({{"from", "gpu0"}, {"to", "sw0"}, {"type", "pcie"}, {"generation", 4}, {"lanes", 16}, {"name", "second"}});
  EXPECT_NE(error_of(doc).find("links[3]: a second link between \"gpu0\" and \"sw0\" (links[1] is the first)"), std::string::npos)
      << error_of(doc);

  doc = small();
  doc["links"][2]["medium"] = "copper";
  doc["links"][2]["length_m"] = 100;
  EXPECT_NE(error_of(doc).find("links[2]: a copper PCIe segment of 100 m: copper reaches 10 m at most"), std::string::npos) << error_of(doc);

  doc = small();
  doc["nodes"][3]["name"] = "gpu,1";
  EXPECT_NE(error_of(doc).find("nodes[3]: node name \"gpu,1\" has a comma"), std::string::npos) << error_of(doc);

  doc = small();
  doc["nodes"][2]["model"] = "FOO-GPU";
  EXPECT_NE(error_of(doc).find("nodes[2]: unknown GPU model \"FOO-GPU\" (known: V100, A100, H100"), std::string::npos) << error_of(doc);

  doc = small();
  doc["links"][1]["lanes"] = 12;
  EXPECT_NE(error_of(doc).find("links[1]: PCIe lanes 12"), std::string::npos) << error_of(doc);

  doc = small();
  doc["links"].erase(2);  // gpu1 is left without a path to a host
  EXPECT_NE(error_of(doc).find("node \"gpu1\": unreachable GPU"), std::string::npos) << error_of(doc);

  doc = small();
  doc["schema_version"] = 2;
  EXPECT_NE(error_of(doc).find("schema_version 2"), std::string::npos);
}

// GeForce cards have PCIe P2P disabled by the driver (models/gpu.cpp): off unless the
// topology turns it on, as the tinygrad-driver validation topology does.
TEST(Topology, GpuModelSetsDefaultP2p) {
  auto doc = small();
  doc["nodes"][2]["model"] = "NVIDIA GeForce RTX 4090";
  doc["nodes"][3]["model"] = "NVIDIA GeForce RTX 4090";
  doc["nodes"][3]["p2p"] = true;
  const auto t = topo::Topology::parse(doc, "t.json");
  EXPECT_FALSE(t.nodes()[2].p2p);
  EXPECT_TRUE(t.nodes()[3].p2p);
  EXPECT_TRUE(topo::Topology::parse(small(), "t.json").nodes()[2].p2p);  // A100
}

TEST(Topology, ShippedTopologiesLoad) {
  const auto names = topo::Topology::shipped_names();
  for (const char* expected : {"pcie-8gpu-gen3", "composable-falcon4016", "dgx1-v100", "dgx-a100"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  EXPECT_EQ(topo::Topology::load("pcie-8gpu-gen3").gpus().size(), 8u);
  EXPECT_EQ(topo::Topology::load("composable-falcon4016").gpus().size(), 16u);
  EXPECT_EQ(topo::Topology::load("dgx-a100").gpus().size(), 8u);
  auto dgx1 = topo::Topology::load("dgx1-v100");
  // Hybrid cube-mesh: every V100 uses its 6 NVLink2 links.
  for (int g : dgx1.gpus()) {
    int lanes = 0;
    for (const auto& l : dgx1.links())
      if (l.type == topo::LinkType::nvlink && (l.from == g || l.to == g)) lanes += l.links;
    EXPECT_EQ(lanes, 6) << dgx1.nodes()[g].name;
  }
  EXPECT_THROW(topo::Topology::load("no-such-topology"), InputError);
}

TEST(Topology, Dot) {
  auto dot = topo::Topology::load("pcie-8gpu-gen3").to_dot();
  EXPECT_EQ(dot.rfind("graph", 0), 0u);
  EXPECT_NE(dot.find("gpu7"), std::string::npos);
}

// A key written twice in one object is an error naming where (JSON readers would keep the
// last value: `"lanes": 16, "lanes": 1` silently made an x1 link). Also in parameter files.
TEST(Topology, RepeatedKeyIsAnError) {
  composim::testing::TempDir d;
  std::string text = small().dump();
  const std::string lanes = "\"lanes\":16";
  const auto at = text.find(lanes);
  ASSERT_NE(at, std::string::npos) << text;
  text.insert(at + lanes.size(), ",\"lanes\":1");
  const auto file = d.write("twice.json", text);
  try {
    topo::Topology::load(file);
    FAIL() << "loaded a topology with a repeated key";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(file + ": links[0].lanes: the key \"lanes\" is given twice in this object"), std::string::npos) << e.what();
  }
  // Control: the same document without the repeat loads; an array of objects with the same
  // keys is fine.
  EXPECT_NO_THROW(topo::Topology::load(d.write("once.json", small().dump())));
  composim::testing::expect_cli_error("collective --bytes 1M --topology dgx-a100 --params " +
                                          d.write("p.json", R"({"params": {"collective.efficiency_LL128": 0.9, "collective.efficiency_LL128": 0.5}})"),
                                      "p.json: params.collective.efficiency_LL128: the key \"collective.efficiency_LL128\" is given twice");
}
