#!/usr/bin/env python3
"""Writes a multi-node GPU cluster topology (topologies/SCHEMA.md) for composim.

Each node is a DGX/HGX-style server: two CPU sockets joined by a socket interconnect,
four PCIe switches per node (two under each socket), each with two GPUs and two NICs
(GPUDirect RDMA through the switch), and all GPUs on one NVSwitch fabric. NIC k of every
node connects to rail k: a rail-optimised network. A rail is leaf switches of --leaf-ports
node-facing ports; the leaves of all rails meet on a spine layer (a two-level fat tree) of
--spine-taper times their down-facing bandwidth (1: full bisection, the default; 0.25: 4:1
oversubscribed; 0: no spine, a rail-only network, where traffic between rails goes through
a GPU on the peer's rail, as NCCL's PXN does).

  make_cluster.py --preset dgx-a100 --nodes 2 --out topologies/shipped/2x-dgx-a100-ib.json
  make_cluster.py --preset hgx-h100 --nodes 128 --leaf-ports 32 --out out/fat-tree-128x8.json
  make_cluster.py --preset dgx-a100 --nodes 2 --spine-taper 0 --out out/rail-only-2x8.json

Presets state their sources in the file they write.
"""
import argparse
import json

PRESETS = {
    "dgx-a100": dict(
        gpu="A100-SXM4-80GB", nvlink_gen=3, nvlinks=12, pcie_gen=4, nic_gbps=200, net="infiniband",
        mem_Bps=204.8e9, cpu_link_Bps=1e11, cpu_vendor="amd",
        sources=[
            "NVIDIA DGX A100 system architecture whitepaper (2020): 8x A100 SXM4, 12 NVLink3 links per GPU to six NVSwitches, four PCIe Gen4 switches each with two GPUs and two ConnectX-6 200 Gb/s HDR InfiniBand NICs, two AMD EPYC 7742 sockets (cpu_vendor amd)",
            "rail-optimised network: NIC k of every node on rail k (NVIDIA DGX SuperPOD reference architecture)",
            "assumptions: socket interconnect 100 GB/s (AMD gives no single figure); 8-channel DDR4-3200 = 204.8 GB/s per socket (JEDEC)",
        ]),
    "hgx-h100": dict(
        gpu="H100-SXM5-80GB", nvlink_gen=4, nvlinks=18, pcie_gen=5, nic_gbps=400, net="infiniband",
        mem_Bps=307.2e9, cpu_link_Bps=1e11, cpu_vendor="intel",
        sources=[
            "NVIDIA DGX H100 user guide / HGX H100 reference: 8x H100 SXM5, 18 NVLink4 links per GPU to four NVSwitches, PCIe Gen5 switches with ConnectX-7 400 Gb/s NDR InfiniBand NICs, one per GPU; two Intel Xeon Platinum 8480C sockets (cpu_vendor intel)",
            "rail-optimised network: NIC k of every node on rail k (NVIDIA DGX SuperPOD reference architecture)",
            "assumptions: socket interconnect 100 GB/s; 8-channel DDR5-4800 = 307.2 GB/s per socket (JEDEC)",
        ]),
    "a3mega-h100": dict(
        gpu="H100-SXM5-80GB", nvlink_gen=4, nvlinks=18, pcie_gen=5, nic_gbps=200, net="ethernet",
        mem_Bps=307.2e9, cpu_link_Bps=1e11, cpu_vendor="intel",
        sources=[
            "Google Cloud A3 Mega (a3-megagpu-8g) documentation: 8x H100 80GB on NVSwitch, 8x 200 Gb/s NICs for GPU traffic (GPUDirect-TCPXO); Intel Sapphire Rapids CPUs (cpu_vendor intel)",
            "what the measured source states (measured/raw/gcp_a3mega_2x8_h100.txt): 2 nodes x 8 H100 80GB; the interconnect is not in the file; the repository name indicates A3 Mega",
            "assumptions: one NIC per GPU under the GPU's PCIe switch, rail-optimised Ethernet",
            "fitted: the latency TCPXO's NCCL plugin adds to each network step (nccl_net_latency_s, 6.4 us; NCCL adds it twice per step in Simple), "
            "from the one measured source's latency-only sizes: nccl-tests all-reduce of 8 B-4 KiB on 2 x 8 GPUs takes a median 124.7 us "
            "against 99.05 us predicted without it, and a 2-node tree in Simple has 2 network steps: (124.7 - 99.05) / 4. "
            "No size of 1 MiB and up was used",
        ],
        nic=dict(nccl_net_latency_s=6.4e-6)),
}


def build(preset, nodes, leaf_ports, spine_taper=1.0):
    p = PRESETS[preset]
    n_, l_ = [], []
    for m in range(nodes):
        pre = f"n{m}." if nodes > 1 else ""
        for c in range(2):
            n_.append({"name": f"{pre}cpu{c}", "type": "host", "memory_bandwidth_Bps": p["mem_Bps"], "cpu_vendor": p["cpu_vendor"]})
        l_.append({"from": f"{pre}cpu0", "to": f"{pre}cpu1", "type": "cpu_interconnect", "bandwidth_Bps": p["cpu_link_Bps"]})
        n_.append({"name": f"{pre}nvswitch", "type": "nvswitch"})
        for s in range(4):
            n_.append({"name": f"{pre}sw{s}", "type": "pcie_switch", "generation": p["pcie_gen"]})
            l_.append({"from": f"{pre}cpu{s // 2}", "to": f"{pre}sw{s}", "type": "pcie", "generation": p["pcie_gen"], "lanes": 16})
            for k in range(2):
                g = 2 * s + k
                n_.append({"name": f"{pre}gpu{g}", "type": "gpu", "model": p["gpu"]})
                l_.append({"from": f"{pre}sw{s}", "to": f"{pre}gpu{g}", "type": "pcie", "generation": p["pcie_gen"], "lanes": 16})
                l_.append({"from": f"{pre}gpu{g}", "to": f"{pre}nvswitch", "type": "nvlink", "generation": p["nvlink_gen"], "links": p["nvlinks"]})
                n_.append({"name": f"{pre}nic{g}", "type": "nic", **p.get("nic", {})})
                l_.append({"from": f"{pre}sw{s}", "to": f"{pre}nic{g}", "type": "pcie", "generation": p["pcie_gen"], "lanes": 16})
    if nodes > 1:
        # Rails: nodes' NIC k on rail k. A rail is leaf switches of `leaf_ports` down-ports;
        # leaves of all rails meet on spine switches (full bisection: as many uplinks as downlinks).
        leaves_per_rail = max(1, -(-nodes // leaf_ports))
        for r in range(8):
            for lf in range(leaves_per_rail):
                n_.append({"name": f"rail{r}.leaf{lf}", "type": "network_switch"})
            for m in range(nodes):
                l_.append({"from": f"n{m}.nic{r}", "to": f"rail{r}.leaf{m // leaf_ports}", "type": p["net"], "rate_Gbps": p["nic_gbps"]})
        # The spine layer: as many uplinks per leaf as it has nodes below (full bisection).
        # Equal-cost paths over the spines are bundled into one link per leaf to a single
        # core node: perfect ECMP load balancing, which a single-path flow model cannot
        # otherwise express.
        if leaves_per_rail * 8 > 1 and spine_taper > 0:
            n_.append({"name": "core", "type": "network_switch",
                       "notes": "the spine switches of a two-level fat tree as one node; each leaf's uplinks bundled (perfect ECMP)"})
            for r in range(8):
                for lf in range(leaves_per_rail):
                    ports = min(leaf_ports, nodes - lf * leaf_ports)
                    rate = p["nic_gbps"] * ports * spine_taper
                    l_.append({"from": f"rail{r}.leaf{lf}", "to": "core", "type": p["net"], "rate_Gbps": int(rate) if float(rate).is_integer() else rate})
    spine = ("" if nodes == 1 else
             " of one switch per rail and no spine (rail-only)" if spine_taper == 0 else
             " of leaf switches and a full-bisection spine layer (two-level fat tree; the spines are one core node with "
             "bundled uplinks, i.e. perfect ECMP)" if spine_taper == 1 else
             f" of leaf switches and a spine layer of {spine_taper:g} times the leaves' down-facing bandwidth (two-level fat tree; "
             "the spines are one core node with bundled uplinks, i.e. perfect ECMP)")
    desc = (f"{nodes} x 8 {p['gpu']} ({preset} nodes): NVSwitch fabric inside a node, four PCIe Gen{p['pcie_gen']} switches per node "
            f"each with two GPUs and two {p['nic_gbps']} Gb/s NICs, rail-optimised {p['net']} network" + spine +
            ". Written by topologies/tools/make_cluster.py.")
    return {"schema_version": 1, "name": "", "description": desc, "sources": p["sources"], "nodes": n_, "links": l_}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", choices=sorted(PRESETS), required=True)
    ap.add_argument("--nodes", type=int, default=2)
    ap.add_argument("--leaf-ports", type=int, default=32, help="node-facing ports per rail leaf switch")
    ap.add_argument("--spine-taper", type=float, default=1.0,
                    help="spine bandwidth as a fraction of the leaves' down-facing bandwidth (1: full bisection; 0: rail-only, no spine)")
    ap.add_argument("--name", default=None)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.nodes < 1 or a.leaf_ports < 1:
        ap.error("--nodes and --leaf-ports must be positive")
    if not (0 <= a.spine_taper <= 1):
        ap.error("--spine-taper must be in [0, 1]")
    if a.spine_taper == 0 and a.nodes > a.leaf_ports:
        ap.error("--spine-taper 0 (rail-only) needs each rail in one leaf switch: --leaf-ports at least --nodes")
    doc = build(a.preset, a.nodes, a.leaf_ports, a.spine_taper)
    doc["name"] = a.name or a.out.rsplit("/", 1)[-1].removesuffix(".json")
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1 if a.nodes <= 4 else None)
        f.write("\n")


if __name__ == "__main__":
    main()
