#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "models/error.hpp"
#include "test_util.hpp"
#include "topologies/routing.hpp"
#include "topologies/topology.hpp"
#include "models/nvlink.hpp"
#include "models/pcie.hpp"

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

  // Names are printed one per line in routes and errors.
  for (const char* bad : {"gpu\n1", "gpu\t1", ""}) {
    doc = small();
    doc["nodes"][3]["name"] = bad;
    EXPECT_NE(error_of(doc).find("nodes[3]: \"name\" must be a non-empty name without control characters"), std::string::npos) << error_of(doc);
  }
  // Link names too: links.csv prints them one per row.
  for (const char* bad : {"up\nlink", "up\x7f", ""}) {
    doc = small();
    doc["links"][1]["name"] = bad;
    EXPECT_NE(error_of(doc).find("links[1]: \"name\" must be a non-empty name without control characters"), std::string::npos) << error_of(doc);
  }

  doc = small();
  doc["links"][2]["bandwith_Bps"] = 1;
  EXPECT_NE(error_of(doc).find("links[2]: unknown key \"bandwith_Bps\""), std::string::npos) << error_of(doc);

  doc = small();
  doc["nodes"][0]["cpu_vendor"] = "AMD";
  EXPECT_NE(error_of(doc).find("nodes[0]: \"cpu_vendor\" must be \"intel\", \"amd\" or \"other\""), std::string::npos) << error_of(doc);

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
  doc["name"] = "";
  EXPECT_NE(error_of(doc).find("t.json: top level: \"name\" is empty"), std::string::npos) << error_of(doc);

  doc = small();
  doc["schema_version"] = 2;
  EXPECT_NE(error_of(doc).find("schema_version 2"), std::string::npos);

  // Across machines, a NIC without a network link: an error at load, not a route that fails
  // one way only (n1.gpu0 -> n0.gpu0 found no path to n0.nic0, every collective failed).
  doc = json::parse(std::ifstream(composim::testing::source_dir() + "/topologies/shipped/2x-dgx-a100-ib.json"));
  EXPECT_EQ(error_of(doc), "");
  auto& links = doc["links"];
  for (size_t i = 0; i < links.size(); ++i)
    if ((links[i]["from"] == "n0.nic0" || links[i]["to"] == "n0.nic0") && (links[i]["type"] == "infiniband" || links[i]["type"] == "ethernet"))
      links.erase(i--);
  EXPECT_NE(error_of(doc).find("t.json: node \"n0.nic0\": a NIC with no network link (ethernet or infiniband) in a topology of 2 machines"),
            std::string::npos)
      << error_of(doc);
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
  // A number no double holds is named by where it is, too (the parser gives no byte).
  composim::testing::expect_cli_error("collective --bytes 1M --topology dgx-a100 --params " +
                                          d.write("big.json", R"({"params": {"collective.efficiency_LL128": 1e400}})"),
                                      "big.json: params.collective.efficiency_LL128: unreadable JSON: ");
}

// A PCIe link trains at the lowest generation of its ends and at most a GPU's 16 lanes, as
// link training does (a V100 runs Gen3 in a Gen4 slot), and says so.
TEST(Topology, PcieLinksTrainAtWhatTheirEndsSupport) {
  const double gen4_x16 = 28.81 * 0.914, gen3_x16 = 14.40 * 0.914;  // TLP payload rate x pcie.link.efficiency, GB/s
  auto doc = small();
  doc["links"][1]["generation"] = 5;  // A100 (Gen4) under a Gen4 switch
  auto t = topo::Topology::parse(doc, "t.json");
  EXPECT_NEAR(t.links()[1].bandwidth_Bps / 1e9, gen4_x16, 0.01);
  EXPECT_EQ(t.links()[1].generation, 4);
  EXPECT_EQ(t.links()[1].trained, "written Gen5 x16, trains at Gen4 x16: sw0 is a Gen4 switch");

  doc = small();
  doc["links"][1]["lanes"] = 32;
  t = topo::Topology::parse(doc, "t.json");
  EXPECT_NEAR(t.links()[1].bandwidth_Bps / 1e9, gen4_x16, 0.01);
  EXPECT_EQ(t.links()[1].lanes, 16);

  doc = small();
  doc["nodes"][2]["model"] = "V100";
  t = topo::Topology::parse(doc, "t.json");
  EXPECT_NEAR(t.links()[1].bandwidth_Bps / 1e9, gen3_x16, 0.01);
  EXPECT_EQ(t.links()[1].trained, "written Gen4 x16, trains at Gen3 x16: gpu0 (V100) is Gen3 x16");
  EXPECT_TRUE(t.links()[0].trained.empty());  // cpu0-sw0: nothing below Gen4 there

  doc = small();
  doc["nodes"][1]["generation"] = 3;  // every link of a Gen3 switch runs Gen3
  t = topo::Topology::parse(doc, "t.json");
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(t.links()[i].bandwidth_Bps / 1e9, gen3_x16, 0.01) << i;
}

// NVLink only where the GPU has it: its generation, and no more links than it has.
TEST(Topology, NvlinkMatchesTheGpu) {
  auto with_nvlink = [](const char* model, int generation, int links) {
    auto doc = small();
    doc["nodes"][2]["model"] = model;
    doc["nodes"][3]["model"] = model;
    doc["links"].push_back({{"from", "gpu0"}, {"to", "gpu1"}, {"type", "nvlink"}, {"generation", generation}, {"links", links}});
    return doc;
  };
  EXPECT_EQ(error_of(with_nvlink("A100", 3, 12)), "");
  EXPECT_EQ(error_of(with_nvlink("RTX 4090", 3, 4)), "t.json: links[3]: NVLink at gpu0 (RTX 4090), which has no NVLink");
  EXPECT_EQ(error_of(with_nvlink("V100", 5, 6)), "t.json: links[3]: NVLink generation 5 at gpu0 (V100), whose NVLink is generation 2");
  EXPECT_EQ(error_of(with_nvlink("V100", 2, 18)), "t.json: links[3]: gpu0 (V100) has 6 NVLink links; its NVLink links add up to 18 here");
  // GA102's NVLink3 links run at 14.0625 GB/s per direction, not A100's 25 (the A6000 pair
  // ran 1.78 times too fast): 4 links, 56.25 GB/s of signalling, at NVLink3's payload share.
  const auto a6000 = topo::Topology::parse(with_nvlink("RTX A6000", 3, 4), "t.json");
  EXPECT_NEAR(a6000.links()[3].bandwidth_Bps, 4 * 14.0625e9 * nvlink::payload_bandwidth_Bps(3, 1) / 25e9, 1e3);
  EXPECT_NEAR(topo::Topology::parse(with_nvlink("A100", 3, 4), "t.json").links()[3].bandwidth_Bps, nvlink::payload_bandwidth_Bps(3, 4), 1e3);
}

// PCIe is a tree below each root complex: a loop of switches, a root complex reaching the
// same switches twice, or a GPU with two uplinks would make routes ambiguous (a loop through
// a slow link was taken as the route). Hosts cabled to several chassis switches (loops
// through two root complexes) and a NIC on two sockets (Socket Direct) are real systems.
TEST(Topology, PcieIsATreeBelowEachRootComplex) {
  auto doc = small();
  doc["nodes"].push_back({{"name", "sw1"}, {"type", "pcie_switch"}, {"generation", 4}});
  doc["links"].push_back({{"from", "sw0"}, {"to", "sw1"}, {"type", "pcie"}, {"generation", 4}, {"lanes", 16}});
  EXPECT_EQ(error_of(doc), "");
  auto through_host = doc;
  through_host["links"].push_back({{"from", "cpu0"}, {"to", "sw1"}, {"type", "pcie"}, {"generation", 1}, {"lanes", 1}});
  EXPECT_EQ(error_of(through_host), "t.json: links[4]: closes a loop of PCIe links through cpu0 (links[0] reaches the same switches): below a "
                                    "root complex PCIe is a tree, and a loop would make routes ambiguous");
  auto switches = doc;
  switches["nodes"].push_back({{"name", "sw2"}, {"type", "pcie_switch"}, {"generation", 4}});
  switches["links"].push_back({{"from", "sw1"}, {"to", "sw2"}, {"type", "pcie"}, {"generation", 4}, {"lanes", 16}});
  switches["links"].push_back({{"from", "sw2"}, {"to", "sw0"}, {"type", "pcie"}, {"generation", 4}, {"lanes", 16}});
  EXPECT_EQ(error_of(switches), "t.json: links[5]: closes a loop of PCIe links between switches (through sw2 and sw0): below the root "
                                "complexes PCIe is a tree, and a loop would make routes ambiguous");
  auto two_uplinks = doc;
  two_uplinks["links"].push_back({{"from", "sw1"}, {"to", "gpu0"}, {"type", "pcie"}, {"generation", 4}, {"lanes", 16}});
  EXPECT_EQ(error_of(two_uplinks), "t.json: links[4]: a second PCIe link at gpu0 (links[1] is the first): a GPU has one upstream port");

  // Two hosts, each cabled to both chassis switches; a NIC on both sockets.
  auto multi = small();
  multi["nodes"].push_back({{"name", "cpu1"}, {"type", "host"}});
  multi["nodes"].push_back({{"name", "sw1"}, {"type", "pcie_switch"}, {"generation", 4}});
  multi["nodes"].push_back({{"name", "nic0"}, {"type", "nic"}});
  for (const char* l : {R"({"from": "cpu1", "to": "sw0", "type": "pcie", "generation": 4, "lanes": 16})",
                        R"({"from": "cpu0", "to": "sw1", "type": "pcie", "generation": 4, "lanes": 16})",
                        R"({"from": "cpu1", "to": "sw1", "type": "pcie", "generation": 4, "lanes": 16})",
                        R"({"from": "cpu0", "to": "nic0", "type": "pcie", "generation": 4, "lanes": 8})",
                        R"({"from": "cpu1", "to": "nic0", "type": "pcie", "generation": 4, "lanes": 8})",
                        R"({"from": "cpu0", "to": "cpu1", "type": "cpu_interconnect", "bandwidth_Bps": 4e10})"})
    multi["links"].push_back(json::parse(l));
  EXPECT_EQ(error_of(multi), "");
}

// A switch whose generation the file does not state limits no link (its default, 3, sets
// its latency only).
TEST(Topology, UnstatedSwitchGenerationLimitsNoLink) {
  auto doc = small();
  doc["nodes"][1].erase("generation");
  const auto t = topo::Topology::parse(doc, "t.json");
  EXPECT_NEAR(t.links()[1].bandwidth_Bps / 1e9, 28.81 * 0.914, 0.01);
  EXPECT_TRUE(t.links()[1].trained.empty());
}

// Values no system has are typos: refused before they reach the engine, where 1e308 s of
// latency stalled a replay and an infinite link rate aborted SimGrid.
TEST(Topology, AbsurdValuesAreRefused) {
  auto doc = small();
  doc["nodes"][1]["latency_s"] = 1e308;
  EXPECT_EQ(error_of(doc), "t.json: nodes[1]: \"latency_s\" must be a number in [0, 1]");
  doc = small();
  doc["nodes"][0]["root_complex_latency_s"] = 2.0;
  EXPECT_EQ(error_of(doc), "t.json: nodes[0]: \"root_complex_latency_s\" must be a number in [0, 1]");
  doc = small();
  doc["nodes"].push_back({{"name", "nic0"}, {"type", "nic"}, {"nccl_net_latency_s", -1e-6}});
  doc["links"].push_back({{"from", "sw0"}, {"to", "nic0"}, {"type", "pcie"}, {"generation", 4}, {"lanes", 16}});
  EXPECT_EQ(error_of(doc), "t.json: nodes[4]: \"nccl_net_latency_s\" must be a number in [0, 1]");
  doc["nodes"][4]["nccl_net_latency_s"] = 6.4e-6;
  EXPECT_EQ(topo::Topology::parse(doc, "t.json").nodes()[4].nccl_net_latency_s, 6.4e-6);
  doc = small();
  doc["links"][2]["length_m"] = 1e308;
  EXPECT_EQ(error_of(doc), "t.json: links[2]: \"length_m\" must be a number in [0, 10000]");
  doc = small();
  doc["links"][1] = {{"from", "sw0"}, {"to", "gpu0"}, {"type", "optical"}, {"rate_Gbps", 1e308}, {"length_m", 1}};
  EXPECT_EQ(error_of(doc), "t.json: links[1]: \"rate_Gbps\" must be a number in [1e-09, 100000]");
  doc = small();
  doc["links"][1]["generation"] = 4294967300ll;  // get<int>() would read 4
  EXPECT_EQ(error_of(doc), "t.json: links[1]: \"generation\" must be an integer of at most 9 digits");
  // A max payload PCIe cannot encode (129 B was taken, and cut the rate to 24.28 GB/s).
  doc = small();
  doc["links"][1]["max_payload_B"] = 129;
  EXPECT_NE(error_of(doc).find("PCIe max payload 129 B is not one of 128, 256, 512, 1024, 2048, 4096"), std::string::npos) << error_of(doc);
  doc["links"][1]["max_payload_B"] = 512;
  EXPECT_NEAR(topo::Topology::parse(doc, "t.json").links()[1].bandwidth_Bps, pcie::link_bandwidth_Bps(4, 16, 512) * 0.914, 1e6);
}

// Over a long reach a PCIe link holds more in flight than 768 outstanding 512-byte reads
// (PCIe 10-bit tags) cover: a note says its modelled rate is an upper bound. Gen4 x16
// (26.33 GB/s) over fibre: 1000 m is a 10.06 us round trip (2 x (4.9 ns/m + 2 x 64 ns)), 259
// KiB in flight, under 384 KiB; 2000 m is 19.86 us, 511 KiB: noted, reads at 19.8 GB/s.
TEST(Topology, LongReachIsNoted) {
  auto doc = small();
  doc["links"][2]["length_m"] = 1000;
  EXPECT_TRUE(topo::long_reach_notes(topo::Topology::parse(doc, "t.json")).empty());
  doc["links"][2]["length_m"] = 2000;
  const auto notes = topo::long_reach_notes(topo::Topology::parse(doc, "t.json"));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].rfind("link sw0-gpu1 (2000 m): its 19.86 us round trip holds 511 KiB at its 26.33 GB/s", 0), 0u) << notes[0];
  EXPECT_NE(notes[0].find("(reads alone would reach about 19.80 GB/s)"), std::string::npos) << notes[0];
  // Reads cross the whole route: two 1000 m links in series (a retimer between them), each
  // under the window alone, make gpu1's route to cpu0 a 20.6 us round trip: noted once, as a
  // route.
  doc = small();
  doc["nodes"].push_back({{"name", "rt0"}, {"type", "retimer"}});
  doc["links"][2] = {{"from", "sw0"}, {"to", "rt0"}, {"type", "pcie"}, {"generation", 4}, {"lanes", 16}, {"medium", "optical"}, {"length_m", 1000}};
  doc["links"].push_back({{"from", "rt0"}, {"to", "gpu1"}, {"type", "pcie"}, {"generation", 4}, {"lanes", 16}, {"medium", "optical"}, {"length_m", 1000}});
  const auto series = topo::long_reach_notes(topo::Topology::parse(doc, "t.json"));
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].rfind("gpu1's route to cpu0: its ", 0), 0u) << series[0];
  for (const char* name : {"dgx-a100", "dgx1-v100", "pcie-8gpu-gen3", "composable-falcon4016", "2x-dgx-a100-ib", "2x-hgx-h100-ib"})
    EXPECT_TRUE(topo::long_reach_notes(topo::Topology::load(name)).empty()) << name;
}

// An optical link is PCIe over optics (generation and lanes: PCIe's rate and efficiency,
// PCIe's ends) or a line rate between network nodes, never two devices.
TEST(Topology, OpticalLinksAsPcieOrNetwork) {
  auto doc = small();
  doc["links"][1] = {{"from", "sw0"}, {"to", "gpu0"}, {"type", "optical"}, {"generation", 4}, {"lanes", 16}, {"length_m", 10}};
  auto t = topo::Topology::parse(doc, "t.json");
  EXPECT_DOUBLE_EQ(t.links()[1].bandwidth_Bps, t.links()[2].bandwidth_Bps);  // as "pcie" with "medium": "optical"
  EXPECT_DOUBLE_EQ(t.links()[1].latency_s, t.links()[2].latency_s);
  doc["links"].push_back({{"from", "gpu0"}, {"to", "gpu1"}, {"type", "optical"}, {"rate_Gbps", 800}, {"length_m", 5}});
  EXPECT_NE(error_of(doc).find("t.json: links[3]: optical link between a gpu and a gpu:"), std::string::npos) << error_of(doc);
  // A line rate to a GPU would bypass its PCIe generation: PCIe over optics gives one.
  doc = small();
  doc["links"][1] = {{"from", "sw0"}, {"to", "gpu0"}, {"type", "optical"}, {"rate_Gbps", 800}, {"length_m", 5}};
  EXPECT_NE(error_of(doc).find("an optical link given by rate_Gbps is a network link"), std::string::npos) << error_of(doc);
  // Both ways at once: the message says which to drop, not "unknown key".
  doc["links"][1]["generation"] = 4;
  EXPECT_EQ(error_of(doc),
            "t.json: links[1]: an optical link is given either by \"rate_Gbps\" (a network line rate) or by \"generation\" and "
            "\"lanes\" (PCIe over optics), not both: remove \"generation\" or \"rate_Gbps\"");
}
