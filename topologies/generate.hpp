// File: topologies/generate.hpp
//
// Parametric composable systems: writes a topology (topologies/SCHEMA.md) from a handful
// of parameters, so sweeps can vary the system. Every generated topology goes through the
// same validation as a hand-written one (Topology::parse).
//
//   placement "chassis": hosts cabled (copper or optical, with optional retimers) to a GPU
//     chassis: one top switch per host port, top switches chained, GPUs under the top
//     switches (levels = 1) or under leaf switches of `fanout` GPUs (levels = 2).
//   placement "in-host": the GPUs inside host0, behind host switches of `fanout` GPUs on its
//     root ports (no cable): the baseline a composable system is compared with.
// Each host has a NIC on an Ethernet switch for host-to-host traffic. `compose_split` > 0
// attaches the first half of that many GPUs to host0 and the rest to host1. In-host
// placement has no host cable: cable, length and retimer parameters do not apply to it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace composim::topo {

struct GenerateOptions {
  std::string name = "generated";
  std::string placement = "chassis";  // chassis | in-host
  int hosts = 1, gpus = 8, levels = 2, fanout = 4;
  int switch_generation = 4, uplink_generation = 4, uplink_lanes = 16, gpu_generation = 0;  // 0: the GPU model's
  std::string cable = "copper";  // copper | optical
  double length_m = 2;
  int retimers = 0;
  bool p2p = true, fabric_p2p = false;
  std::string gpu_model = "V100-PCIe-32GB";
  double host_nic_Gbps = 100;
  int compose_split = 0;
};

// The topology document; throws InputError for impossible parameters.
nlohmann::json generate_topology(const GenerateOptions& o);

}  // namespace composim::topo
