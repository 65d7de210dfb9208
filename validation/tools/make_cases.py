#!/usr/bin/env python3
"""Writes validation/cases/*.json: one case per measured source. The JSON files are what
`composim validate` reads; edit the cases here and re-run, so that the two stay the same
(`make_cases.py DIR` writes to DIR instead, e.g. to compare). Sources and commits are those
of ../shared/data/MANIFEST.csv and the rows' source_url columns."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(HERE), "cases")
HTA = ("facebookresearch/HolisticTraceAnalysis", "f4d0062c382f42bd8a74838bcdad1916c7d5d2da")
cases = []


def case(name, category, description, source, run, measured, tolerance, known_gap=None):
    c = {"name": name, "category": category, "description": description, "source": source, "run": run, "measured": measured,
         "tolerance": tolerance}
    if known_gap:
        c["known_gap"] = known_gap
    cases.append(c)


def replay(name, trace, repo, commit, hardware, topology, median_s, args=(), gap=None, desc=""):
    case(name, "self-replay", desc or f"Self-replay of a real PyTorch-profiler trace on the shipped topology closest to its hardware ({hardware}).",
         {"repository": repo, "path": trace.split("/", 1)[1], "commit": commit, "hardware": hardware,
          "figure": "median ProfilerStep duration (warm-up excluded), or the whole trace's span when it has no step marks"},
         {"kind": "replay", "topology": topology, "args": list(args)},
         {"kind": "trace-steps", "trace": "traces/" + trace, "median_step_s": median_s}, {"pct": 5}, gap)


replay("replay-hta-nccl-a100-2rank", "hta/nccl_parser_config/nccl_data.json.gz", *HTA, "A100 (rank 0 of 2, NCCL 2.17)", "dgx-a100", 0.222442)
replay("replay-hta-ns-v100", "hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", *HTA, "V100-SXM2-32GB", "dgx1-v100", 0.095697)
replay("replay-kineto-resnet50-v100-old-schema", "kineto_tb/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz", "pytorch/kineto",
       "be239c044d2f4b62982e1ff64144097acd69f59a", "V100-DGXS-32GB", "dgx1-v100", 0.176273)
replay("replay-hta-alexnet-a100", "hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz", *HTA, "A100", "dgx-a100", 42.931211)
replay("replay-hta-simple-add-a100", "hta/execution_trace/benchmark_simple_add_trace.json.gz", *HTA, "A100", "dgx-a100", 19.812186)
replay("replay-param-resnet-2080ti", "param/resnet_kineto.json.gz", "facebookresearch/param", "9b1946f62b67c5b9a0357803a02803ac4527b750",
       "GeForce RTX 2080 Ti (PCIe)", "pcie-8gpu-gen3", 16.16917)
replay("replay-tracelens-b200-8rank", "tracelens/b200/eager_trace.json.gz", "AMD-AGI/TraceLens", "4c20ff104877712c0ee94f8abe968ea6d5a47ec2",
       "B200 (rank 0 of 8, NCCL 2.27)", "dgx-a100", 0.084545,
       desc="Self-replay of a B200 trace (rank 0 of 8) replicated to 8 ranks; no B200 topology is shipped, so the DGX A100 one carries its collective.")
replay("replay-hta-sampled-2-ranks", "hta/trace_filter/sampled_rank-0.json.gz", *HTA, "not recorded (2 of 128 ranks, sampled)", "dgx-a100", 0.619271,
       args=["--trace", "{data}/traces/hta/trace_filter/sampled_rank-1.json.gz"],
       desc="Two sampled ranks of a 128-rank job replayed together (events missing on purpose); SendRecv kernels without sizes replay at their measured duration.")

NT = "measured/nccl_tests.csv"


def nccl(name, sid, url, hardware, topology, args, gap=None, target=10, note="", desc="", params=None):
    run = {"kind": "collective", "op": "all_reduce", "topology": topology, "args": args}
    if params:
        run["params"] = params  # a parameter file, relative to the case, applied after validate's --params
    case(name, "collective", desc or f"nccl-tests all_reduce_perf on {hardware}, emulated by `composim collective`." + (" " + note if note else ""),
         {"url": url, "table": "nccl-tests output, out-of-place columns (transcribed in measured/nccl_tests.csv)", "hardware": hardware},
         run,
         {"kind": "nccl-tests-csv", "file": NT, "source_id": sid}, {"busbw_pct": target, "time_pct_below_1MiB": 25}, gap)


LLM = "https://github.com/eugenesiow/LLM-Insights/blob/5aa5513ac34d0da5d0214e6939d06f77de00ab48/infrastructure/hardware/README.md"
nccl("nccl-dgxa100-4gpu-nvswitch", "llm_insights_dgxa100_4gpu_nvswitch", LLM, "DGX A100 640GB, GPUs 4-7 over NVSwitch, NCCL 2.16.2", "dgx-a100",
     ["--placement", "gpu4,gpu5,gpu6,gpu7"])
nccl("nccl-dgxa100-4gpu-p2p-disabled", "llm_insights_dgxa100_4gpu_p2pdisabled", LLM, "DGX A100, GPUs 4-7, NCCL_P2P_DISABLE=1", "dgx-a100",
     ["--placement", "gpu4,gpu5,gpu6,gpu7", "--p2p", "off"],
     note="Calibration point, not an independent check: collective.shm_transport_Bps is fitted to it.")
nccl("nccl-gcp-a3mega-2x8-h100", "gcp_a3mega_2x8_h100",
     "https://github.com/lessizzmore/create-a3mega-ztan-fork/blob/02dd8f455c43ced1cf442ef29334bda97149264b/ztan-NCCL-test-result",
     "2 nodes x 8 H100 80GB (GCP A3 Mega assumed: 8 x 200 Gb/s GPUDirect-TCPXO; the file does not state it)",
     "../topologies/gcp-a3mega-2x8-h100.json", ["--algo", "tree", "--proto", "Simple", "--nccl-buffsize", "8M"],
     target=20,
     desc="nccl-tests all_reduce_perf on 2 nodes x 8 H100 80GB (GCP A3 Mega assumed: 8 x 200 Gb/s GPUDirect-TCPXO; the file does not state it), "
          "emulated by `composim collective --algo tree --proto Simple --nccl-buffsize 8M`, GCP's TCPXO set-up as apple/axlearn copies it "
          "(axlearn/cloud/gcp/nccl/a3_mega): its guest config enforces NCCL_PROTO=Simple and NCCL_BUFFSIZE=8388608 (Simple until LL128 became "
          "GCP's default in May 2025, GoogleCloudPlatform/container-engine-accelerators gpudirect-tcpxo/README.md), and its tuner plugin's "
          "rules run all-reduce on 2 nodes x 8 GPUs as Tree/Simple at every size (tuner_config.txtpb); the file prints no NCCL version or date. "
          "One parameter is fitted to this source, on its latency-only sizes (8 B-4 KiB): the latency TCPXO's NCCL plugin adds to each network "
          "step (the topology's nccl_net_latency_s, 6.4 us); no size of 1 MiB and up was used. Each tree channel moves over each hop at "
          "most at NCCL's per-channel tree rate (perChMaxTreeBws, Hopper, 2 machines: 41.4 GB/s per searched channel, half per channel; "
          "collective::tree_channel_hop_max_Bps), which binds in the first chunk's trip up and down the tree (1-128 MiB); not fitted.")
nccl("nccl-h100-pcie-nvlink-pair", "issue_nccl-tests_194_h100pcie_nvlink_pair", "https://github.com/NVIDIA/nccl-tests/issues/194",
     "2x H100 PCIe joined by an NVLink bridge", "../topologies/h100-pcie-nvlink-pair.json", [],
     "measured 115-116 GB/s busbw is ~0.39 of the bridge's 300 GB/s per direction; composim predicts the NVLink payload rate. The "
     "bridge's 12 links are not the limit: Azure's health checks measure 256.6 GB/s one way in a P2P copy between 2 H100 NVL over them "
     "(NCv5, 12 of 18 NVLinks active; Azure/azurehpc-health-checks #162), and composim's p2p gives 251.0 GB/s on this topology")
nccl("nccl-4x4090-pcie-tinygrad-p2p", "issue_tinygrad_okm_36_4x4090_pcie", "https://github.com/tinygrad/open-gpu-kernel-modules/issues/36",
     "4x RTX 4090 on PCIe with tinygrad's P2P-enabling driver", "../topologies/amd-6x4090.json", ["--gpus", "4"],
     note="The source states the layout only as PCIe bus ids: modelled as root ports of one AMD CPU. Held out: "
          "pcie.link.efficiency (0.914) comes from NVIDIA/nvbandwidth #50 (6 x A6000 copies), not from this run.")
NCCL_1530 = "https://github.com/NVIDIA/nccl/issues/1530"
nccl("nccl-8x4090-pcie-small-tree", "issue_nccl_1530_8x4090_pcie_tree", NCCL_1530,
     "8x RTX 4090, PCIe only, NCCL_ALGO=TREE (8-byte all-reduce)", "../topologies/intel-2s-8x4090.json", ["--algo", "tree", "--p2p", "off"],
     desc="nccl-tests all_reduce_perf on 8x RTX 4090, PCIe only, NCCL_ALGO=TREE (8-byte all-reduce), emulated by `composim collective` on the two-socket layout the issue's bus IDs give (validation/topologies/intel-2s-8x4090.json). GeForce drivers disable PCIe P2P, so NCCL uses its SHM transport (--p2p off): the chain's steps each wait on their own hop through host memory, two of its 14 across the sockets.")
nccl("nccl-8x4090-pcie-small-ring", "issue_nccl_1530_8x4090_pcie_buffsize", NCCL_1530,
     "8x RTX 4090, PCIe only, default algorithm, NCCL_BUFFSIZE=8388608 (8-byte all-reduce)", "../topologies/intel-2s-8x4090.json",
     ["--p2p", "off", "--nccl-buffsize", "8M"],
     "the SHM transport's per-step wait: measured 42.14 us, composim 56.5 us (+34%). Each of the ring's 14 steps waits a read round trip of its hop through host memory (2.0 us within a socket, 4.2 us across; 4 of the 14 steps cross), on top of NCCL's 1.0 us per PCIe step; this host's steps cost about 2.5 us on average. The same wait gives 2 T4s across sockets 17.6 us where NVIDIA/nccl #428 measured 20.36 (-13.5%), so its size differs by host and one constant cannot fit both; none is refitted to either.",
     desc="nccl-tests all_reduce_perf on 8x RTX 4090, PCIe only, NCCL's default algorithm with NCCL_BUFFSIZE=8388608 (8-byte all-reduce: ring LL), emulated by `composim collective` on the two-socket layout the issue's bus IDs give (validation/topologies/intel-2s-8x4090.json). GeForce drivers disable PCIe P2P, so NCCL uses its SHM transport (--p2p off): the ring's 14 steps each wait on their own hop through host memory, 4 of them across the sockets.")
nccl("nccl-2x-t4-across-sockets", "issue_nccl_428_2xT4_sys", "https://github.com/NVIDIA/nccl/issues/428",
     "2x T4 on different CPU sockets (SYS), 8-byte all-reduce", "pcie-8gpu-gen3", ["--placement", "gpu0,gpu4"],
     note="A V100-PCIe server (pcie-8gpu-gen3) stands in for the T4 box: the same Gen3 socket split.")
nccl("rccl-2gpu-one-pcie-switch", "issue_rccl_362_2gpu_one_pcie_switch", "https://github.com/ROCm/rccl/issues/362",
     "two AMD GPUs behind one PCIe switch, RCCL (16 B - 4 KiB)", "composable-falcon4016", ["--placement", "gpu0,gpu1"],
     "the 4 KiB row: measured 43.4 us, a jump of 15 us from 2 KiB that RCCL's latency model (ring LL, 23.1 us + bytes / bandwidth) "
     "does not have; 16 B - 2 KiB are within 10-16% with RCCL's tables (84% with NCCL's). RCCL 2.8's tuner cuts the ring's bandwidth "
     "by its ringCorrectionFactor from exactly 4 KiB (x 0.25 for LL), and its tree LL time for 2 GPUs is 37.9 + 2 x 2.2 = 42.3 us + "
     "bytes / bandwidth, near the measurement; but with one channel at 12 GB/s (a Gen3 PCIe path) the tuner still picks ring LL "
     "(29.9 against 48.1 us), and would pick the tree only on a path under 0.63 GB/s. "
     "The channel count changes at 8 KiB (enqueue.cc's thread threshold), not 4 KiB. So no mechanism is modelled",
     params="../../models/params/rccl-2.8.json",
     desc="nccl-tests all_reduce_perf on two AMD GPUs behind one PCIe switch, RCCL (16 B - 4 KiB), emulated by `composim collective` "
          "with RCCL 2.8's latency tables (models/params/rccl-2.8.json) on two GPUs behind one switch of the Falcon 4016 chassis. The thread "
          "(May 2021) states neither the GPU model nor the RCCL version; 2.8's tables are assumed as those of RCCL at that date.")

for n in range(2, 9):
    fitted = (" Fitted to these sweeps (every 1 MiB step, all GPU counts but 5): the tuner's LL128/Simple switch"
              " (collective.base_latency_ring_LL128_s, collective.tuner_bandwidth_fraction_nvlink) and Simple's extra latency"
              " (collective.extra_latency_Simple_achieved_nvlink_gen2_s)")
    ll128 = ("; LL128's per-GPU rate and latency (collective.ll128_gpu_rate_nvlink_gen2_Bps,"
             " collective.extra_latency_LL128_achieved_nvlink_gen2_s) on 4, 7 and 8 GPUs.")
    held = " LL128's per-GPU rate and latency are fitted on 4, 7 and 8 GPUs: this source's LL128 points ({}) are held out."
    notes = {2: " Calibration point at 1 GiB: nvlink.payload_efficiency_gen2 is fitted to it." + fitted + ".",
             4: fitted + ll128, 7: fitted + ll128, 8: fitted + ll128, 3: fitted + "." + held.format("1 MiB"), 6: fitted + "." + held.format("1-3 MiB, in 1 MiB steps"),
             5: " GPUs 0-4 assumed (vTrain does not say which): GPU4's only NVLink peer is GPU0, so two hops of each ring go through GPU0"
                " (NCCL's P2P/indirect). Calibration point at 64 MiB-1 GiB: collective.efficiency_indirect_nvlink is fitted to it;"
                " the smaller sizes are predicted with it."}
    case(f"vtrain-v100-{n}gpu-allreduce", "collective",
         f"All-reduce on {n} V100s of one DGX-1-class server, 1 MiB-1 GiB (powers of two), as measured by vTrain." + notes.get(n, fitted + "."),
         {"repository": "VIA-Research/vTrain", "path": f"trace/v100/AR_GPU{n}_1M_1024M_LUT", "commit": "f8dda8473a48b373b1d25f51f52d685bff5150c5",
          "hardware": f"{n} V100 GPUs in one DGX-1-class server"},
         {"kind": "collective", "op": "all_reduce", "topology": "dgx1-v100", "args": ["--gpus", str(n)]},
         {"kind": "vtrain-lut", "file": f"measured/vtrain_v100_allreduce/AR_GPU{n}_1M_1024M_LUT"}, {"busbw_pct": 10, "time_pct_below_1MiB": 25})

P2P = "measured/p2p_bandwidth.csv"
for sid, url, hw, topo, args, test, gap in [
    ("issue_nccl_1264_8xh100sxm_p2p", "https://github.com/NVIDIA/nccl/issues/1264", "8x H100 SXM HGX (NVLink4, NVSwitch)",
     "../topologies/hgx-h100-1node.json", [], "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)",
     None),
    ("issue_nccl_1264_8xh100sxm_p2p", "https://github.com/NVIDIA/nccl/issues/1264", "8x H100 SXM HGX, P2P disabled",
     "../topologies/hgx-h100-1node.json", ["--p2p", "off"], "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)", None),
    ("issue_nccl_814_6x4090_p2p", "https://github.com/NVIDIA/nccl/issues/814", "6x RTX 4090 on an AMD CPU, P2P enabled",
     "../topologies/amd-6x4090.json", [], "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)",
     ("P2P through the AMD root complex measures ~10 GB/s, 0.39 of the link rate (26.3 GB/s); root-complex forwarding limits are not"
      " modelled, and this host's is not AMD's in general: 4 RTX 4090s on a host named 7773x (likely an AMD EPYC 7773X) reach 25.95 GB/s busbw over P2P"
      " (case nccl-4x4090-pcie-tinygrad-p2p, within 1.4% at the link rate)")),
    ("issue_nccl_814_6x4090_p2p", "https://github.com/NVIDIA/nccl/issues/814", "6x RTX 4090 on an AMD CPU, P2P disabled",
     "../topologies/amd-6x4090.json", ["--p2p", "off"], "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)", None)]:
    on = "Enabled" in test
    name = ("p2p-h100-hgx" if "1264" in sid else "p2p-4090-amd") + ("-enabled" if on else "-disabled")
    desc = f"p2pBandwidthLatencyTest unidirectional copy bandwidth between every GPU pair on {hw}, emulated by `composim p2p`."
    if name == "p2p-h100-hgx-enabled":
        desc += " Consistency check only: composim's NVLink payload efficiency is taken from this very measurement."
    if name == "p2p-h100-hgx-disabled":
        desc += (" One parameter is fitted to this source: the driver's hand-off between the two legs of a staged copy"
                 " (host.staged_copy_handoff_Bps, 126 GB/s), from the mean over its 56 pairs (37.1 GB/s on Gen5 x16 links"
                 " that allow 52.6).")
    if name == "p2p-4090-amd-disabled":
        desc += (" Held out: the staged-copy hand-off (host.staged_copy_handoff_Bps) is fitted to the 8 x H100 HGX matrix"
                 " (Gen5), not to this one (Gen4).")
    case(name, "p2p", desc, {"url": url, "table": test, "hardware": hw}, {"kind": "p2p", "topology": topo, "args": args},
         {"kind": "p2p-csv", "file": P2P, "source_id": sid, "test": test}, {"pct": 10}, gap)

os.makedirs(OUT, exist_ok=True)
for c in cases:
    with open(os.path.join(OUT, c["name"] + ".json"), "w") as f:
        json.dump(c, f, indent=1)
        f.write("\n")
print(f"wrote {len(cases)} cases to {OUT}")
