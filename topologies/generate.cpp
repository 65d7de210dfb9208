#include "topologies/generate.hpp"

#include <cstdio>

#include "models/error.hpp"
#include "models/gpu.hpp"

namespace composim::topo {

using nlohmann::json;

json generate_topology(const GenerateOptions& o) {
  auto fail = [](const std::string& what) { input_error("", "topology generate", what); };
  if (o.placement != "chassis" && o.placement != "in-host") fail("--placement must be chassis or in-host");
  if (o.name.empty()) fail("--name must not be empty");
  if (o.hosts < 1 || o.hosts > 64) fail("--hosts must be 1-64");
  if (o.gpus < 1 || o.gpus > 4096) fail("--gpus must be 1-4096");
  if (o.levels != 1 && o.levels != 2) fail("--levels must be 1 or 2");
  if (o.fanout < 1) fail("--fanout must be positive");
  if (o.cable != "copper" && o.cable != "optical") fail("--cable must be copper or optical");
  if (!(o.length_m >= 0) || o.length_m > 10000) fail("--length-m must be 0-10000");
  if (o.retimers < 0 || o.retimers > 8) fail("--retimers must be 0-8");
  if (o.compose_split < 0 || o.compose_split > o.gpus) fail("--compose-split must be 0..--gpus");
  if (o.compose_split > 1 && o.hosts < 2) fail("--compose-split needs --hosts 2 or more");
  if (o.placement == "in-host" && (o.hosts != 1 || o.compose_split > 0))
    fail("--placement in-host puts every GPU inside host0: it takes no --hosts or --compose-split");
  if (o.compose_split % 2) fail("--compose-split must be even (half of the GPUs on each host)");
  if (o.uplink_lanes != 1 && o.uplink_lanes != 2 && o.uplink_lanes != 4 && o.uplink_lanes != 8 && o.uplink_lanes != 16 && o.uplink_lanes != 32)
    fail("--uplink-lanes must be 1, 2, 4, 8, 16 or 32");
  if (!(o.host_nic_Gbps > 0)) fail("--host-nic-gbps must be positive");
  bool known = false;
  gpu::find_gpu_spec(o.gpu_model, &known);
  if (!known) fail("unknown GPU model \"" + o.gpu_model + "\" (known: " + gpu::known_gpu_models() + ")");
  const int gpu_gen = o.gpu_generation > 0 ? o.gpu_generation : gpu::find_gpu_spec(o.gpu_model).pcie_generation;
  json nodes = json::array(), links = json::array();
  auto pcie = [&](const std::string& a, const std::string& b, int gen, int lanes) {
    links.push_back({{"from", a}, {"to", b}, {"type", "pcie"}, {"generation", gen}, {"lanes", lanes}});
  };
  nodes.push_back({{"name", "eth0"}, {"type", "network_switch"}});
  for (int h = 0; h < o.hosts; ++h) {
    const std::string host = "host" + std::to_string(h);
    nodes.push_back({{"name", host}, {"type", "host"}});
    nodes.push_back({{"name", host + ".nic"}, {"type", "nic"}});
    pcie(host, host + ".nic", 4, 16);
    links.push_back({{"from", host + ".nic"}, {"to", "eth0"}, {"type", "ethernet"}, {"rate_Gbps", o.host_nic_Gbps}});
  }
  auto gpu_name = [](int i) { return "gpu" + std::to_string(i); };
  const int leaves = (o.gpus + o.fanout - 1) / o.fanout;
  if (o.placement == "in-host") {
    for (int l = 0; l < leaves; ++l) {
      const std::string sw = "host0.sw" + std::to_string(l);
      nodes.push_back({{"name", sw}, {"type", "pcie_switch"}, {"generation", o.switch_generation}});
      pcie("host0", sw, std::min(o.switch_generation, o.uplink_generation), 16);
    }
    for (int i = 0; i < o.gpus; ++i) {
      nodes.push_back({{"name", gpu_name(i)}, {"type", "gpu"}, {"model", o.gpu_model}, {"p2p", o.p2p}});
      pcie("host0.sw" + std::to_string(i / o.fanout), gpu_name(i), std::min(gpu_gen, o.switch_generation), 16);
    }
  } else {
    for (int h = 0; h < o.hosts; ++h) {
      const std::string top = "chassis_sw" + std::to_string(h), host = "host" + std::to_string(h);
      nodes.push_back({{"name", top}, {"type", "pcie_switch"}, {"generation", o.switch_generation}});
      // The host cable, through its retimers.
      std::string prev = host;
      const double segment = o.length_m / (o.retimers + 1);
      for (int r = 0; r <= o.retimers; ++r) {
        const std::string next = r == o.retimers ? top : host + ".retimer" + std::to_string(r);
        if (r < o.retimers) nodes.push_back({{"name", next}, {"type", "retimer"}});
        json l = {{"from", prev}, {"to", next}, {"type", "pcie"}, {"generation", o.uplink_generation}, {"lanes", o.uplink_lanes},
                  {"medium", o.cable}, {"length_m", segment}};
        if (r == 0) l["name"] = host + "-uplink";
        links.push_back(l);
        prev = next;
      }
      if (h > 0) pcie("chassis_sw" + std::to_string(h - 1), top, o.switch_generation, 16);
    }
    if (o.levels == 2) {
      for (int l = 0; l < leaves; ++l) {
        const std::string leaf = "leaf" + std::to_string(l);
        nodes.push_back({{"name", leaf}, {"type", "pcie_switch"}, {"generation", o.switch_generation}});
        pcie("chassis_sw" + std::to_string(l * o.hosts / leaves), leaf, o.switch_generation, 16);
      }
    }
    for (int i = 0; i < o.gpus; ++i) {
      nodes.push_back({{"name", gpu_name(i)}, {"type", "gpu"}, {"model", o.gpu_model}, {"p2p", o.p2p}});
      const std::string parent = o.levels == 2 ? "leaf" + std::to_string(i / o.fanout) : "chassis_sw" + std::to_string(i * o.hosts / o.gpus);
      pcie(parent, gpu_name(i), std::min(gpu_gen, o.switch_generation), 16);
    }
  }
  char desc[512];
  std::snprintf(desc, sizeof desc,
                "Generated composable system: %d GPU(s) (%s) %s, %d host(s), %s; host cables PCIe Gen%d x%d %s %.3g m with %d retimer(s); "
                "P2P %s.",
                o.gpus, o.gpu_model.c_str(), o.placement == "in-host" ? "inside host0" : "in a chassis", o.hosts,
                o.levels == 2 ? ("two switch levels, " + std::to_string(o.fanout) + " GPUs per leaf").c_str() : "one switch level",
                o.uplink_generation, o.uplink_lanes, o.cable.c_str(), o.length_m, o.retimers, o.p2p ? "on" : "off");
  json doc = {{"schema_version", 1},
              {"name", o.name},
              {"description", desc},
              {"sources", {"written by `composim topology generate`; every figure comes from the component models' cited defaults"}},
              {"p2p", o.p2p},
              {"fabric_p2p_across_hosts", o.fabric_p2p},
              {"nodes", nodes},
              {"links", links}};
  if (o.compose_split > 0) {
    json comp = json::object();
    const int half = o.compose_split / 2;
    for (int i = 0; i < o.compose_split; ++i) comp[i < half ? "host0" : "host1"].push_back(gpu_name(i));
    doc["composition"] = comp;
  }
  return doc;
}

}  // namespace composim::topo
