// The collective planner and the nccl-tests emulation: rings packed on link capacities,
// trees across machines, rails, and the command's output against hand-computed times.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "models/network.hpp"
#include "models/nvlink.hpp"
#include "models/registry.hpp"
#include "sim/collectives.hpp"
#include "sim/nccl_tests.hpp"
#include "test_util.hpp"

using namespace composim;
using collective::Algorithm;
using collective::Kind;
using collective::Protocol;

using composim::testing::collective_csv_first_row;

namespace {
// Payload per wire byte of a network link (models/network.hpp): InfiniBand, RoCEv2.
constexpr double kIb = network::kInfinibandFraming, kRoce = network::kRoceFraming;
std::vector<int> gpus(const topo::Topology& t, int n) { return std::vector<int>(t.gpus().begin(), t.gpus().begin() + n); }

// Writes `nodes` machines of `preset` (topologies/tools/make_cluster.py) into `dir`; returns
// the file's path, or "" if the tool failed.
std::string make_cluster(const composim::testing::TempDir& dir, const std::string& preset, int nodes, const std::string& spine_taper = "1") {
  const std::string out = dir.path() + "/" + preset + "-" + std::to_string(nodes) + "-" + spine_taper + ".json";
  const std::string cmd = "/usr/bin/python3 " + composim::testing::source_dir() + "/topologies/tools/make_cluster.py --preset " + preset +
                          " --nodes " + std::to_string(nodes) + " --spine-taper " + spine_taper + " --out " + out + " > /dev/null";
  return std::system(cmd.c_str()) == 0 ? out : "";
}

// An all-reduce row's busbw as planned (collective.csv columns): the structure's bandwidth
// over the bytes its busiest link carries per bus byte (a hop through an intermediate GPU
// carries more of them than a direct one).
double planned_busbw(const std::vector<std::string>& f) {
  const double n = std::stod(f[1]), bus_bytes = 2 * (n - 1) / n * std::stod(f[2]);
  return std::stod(f[14]) * bus_bytes / std::stod(f[15]);
}

}  // namespace

TEST(NcclTests, SizesAndFactors) {
  EXPECT_DOUBLE_EQ(sim::parse_nccl_size("8"), 8);
  EXPECT_DOUBLE_EQ(sim::parse_nccl_size("64K"), 65536);
  EXPECT_DOUBLE_EQ(sim::parse_nccl_size("1G"), 1073741824);
  EXPECT_THROW(sim::parse_nccl_size("1X"), std::invalid_argument);
  // Whole numbers only, as nccl-tests reads them: no fraction, exponent or hex.
  for (const char* bad : {"8.5", "0x10", "1e3", "-8", " 8", "+8", "1.5M"}) EXPECT_THROW(sim::parse_nccl_size(bad), std::invalid_argument) << bad;
  EXPECT_DOUBLE_EQ(sim::parse_nccl_size("0016"), 16);
  auto r = sim::size_range("8:1G", 2);
  ASSERT_EQ(r.size(), 28u);  // 2^3 ... 2^30, as nccl-tests -b 8 -e 1G -f 2
  EXPECT_DOUBLE_EQ(r.back(), 1073741824);
  EXPECT_THROW(sim::size_range("1G:8", 2), std::invalid_argument);
  EXPECT_DOUBLE_EQ(sim::per_rank_input_B(Kind::all_gather, 8e6, 8), 1e6);
  EXPECT_DOUBLE_EQ(sim::per_rank_input_B(Kind::all_reduce, 8e6, 8), 8e6);
}

// The sizes a sweep simulates at once: the first size's child peak, scaled to the size with
// the most flows, 1.25 x that each within the memory left.
TEST(NcclTests, ParallelSizesAreBoundedByMemory) {
  constexpr double GiB = 1024.0 * 1024 * 1024;
  // 1 GiB for 100 flows; the sweep's largest size has 400: 4 GiB, 5 GiB with the margin.
  EXPECT_EQ(sim::sweep_jobs_for_memory(20 * GiB, 1 * GiB, 100, 400, 8), 4u);
  EXPECT_EQ(sim::sweep_jobs_for_memory(19.9 * GiB, 1 * GiB, 100, 400, 8), 3u);
  EXPECT_EQ(sim::sweep_jobs_for_memory(100 * GiB, 1 * GiB, 100, 400, 8), 8u);  // no more than asked
  EXPECT_EQ(sim::sweep_jobs_for_memory(1 * GiB, 1 * GiB, 100, 400, 8), 1u);    // never none
  EXPECT_EQ(sim::sweep_jobs_for_memory(0, 1 * GiB, 100, 400, 8), 8u);          // memory unknown
  EXPECT_EQ(sim::sweep_jobs_for_memory(20 * GiB, 0, 100, 400, 8), 8u);         // peak unknown
  EXPECT_EQ(sim::sweep_jobs_for_memory(20 * GiB, 1 * GiB, 0, 0, 0), 1u);       // degenerate counts
}

// A size's child that fails says why; running out of memory, or the kernel's killer, is a
// resource error ("composim: error: ..."), not an internal one.
TEST(NcclTests, FailedSizeSaysWhy) {
  bool oom = false;
  EXPECT_EQ(sim::describe_size_failure(1048576, 6 << 8, "", oom), "simulating size 1048576 B failed (out of memory; simulate fewer GPUs)");
  EXPECT_TRUE(oom);
  EXPECT_EQ(sim::describe_size_failure(8, SIGKILL, "", oom), "simulating size 8 B failed (killed: most likely out of memory; simulate fewer GPUs)");
  EXPECT_TRUE(oom);
  EXPECT_EQ(sim::describe_size_failure(8, SIGSEGV, "", oom), "simulating size 8 B failed (signal " + std::to_string(SIGSEGV) + ")");
  EXPECT_FALSE(oom);
  EXPECT_EQ(sim::describe_size_failure(8, 3 << 8, "no route from GPU 0 to GPU 1", oom), "simulating size 8 B failed: no route from GPU 0 to GPU 1");
  EXPECT_FALSE(oom);
}

// Every GPU of a DGX-1 has 6 NVLink2 links: the rings packed on them carry 6 links' worth
// of bandwidth (NCCL reaches ~134 GB/s busbw on 8 V100s, vTrain's measurement).
TEST(CollectivePlanner, RingsUseEveryNvlinkOfTheCubeMesh) {
  auto t = topo::Topology::load("dgx1-v100");
  sim::CollectivePlanner planner(t);
  auto p = planner.plan(Kind::all_reduce, 1 << 30, gpus(t, 8));
  EXPECT_EQ(p.algorithm, Algorithm::ring);
  EXPECT_EQ(p.protocol, Protocol::simple);
  EXPECT_EQ(p.link_class, collective::LinkClass::nvlink);
  EXPECT_NEAR(p.bandwidth_Bps, 6 * nvlink::payload_bandwidth_Bps(2, 1), 1e6);
  // 2 GPUs joined by one link: one ring per direction share... a single link's bandwidth.
  auto two = planner.plan(Kind::all_reduce, 1 << 30, gpus(t, 2));
  EXPECT_NEAR(two.bandwidth_Bps, nvlink::payload_bandwidth_Bps(2, 1), 1e6);
}

// NCCL gives every channel of a graph the same bandwidth, and takes NVLink-only rings
// (no hop through a GPU) whenever one exists. DGX-1, GPUs 0-5: GPU4's peers are GPU0 (2
// links) and GPU5 (1 link), so every direct ring crosses the single 4-5 link: 2 rings of
// one link (45.1 GB/s; vTrain measured 45.7), not the 3 that relaying through GPU0 would
// allow. GPUs 0-6: 4 rings of one link. GPUs 0-4: no direct ring exists (GPU4 has one
// peer), so rings relay through GPU0 (NCCL's NVB path).
TEST(CollectivePlanner, EqualChannelsAndDirectNvlinkFirst) {
  auto t = topo::Topology::load("dgx1-v100");
  sim::CollectivePlanner planner(t);
  const double link = nvlink::payload_bandwidth_Bps(2, 1);
  auto six = planner.plan(Kind::all_reduce, 1 << 30, gpus(t, 6));
  EXPECT_NEAR(six.bandwidth_Bps, 2 * link, 1e6);
  for (const auto& f : six.flows) EXPECT_FALSE(planner.route(f.src, f.dst).nvb);
  EXPECT_NEAR(planner.plan(Kind::all_reduce, 1 << 30, gpus(t, 7)).bandwidth_Bps, 4 * link, 1e6);
  auto five = planner.plan(Kind::all_reduce, 1 << 30, gpus(t, 5));
  EXPECT_NEAR(five.bandwidth_Bps, 2 * link, 1e6);
  bool relayed = false;
  for (const auto& f : five.flows) relayed = relayed || planner.route(f.src, f.dst).nvb;
  EXPECT_TRUE(relayed);
}

// 5 V100s: GPU4 reaches GPU3 only through GPU0 (NCCL's P2P/indirect). NCCL 2.12-2.17 do
// not enable LL128 on such rings, and the relayed hop moves 0.825 of a direct one, so at
// 1 GiB busbw is 2 links x 22.55 GB/s x 0.825 = 37.2 GB/s (vTrain measured 37.17).
TEST(CollectiveCommand, IndirectNvlinkHopsRunSlowerAndWithoutLl128) {
  auto t = topo::Topology::load("dgx1-v100");
  sim::CollectivePlanner planner(t);
  for (double mib : {1.0, 2.0, 4.0}) EXPECT_EQ(planner.plan(Kind::all_reduce, mib * 1048576, gpus(t, 5)).protocol, Protocol::simple) << mib;
  EXPECT_EQ(planner.plan(Kind::all_reduce, 2 * 1048576.0, gpus(t, 4)).protocol, Protocol::ll128);  // direct NVLink: LL128
  auto f = composim::testing::collective_row("--bytes 1G --gpus 5 --topology dgx1-v100");
  EXPECT_NEAR(std::stod(f[7]), 2 * nvlink::payload_bandwidth_Bps(2, 1) * 0.825 / 1e9, 0.002 * 37.2);
  EXPECT_NEAR(std::stod(f[7]), 37.17, 0.01 * 37.17);
}

// LL128 on V100: NCCL's tuner still picks it at 4 MiB on 8 GPUs (it assumes 0.92 of the
// link), but the flows run at LL128's wire efficiency (120/128), each GPU adds the bus bytes
// at its fitted LL128 rate (294 GB/s) and the fitted extra latency (23.3 us):
// t = 10 + 14 x 1.9 + 23.3 us + 2(n-1)/n S / (6 links x 120/128) + 2(n-1)/n S / 294 GB/s.
TEST(CollectivePlanner, Ll128RunsAtItsAchievedRateNotTheTunersEstimate) {
  auto t = topo::Topology::load("dgx1-v100");
  sim::CollectivePlanner planner(t);
  const double S = 4 << 20;
  auto p = planner.plan(Kind::all_reduce, S, gpus(t, 8));
  EXPECT_EQ(p.protocol, Protocol::ll128);
  const double ring = 6 * nvlink::payload_bandwidth_Bps(2, 1);
  // NCCL's latency (ring LL128 base 10 us, 14 steps of 1.9 us) plus V100's fitted 23.3 us.
  EXPECT_NEAR(p.latency_s, (10.0 + 14 * 1.9 + 23.3) * 1e-6, 1e-12);
  EXPECT_NEAR(p.processing_s, 1.75 * S / 294e9, 1e-12);
  // The tuner's view: NCCL's latency, LL128 at 0.92 of the links rated at 0.85.
  EXPECT_NEAR(p.estimated_s, (10.0 + 14 * 1.9) * 1e-6 + 1.75 * S / (ring * 0.85 * 0.92), 1e-9);
  auto f = composim::testing::collective_row("--bytes 4M --gpus 8 --topology dgx1-v100");
  EXPECT_EQ(f[9], "LL128");
  // NVLink hop latency (100 ns) on top; vTrain measured 150.9 us.
  const double t_us = (10.0 + 14 * 1.9 + 23.3 + 0.1) + (1.75 * S / (ring * 120 / 128) + 1.75 * S / 294e9) * 1e6;
  EXPECT_NEAR(std::stod(f[5]), t_us, 0.05);
  EXPECT_NEAR(std::stod(f[5]), 150.9, 0.10 * 150.9);
  EXPECT_NEAR(std::stod(f[18]), 1.75 * S / 294e9 * 1e6, 0.001);  // model_processing_us
  // A rate of 0 in a parameter file: no such term.
  composim::testing::TempDir d;
  const auto off = d.write("off.json", R"({"params": {"collective.ll128_gpu_rate_nvlink_gen2_Bps": 0}})");
  f = composim::testing::collective_row("--bytes 4M --gpus 8 --topology dgx1-v100 --params " + off);
  EXPECT_EQ(std::stod(f[18]), 0.0);
  EXPECT_NEAR(std::stod(f[5]), t_us - 1.75 * S / 294e9 * 1e6, 0.05);
  const auto negative = d.write("negative.json", R"({"params": {"collective.ll128_gpu_rate_nvlink_gen2_Bps": -1}})");
  auto r = composim::testing::run_cli("collective --bytes 4M --gpus 8 --topology dgx1-v100 --params " + negative);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("collective.ll128_gpu_rate_nvlink_gen2_Bps"), std::string::npos) << r.err;
  // Simple runs no such term; other GPU families have no measurement and none either.
  EXPECT_EQ(planner.plan(Kind::all_reduce, 64.0 * (1 << 20), gpus(t, 8)).processing_s, 0.0);
  EXPECT_EQ(collective::achieved_processing_s(Protocol::ll128, 4, 1e9), 0.0);
}

// The per-GPU LL128 rate is fitted on 4, 7 and 8 V100s; 3 and 6 V100s are held out. There
// a 2-ring structure reaches 0.85 of its links where 4 and 6 rings reach 0.61-0.67, which one
// link fraction could not fit (0.688 missed both by 13-14%). vTrain measured times (us);
// every 1 MiB step where NCCL ran LL128 (3 GPUs: 1 MiB; 6 GPUs: 1-3 MiB).
TEST(CollectivePlanner, Ll128OnHeldOutV100CountsWithinTenPercent) {
  struct Point { const char* args; double measured_us; };
  for (const Point& m : {Point{"--bytes 1M --gpus 3", 75.04}, Point{"--bytes 1M --gpus 6", 99.48}, Point{"--bytes 2M --gpus 6", 144.7},
                        Point{"--bytes 3M --gpus 6", 181.1}}) {
    auto f = composim::testing::collective_row(std::string(m.args) + " --topology dgx1-v100");
    EXPECT_EQ(f[9], "LL128") << m.args;
    EXPECT_NEAR(std::stod(f[5]), m.measured_us, 0.10 * m.measured_us) << m.args;
  }
}

// Where NCCL switched from LL128 to Simple on a DGX-1 (vTrain's all-reduce sweeps in 1 MiB
// steps: the time drops, or its slope changes, at the switch): the last LL128 size and the
// first Simple one, per GPU count.
TEST(CollectivePlanner, Ll128ToSimpleSwitchWhereNcclSwitchedOnV100) {
  auto t = topo::Topology::load("dgx1-v100");
  sim::CollectivePlanner planner(t);
  const std::vector<std::pair<int, int>> last_ll128_MiB = {{3, 1}, {4, 4}, {6, 3}, {7, 8}, {8, 13}};
  for (auto [n, last] : last_ll128_MiB) {
    EXPECT_EQ(planner.plan(Kind::all_reduce, last * 1048576.0, gpus(t, n)).protocol, Protocol::ll128) << n << " GPUs, " << last << " MiB";
    EXPECT_EQ(planner.plan(Kind::all_reduce, (last + 1) * 1048576.0, gpus(t, n)).protocol, Protocol::simple) << n << " GPUs, " << last + 1 << " MiB";
  }
}

// Simple on V100 runs 5 us above NCCL's latency model: 2 GPUs, 1 MiB measured 70.1 us.
TEST(CollectiveCommand, SimpleOnNvlink2AddsItsFittedLatency) {
  auto f = composim::testing::collective_row("--bytes 1M --gpus 2 --topology dgx1-v100");
  EXPECT_EQ(f[9], "Simple");
  // GPUs 0 and 1 share one NVLink: one ring over it (0->1 and 1->0) at the payload rate,
  // 2 steps of 1/2 MiB per rank; base 8.4 us + 2 x 3.4 us + 5.0 us + the hop's 0.1 us.
  const double us = 8.4 + 2 * 3.4 + 5.0 + 0.1 + 1048576.0 / nvlink::payload_bandwidth_Bps(2, 1) * 1e6;
  EXPECT_NEAR(std::stod(f[5]), us, 0.05);
  EXPECT_NEAR(std::stod(f[5]), 70.1, 0.10 * 70.1);
}

// P2P off: NCCL's SHM transport. Each GPU sends through host memory at 5.2 GB/s whatever
// PCIe allows, so a 4-GPU ring all-reduce has busbw 5.2 GB/s (DGX A100 measured 5.20).
TEST(CollectiveCommand, ShmTransportRate) {
  auto f = composim::testing::collective_row("--bytes 1G --topology dgx-a100 --placement gpu4,gpu5,gpu6,gpu7 --p2p off");
  const double expected_us = 1.5 * 1073741824.0 / 5.2e9 * 1e6 + collective::latency_s(Protocol::simple, collective::LinkClass::pcie, 6) * 1e6;
  EXPECT_NEAR(std::stod(f[5]), expected_us, 0.02 * expected_us);  // plus the staged routes' latencies
  EXPECT_NEAR(std::stod(f[7]), 5.2, 0.01);
  EXPECT_EQ(f[12], "pcie");
}

// NCCL's ring search knows links, not the SHM transport's rate: on 8 V100-PCIe over two
// sockets (P2P inside each socket's switch, SHM across) it finds one ring at the PCIe rate,
// so the two GPUs whose hops cross the sockets carry the whole ring through host memory:
// busbw 5.2 GB/s. A search that saw the rate spread the crossings over 5 rings: 13.0.
TEST(CollectiveCommand, ShmCrossingsAreNotSpreadOverRings) {
  auto f = composim::testing::collective_row("--bytes 1G --topology pcie-8gpu-gen3");
  EXPECT_NEAR(std::stod(f[7]), 5.2, 0.01);
  EXPECT_EQ(f[10], "1");  // channels
  EXPECT_EQ(f[21], "shm");  // model_bound_by
}

TEST(CollectivePlanner, NvswitchFabricAndPcieSwitch) {
  auto a100 = topo::Topology::load("dgx-a100");
  sim::CollectivePlanner pa(a100);
  auto p = pa.plan(Kind::all_reduce, 1 << 30, gpus(a100, 4));
  EXPECT_NEAR(p.bandwidth_Bps, nvlink::payload_bandwidth_Bps(3, 12), 1e6);  // each GPU's 12 links
  // Two V100s under one chassis leaf switch: one ring at the Gen3 x16 rate (14.40 GB/s of
  // TLP payload x pcie.link.efficiency 0.914), 2 flows.
  auto falcon = topo::Topology::load("composable-falcon4016");
  sim::CollectivePlanner pf(falcon);
  auto q = pf.plan(Kind::all_reduce, 64 << 20, gpus(falcon, 2));
  EXPECT_NEAR(q.bandwidth_Bps / 1e9, 13.16, 0.01);
  ASSERT_EQ(q.flows.size(), 2u);
  EXPECT_DOUBLE_EQ(q.flows[0].bytes, 64 << 20);  // 2(n-1)/n * S = S for n = 2
  EXPECT_DOUBLE_EQ(q.latency_s, collective::latency_s(Protocol::simple, collective::LinkClass::pcie, 2));
  // NCCL's tuner rates the Gen3 x16 link at its own 12 GB/s (topo.h PCI_BW), whatever the
  // link model's TLP overhead and efficiency.
  EXPECT_NEAR(q.estimated_s - q.latency_s, (64 << 20) / 12e9, 0.0005 * (64 << 20) / 12e9);  // 15.75 in the fraction, 15.754 in the link
}

TEST(CollectivePlanner, MultiNodeUsesEveryRailAndTrees) {
  auto t = topo::Topology::load("2x-hgx-h100-ib");
  sim::CollectivePlanner planner(t);
  auto route = planner.route(*t.find_node("n0.gpu3"), *t.find_node("n1.gpu3"));
  EXPECT_TRUE(route.network);
  std::string via;
  for (int n : route.transit) via += t.nodes()[n].name + " ";
  EXPECT_NE(via.find("n0.nic3"), std::string::npos) << via;  // its own NIC: rail 3
  EXPECT_NE(via.find("rail3.leaf0"), std::string::npos) << via;
  const double rails = 8 * 400e9 / 8 * kIb;  // 8 NICs of 400 Gb/s NDR
  auto tree = planner.plan(Kind::all_reduce, 1 << 30, t.gpus(), std::nullopt, Algorithm::tree);
  EXPECT_EQ(tree.algorithm, Algorithm::tree);
  // A tree's chain crosses a GPU's NVLink twice per direction (up and down) where the GPU is
  // inside the chain, once at its ends (the head sends up to its NIC, the tail has no one
  // below). Over the 8 channel pairs each GPU is head once, tail once, inside 6 times: its
  // port carries 14 channel-pair shares (each half the pair's bandwidth, times the twin),
  // so the trees are bound by NVLink (18 NVLink4 links x 8 / 14) before the 8 NICs.
  EXPECT_NEAR(tree.bandwidth_Bps, std::min(rails, nvlink::payload_bandwidth_Bps(4, 18) * 8 / 14), 1e6) << tree.channels;
  EXPECT_EQ(tree.channels, 16);  // NCCL's 8 searched tree channels, twice
  auto ring = planner.plan(Kind::all_reduce, 1 << 30, t.gpus(), std::nullopt, Algorithm::ring);
  EXPECT_EQ(ring.channels, 8);
  EXPECT_NEAR(ring.bandwidth_Bps, rails, 1e6);  // each ring crosses on its own rail
  // At 128 MiB over 128 nodes the tree's log-depth latency wins over the ring's 2(n-1) steps.
  auto big = topo::Topology::load(composim::testing::source_dir() + "/topologies/shipped/2x-dgx-a100-ib.json");
  sim::CollectivePlanner pb(big);
  EXPECT_EQ(pb.plan(Kind::all_reduce, 8 << 20, big.gpus()).link_class, collective::LinkClass::network);
}

// The same GPUs placed in mirror or interleaved order (gpu4-7 then gpu0-3, or the sockets
// alternating, of a two-socket PCIe box, P2P off) take as long as in node order, 8 bytes:
// NCCL's ring goes through its system order (GPUs grouped by socket and switch, in the order
// the ranks first reach them), whatever the rank order. Mirror: ring 4 5 6 7 0 1 2 3, whose
// chain from gpu4 crosses the sockets once, as from gpu0 (the first ring by node id, 4 0 1 2
// 3 5 6 7, crossed twice: 35.6 against 33.4 us). Interleaved: ring 0 1 2 3 4 5 6 7, two
// crossings; the rank order crossed at every hop (an all-reduce 87.2 against 65.2 us).
TEST(CollectiveCommand, MirrorAndInterleavedPlacementsTakeTheSameTime) {
  for (const char* op : {"broadcast", "reduce", "all_reduce"}) {
    const std::string base = std::string("--op ") + op + " --bytes 8 --topology pcie-8gpu-gen3 --p2p off --placement ";
    const auto a = composim::testing::collective_row(base + "gpu0,gpu1,gpu2,gpu3,gpu4,gpu5,gpu6,gpu7");
    const auto b = composim::testing::collective_row(base + "gpu4,gpu5,gpu6,gpu7,gpu0,gpu1,gpu2,gpu3");
    const auto c = composim::testing::collective_row(base + "gpu0,gpu4,gpu1,gpu5,gpu2,gpu6,gpu3,gpu7");
    const auto d = composim::testing::collective_row(base + "gpu4,gpu0,gpu5,gpu1,gpu6,gpu2,gpu7,gpu3");
    EXPECT_EQ(a.at(5), b.at(5)) << op;
    EXPECT_EQ(a.at(5), c.at(5)) << op;
    EXPECT_EQ(a.at(5), d.at(5)) << op;
  }
  EXPECT_NEAR(std::stod(composim::testing::collective_row("--op all_reduce --bytes 8 --topology pcie-8gpu-gen3 --p2p off").at(5)), 65.2, 0.05);
}

// All-to-all over 2 hosts of 4 GPUs each in one chassis, composed (host0=gpu0-3,
// host1=gpu8-11), 1 GiB: no NVLink, one NIC per host, so no GPU relays another's traffic
// (NCCL's PXN needs NVLink). S = 2^30, each GPU sends S/8 to each of 7 peers.
// - P2P off, 100 GbE: each NIC carries 4 GPUs x 4 remote peers x S/8 = 2S, at 100 Gb/s x
//   RoCE framing (12.25 GB/s): 177.2 ms (composim gave 251.7 ms when it relayed as PXN does).
// - P2P on, 400 GbE NICs: each host's x16 Gen4 uplink (26.33 GB/s) carries the same 2S:
//   81.6 ms (122.4 ms relayed, and 102.0 with one aggregated flow per GPU for its remote
//   peers, which got one flow's share of the GPU's link against its 3 local flows).
TEST(CollectiveCommand, AllToAllAcrossComposedHostsIsNotRelayed) {
  const double S = 1073741824.0;
  const std::string compose = " --compose host0=gpu0-3,host1=gpu8-11";
  auto off = composim::testing::collective_row("--op all_to_all --bytes 1G --topology composable-falcon4016 --p2p off" + compose);
  EXPECT_NEAR(std::stod(off.at(5)), 2 * S / (100e9 / 8 * kRoce) * 1e6, 50) << off.at(5);  // + ~21 us of latency
  composim::testing::TempDir d;
  auto doc = nlohmann::json::parse(std::ifstream(composim::testing::source_dir() + "/topologies/shipped/composable-falcon4016.json"));
  for (auto& l : doc["links"])
    if (l.value("type", "") == "ethernet") l["rate_Gbps"] = 400;
  const std::string nic400 = d.path() + "/nic400.json";
  std::ofstream(nic400) << doc.dump();
  auto on = composim::testing::collective_row("--op all_to_all --bytes 1G --topology " + nic400 + compose);
  const double uplink_Bps = 16 * 16e9 / 8 * (128.0 / 130.0) * (256.0 / 280.0) * 0.914;  // x16 Gen4, pcie.link.efficiency
  EXPECT_NEAR(std::stod(on.at(5)), 2 * S / uplink_Bps * 1e6, 0.005 * 2 * S / uplink_Bps * 1e6) << on.at(5);
}

// LL128 across machines needs every ring GPU to reach its NIC without crossing a CPU (NCCL's
// typeInter <= PATH_PXB). One A100 per host of the chassis reaches its host's NIC through
// the host: NCCL keeps LL and Simple (composim took LL128 from 64 to 512 KiB: 36.2 us at 128
// KiB where LL takes 55.0). Two DGX A100s, each GPU with its NIC under its own PCIe switch,
// keep LL128, also on a tree, and on a ring whose GPUs include ones that would relay (PXN)
// to reach their rail: NCCL takes the GPUs nearest the NICs as those that leave a machine
// (a first rule, from the ring's own exits, made the tree 4 MiB 81.9 -> 405.2 us Simple).
TEST(CollectiveCommand, Ll128AcrossMachinesNeedsNicsBehindSwitches) {
  EXPECT_EQ(composim::testing::collective_row("--bytes 4M --algo tree --topology 2x-dgx-a100-ib --placement "
                                              "n0.gpu0,n0.gpu2,n0.gpu4,n0.gpu6,n1.gpu0,n1.gpu2,n1.gpu4,n1.gpu6")
                .at(9),
            "LL128");
  EXPECT_EQ(composim::testing::collective_row("--bytes 1M --algo ring --topology 2x-dgx-a100-ib --placement "
                                              "n0.gpu6,n0.gpu1,n0.gpu0,n1.gpu6,n1.gpu1,n1.gpu0")
                .at(9),
            "LL128");
  for (const char* size : {"64K", "128K", "256K", "512K"}) {
    const auto r = composim::testing::collective_row(std::string("--op all_reduce --bytes ") + size +
                                                     " --topology composable-falcon4016 --compose host0=gpu0,host1=gpu8");
    EXPECT_NE(r.at(9), "LL128") << size;
  }
  bool ll128 = false;
  for (const char* size : {"64K", "256K", "1M", "4M"})
    ll128 = ll128 || composim::testing::collective_row(std::string("--op all_reduce --bytes ") + size + " --topology 2x-dgx-a100-ib").at(9) == "LL128";
  EXPECT_TRUE(ll128);
}

// End to end through the command: two GPUs under one switch, 256 MiB, ring/Simple forced:
// time = S / (14.40 GB/s x 0.914, pcie.link.efficiency) + the switch (105 ns) +
// NCCL's ring latency for 2 steps.
TEST(CollectiveCommand, HandComputedTime) {
  composim::testing::TempDir d;
  auto r = composim::testing::run_cli("collective --op all_reduce --bytes 256M --gpus 2 --topology composable-falcon4016 --algo ring "
                                      "--proto Simple --out " + d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("# Avg bus bandwidth"), std::string::npos) << r.out;
  std::ifstream csv(d.path() + "/collective.csv");
  std::string header;
  std::getline(csv, header);
  EXPECT_EQ(header.rfind("op,gpus,size_B,count,type,time_us,algbw_GBps,busbw_GBps,algorithm,protocol,channels,flows,", 0), 0u) << header;
  const double bw = 16 * 8e9 / 8 * (128.0 / 130.0) * (256.0 / 280.0) * 0.914;
  const double expected_us = (268435456.0 / bw + 105e-9 + collective::latency_s(Protocol::simple, collective::LinkClass::pcie, 2)) * 1e6;
  const auto f = collective_csv_first_row(d.path());
  ASSERT_EQ(f.size(), 22u);
  EXPECT_NEAR(std::stod(f[5]), expected_us, 0.05);
  EXPECT_NEAR(std::stod(f[7]), 268435456.0 / (expected_us * 1e-6) / 1e9, 0.01);  // busbw = algbw for n = 2
}

// Point-to-point: LL up to and including NCCL_P2P_LL_THRESHOLD (16 KiB per peer), Simple
// above (NCCL: `bytes <= ncclParamP2pLLThreshold()`).
TEST(CollectiveCommand, PointToPointLlUpToSixteenKiBPerPeer) {
  auto proto = [](const std::string& args) { return composim::testing::collective_row(args + " --topology dgx-a100").at(9); };
  EXPECT_EQ(proto("--op send_recv --bytes 16K"), "LL");
  EXPECT_EQ(proto("--op send_recv --bytes 16400"), "Simple");
  EXPECT_EQ(proto("--op all_to_all --bytes 128K"), "LL");  // 8 GPUs: 16 KiB per peer
  EXPECT_EQ(proto("--op all_to_all --bytes 131200"), "Simple");
}

// Across machines NCCL's point-to-point has no LL buffer (NCCL_ALLOC_P2P_NET_LL_BUFFERS=0),
// so even 1 KiB runs Simple: NCCL's Simple latency for one network step, plus the route's
// few microseconds of links and 1 KiB at the NIC's rate.
TEST(CollectiveCommand, PointToPointAcrossMachinesIsSimple) {
  const double simple_us = collective::latency_s(Protocol::simple, collective::LinkClass::network, 1) * 1e6;
  for (const char* op : {"send_recv", "all_to_all"}) {
    const auto f = composim::testing::collective_row(std::string("--op ") + op + " --bytes 1K --topology 2x-dgx-a100-ib");
    EXPECT_EQ(f.at(9), "Simple") << op;
    EXPECT_GT(std::stod(f.at(5)), simple_us) << op;
    EXPECT_LT(std::stod(f.at(5)), simple_us + 2.0) << op;
  }
  // Inside one machine the same sizes stay LL.
  EXPECT_EQ(composim::testing::collective_row("--op send_recv --bytes 1K --topology dgx-a100").at(9), "LL");
}

// NCCL_PROTO and NCCL_ALGO do not apply to point-to-point operations: naming one is refused
// (LL128 has no point-to-point kernel at all).
TEST(CollectiveCommand, PointToPointRefusesProtoAndAlgo) {
  composim::testing::expect_cli_error("collective --op send_recv --proto LL128 --bytes 1G --topology dgx-a100",
                                      "--proto: send_recv is a point-to-point operation");
  composim::testing::expect_cli_error("collective --op all_to_all --proto LL --bytes 1G --topology dgx-a100",
                                      "--proto: all_to_all is a point-to-point operation");
  composim::testing::expect_cli_error("collective --op all_to_all --algo ring --bytes 1G --topology dgx-a100",
                                      "--algo: all_to_all is a point-to-point operation");
}

// Errors name the option the user gave.
TEST(CollectiveCommand, BadInputNamesTheOptionGiven) {
  composim::testing::expect_cli_error("collective --step-factor nan --topology dgx-a100", "--step-factor: expected a decimal number, got \"nan\"");
  composim::testing::expect_cli_error("collective --step-factor 2abc --topology dgx-a100", "--step-factor: expected a decimal number, got \"2abc\"");
  composim::testing::expect_cli_error("collective --step-factor 0x10 --topology dgx-a100", "--step-factor: expected a decimal number, got \"0x10\"");
  composim::testing::expect_cli_error("collective --step-factor ' 2' --topology dgx-a100", "--step-factor: expected a decimal number, got \" 2\"");
  // A factor close to 1 gives sizes that round to the same whole elements: one row each.
  auto r = composim::testing::run_cli("collective --bytes 8:64 --step-factor 1.0001 --gpus 2 --topology dgx-a100");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  int rows = 0;
  std::istringstream lines(r.out);
  for (std::string l; std::getline(lines, l);) rows += !l.empty() && l[0] != '#';
  EXPECT_EQ(rows, 15);  // 8, 12, ..., 64 B: 15 sizes of whole floats
  composim::testing::expect_cli_error("collective --placement gpu0 --topology dgx-a100", "--placement: a collective needs at least 2 GPUs");
  composim::testing::expect_cli_error("p2p --placement gpu0 --topology dgx-a100", "--placement: the copy matrix needs at least 2 GPUs");
  composim::testing::expect_cli_error("collective --bytes 8.5 --topology dgx-a100", "--bytes: cannot read size \"8.5\"");
}

// Sizes composim would take hours or all memory on are refused before they start: an
// all-to-all of more than 316 GPUs in one machine (100,000 pairwise flows: 400 GPUs took 4
// minutes per size, 1,000 hours), a copy matrix of more than 1,024 GPUs (2,000 ran out of
// memory). Running out of memory anyway is an error that says so, not an internal error.
TEST(CollectiveCommand, UnworkableSizesAreRefusedUpFront) {
  composim::testing::TempDir d;
  const std::string topo = d.path() + "/g.json";
  ASSERT_EQ(composim::testing::run_cli("topology generate --gpus 1100 --levels 2 --fanout 32 --out " + topo).exit_code, 0);
  composim::testing::expect_cli_error("collective --op all_to_all --bytes 1M --gpus 317 --topology " + topo,
                                      "all_to_all: 317 GPUs in one machine are 100172 pairwise flows, more than composim simulates (100,000: up to 316 GPUs");
  composim::testing::expect_cli_error("p2p --gpus 1025 --topology " + topo,
                                      "--gpus: 1025 GPUs are 1049600 copies; the copy matrix takes at most 1024 GPUs");
  const std::string cmd = "(ulimit -v 700000; " + std::string(COMPOSIM_BINARY) + " p2p --gpus 1024 --topology " + topo + ") >/dev/null 2>" + d.path() + "/err";
  const int status = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  std::ifstream err(d.path() + "/err");
  const std::string text((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("composim: error: out of memory"), std::string::npos) << text;
}

// A parameter file's LL efficiency of 1 gives all-gather (x 4/3) an efficiency of 1, not
// 1.33: busbw reaches the Gen3 x16 link's 13.16 GB/s and never passes it.
TEST(CollectiveCommand, LlEfficiencyNeverAboveOne) {
  composim::testing::TempDir d;
  const auto full = d.write("full.json", R"({"params": {"collective.efficiency_LL_allreduce": 1}})");
  const auto f = composim::testing::collective_row("--op all_gather --proto LL --bytes 1G --gpus 2 --topology pcie-8gpu-gen3 --params " + full);
  EXPECT_LE(std::stod(f[7]), 13.17);
  EXPECT_GT(std::stod(f[7]), 13.0);
}

// all_to_all over 2 nodes x 8: each GPU sends half its buffer off-node through its own
// 400 Gb/s NIC, so the NICs bound the time: (S/2) / 48.48 GB/s.
TEST(CollectiveCommand, AllToAllAcrossNodesIsNicBound) {
  auto f = composim::testing::collective_row("--op all_to_all --bytes 1G --topology 2x-hgx-h100-ib");
  const double nic = 400e9 / 8 * kIb;
  EXPECT_NEAR(std::stod(f[5]) * 1e-6, (1073741824.0 / 2) / nic, 1e-4);
  // The model columns say the same: the whole buffer at the bandwidth the NICs allow it.
  EXPECT_NEAR(std::stod(f[14]) * 1e9, 2 * nic, 1e-6 * nic);
  EXPECT_NEAR(std::stod(f[15]), 1073741824.0, 100);  // the CSV gives 9 digits
}

// NCCL's caps, in the flows as in the tuner. 2 x 8 H100, Intel hosts: a ring in LL moves at
// most 39 GB/s busbw (llMaxBws, 2 machines) whatever the 8 x 400 Gb/s rails allow. NCCL's
// latency: of the ring's 30 steps, 2 x 2 cross the network (2.7 us each) and 26 are NVLink
// (0.47 us, x 1.8 for LL across machines): t = 3.6 + 26 x 0.846 + 4 x 2.7 us
// + 2 x 15/16 x 64 MiB / 39 GB/s. A tree reaches 0.92 of its bandwidth, and in Simple adds
// its pipeline fill: t = latency + fill + 8 GiB / (tree
// bandwidth x 0.92), with 2 x (7 + 1) steps at NCCL's 28 us less the 256 KiB / 12 GB/s
// chunk NCCL's tuner folds into each.
TEST(CollectiveCommand, LlCapAndTreeEfficiency) {
  composim::testing::TempDir d;
  auto r = composim::testing::run_cli("collective --bytes 64M --topology 2x-hgx-h100-ib --algo ring --proto LL --out " + d.path() + "/ll");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto f = collective_csv_first_row(d.path() + "/ll");
  ASSERT_EQ(f.size(), 22u);
  const double lat_us = 3.6 + 26 * 0.47 * 1.8 + 4 * 2.7;
  const double ll_us = lat_us + 2.0 * 15 / 16 * 67108864.0 / 39e9 * 1e6;
  EXPECT_NEAR(std::stod(f[16]), lat_us, 0.01);
  EXPECT_NEAR(std::stod(f[5]), ll_us, 0.0005 * ll_us);  // + the links' few us of latency
  EXPECT_NEAR(std::stod(f[7]), 39.0 * (ll_us - lat_us) / ll_us, 0.05);  // busbw: the cap, less the latency's share
  r = composim::testing::run_cli("collective --bytes 8G --topology 2x-hgx-h100-ib --algo tree --proto Simple --out " + d.path() + "/tree");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  f = collective_csv_first_row(d.path() + "/tree");
  const double tree_lat_us = 16 * (28.0 - 262144.0 / 12e9 * 1e6);  // 98.47 us
  const double tree_Bps = std::stod(f[14]) * 1e9, fill_us = std::stod(f[19]);
  EXPECT_NEAR(std::stod(f[16]), tree_lat_us, 0.001);
  EXPECT_GT(fill_us, 0.0);  // its value: TreePipelineFill
  const double tree_us = tree_lat_us + fill_us + 8589934592.0 / (tree_Bps * 0.92) * 1e6;
  EXPECT_NEAR(std::stod(f[5]), tree_us, 0.001 * tree_us);
}

// A tree in Simple pipelines chunks of NCCL_BUFFSIZE / 8 per channel (a channel whose share
// is smaller moves it whole) through its hops up and down; the flows account for one chunk
// time at the trees' bottleneck, the fill for the rest of the first chunk's trip. 2 x 2 of
// the A3 Mega's H100s (200 Gb/s rails, 24.24 GB/s): 2 searched channels, one per rail, each
// run twice (NCCL's ncclTopoPostset), the copy on the mirrored tree: 4 tree channels. Tree 0
// climbs n1.gpu1 -> n1.gpu0 -> (rail 0) -> n0.gpu0 and comes back down; its copy crosses
// rail 0 the other way, and tree 1 and its copy do the same on rail 1. Each hop moves at one
// channel's share of its route among the channels whose hops of the same phase cross it (a
// GPU's NVLink, 376.6 GB/s, carries the up hops of one chain in both orientations, 2
// channels; a NIC, per direction, one channel's), but no faster than NCCL's per-channel
// tree rate across machines: Hopper, 2 machines, 41.4 GB/s per searched channel, half per
// channel, achieved, so 41.4 / 2 / 0.92 = 22.5 GB/s of payload, below both shares (188.3
// and 24.24 GB/s). Trip per chunk byte: 4 / 22.5 GB/s; less one chunk time at 4 channels on
// 2 x 24.24 GB/s: fill = chunk x (4 / 22.5 GB/s - 4 / (2 x NIC)) / 0.92.
// The NICs state TCPXO's plugin latency (6.4 us), on each of the 2 network steps, twice in
// Simple: latency = 4 x (28 - 262144 / 12 GB/s) + 2 x 2 x 6.4 us.
TEST(CollectiveCommand, TreePipelineFill) {
  const std::string a3 = "--topology " + composim::testing::source_dir() + "/validation/topologies/gcp-a3mega-2x8-h100.json " +
                         "--placement n0.gpu0,n0.gpu1,n1.gpu0,n1.gpu1 --algo tree";
  const std::string simple = a3 + " --proto Simple";
  const double nvlink = nvlink::payload_bandwidth_Bps(4, 18), nic = 200e9 / 8 * kRoce;
  const double hop = std::min({41.4e9 / 2 / 0.92, nvlink / 2, nic});
  EXPECT_DOUBLE_EQ(hop, 22.5e9);
  auto fill_us = [&](double chunk_B) { return chunk_B * (4 / hop - 4 / (2 * nic)) / 0.92 * 1e6; };
  auto f = composim::testing::collective_row("--bytes 1M " + simple);
  ASSERT_EQ(f[8], "TREE");
  EXPECT_EQ(f[10], "4");
  EXPECT_NEAR(std::stod(f[14]) * 1e9, 2 * nic, 1e3);
  EXPECT_NEAR(std::stod(f[19]), fill_us(262144.0), 0.001);  // each channel's 256 KiB share
  EXPECT_NEAR(std::stod(f[16]), 4 * (28.0 - 262144.0 / 12e9 * 1e6) + 2 * 2 * 6.4, 0.001);
  auto g = composim::testing::collective_row("--bytes 64M " + simple);
  EXPECT_NEAR(std::stod(g[19]), fill_us(524288.0), 0.001);  // 4 MiB buffer
  auto h = composim::testing::collective_row("--bytes 64M --nccl-buffsize 8M " + simple);
  EXPECT_NEAR(std::stod(h[19]), fill_us(1048576.0), 0.001);
  EXPECT_NEAR(std::stod(h[5]) - std::stod(g[5]), std::stod(h[19]) - std::stod(g[19]), 0.01);  // only the fill differs
  // In LL the plugin's latency counts once per network step.
  auto ll = composim::testing::collective_row("--bytes 1M " + a3 + " --proto LL");
  auto ll0 = composim::testing::collective_row("--bytes 1M --topology 2x-hgx-h100-ib --placement n0.gpu0,n0.gpu1,n1.gpu0,n1.gpu1 --algo tree --proto LL");
  EXPECT_NEAR(std::stod(ll[16]) - std::stod(ll0[16]), 2 * 6.4, 0.001);
  // `composim topology` shows it.
  auto listing = composim::testing::run_cli("topology " + composim::testing::source_dir() + "/validation/topologies/gcp-a3mega-2x8-h100.json");
  EXPECT_NE(listing.out.find("  n1.nic7        nic                  latency 0.000 us, NCCL net plugin latency 6.400 us\n"), std::string::npos);
  // Rings and other protocols have no such term; NCCL's tuner does not see it.
  EXPECT_EQ(std::stod(composim::testing::collective_row("--bytes 64M --topology 2x-hgx-h100-ib --algo ring --proto Simple")[19]), 0.0);
  EXPECT_EQ(std::stod(composim::testing::collective_row("--bytes 64M --topology 2x-hgx-h100-ib --algo tree --proto LL128")[19]), 0.0);
  EXPECT_EQ(composim::testing::collective_row("--bytes 1M --topology 2x-hgx-h100-ib --proto Simple --algo ^nvlstree")[8], "RING");
  composim::testing::expect_cli_error("collective --bytes 1M --topology 2x-hgx-h100-ib --nccl-buffsize 1K", "--nccl-buffsize: NCCL's buffer size must be a whole number of bytes in [64 KiB, 1 GiB]");
  composim::testing::expect_cli_error("collective --bytes 1M --topology 2x-hgx-h100-ib --nccl-buffsize 8Q", "--nccl-buffsize: cannot read size \"8Q\"");
  composim::testing::expect_cli_error("collective --bytes 1M --topology 2x-hgx-h100-ib --nccl-buffsize \"\"", "--nccl-buffsize: empty size");
}

// NCCL's per-channel tree rate bounds the steady flows too. One H100 per machine of
// 2x-hgx-h100-ib: one searched channel at the NIC's 48.48 GB/s (400 Gb/s), which NCCL
// duplicates (ncclTopoDupChannels: 25 GB/s or more, and one channel), so 2 searched channels,
// 4 channels on the tree and its mirror, all 4 across the GPU's NIC each way: 4 x 22.5 = 90
// GB/s of payload, above the NIC's 48.48: the rate does not bind. With the table at 20 GB/s
// per searched channel (a parameter file) it does: 4 x 10 / 0.92 = 43.48 GB/s. SimGrid 3.32
// cannot cap a host-to-host flow's rate, so the flows run at the NIC's rate and what the cap
// adds comes after them (model_channel_rate_us): 1 GiB / 0.92 x (1 / 43.48 - 1 / 48.48 GB/s).
// LL128 has its own cap after its factor (ll128MaxBwPerCh, half per channel, 36.7 on
// Hopper): at 20 GB/s per searched channel, 4 x 10 GB/s achieved, in the flows' bytes over
// LL128's 0.92 x 120 / 128.
TEST(CollectiveCommand, TreeChannelRateBoundsTheFlows) {
  composim::testing::TempDir d;
  const double nic = 400e9 / 8 * kIb, S = 1073741824.0;
  const std::string two = "--bytes 1G --topology 2x-hgx-h100-ib --placement n0.gpu0,n1.gpu0 --algo tree ";
  auto free = composim::testing::collective_row(two + "--proto Simple");
  ASSERT_EQ(free[8], "TREE");
  EXPECT_EQ(free[10], "4");
  EXPECT_EQ(std::stod(free[20]), 0.0);
  EXPECT_NEAR(std::stod(free[5]), std::stod(free[16]) + std::stod(free[19]) + S / 0.92 / nic * 1e6, 1.0);  // + the route's 0.55 us
  const auto low = d.write("low.json", R"({"params": {"collective.tree_max_busbw_per_channel_hopper_2nodes_Bps": 20e9}})");
  auto r = composim::testing::collective_row(two + "--proto Simple --params " + low);
  const double cap = 4 * 20e9 / 2 / 0.92;
  EXPECT_NEAR(std::stod(r[20]), S / 0.92 * (1 / cap - 1 / nic) * 1e6, 0.01);
  EXPECT_EQ(std::stod(r[18]), 0.0);  // not the GPUs' processing (V100 LL128)
  EXPECT_NEAR(std::stod(r[5]), std::stod(r[16]) + std::stod(r[19]) + std::stod(r[20]) + S / 0.92 / nic * 1e6, 1.0);
  // The fill subtracts one chunk at the capped steady rate, not the link's: 1 GiB buffer, 32
  // MiB, each of the 4 channels' 8 MiB share one chunk, its trip 2 hops (up and down the NIC)
  // at 4 x 10 / 0.92 / 4 GB/s, less one chunk at that same rate (the NIC's share per channel,
  // 48.48 / 4, is above it): fill = 8 MiB x (2 - 1) / 10.87 GB/s / 0.92.
  auto one_chunk = composim::testing::collective_row("--bytes 32M --nccl-buffsize 1G --topology 2x-hgx-h100-ib --placement n0.gpu0,n1.gpu0 --algo tree --proto Simple --params " + low);
  EXPECT_NEAR(std::stod(one_chunk[19]), 8388608.0 / (cap / 4) / 0.92 * 1e6, 0.01);
  const auto ll128 = d.write("ll128.json", R"({"params": {"collective.ll128_max_busbw_per_channel_hopper_Bps": 20e9}})");
  auto l = composim::testing::collective_row(two + "--proto LL128 --params " + ll128);
  const double eff = 0.92 * 120 / 128;
  EXPECT_NEAR(std::stod(l[15]), S / eff, 100);  // the flows' bytes
  EXPECT_NEAR(std::stod(l[20]), S / eff * (1 / (4 * 10e9 / eff) - 1 / nic) * 1e6, 0.01);
  // Inside one machine there is no such rate (NCCL's channel count there is not composim's).
  auto inside = composim::testing::collective_row("--bytes 1G --topology 2x-hgx-h100-ib --placement n0.gpu0,n0.gpu1 --algo tree --proto Simple --params " + low);
  EXPECT_EQ(std::stod(inside[20]), 0.0);
}

// The plugin latency is that of the NICs the collective crosses, on every network step:
// one NIC (n1.nic7) stating 1 ms changes nothing for GPUs on rails 0 and 1, and adds 2 x
// 1 ms (Simple) to a send/receive ring that crosses rail 7 once each way (NCCL's tuner has
// no point-to-point latency; composim counts the plugin's as on the collectives' steps).
TEST(CollectiveCommand, PluginLatencyIsThatOfTheNicsCrossed) {
  composim::testing::TempDir d;
  auto doc = nlohmann::json::parse(std::ifstream(composim::testing::source_dir() + "/validation/topologies/gcp-a3mega-2x8-h100.json"));
  for (auto& n : doc["nodes"])
    if (n["type"] == "nic") n["nccl_net_latency_s"] = n["name"] == "n1.nic7" ? 1e-3 : 0.0;
  const std::string topo = d.path() + "/one-nic.json", zero = d.path() + "/zero.json";
  std::ofstream(topo) << doc.dump();
  for (auto& n : doc["nodes"])
    if (n["type"] == "nic") n["nccl_net_latency_s"] = 0.0;
  std::ofstream(zero) << doc.dump();
  const std::string rails01 = " --placement n0.gpu0,n0.gpu1,n1.gpu0,n1.gpu1 --algo tree --proto Simple --bytes 1M";
  auto plain = composim::testing::collective_row("--topology " + zero + rails01);
  auto one = composim::testing::collective_row("--topology " + topo + rails01);
  EXPECT_NEAR(std::stod(one[16]), 4 * (28.0 - 262144.0 / 12e9 * 1e6), 0.001);  // no plugin latency
  EXPECT_NEAR(std::stod(one[16]), std::stod(plain[16]), 0.001);
  const std::string rail7 = " --op send_recv --placement n0.gpu7,n1.gpu7 --bytes 1M";
  auto p0 = composim::testing::collective_row("--topology " + zero + rail7);
  auto p7 = composim::testing::collective_row("--topology " + topo + rail7);
  EXPECT_EQ(p7[9], "Simple");
  EXPECT_NEAR(std::stod(p7[16]) - std::stod(p0[16]), 2 * 1000.0, 0.001);
}

// Each searched tree channel and NCCL's copy of it carry half the channel's data, on
// NCCL's double binary tree (ncclGetBtree, ncclGetDtree). One A3 Mega GPU per machine (one
// searched channel, 24.24 GB/s NICs):
// - 3 machines: the tree is 1 -> 2 -> 0, its copy (shifted by one, odd count) 2 -> 0 -> 1.
//   Machine 0's NIC sends the tree's data down to 2 and the copy's up to 1 and down to 2:
//   3 halves, so the pair moves 24.24 / 1.5 = 16.16 GB/s.
// - 4 machines: the tree is 1, 3 -> 2 -> 0, its copy (mirrored) 0, 2 -> 1 -> 3. Machine 2
//   sends the tree's data up to 0 and down to 1 and 3, and the copy's up to 1: 4 halves,
//   24.24 / 2 = 12.12 GB/s (each machine internal in one tree, a leaf in the other).
TEST(CollectiveCommand, TreeAndItsMirroredCopyShareTheData) {
  composim::testing::TempDir d;
  const std::string topo = make_cluster(d, "a3mega-h100", 3);
  ASSERT_FALSE(topo.empty());
  auto f = composim::testing::collective_row("--bytes 256M --algo tree --proto Simple --placement n0.gpu0,n1.gpu0,n2.gpu0 --topology " + topo);
  EXPECT_EQ(f[10], "2");
  EXPECT_NEAR(std::stod(f[14]) * 1e9, 200e9 / 8 * kRoce / 1.5, 1e3);
  const std::string topo4 = make_cluster(d, "a3mega-h100", 4);
  ASSERT_FALSE(topo4.empty());
  f = composim::testing::collective_row("--bytes 256M --algo tree --proto Simple --placement n0.gpu0,n1.gpu0,n2.gpu0,n3.gpu0 --topology " + topo4);
  EXPECT_NEAR(std::stod(f[14]) * 1e9, 200e9 / 8 * kRoce / 2, 1e3);
}

// Rings keep to one NIC rail per channel, as NCCL's (NCCL_CROSS_NIC=0): on 2 DGX A100 the
// ring bandwidth is 8 NICs x 24.84 GB/s (200 Gb/s, InfiniBand framing) whatever the spine: full
// bisection, 4:1 oversubscribed, or none (rail-only: traffic between rails goes through a
// GPU on the peer's rail, PXN). With 8 + 4 GPUs, the 4 rings enter both machines on the
// same rails: 4 x 24.84 GB/s, as 4 + 4 GPUs.
TEST(CollectiveCommand, RingsKeepToOneRailWhateverTheSpine) {
  composim::testing::TempDir d;
  const double nic = 200e9 / 8 * kIb;
  for (const char* taper : {"1", "0.25", "0"}) {
    const std::string topo = make_cluster(d, "dgx-a100", 2, taper);
    ASSERT_FALSE(topo.empty());
    auto f = composim::testing::collective_row("--bytes 1G --algo ring --topology " + topo);
    EXPECT_EQ(f[10], "8") << taper;
    EXPECT_NEAR(std::stod(f[14]) * 1e9, 8 * nic, 1e4) << taper;
    f = composim::testing::collective_row("--op all_gather --bytes 4G --topology " + topo);
    EXPECT_NEAR(std::stod(f[7]), 198.09, 0.05) << taper;  // 8 x 24.84 GB/s less the latency
    f = composim::testing::collective_row("--bytes 1G --algo ring --gpus 12 --topology " + topo);
    EXPECT_EQ(f[10], "4") << taper;
    EXPECT_NEAR(std::stod(f[14]) * 1e9, 4 * nic, 1e4) << taper;
    // Trees take the rings' rails too: the mirror placement (the other socket's 4 GPUs of
    // machine 1) gives the same bandwidth.
    const double tree = std::stod(composim::testing::collective_row("--bytes 1G --algo tree --gpus 12 --topology " + topo)[7]);
    const double mirror = std::stod(composim::testing::collective_row(
        "--bytes 1G --algo tree --topology " + topo +
        " --placement n0.gpu0,n0.gpu1,n0.gpu2,n0.gpu3,n0.gpu4,n0.gpu5,n0.gpu6,n0.gpu7,n1.gpu4,n1.gpu5,n1.gpu6,n1.gpu7")[7]);
    EXPECT_NEAR(mirror, tree, 1e-3 * tree) << taper;
    EXPECT_GT(tree, 150) << taper;  // 4 rails' worth both ways: 159 GB/s (115 before trees took the rails)
  }
  const std::string rail_only = make_cluster(d, "dgx-a100", 2, "0");
  auto r = composim::testing::run_cli("topology " + rail_only + " --route n0.gpu2 n1.gpu0");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("n0.gpu2 -> n0.nvswitch -> n0.gpu0 -> n0.sw0 -> n0.nic0 -> rail0.leaf0 -> n1.nic0 -> n1.sw0 -> n1.gpu0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PXN"), std::string::npos) << r.out;
  // gpu1 shares gpu0's PCIe switch, hence NIC 0: over PCIe, no PXN.
  r = composim::testing::run_cli("topology " + rail_only + " --route n0.gpu1 n1.gpu0");
  EXPECT_NE(r.out.find("n0.gpu1 -> n0.sw0 -> n0.nic0 -> rail0.leaf0 -> n1.nic0"), std::string::npos) << r.out;
  // Without P2P there is no PXN, and NCCL sends no GPUDirect through a CPU: over a full
  // spine the GPU's own NIC; a rail-only network has no route between the rails.
  for (const char* taper : {"1", "0"}) {
    nlohmann::json t = nlohmann::json::parse(std::ifstream(make_cluster(d, "dgx-a100", 2, taper)));
    for (auto& n : t["nodes"])
      if (n["type"] == "gpu") n["p2p"] = false;
    const std::string nop2p = d.write(std::string("nop2p-") + taper + ".json", t.dump());
    if (taper == std::string("1")) {
      r = composim::testing::run_cli("topology " + nop2p + " --route n0.gpu7 n1.gpu0");
      EXPECT_NE(r.out.find("n0.gpu7 -> n0.sw3 -> n0.nic7 -> rail7.leaf0 -> core -> rail0.leaf0 -> n1.nic0"), std::string::npos) << r.out;
    } else {
      composim::testing::expect_cli_error("topology " + nop2p + " --route n0.gpu7 n1.gpu0",
                                          "route n0.gpu7 -> n1.gpu0: its NIC n0.nic7 has no network path to n1.nic0 (no spine joins their "
                                          "rails), and no GPU can relay over NVLink to the NIC on that rail (P2P is off)");
    }
  }
  // A GPU and a NIC of another machine: the GPU's NIC, then the network.
  r = composim::testing::run_cli("topology " + make_cluster(d, "dgx-a100", 2, "1") + " --route n0.gpu0 n1.nic3");
  EXPECT_NE(r.out.find("n0.gpu0 -> n0.sw0 -> n0.nic0 -> rail0.leaf0 -> core -> rail3.leaf0 -> n1.nic3  [network"), std::string::npos) << r.out;
  // NIC to NIC across machines: the network alone; between rails of a rail-only network, none.
  r = composim::testing::run_cli("topology " + rail_only + " --route n0.nic0 n1.nic0");
  EXPECT_NE(r.out.find("n0.nic0 -> rail0.leaf0 -> n1.nic0  [network"), std::string::npos) << r.out;
  composim::testing::expect_cli_error("topology " + rail_only + " --route n0.nic0 n1.nic1", "route n0.nic0 -> n1.nic1: no network path between NICs n0.nic0 and n1.nic1");
}

// NCCL's PXN proxy is a rank of the communicator: a GPU outside the job relays nothing. On 2
// DGX A100 with a 4:1 spine (each rail's leaf has 2 x 200 Gb/s down, 100 Gb/s up), n0.gpu2
// (rail 2) and n1.gpu0 (rail 0) alone cross the spine: 100 Gb/s x IB framing = 12.42 GB/s, where
// relaying through n0.gpu0 (rail 0) had given them 24.84. With the rail-0 and rail-2 GPUs of
// both machines in the job, the ring keeps to its rails: 2 NICs, with or without a spine.
TEST(CollectiveCommand, PxnRelaysOnlyThroughTheJobsGpus) {
  composim::testing::TempDir d;
  const double nic = 200e9 / 8 * kIb;
  const std::string tapered = make_cluster(d, "dgx-a100", 2, "0.25");
  ASSERT_FALSE(tapered.empty());
  auto f = composim::testing::collective_row("--op all_gather --bytes 1G --placement n0.gpu2,n1.gpu0 --topology " + tapered);
  EXPECT_NEAR(std::stod(f[14]) * 1e9, 0.25 * 2 * nic, 1e4);
  f = composim::testing::collective_row("--op all_gather --bytes 1G --placement n0.gpu0,n0.gpu2,n1.gpu0,n1.gpu2 --topology " + tapered);
  EXPECT_NEAR(std::stod(f[14]) * 1e9, 2 * nic, 1e4);
  // The route alone (no job) may still relay through any GPU; given the job's GPUs
  // (--placement), only through them.
  auto r = composim::testing::run_cli("topology " + tapered + " --route n0.gpu2 n1.gpu0");
  EXPECT_NE(r.out.find("n0.gpu2 -> n0.nvswitch -> n0.gpu0 -> n0.sw0 -> n0.nic0"), std::string::npos) << r.out;
  r = composim::testing::run_cli("topology " + tapered + " --route n0.gpu2 n1.gpu0 --placement n0.gpu2,n1.gpu0");
  EXPECT_NE(r.out.find("n0.gpu2 -> n0.sw1 -> n0.nic2 -> rail2.leaf0 -> core -> rail0.leaf0 -> n1.nic0 -> n1.sw0 -> n1.gpu0  [network, bottleneck 12.42 GB/s"),
            std::string::npos)
      << r.out;
  // Without a spine and without a relay in the job, the two rails cannot be joined: NCCL
  // could not connect them either, so the job is refused, as collective and as a replay.
  const std::string rail_only = make_cluster(d, "dgx-a100", 2, "0");
  const std::string why = "route n0.gpu2 -> n1.gpu0: its NIC n0.nic2 has no network path to n1.nic0 (no spine joins their rails), and no GPU "
                          "of the communicator near the NIC on that rail can relay over NVLink (PXN)";
  composim::testing::expect_cli_error("collective --op all_gather --bytes 1G --placement n0.gpu2,n1.gpu0 --topology " + rail_only, why);
  const std::string traces = composim::testing::source_dir() + "/examples/traces";
  composim::testing::expect_cli_error("run --trace " + traces + "/ddp2_rank0.json --trace " + traces + "/ddp2_rank1.json --placement n0.gpu2,n1.gpu0 --topology " +
                                          rail_only,
                                      why);
  f = composim::testing::collective_row("--op all_gather --bytes 1G --placement n0.gpu0,n0.gpu2,n1.gpu0,n1.gpu2 --topology " + rail_only);
  EXPECT_NEAR(std::stod(f[14]) * 1e9, 2 * nic, 1e4);
}

// In a replay too, a communicator relays only through its own GPUs: 4 ranks on n0.gpu0,
// n0.gpu2, n1.gpu0 and n1.gpu2 of 2 DGX A100 with a 4:1 spine, a communicator of ranks 1 and
// 2 (rails 2 and 0) all-gathers 1 GiB as `collective` does with those two GPUs alone
// (12.42 GB/s over the spine); relaying through ranks 0 and 3, outside it, had made it twice
// as fast.
TEST(CollectiveCommand, ReplayedSubCommunicatorRelaysOnlyThroughItsOwnGpus) {
  composim::testing::TempDir d;
  const std::string tapered = make_cluster(d, "dgx-a100", 2, "0.25");
  ASSERT_FALSE(tapered.empty());
  std::string traces;
  for (int r = 0; r < 4; ++r) {
    nlohmann::json doc = {{"deviceProperties", {{{"id", 0}, {"name", "NVIDIA A100-SXM4-80GB"}}}},
                          {"distributedInfo",
                           {{"rank", r},
                            {"world_size", 4},
                            {"pg_config",
                             {{{"pg_name", "0"}, {"backend_config", "cuda:nccl"}, {"ranks", {0, 1, 2, 3}}},
                              {{"pg_name", "sub"}, {"backend_config", "cuda:nccl"}, {"ranks", {1, 2}}}}}}}};
    doc["traceEvents"].push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"pid", 1}, {"tid", 1}, {"ts", 0}, {"dur", 5},
                                  {"args", {{"correlation", 1}}}});
    nlohmann::json k = {{"ph", "X"}, {"cat", "kernel"}, {"pid", 0}, {"ts", 7}, {"args", {{"device", 0}, {"correlation", 1}}}};
    if (r == 0 || r == 3) {
      k["name"] = "gemm", k["tid"] = 7, k["dur"] = 100, k["args"]["stream"] = 7;
    } else {
      k["name"] = "ncclDevKernel_AllGather_RING_SIMPLE(ncclDevKernelArgsStorage<4096ul>)", k["tid"] = 20, k["dur"] = 50000;
      k["args"].update({{"stream", 20}, {"Collective name", "_allgather_base"}, {"In msg nelems", 134217728}, {"dtype", "Float"},
                        {"Group size", 2}, {"Process Group Name", "sub"}, {"Process Group Ranks", "[1, 2]"}});
    }
    doc["traceEvents"].push_back(k);
    traces += " --trace " + d.write("r" + std::to_string(r) + ".json", doc.dump());
  }
  const auto r = composim::testing::run_cli("run" + traces + " --placement n0.gpu0,n0.gpu2,n1.gpu0,n1.gpu2 --topology " + tapered + " --out " +
                                            d.path() + "/out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(d.path() + "/out/timeline.json");
  std::vector<double> durations_us;
  const auto timeline = nlohmann::json::parse(in);
  for (const auto& e : timeline["traceEvents"])
    if (e.value("cat", "") == "collective") durations_us.push_back(e["dur"].get<double>());
  ASSERT_EQ(durations_us.size(), 2u);
  const double alone_us = std::stod(composim::testing::collective_row("--op all_gather --bytes 1G --placement n0.gpu2,n1.gpu0 --topology " + tapered)[5]);
  EXPECT_NEAR(alone_us * 1e-6, 1073741824.0 / 2 / (0.25 * 2 * 200e9 / 8 * kIb), 0.01 * alone_us * 1e-6);
  for (double us : durations_us) EXPECT_NEAR(us, alone_us, 0.001 * alone_us);
  // Without a spine the communicator has no route (ranks 0 and 3 cannot relay for it): the
  // error names the collective.
  const std::string rail_only = make_cluster(d, "dgx-a100", 2, "0");
  composim::testing::expect_cli_error("run" + traces + " --placement n0.gpu0,n0.gpu2,n1.gpu0,n1.gpu2 --topology " + rail_only,
                                      "no GPU of the communicator near the NIC on that rail can relay over NVLink (PXN); NCCL sends no GPUDirect "
                                      "through a CPU (for all_gather #0 of communicator \"sub\" (512.0 MiB), ranks [1,2])");
}

// NCCL's channels across machines share one speed, and it splits the data evenly over them.
// Rings packed one after another at what each had left (here 0.77, 0.77 and 0.26 of the
// data, the third ring's NVLink relay meeting the first's spine hop on one NIC) ran 17%
// slower than planned, SimGrid sharing that NIC equally: now 2 rings at one speed, and the
// simulation is the plan.
TEST(CollectiveCommand, RingsAcrossMachinesShareOneSpeed) {
  composim::testing::TempDir d;
  const std::string topo = make_cluster(d, "dgx-a100", 3, "0.25");
  ASSERT_FALSE(topo.empty());
  auto f = composim::testing::collective_row("--bytes 1G --algo ring --placement n2.gpu7,n1.gpu4,n1.gpu5,n2.gpu6,n2.gpu2,n1.gpu6 --topology " + topo);
  // 3 rings since each machine's ring follows the rank order among equals (2 before, by node
  // id): the same 36.31 GB/s.
  EXPECT_EQ(f[10], "3");
  EXPECT_NEAR(std::stod(f[7]) / planned_busbw(f), 1.0, 0.01) << "busbw " << f[7] << " vs planned " << planned_busbw(f);
}

// A tree crossing a slow NIC (1 Gb/s instead of 200) gets a small share of the data, in the
// flows and in the pipeline fill alike: its chunks are as small as its share, so the
// all-reduce stays near the healthy one (the fill had used the slow tree's trip with an even
// share of the data: 101 GB/s at 1 GiB, between 183 and 160 around it). The trees share
// links max-min fairly: one slow tree does not hold back the others.
TEST(CollectiveCommand, SlowTreeFillsWithItsOwnShare) {
  composim::testing::TempDir d;
  const std::string healthy = make_cluster(d, "dgx-a100", 2);
  ASSERT_FALSE(healthy.empty());
  nlohmann::json t = nlohmann::json::parse(std::ifstream(healthy));
  int changed = 0;
  for (auto& l : t["links"])
    if (l["from"] == "n0.nic0" || l["to"] == "n0.nic0")
      if (l.contains("rate_Gbps")) l["rate_Gbps"] = 1, ++changed;
  ASSERT_EQ(changed, 1);
  const std::string slow = d.write("slow-nic.json", t.dump());
  for (const char* size : {"1G", "4G"}) {
    const std::string args = std::string("--bytes ") + size + " --algo tree --proto Simple --topology ";
    const double ok = std::stod(composim::testing::collective_row(args + healthy)[7]);
    const double hurt = std::stod(composim::testing::collective_row(args + slow)[7]);
    EXPECT_LT(hurt, ok) << size;
    EXPECT_GT(hurt, 0.9 * ok) << size;  // the trees off that rail take the NVLink it leaves
  }
}

// Sizes become nccl-tests' whole elements, per rank where the operation splits them: 8 B
// all-gathered on 8 GPUs is 0 B (count 0), 100 B is 96 B (3 floats per rank); an all-reduce
// of 6 B moves one float.
TEST(CollectiveCommand, SizesAreWholeElementsAsInNcclTests) {
  auto ag = composim::testing::collective_row("--op all_gather --bytes 8 --topology dgx-a100");
  EXPECT_EQ(ag[2], "0");
  EXPECT_EQ(ag[3], "0");
  // No bytes, nothing runs (NCCL returns at once): no algorithm, protocol or link class.
  EXPECT_EQ(ag[5] + " " + ag[8] + " " + ag[9] + " " + ag[12], "0 - - -");
  ag = composim::testing::collective_row("--op all_gather --bytes 100 --topology dgx-a100");
  EXPECT_EQ(ag[2], "96");
  EXPECT_EQ(ag[3], "3");
  const auto ar = composim::testing::collective_row("--bytes 6 --gpus 2 --topology dgx-a100");
  EXPECT_EQ(ar[2], "4");
  EXPECT_EQ(ar[3], "1");
}

// --dtype as nccl-tests -d: the element size sets the count and the rounding; the type
// column names it. 12 B of double is 1 element (8 B); 100 B of half all-gathered on 8 GPUs
// is 6 halves per rank (96 B); an unknown name is refused with the list.
// A leading zero is decimal: --gpus 04 is 4 GPUs and 010 is 10 (CLI11 alone reads octal).
TEST(CollectiveCommand, IntegerOptionsAreDecimal) {
  EXPECT_EQ(composim::testing::collective_row("--bytes 8 --gpus 04 --topology dgx-a100")[1], "4");
  EXPECT_EQ(composim::testing::collective_row("--bytes 8 --gpus 010 --topology 2x-hgx-h100-ib")[1], "10");
}

TEST(CollectiveCommand, DtypeSetsTheElementSizeAsNcclTestsDoes) {
  auto d = composim::testing::collective_row("--bytes 12 --gpus 2 --dtype double --topology dgx-a100");
  EXPECT_EQ(d[2] + " " + d[3] + " " + d[4], "8 1 double");
  auto h = composim::testing::collective_row("--op all_gather --bytes 100 --dtype half --topology dgx-a100");
  EXPECT_EQ(h[2] + " " + h[3] + " " + h[4], "96 6 half");
  auto b = composim::testing::collective_row("--bytes 1M --dtype bfloat16 --topology dgx-a100");
  auto f = composim::testing::collective_row("--bytes 1M --topology dgx-a100");
  EXPECT_EQ(b[3], "524288");
  EXPECT_EQ(b[5], f[5]);  // same bytes, same time: the arithmetic is not modelled
  composim::testing::expect_cli_error("collective --bytes 8 --dtype fp16 --topology dgx-a100", "--dtype: unknown type \"fp16\" (int8, uint8");
  // The same letters spelt otherwise get a hint (nccl-tests itself takes the exact name only).
  composim::testing::expect_cli_error("collective --bytes 8 --dtype \" Float\" --topology dgx-a100", "as nccl-tests -d); did you mean float?");
  // NCCL reduces FP8 only from compute capability 9.0; it copies it anywhere.
  composim::testing::expect_cli_error("collective --bytes 1M --dtype f8e4m3 --topology dgx-a100", "gpu0 (A100) is 8.0");
  EXPECT_EQ(composim::testing::collective_row("--op all_gather --bytes 1M --dtype f8e4m3 --topology dgx-a100")[4], "f8e4m3");
  EXPECT_EQ(composim::testing::collective_row("--bytes 1M --dtype f8e5m2 --topology 2x-hgx-h100-ib")[3], "1048576");
}

// NCCL's latency across machines counts intra-machine and network steps apart. 2 x 8 A100,
// 8 bytes: a tree in LL, 2 x 7 NVLink steps (0.52 us, x 1.8 for LL across machines) and
// 2 x 1 network steps (5.0 us) on 4.4 us: 27.5 us (it was 4.4 + 16 x 5.0 = 84.4 us when
// every step was counted at the network's latency).
TEST(CollectiveCommand, LatencyAcrossMachinesCountsNetworkStepsApart) {
  auto f = composim::testing::collective_row("--bytes 8 --topology 2x-dgx-a100-ib");
  EXPECT_EQ(f[8], "TREE");
  EXPECT_EQ(f[9], "LL");
  EXPECT_NEAR(std::stod(f[16]), 4.4 + 2 * (7 * 0.52 * 1.8 + 1 * 5.0), 0.001);
}

// NCCL's tuner caps (tuning.cc 2.17-2.18), which bound its estimate, not what runs. 2 x 8
// A100 over 8 x 200 Gb/s NICs, 1 GiB: the ring in Simple is NIC-bound (193.9 GB/s busbw);
// its latency, 8.4 + 26 x 3.4 + 4 x 9.6 = 135.2 us, counts 1.9 times past ranks / 16 x 64
// KiB ("plateau effect of ring"). The 8 trees are NVLink-bound at 131.4 GB/s of algbw:
// busBw 2 x 131.4 = 262.9, capped at Ampere's 235, x 0.92 = 216.2, capped at 8 channels x
// 23.6 = 188.8 GB/s, algbw 94.4; latency 2 x (7 + 1) x 28 us. So the ring (10.64 ms) beats
// the tree (11.82 ms), as NCCL chooses; the tree would run faster (213 vs 191 GB/s busbw).
// Without the per-channel cap the tree's estimate, 9.93 ms + 448 us, would win.
TEST(CollectivePlanner, TunerAppliesNcclsCapsAndRingPlateau) {
  auto t = topo::Topology::load("2x-dgx-a100-ib");
  sim::CollectivePlanner planner(t);
  const double S = 1 << 30;
  const auto all = gpus(t, 16);
  const auto ring = planner.plan(Kind::all_reduce, S, all, Protocol::simple, Algorithm::ring);
  EXPECT_NEAR(ring.bandwidth_Bps, 8 * 25e9 * kIb, 1e6);  // 200 Gb/s NICs, InfiniBand framing
  EXPECT_NEAR(ring.estimated_s, 135.2e-6 * 1.9 + 1.875 * S / ring.bandwidth_Bps, 1e-9);
  const auto tree = planner.plan(Kind::all_reduce, S, all, Protocol::simple, Algorithm::tree);
  EXPECT_NEAR(tree.bandwidth_Bps, 131.43e9, 0.01e9);
  EXPECT_NEAR(tree.estimated_s, 2 * 8 * 28e-6 + S / (8 * 23.6e9 / 2), 1e-9);
  const auto chosen = planner.plan(Kind::all_reduce, S, all);
  EXPECT_EQ(chosen.algorithm, Algorithm::ring);
  EXPECT_EQ(chosen.protocol, Protocol::simple);
  EXPECT_NEAR(chosen.estimated_s, ring.estimated_s, 1e-12);
  // Below the plateau's threshold (64 KiB here) the ring's latency counts once.
  EXPECT_NEAR(planner.plan(Kind::all_reduce, 32768, all, Protocol::simple, Algorithm::ring).estimated_s,
              135.2e-6 + 1.875 * 32768 / ring.bandwidth_Bps, 1e-9);
  // Without the per-channel cap (a parameter), the tree's estimate wins.
  composim::testing::TempDir d;
  const auto uncapped = d.write("uncapped.json", R"({"params": {"collective.tree_max_busbw_per_channel_ampere_2nodes_Bps": 1e12}})");
  EXPECT_EQ(composim::testing::collective_row("--bytes 1G --topology 2x-dgx-a100-ib --params " + uncapped)[8], "TREE");
  EXPECT_EQ(composim::testing::collective_row("--bytes 1G --topology 2x-dgx-a100-ib")[8], "RING");
  // DGX A100s have AMD CPUs (cpu_vendor "amd"): across 2 machines NCCL caps LL at 22.5 GB/s
  // of busbw (Intel: 39). A tree in LL at 64 KiB: busBw 216.2 / 3.8 = 56.9, capped at 22.5,
  // algbw 11.25, x 0.6 (tree correction), after 4.4 + 2 x (7 x 0.52 x 1.8 + 5.0) = 27.504 us.
  const double ll = planner.plan(Kind::all_reduce, 65536, all, Protocol::ll, Algorithm::tree).estimated_s;
  const double lat = (4.4 + 2 * (7 * 0.52 * 1.8 + 5.0)) * 1e-6;
  EXPECT_NEAR(ll, lat + 65536 / (22.5e9 / 2 * 0.6), 1e-9);
  {
    nlohmann::json j = nlohmann::json::parse(std::ifstream(composim::testing::source_dir() + "/topologies/shipped/2x-dgx-a100-ib.json"));
    for (auto& node : j["nodes"])
      if (node.contains("cpu_vendor")) node["cpu_vendor"] = "intel";
    const auto intel_path = d.write("intel.json", j.dump());
    auto intel = topo::Topology::load(intel_path);
    sim::CollectivePlanner intel_planner(intel);
    EXPECT_NEAR(intel_planner.plan(Kind::all_reduce, 65536, gpus(intel, 16), Protocol::ll, Algorithm::tree).estimated_s,
                lat + 65536 / (39e9 / 2 * 0.6), 1e-9);
  }
  // NCCL doubles its searched channels where each runs at 25 GB/s or more, unless there are
  // more than 4 below 50 GB/s on GPUs above 8.0 (ncclTopoDupChannels). 4 + 4 H100s of 2 x 8
  // H100 use 4 NICs of 400 Gb/s (48.5 GB/s): 4 rings, doubled to 8 channels, so the tree's
  // cap is 8 x 41.4 GB/s of busbw (algbw 165.6) below its 4 x 48.5 x 2, capped at 370, x 0.92
  // = 340.4; latency 2 x (3 + 1) x 28 us. All 8 per machine: 8 rings, not doubled.
  {
    auto h = topo::Topology::load("2x-hgx-h100-ib");
    sim::CollectivePlanner hp(h);
    std::vector<int> four;
    for (const char* g : {"n0.gpu0", "n0.gpu1", "n0.gpu2", "n0.gpu3", "n1.gpu0", "n1.gpu1", "n1.gpu2", "n1.gpu3"}) four.push_back(*h.find_node(g));
    EXPECT_NEAR(hp.plan(Kind::all_reduce, S, four, Protocol::simple, Algorithm::tree).estimated_s, 2 * 4 * 28e-6 + S / (8 * 41.4e9 / 2), 1e-9);
    EXPECT_NEAR(hp.plan(Kind::all_reduce, S, gpus(h, 16), Protocol::simple, Algorithm::tree).estimated_s, 2 * 8 * 28e-6 + S / (8 * 41.4e9 / 2), 1e-9);
  }
  // `composim topology` shows a host's memory and vendor.
  const auto listing = composim::testing::run_cli("topology 2x-dgx-a100-ib");
  EXPECT_NE(listing.out.find("  n1.cpu1        host                 latency 1.000 us, memory 204.8 GB/s, AMD CPU\n"), std::string::npos) << listing.out;
  // The plateau factor is a parameter too: 1 is none; below 1 is refused.
  set_param("collective.ring_plateau_factor_volta_ampere", 1.0, "test", "flat");
  EXPECT_NEAR(planner.plan(Kind::all_reduce, S, all, Protocol::simple, Algorithm::ring).estimated_s, 135.2e-6 + 1.875 * S / ring.bandwidth_Bps, 1e-9);
  set_param("collective.ring_plateau_factor_volta_ampere", 1.9, "test", "default");
  const auto low = d.write("low.json", R"({"params": {"collective.ring_plateau_factor_hopper": 0.5}})");
  composim::testing::expect_cli_error("collective --bytes 1G --topology 2x-hgx-h100-ib --params " + low, "a latency factor must be in [1, 100] (1: none)");
  // 2 x 8 H100, 32 MiB: the ring in LL128 at min(8 x 48.5, 370) x 0.92 = 340.4 GB/s busbw
  // (75.4 us + 184.8 us) beats the tree in LL128, capped at 8 x 36.7 GB/s busbw (algbw
  // 146.8, x 0.9 for the tree correction: 38.9 us + 254 us); at 4 MiB the tree's latency wins.
  // (Both lose to NVLS_TREE unless it is excluded.)
  auto h = composim::testing::collective_row("--bytes 32M --topology 2x-hgx-h100-ib --algo ^nvlstree");
  EXPECT_EQ(h[8] + " " + h[9], "RING LL128");
  h = composim::testing::collective_row("--bytes 4M --topology 2x-hgx-h100-ib --algo ^nvlstree");
  EXPECT_EQ(h[8] + " " + h[9], "TREE LL128");
  EXPECT_EQ(composim::testing::collective_row("--bytes 4M --topology 2x-hgx-h100-ib")[8], "NVLS_TREE");
}

// The other operations and more machines. All-gather on 2 x 8 H100, Simple: of the ring's 15
// steps, 1 crosses the network (NCCL: machines - 1): 8.4 + 14 x 3.4 + 9.6 = 65.6 us. A
// tree over 5 machines of 8 A100 climbs floor(log2 5) = 2 network levels each way:
// 4.4 + 2 x (7 x 0.52 x 1.8 + 2 x 5.0) = 37.5 us in LL.
TEST(CollectiveCommand, LatencyAcrossMachinesOtherOperationsAndFiveMachines) {
  // 64 B: one float per rank (8 B would round to none, as nccl-tests does).
  auto ag = composim::testing::collective_row("--op all_gather --bytes 64 --proto Simple --topology 2x-hgx-h100-ib");
  EXPECT_NEAR(std::stod(ag[16]), 8.4 + 14 * 3.4 + 9.6, 0.001);
  EXPECT_EQ(ag[17], "1");
  composim::testing::TempDir d;
  const std::string topo = make_cluster(d, "dgx-a100", 5);
  ASSERT_FALSE(topo.empty());
  auto tree = composim::testing::collective_row("--bytes 8 --algo tree --proto LL --topology " + topo);
  EXPECT_NEAR(std::stod(tree[16]), 4.4 + 2 * (7 * 0.52 * 1.8 + 2 * 5.0), 0.001);
  EXPECT_EQ(tree[17], "4");
}

// Hosts composed from one chassis are NCCL nodes of their own when P2P does not cross
// hosts: GPUs 0-7 on host0 and 8-15 on host1 of the Falcon chassis all-reduce across the
// 100 GbE NICs, a tree in LL at 8 bytes: 4.4 + 2 x (7 x 1.0 x 1.8 + 1 x 5.0) = 39.6 us
// (PCIe inside each host). Before, they counted as one machine: 30 PCIe steps. The network
// hop also crosses both hosts' 2 m copper cables to the chassis (2 x 9.54 ns), up and down
// the tree, one crossing paid by the flows' start: 0.019 us more.
TEST(CollectiveCommand, ComposedHostsAreNcclNodes) {
  auto f = composim::testing::collective_row("--bytes 8 --topology composable-falcon4016 --compose host0=gpu0-7,host1=gpu8-15");
  EXPECT_EQ(f[12], "network");
  EXPECT_EQ(f[8], "TREE");
  EXPECT_NEAR(std::stod(f[16]), 4.4 + 2 * (7 * 1.0 * 1.8 + 1 * 5.0) + 2 * 2 * 4.77e-3, 0.001);
  auto one = composim::testing::collective_row("--bytes 8 --topology composable-falcon4016 --compose host0=gpu0-15");
  EXPECT_EQ(one[12], "pcie");
}

// SHM hops wait a read round trip of host memory per step. 2 GPUs on different sockets
// (pcie-8gpu-gen3: GPU -> switch -> root complex and memory -> socket link -> root complex ->
// switch -> GPU, 2.4 us one way), 8 bytes, ring LL: NCCL's 3.6 + 2 x 1.0 us, plus 2 steps x
// 2 x 2.4 us, plus the flow's own 2.4 us = 17.6 us (NVIDIA/nccl #428 measured 20.36 us on
// 2 T4s across sockets).
TEST(CollectiveCommand, ShmStepsWaitAReadRoundTrip) {
  auto f = composim::testing::collective_row("--bytes 8 --topology pcie-8gpu-gen3 --placement gpu0,gpu4");
  EXPECT_EQ(f[9], "LL");
  EXPECT_NEAR(std::stod(f[5]), 3.6 + 2 * 1.0 + 2 * 2 * 2.4 + 2.4, 0.01);
  // The same GPUs with P2P through the sockets allowed would not pay it: a direct route.
  EXPECT_LT(std::stod(composim::testing::collective_row("--bytes 8 --topology pcie-8gpu-gen3 --placement gpu0,gpu1")[5]), 11.0);
  // Each step waits on its own hop, not on the slowest: with P2P off, gpu0 -> gpu1 -> gpu4
  // -> gpu5 -> gpu0 alternates hops through one socket's memory (1.3 us one way) and across
  // the sockets (2.4 us). The all-reduce's 6 steps go round once and 2 hops more: 2 x (2 x
  // 1.3 + 2 x 2.4) + (2 x 1.3 + 2 x 2.4) = 22.2 us, on NCCL's 3.6 + 6 x 1.0 us (it was 6 x
  // 2 x 2.4 = 28.8).
  f = composim::testing::collective_row("--bytes 8 --topology pcie-8gpu-gen3 --placement gpu0,gpu1,gpu4,gpu5 --p2p off");
  EXPECT_EQ(f[9], "LL");
  EXPECT_NEAR(std::stod(f[16]), 3.6 + 6 * 1.0 + 3 * (2 * 1.3 + 2 * 2.4), 0.01);
  // A broadcast's chain crosses its 3 hops once each, never the ring's closing gpu5 -> gpu0.
  f = composim::testing::collective_row("--op broadcast --bytes 8 --topology pcie-8gpu-gen3 --placement gpu0,gpu1,gpu4,gpu5 --p2p off");
  EXPECT_NEAR(std::stod(f[16]), 3.6 + 3 * 1.0 + (2 * 1.3 + 2 * 2.4 + 2 * 1.3), 0.01);
}

// A cable is waited at every step that crosses it: NCCL's per-step latency was measured
// inside a server, and each step's data must arrive before the next step sends it. Four
// A100-PCIe under one Gen4 switch, gpu0's link 3000 m of fibre: 3000 x 4.9 ns + 2 x 64 ns
// (transceivers) = 14.828 us each way; the switch adds 0.105 us. 8 bytes, ring LL.
TEST(CollectiveCommand, CablesAreWaitedAtEveryStep) {
  composim::testing::TempDir d;
  auto topology = [&](double length_m) {
    nlohmann::json t = {{"schema_version", 1}, {"name", "cable"}, {"nodes", {{{"name", "cpu0"}, {"type", "host"}}, {{"name", "sw0"}, {"type", "pcie_switch"}, {"generation", 4}}}}};
    t["links"] = {{{"from", "cpu0"}, {"to", "sw0"}, {"type", "pcie"}, {"generation", 4}, {"lanes", 16}}};
    for (int g = 0; g < 4; ++g) {
      const std::string name = "gpu" + std::to_string(g);
      t["nodes"].push_back({{"name", name}, {"type", "gpu"}, {"model", "A100-PCIe-40GB"}});
      nlohmann::json l = {{"from", "sw0"}, {"to", name}, {"type", "pcie"}, {"generation", 4}, {"lanes", 16}};
      if (g == 0 && length_m > 0) l.update({{"medium", "optical"}, {"length_m", length_m}});
      t["links"].push_back(l);
    }
    return d.write("cable" + std::to_string(static_cast<int>(length_m)) + ".json", t.dump());
  };
  const double cable = 3000 * 4.9e-3 + 2 * 0.064, route = cable + 0.105;
  // 2 GPUs: both hops cross the cable; of the 2 steps' crossings the flows' own start waits
  // one (with the route), the model the other: 3.6 + 2 x 1.0 + 14.828 + 14.933 = 35.36 us
  // (it was 20.5: the cable once, below the propagation of the 2 steps alone).
  auto f = composim::testing::collective_row("--bytes 8 --gpus 2 --topology " + topology(3000));
  EXPECT_EQ(f[8] + " " + f[9], "RING LL");
  EXPECT_NEAR(std::stod(f[16]), 3.6 + 2 * 1.0 + cable, 0.001);
  EXPECT_NEAR(std::stod(f[5]), 3.6 + 2 * 1.0 + cable + route, 0.01);
  // 4 GPUs, ring gpu0 -> 1 -> 2 -> 3 -> 0: the 6 steps cross gpu3 -> gpu0 and gpu0 -> gpu1
  // (the cable) 4 times at worst, one of them the flows' start: 3.6 + 6 x 1.0 + 3 x 14.828.
  f = composim::testing::collective_row("--bytes 8 --topology " + topology(3000));
  EXPECT_NEAR(std::stod(f[16]), 3.6 + 6 * 1.0 + 3 * cable, 0.001);
  EXPECT_NEAR(std::stod(f[5]), 3.6 + 6 * 1.0 + 3 * cable + route, 0.01);
  // No cable, nothing added: NCCL's latency and the route's switch.
  f = composim::testing::collective_row("--bytes 8 --topology " + topology(0));
  EXPECT_NEAR(std::stod(f[16]), 3.6 + 6 * 1.0, 0.001);
  // A broadcast's open chain gpu0 -> 1 -> 2 -> 3 crosses gpu0's cable and gpu3's, one after
  // the other, never the closing gpu3 -> gpu0; the flows' start pays the longer. With gpu3
  // on 1000 m of its own (4.9 + 0.128 = 5.028 us): 3.6 + 3 x 1.0 + 5.028 in the model (it
  // subtracted the closing hop's 14.828 as well: 0, below the chain's propagation).
  auto both = nlohmann::json::parse(std::ifstream(topology(3000)));
  both["links"][4].update({{"medium", "optical"}, {"length_m", 1000}});
  f = composim::testing::collective_row("--op broadcast --bytes 8 --topology " + d.write("both.json", both.dump()));
  EXPECT_NEAR(std::stod(f[16]), 3.6 + 3 * 1.0 + (1000 * 4.9e-3 + 2 * 0.064), 0.001);
  // Across machines the PCIe cables between a GPU and its NIC count too (network links do
  // not): 2 machines of one A100-PCIe each, each GPU on 3000 m of fibre, InfiniBand between
  // the NICs. Each of the ring's 2 steps crosses both cables (29.656 us), the flows' start
  // one of them: the model's latency grows by 29.656 us over the same system without cables.
  auto machines = [&](double length_m) {
    nlohmann::json t = {{"schema_version", 1}, {"name", "mm"}, {"nodes", {{{"name", "ib"}, {"type", "network_switch"}}}}, {"links", nlohmann::json::array()}};
    for (int m = 0; m < 2; ++m) {
      const std::string p = "m" + std::to_string(m) + ".";
      for (const auto& [name, type] : std::vector<std::pair<std::string, std::string>>{{"cpu", "host"}, {"sw", "pcie_switch"}, {"nic", "nic"}})
        t["nodes"].push_back({{"name", p + name}, {"type", type}});
      t["nodes"].push_back({{"name", p + "gpu0"}, {"type", "gpu"}, {"model", "A100-PCIe-40GB"}});
      t["links"].push_back({{"from", p + "cpu"}, {"to", p + "sw"}, {"type", "pcie"}, {"generation", 4}, {"lanes", 16}});
      t["links"].push_back({{"from", p + "sw"}, {"to", p + "nic"}, {"type", "pcie"}, {"generation", 4}, {"lanes", 16}});
      t["links"].push_back({{"from", p + "nic"}, {"to", "ib"}, {"type", "infiniband"}, {"rate_Gbps", 200}});
      nlohmann::json g = {{"from", p + "sw"}, {"to", p + "gpu0"}, {"type", "pcie"}, {"generation", 4}, {"lanes", 16}};
      if (length_m > 0) g.update({{"medium", "optical"}, {"length_m", length_m}});
      t["links"].push_back(g);
    }
    return d.write("mm" + std::to_string(static_cast<int>(length_m)) + ".json", t.dump());
  };
  const auto far = composim::testing::collective_row("--bytes 8 --algo ring --topology " + machines(3000));
  const auto near = composim::testing::collective_row("--bytes 8 --algo ring --topology " + machines(0));
  EXPECT_NEAR(std::stod(far[16]) - std::stod(near[16]), 2 * cable, 0.001);
  EXPECT_NEAR(std::stod(far[5]) - std::stod(near[5]), 4 * cable, 0.02);  // and the flows' route: 2 x cable
}

// What the planner plans is what SimGrid simulates, also when flows of different route
// latencies share a link (CM02 would share it in inverse proportion to latency, as for TCP;
// the platform keeps latency off the links). 8 V100-PCIe under two switches and two
// sockets: rings cross the sockets through host memory; with P2P off every hop does.
TEST(CollectiveCommand, SimulatedBandwidthIsThePlannedOne) {
  composim::testing::TempDir d;
  for (const std::string args : {"--gpus 8", "--gpus 6", "--p2p off"}) {
    auto r = composim::testing::run_cli("collective --bytes 1G --topology pcie-8gpu-gen3 " + args + " --out " + d.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto f = collective_csv_first_row(d.path());
    EXPECT_NEAR(std::stod(f[7]) / planned_busbw(f), 1.0, 0.02) << args << ": busbw " << f[7] << " vs planned " << planned_busbw(f);
  }
}

// Beyond 9 GPUs per machine not every order is searched: the nearest-neighbour order joins
// the candidates, keeping each switch's GPUs together. 16 GPUs numbered round-robin over 4
// Gen4 switches: the ring crosses each switch uplink once each way, so busbw is one Gen4
// x16 link (28.81 GB/s of TLP payload x pcie.link.efficiency 0.914 = 26.33, less the latency's share),
// for 8 GPUs (every order searched) as for
// 10 and 16 (the topology's order alone would cross an uplink at every hop).
TEST(CollectiveCommand, LargeMachinesKeepSwitchesTogether) {
  composim::testing::TempDir d;
  const std::string topo = composim::testing::source_dir() + "/tests/data/pcie16-interleaved.json";
  for (int n : {8, 10, 16}) {
    auto r = composim::testing::run_cli("collective --bytes 1G --topology " + topo + " --gpus " + std::to_string(n) + " --out " + d.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto f = collective_csv_first_row(d.path());
    EXPECT_NEAR(std::stod(f[14]), 28.807 * 0.914, 0.01) << n << " GPUs";  // planned ring bandwidth
    EXPECT_NEAR(std::stod(f[7]), 26.26, 0.07) << n << " GPUs";
  }
}

// PCIe links move pcie.link.efficiency (0.914, from nvbandwidth copies between A6000s) of
// their TLP payload rate: 4 RTX 4090s on one CPU's Gen4 x16 root ports, 1 GiB
// ring all-reduce: 1.5 x 1 GiB / (28.807 GB/s x 0.914) + 42.6 us of NCCL latency = 61.21 ms,
// busbw 26.31 GB/s. Held out: the measured run (tinygrad/open-gpu-kernel-modules #36,
// nccl-tests with tinygrad's P2P driver) reached 25.95 GB/s at 1 GiB: within 1.4%.
TEST(CollectiveCommand, PcieP2pRunsAtItsMeasuredEfficiency) {
  const std::string topo = composim::testing::source_dir() + "/validation/topologies/amd-6x4090.json";
  auto f = composim::testing::collective_row("--bytes 1G --gpus 4 --topology " + topo);
  const double expected_us = (1.5 * 1073741824.0 / (28.807033e9 * 0.914) + 42.6e-6) * 1e6;
  EXPECT_NEAR(std::stod(f[5]), expected_us, 0.001 * expected_us);
  EXPECT_NEAR(std::stod(f[7]), 25.95, 0.10 * 25.95);
  EXPECT_EQ(f[12], "pcie");
}

// A copy the driver stages through host memory (P2P off) runs at 1 / (1 / link + 1 / 126
// GB/s): on Gen4 x16 (28.807 GB/s x 0.914) 21.78 GB/s, where the 6 x RTX 4090 matrix of
// NVIDIA/nccl #814 measured 20.1-22.4 (held out: the hand-off is fitted to 8 x H100). The
// hand-off is a model parameter: --params can take it out.
TEST(CollectiveCommand, StagedCopyPaysTheDriversHandOff) {
  composim::testing::TempDir d;
  const std::string topo = composim::testing::source_dir() + "/validation/topologies/amd-6x4090.json";
  auto copy_GBps = [&](const std::string& extra) {
    auto r = composim::testing::run_cli("p2p --topology " + topo + " --placement gpu0,gpu1 --p2p off --out " + d.path() + extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::ifstream csv(d.path() + "/p2p.csv");
    std::string row;
    std::getline(csv, row);
    std::getline(csv, row);
    EXPECT_NE(row.find(",staged"), std::string::npos) << row;
    std::vector<std::string> f;
    std::stringstream ss(row);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    return f.size() > 4 ? std::stod(f[4]) : 0.0;
  };
  const double link_GBps = 28.807033 * 0.914;
  const double staged = copy_GBps("");
  EXPECT_NEAR(staged, 1 / (1 / link_GBps + 1 / 126.0), 0.002 * staged);
  EXPECT_GE(staged, 20.1 * 0.9);
  EXPECT_LE(staged, 22.42 * 1.1);
  const std::string params = d.write("params.json", R"({"params": {"host.staged_copy_handoff_Bps": 1e18}})");
  EXPECT_NEAR(copy_GBps(" --params " + params), link_GBps, 0.002 * link_GBps);
  // 1 / 1e-320 is infinite: such a rate is refused, not turned into no hand-off at all.
  const std::string tiny = d.write("tiny.json", R"({"params": {"host.staged_copy_handoff_Bps": 1e-320}})");
  composim::testing::expect_cli_error("p2p --topology " + topo + " --params " + tiny,
                                      tiny + ": params.host.staged_copy_handoff_Bps: a rate must be at least 1e6 bytes/s");
}

// The achieved-rate terms fitted to V100 (NVLink2) belong to V100: 2 RTX 2080 Ti (compute
// capability 7.5) on an NVLink2 bridge keep NCCL's own figures: ring Simple at 8.4 + 2 x 3.4
// us, where 2 V100s pay 5.0 us more, and LL128 without V100's per-GPU rate term.
TEST(CollectiveCommand, V100FittedTermsStayOnV100) {
  composim::testing::TempDir d;
  const std::string ti = d.write("ti2.json", R"({"schema_version": 1, "name": "ti2", "nodes": [{"name": "cpu0", "type": "host"},
    {"name": "gpu0", "type": "gpu", "model": "RTX 2080 Ti"}, {"name": "gpu1", "type": "gpu", "model": "RTX 2080 Ti"}],
   "links": [{"from": "cpu0", "to": "gpu0", "type": "pcie", "generation": 3, "lanes": 16},
    {"from": "cpu0", "to": "gpu1", "type": "pcie", "generation": 3, "lanes": 16},
    {"from": "gpu0", "to": "gpu1", "type": "nvlink", "generation": 2, "links": 2}]})");
  auto turing = composim::testing::collective_row("--bytes 8M --proto Simple --topology " + ti);
  EXPECT_EQ(turing[9], "Simple");
  EXPECT_NEAR(std::stod(turing[16]), 8.4 + 2 * 3.4, 1e-9);
  auto volta = composim::testing::collective_row("--bytes 8M --proto Simple --gpus 2 --topology dgx1-v100");
  EXPECT_NEAR(std::stod(volta[16]), 8.4 + 2 * 3.4 + 5.0, 1e-9);
  auto ll128 = composim::testing::collective_row("--bytes 8M --proto LL128 --topology " + ti);
  EXPECT_EQ(ll128[9], "LL128");
  EXPECT_EQ(std::stod(ll128[18]), 0.0);
  EXPECT_GT(std::stod(composim::testing::collective_row("--bytes 8M --proto LL128 --gpus 2 --topology dgx1-v100")[18]), 0.0);
}

// SimGrid aborts on a link name used twice: the platform's own links (staging, SHM, host
// memory) never take a name a topology link or another of them has, whatever the node and
// link names ("g" -> "h->i" and "g->h" -> "i" once gave one staging link name).
TEST(CollectiveCommand, PlatformLinkNamesNeverCollide) {
  composim::testing::TempDir d;
  const std::string topo = d.write("names.json", R"({"schema_version": 1, "name": "names", "nodes": [
    {"name": "cpu0", "type": "host", "p2p_across_root_ports": false}, {"name": "sw0", "type": "pcie_switch", "generation": 4},
    {"name": "g", "type": "gpu", "model": "A100"}, {"name": "h->i", "type": "gpu", "model": "A100"},
    {"name": "g->h", "type": "gpu", "model": "A100"}, {"name": "i", "type": "gpu", "model": "A100"}],
   "links": [{"name": "cpu0:memory", "from": "cpu0", "to": "sw0", "type": "pcie", "generation": 4, "lanes": 16},
    {"name": "a", "from": "sw0", "to": "g", "type": "pcie", "generation": 4, "lanes": 16},
    {"name": "a_UP", "from": "cpu0", "to": "h->i", "type": "pcie", "generation": 4, "lanes": 16},
    {"name": "g->h:staging", "from": "cpu0", "to": "g->h", "type": "pcie", "generation": 4, "lanes": 16},
    {"name": "i:shm", "from": "sw0", "to": "i", "type": "pcie", "generation": 4, "lanes": 16}]})");
  auto r = composim::testing::run_cli("p2p --topology " + topo);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // g and i share sw0 (P2P at the Gen4 x16 rate); every other pair is staged through cpu0.
  EXPECT_NE(r.out.find("     0        -   21.77   21.77   26.33"), std::string::npos) << r.out;
  EXPECT_EQ(composim::testing::collective_row("--bytes 1M --p2p off --topology " + topo)[8], "RING");
}

// The redop column as nccl-tests prints it: sendrecv_perf runs its op loop (sum by
// default), all_gather_perf and alltoall_perf print none.
TEST(CollectiveCommand, RedopColumnAsNcclTests) {
  for (const auto& [op, redop] : std::vector<std::pair<std::string, std::string>>{
           {"send_recv", "float     sum      -1"}, {"all_gather", "float    none      -1"}, {"all_to_all", "float    none      -1"}}) {
    auto r = composim::testing::run_cli("collective --op " + op + " --bytes 1M --gpus 2 --topology dgx-a100");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(redop), std::string::npos) << op << "\n" << r.out;
  }
}

TEST(CollectiveCommand, BadArguments) {
  composim::testing::expect_cli_error("collective --op all_smoosh --topology dgx-a100", "unknown collective \"all_smoosh\"");
  // A name that only contains a collective's is not it ("alreduce" had run a reduce).
  composim::testing::expect_cli_error("collective --op alreduce --topology dgx-a100",
                                      "unknown collective \"alreduce\" (all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all, send_recv)");
  composim::testing::expect_cli_error("collective --op AllReduce --topology dgx-a100", "unknown collective \"AllReduce\" (all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all, send_recv); did you mean all_reduce?");
  composim::testing::expect_cli_error("collective --gpus 9 --topology dgx-a100", "9 GPUs but topology \"dgx-a100\" has only 8");
  composim::testing::expect_cli_error("collective --gpus 1 --topology dgx-a100", "--gpus: a collective needs at least 2 GPUs, got 1");
  composim::testing::expect_cli_error("collective --bytes 1G:8 --topology dgx-a100", "goes down");
  composim::testing::expect_cli_error("collective --bytes 8: --topology dgx-a100", "--bytes: size range \"8:\" lacks its maximum (min:max, e.g. 8:1G)");
  composim::testing::expect_cli_error("collective --gpus 2.5 --topology dgx-a100", "--gpus: expected a whole decimal number, got \"2.5\"");
  composim::testing::expect_cli_error("collective --gpus 99999999999 --topology dgx-a100", "--gpus: at most 1000000 GPUs, got 99999999999");
}

// Invariant of data-parallel scaling: adding a rank never makes the all-reduce bytes each
// rank sends smaller (2(n-1)/n * S grows with n), in the model and in a planned ring.
TEST(CollectivePlanner, AllReduceBytesPerRankNeverShrinkWithRanks) {
  double prev = 0;
  for (int n = 2; n <= 1024; ++n) {
    const double b = collective::ring_schedule(Kind::all_reduce, n, 1 << 20).bytes_per_rank;
    EXPECT_GE(b, prev) << n;
    prev = b;
  }
  auto t = topo::Topology::load("composable-falcon4016");
  sim::CollectivePlanner planner(t);
  double prev_bytes = 0;
  for (int n = 2; n <= 16; ++n) {
    auto p = planner.plan(Kind::all_reduce, 64 << 20, gpus(t, n), Protocol::simple, Algorithm::ring);
    double per_rank = 0;
    for (const auto& f : p.flows)
      if (f.src == t.gpus()[0]) per_rank += f.bytes;
    EXPECT_GE(per_rank, prev_bytes * (1 - 1e-12)) << n;
    prev_bytes = per_rank;
  }
}

// NCCL_PROTO / NCCL_ALGO syntax for --proto / --algo: lists, "^" to exclude, any case.
TEST(TunerChoices, ParsesNcclLists) {
  const unsigned ll = 1u << static_cast<int>(Protocol::ll), ll128 = 1u << static_cast<int>(Protocol::ll128),
                 simple = 1u << static_cast<int>(Protocol::simple);
  EXPECT_EQ(sim::parse_protocol_list("Simple"), simple);
  EXPECT_EQ(sim::parse_protocol_list("simple,LL128"), simple | ll128);
  EXPECT_EQ(sim::parse_protocol_list("^LL"), simple | ll128);
  EXPECT_EQ(sim::parse_protocol_list("^ll128"), simple | ll);
  EXPECT_EQ(sim::parse_algorithm_list("Ring,Tree"), 3u);
  EXPECT_EQ(sim::parse_algorithm_list("^ring"),
            (1u << static_cast<int>(Algorithm::tree)) | (1u << static_cast<int>(Algorithm::nvls)) | (1u << static_cast<int>(Algorithm::nvls_tree)));
  EXPECT_EQ(sim::parse_algorithm_list("nvls"), 1u << static_cast<int>(Algorithm::nvls));
  auto message = [](auto f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([] { sim::parse_protocol_list("Simple,LL256"); }).find("unknown protocol \"LL256\""), std::string::npos);
  EXPECT_NE(message([] { sim::parse_protocol_list("^LL,LL128,Simple"); }).find("leaves no protocol"), std::string::npos);
  EXPECT_NE(message([] { sim::parse_protocol_list("Simple,"); }).find("unknown protocol \"\""), std::string::npos);
  EXPECT_NE(message([] { sim::parse_algorithm_list("Ring,CollNet"); }).find("\"CollNet\" is not modelled"), std::string::npos);
  EXPECT_EQ(sim::parse_algorithm_list("Ring,NVLSTree"), 1u | 8u);
  // Excluding an algorithm composim never chooses changes nothing.
  EXPECT_EQ(sim::parse_algorithm_list("^PAT,CollNet"), sim::parse_algorithm_list("ring,tree,nvls,nvlstree"));
  EXPECT_EQ(sim::parse_algorithm_list("^nvls,NVLSTree"), 3u);
}

// 2 x 8 H100, 8 bytes: NCCL's choice is a tree in LL. With LL excluded (GCP's TCPXO LL128
// profile sets NCCL_PROTO=Simple,LL128) the tuner takes the faster of the rest: the tree in
// LL128, whose latency is 4.4 + 2 x (7 x 1.25 + 1 x 8.5) = 38.9 us (NVLink and network tree
// LL128 hops, NCCL 2.14); "^LL" says the same as "Simple,LL128".
TEST(CollectiveCommand, ProtocolListExcludesLl) {
  auto dflt = composim::testing::collective_row("--bytes 8 --topology 2x-hgx-h100-ib");
  EXPECT_EQ(dflt[9], "LL");
  auto listed = composim::testing::collective_row("--bytes 8 --topology 2x-hgx-h100-ib --proto Simple,LL128");
  EXPECT_EQ(listed[8], "TREE");
  EXPECT_EQ(listed[9], "LL128");
  EXPECT_NEAR(std::stod(listed[16]), 4.4 + 2 * (7 * 1.25 + 8.5), 0.001);
  EXPECT_EQ(composim::testing::collective_row("--bytes 8 --topology 2x-hgx-h100-ib --proto ^LL"), listed);
  composim::testing::expect_cli_error("collective --bytes 8 --topology 2x-hgx-h100-ib --proto Simple,bogus", "--proto: unknown protocol \"bogus\"");
  // NCCL never disables the ring for operations other than all-reduce: NCCL_ALGO=TREE leaves
  // an all-gather on the ring, as composim's --algo does.
  auto ag = composim::testing::collective_row("--op all_gather --bytes 1M --topology 2x-hgx-h100-ib --algo ^ring");
  EXPECT_EQ(ag[8], "RING");
  EXPECT_EQ(ag, composim::testing::collective_row("--op all_gather --bytes 1M --topology 2x-hgx-h100-ib"));
}

// NVLS: NCCL's graph gives each of n channels the largest speed s of {60, 40, 30, 24, 20, 15,
// 12, 6, 3} GB/s with (n+1)s within the GPU's rated NVLink: 8 H100s at 18 x 20 GB/s get
// 40 (9 x 40 = 360), busBw 8 x 40 = 320 GB/s; 3 GPUs get 60 (4 x 60 = 240).
TEST(Nvls, TunerBandwidthFromNcclsSpeedArray) {
  EXPECT_DOUBLE_EQ(collective::nvls_tuner_busbw_Bps(8, 360e9), 320e9);
  EXPECT_DOUBLE_EQ(collective::nvls_tuner_busbw_Bps(8, 359e9), 8 * 30e9);
  EXPECT_DOUBLE_EQ(collective::nvls_tuner_busbw_Bps(3, 382.5e9), 180e9);
  EXPECT_DOUBLE_EQ(collective::nvls_tuner_busbw_Bps(8, 20e9), 0.0);  // 9 x 3 GB/s > 20
}

// NVLS on n H100s of one HGX (18 NVLink4 links to the switches, 376.65 GB/s of payload each
// way): every GPU's up- and down-link carries S(n+1)/n / 0.818, so 8 GiB on 8 GPUs takes
// 23 us + 8 GiB x 9/8 / 0.818 / 376.65 GB/s. Against published busbw at 2-8 GiB: 480 GB/s
// on 8 (NVIDIA/nccl-tests #212, the efficiency's fit), 460, 440, 420 on 7, 6, 5 (NVIDIA/nccl
// #1455); 4 GPUs stay on the ring (NCCL's NVLS estimate, 4 x 60 GB/s x 5/6, loses to it),
// at ~370 as measured. Not on A100s, 2 GPUs, or across machines.
TEST(Nvls, PublishedH100BusBandwidth) {
  auto eight = composim::testing::collective_row("--bytes 8G --gpus 8 --topology 2x-hgx-h100-ib");
  EXPECT_EQ(eight[8], "NVLS");
  EXPECT_EQ(eight[9], "Simple");
  const double t_us = 23.0 + 8589934592.0 * 9 / 8 / 0.818 / (18 * 25e9 * 0.837) * 1e6;
  EXPECT_NEAR(std::stod(eight[5]), t_us, 0.001 * t_us);
  const std::map<int, double> published = {{5, 420}, {6, 440}, {7, 460}, {8, 480}};
  for (auto [n, busbw] : published) {
    auto f = composim::testing::collective_row("--bytes 8G --gpus " + std::to_string(n) + " --topology 2x-hgx-h100-ib");
    EXPECT_EQ(f[8], "NVLS") << n;
    EXPECT_NEAR(std::stod(f[7]), busbw, 0.03 * busbw) << n << " GPUs";
  }
  auto four = composim::testing::collective_row("--bytes 8G --gpus 4 --topology 2x-hgx-h100-ib");
  EXPECT_EQ(four[8], "RING");
  EXPECT_NEAR(std::stod(four[7]), 370, 0.03 * 370);
  EXPECT_EQ(composim::testing::collective_row("--bytes 8G --gpus 8 --topology 2x-hgx-h100-ib --algo ^nvls")[8], "RING");
  EXPECT_EQ(composim::testing::collective_row("--bytes 8G --gpus 2 --topology 2x-hgx-h100-ib")[8], "RING");
  EXPECT_EQ(composim::testing::collective_row("--bytes 8G --topology 2x-hgx-h100-ib")[8], "NVLS_TREE");  // 16 GPUs, 2 machines
  EXPECT_NE(composim::testing::collective_row("--bytes 8G --topology dgx-a100")[8], "NVLS");
  composim::testing::expect_cli_error("collective --bytes 8G --topology dgx-a100 --algo nvls", "--algo: only NVLS is allowed, and NVLS runs all_reduce in Simple on one machine");
  composim::testing::expect_cli_error("collective --bytes 8G --topology dgx-a100 --algo '^ring,tree,nvlstree'", "--algo: only NVLS is allowed, and NVLS runs all_reduce in Simple on one machine");
  composim::testing::expect_cli_error("collective --bytes 8G --topology dgx-a100 --algo '^ring,tree'", "--algo: the ring is excluded and no other algorithm allowed can run all_reduce on these 8 GPUs");
}

// NCCL's NVLS_TREE estimate (2.18 search.cc speeds, 2.20 tuning.cc): H heads at the
// largest sm90SpeedArrayInter speed s with (H+1)s within the GPU's rated NVLink and s within
// its NIC; half that speed on 3 or more machines. Latency 23 us + 2 log2(machines) x (14 us
// + 2 x the plugin's).
TEST(NvlsTree, TunerEstimate) {
  EXPECT_DOUBLE_EQ(collective::nvls_tree_tuner_busbw_Bps(8, 2, 370.8e9, 50e9), 8 * 40e9);  // 9 x 41.2 > 370.8 >= 9 x 40
  EXPECT_DOUBLE_EQ(collective::nvls_tree_tuner_busbw_Bps(8, 4, 370.8e9, 50e9), 8 * 20e9);
  EXPECT_DOUBLE_EQ(collective::nvls_tree_tuner_busbw_Bps(4, 2, 370.8e9, 25e9), 4 * 24e9);  // the NIC's 25 GB/s
  EXPECT_DOUBLE_EQ(collective::nvls_tree_tuner_busbw_Bps(8, 1, 370.8e9, 50e9), 0.0);
  EXPECT_DOUBLE_EQ(collective::nvls_tree_tuner_busbw_Bps(8, 2, 370.8e9, 0.1e9), 0.0);
  EXPECT_NEAR(collective::nvls_tree_latency_s(2, 0), 51e-6, 1e-12);
  EXPECT_NEAR(collective::nvls_tree_latency_s(16, 0), 23e-6 + 8 * 14e-6, 1e-12);
  EXPECT_NEAR(collective::nvls_tree_latency_s(5, 1e-6), 23e-6 + 4 * 16e-6, 1e-12);  // log2i(5) = 2
}

// NVLS_TREE on 2 x 8 H100 (2x-hgx-h100-ib): NCCL's tuner takes it for large all-reduces
// (8 x 40 GB/s x 5/6 beats the ring and the tree). Each machine's GPUs carry S x 9/8 / 0.687
// each way over 376.65 GB/s of NVLink payload; the 8 heads' NICs S/8 each way (not the
// bottleneck): 8 GiB takes 51 us + 8 GiB x 9/8 / 0.687 / 376.65 GB/s. NVIDIA/nccl #1221
// measured 430 GB/s busbw at 4-8 GiB on 2 x 8 H100 with NVLS on (330 with it off; NCCL
// 2.19.3, RoCE). `--algo ^nvlstree` gives the ring back; on A100s there is no NVLS_TREE.
TEST(NvlsTree, TwoHgxH100Machines) {
  auto r = composim::testing::collective_row("--bytes 8G --topology 2x-hgx-h100-ib");
  EXPECT_EQ(r[8], "NVLS_TREE");
  EXPECT_EQ(r[9], "Simple");
  EXPECT_EQ(r[10], "8");
  const double t_us = 51.0 + 8589934592.0 * 9 / 8 / 0.687 / (18 * 25e9 * 0.837) * 1e6;
  EXPECT_NEAR(std::stod(r[5]), t_us, 0.001 * t_us);
  EXPECT_NEAR(std::stod(r[7]), 430, 0.01 * 430);
  EXPECT_NEAR(std::stod(composim::testing::collective_row("--bytes 4G --topology 2x-hgx-h100-ib")[7]), 430, 0.01 * 430);
  EXPECT_EQ(composim::testing::collective_row("--bytes 8G --topology 2x-hgx-h100-ib --algo ^nvlstree")[8], "RING");
  EXPECT_NE(composim::testing::collective_row("--bytes 8G --topology 2x-dgx-a100-ib")[8], "NVLS_TREE");
  composim::testing::expect_cli_error("collective --bytes 8G --topology 2x-dgx-a100-ib --algo nvlstree",
                                      "--algo: only NVLSTree is allowed, and NVLS_TREE runs all_reduce in Simple across machines");
  composim::testing::expect_cli_error("collective --bytes 8G --topology 2x-dgx-a100-ib --algo nvlstree", "on these 16 GPUs their compute capability is 8.0");
  composim::testing::expect_cli_error("collective --bytes 8G --gpus 8 --topology 2x-hgx-h100-ib --algo nvlstree", "on these 8 GPUs they are in one machine");
  composim::testing::expect_cli_error("collective --bytes 8G --gpus 12 --topology 2x-hgx-h100-ib --algo nvlstree",
                                      "on these 12 GPUs their machines hold different numbers of them (8 + 4)");
  composim::testing::expect_cli_error("collective --bytes 8G --topology 2x-hgx-h100-ib --algo nvlstree --proto LL",
                                      "--algo: only NVLSTree is allowed, and NVLS_TREE runs only in Simple");
  // Machines of different GPU counts (8 + 4) do not run it (NVLS hung on 7 + 8: NVIDIA/nccl #2385).
  EXPECT_NE(composim::testing::collective_row("--bytes 8G --gpus 12 --topology 2x-hgx-h100-ib")[8], "NVLS_TREE");
}

// Heads (and rings) are one per NIC. With NICs 4-7 removed from both machines (NICs 0-3, all on the
// first CPU's switches), GPUs 4-7 share those NICs; the 4 heads still use 4 NICs, each
// carrying S/4 each way at 49.7 GB/s of payload (400 Gb/s, InfiniBand framing): 4 GiB takes 51 us + 4 GiB / 4 / 49.7 GB/s
// (network-bound; the GPUs' NVLink would take 14.9 ms). Picking heads by evenly spread GPUs
// had put three on NIC 0 (66.5 ms).
TEST(NvlsTree, OneHeadPerNic) {
  composim::testing::TempDir d;
  auto doc = nlohmann::json::parse(std::ifstream(composim::testing::source_dir() + "/topologies/shipped/2x-hgx-h100-ib.json"));
  auto gone = [](const std::string& name) {
    for (int m = 0; m < 2; ++m)
      for (int k = 4; k < 8; ++k)
        if (name == "n" + std::to_string(m) + ".nic" + std::to_string(k)) return true;
    return false;
  };
  auto& nodes = doc["nodes"];
  nodes.erase(std::remove_if(nodes.begin(), nodes.end(), [&](const nlohmann::json& n) { return gone(n["name"]); }), nodes.end());
  auto& links = doc["links"];
  links.erase(std::remove_if(links.begin(), links.end(), [&](const nlohmann::json& l) { return gone(l["from"]) || gone(l["to"]); }), links.end());
  doc["name"] = "four-nics";
  const auto topo = d.write("four.json", doc.dump());
  auto r = composim::testing::collective_row("--bytes 4G --algo nvlstree --topology " + topo);
  EXPECT_EQ(r[10], "4");
  const double nic = 400e9 / 8 * kIb;
  const double t_us = 51.0 + 4294967296.0 / 4 / nic * 1e6;
  EXPECT_NEAR(std::stod(r[5]), t_us, 0.01 * t_us);
  // The rings too take one NIC each: 4 rings, each NIC carrying 2(n-1)/n x S/4 each way (they
  // had shared NIC 0: 83 ms).
  auto ring = composim::testing::collective_row("--bytes 4G --algo ring --proto Simple --topology " + topo);
  EXPECT_EQ(ring[10], "4");
  const double ring_us = 2.0 * 15 / 16 * 4294967296.0 / 4 / nic * 1e6;
  EXPECT_NEAR(std::stod(ring[5]), ring_us, 0.01 * ring_us);
}

namespace {
// One all-reduce of `nelems` floats on `ranks` H100 ranks, named by the NCCL 2.19+ kernel
// ncclDevKernel_AllReduce_Sum_f32_<kernel>, replayed on 2x-hgx-h100-ib (out in DIR/<kernel>):
// the collective's duration on the timeline, in us.
double replayed_kernel_us(const composim::testing::TempDir& d, const std::string& kernel, int ranks, long long nelems) {
  const std::string trace = d.path() + "/" + kernel + ".json";
  std::string list;
  for (int r = 0; r < ranks; ++r) list += (r ? ", " : "") + std::to_string(r);
  std::ofstream(trace) << R"({"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3"}],)"
                       << R"("distributedInfo":{"rank":0,"world_size":)" << ranks << R"(,"pg_config":[{"pg_name":"0","backend_config":"cuda:nccl","ranks":[)" << list
                       << "]}]}," << R"("traceEvents":[)"
                       << R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":0,"dur":5,"args":{"correlation":1}},)"
                       << R"({"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_)" << kernel
                       << R"x((ncclDevKernelArgsStorage<4096ul>)","pid":0,"tid":20,"ts":7,"dur":5000,"args":{"device":0,"stream":20,"correlation":1,)x"
                       << R"("Collective name":"allreduce","In msg nelems":)" << nelems << R"(,"dtype":"Float","Group size":)" << ranks
                       << R"(,"Process Group Name":"0","Process Group Ranks":"[)" << list << R"(]"}}]})";
  auto r = composim::testing::run_cli("run --trace " + trace + " --topology 2x-hgx-h100-ib --out " + d.path() + "/" + kernel);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(d.path() + "/" + kernel + "/timeline.json");
  const auto doc = nlohmann::json::parse(in);
  for (const auto& e : doc["traceEvents"])
    if (e.value("cat", "") == "collective") return e["dur"].get<double>();
  return -1.0;
}
}  // namespace

// A trace's NCCL 2.19+ kernel name says which algorithm ran, and replay keeps it: one
// all-reduce of 1 GiB on 8 H100s of an HGX, named RING_SIMPLE, replays at the time of
// `collective --algo ring --proto Simple`; named NVLS_SIMPLE, at that of `--algo nvls`.
TEST(Nvls, ReplayKeepsTheTracesAlgorithm) {
  composim::testing::TempDir d;
  auto kernel_time_us = [&](const std::string& kernel) { return replayed_kernel_us(d, kernel, 8, 268435456); };
  const double ring_us = std::stod(composim::testing::collective_row("--bytes 1G --gpus 8 --topology 2x-hgx-h100-ib --algo ring --proto Simple")[5]);
  const double nvls_us = std::stod(composim::testing::collective_row("--bytes 1G --gpus 8 --topology 2x-hgx-h100-ib --algo nvls")[5]);
  EXPECT_LT(nvls_us, 0.8 * ring_us);
  EXPECT_NEAR(kernel_time_us("RING_SIMPLE"), ring_us, 0.01 * ring_us);
  EXPECT_NEAR(kernel_time_us("NVLS_SIMPLE"), nvls_us, 0.01 * nvls_us);
}

// The same across machines: 512 KiB on 2 x 8 H100 named NVLS_TREE_SIMPLE replays at the time
// of `--algo nvlstree`, named RING_SIMPLE at that of `--algo ring --proto Simple`.
TEST(NvlsTree, ReplayKeepsTheTracesAlgorithm) {
  composim::testing::TempDir d;
  auto kernel_time_us = [&](const std::string& kernel) { return replayed_kernel_us(d, kernel, 16, 131072); };
  const double ring_us = std::stod(composim::testing::collective_row("--bytes 512K --topology 2x-hgx-h100-ib --algo ring --proto Simple")[5]);
  const double tree_us = std::stod(composim::testing::collective_row("--bytes 512K --topology 2x-hgx-h100-ib --algo nvlstree")[5]);
  // NCCL's tuner would take the tree in LL128 at this size: the name is what makes it NVLS_TREE.
  EXPECT_EQ(composim::testing::collective_row("--bytes 512K --topology 2x-hgx-h100-ib")[8], "TREE");
  EXPECT_GT(std::abs(tree_us - ring_us), 0.05 * ring_us);
  EXPECT_NEAR(kernel_time_us("RING_SIMPLE"), ring_us, 0.01 * ring_us);
  EXPECT_NEAR(kernel_time_us("NVLS_TREE_SIMPLE"), tree_us, 0.01 * tree_us);
  // Where the topology cannot run it (A100s), the tuner chooses, and a note says so.
  auto r = composim::testing::run_cli("run --trace " + d.path() + "/NVLS_TREE_SIMPLE.json --topology 2x-dgx-a100-ib");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("note: 1 collective(s) whose kernels name NVLS_TREE ran as the tuner chooses: this topology cannot run NVLS_TREE for their GPUs"),
            std::string::npos)
      << r.out;
}

namespace {
// composim's own sweep as a measured case for calibrate: `collective <sweep> --params
// <truth>` is run, its rows (each with `expect` in CSV column `column`: the algorithm, 8, or
// the link class, 12) become DIR/data/measured/nccl_tests.csv, and DIR/self.json runs
// `topology` with `args`. Returns the case file and the number of rows.
std::pair<std::string, int> self_measured_case(const composim::testing::TempDir& d, const std::string& truth, const std::string& sweep,
                                               const std::string& topology, const nlohmann::json& args, size_t column, const std::string& expect) {
  const auto params = d.write("truth.json", truth);
  auto r = composim::testing::run_cli("collective " + sweep + " --topology " + topology + " --params " + params + " --out " + d.path() + "/truth");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(d.path() + "/truth/collective.csv");
  std::string line;
  std::getline(in, line);
  std::string csv = "source_id,bytes,time_us,busbw_GBps\n";
  int rows = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    EXPECT_EQ(f.at(column), expect) << line;
    csv += "self," + f[2] + "," + f[5] + "," + f[7] + "\n";
    ++rows;
  }
  std::filesystem::create_directories(d.path() + "/data/measured");
  std::ofstream(d.path() + "/data/measured/nccl_tests.csv") << csv;
  const nlohmann::json c = {{"name", "self"},
                            {"category", "collective"},
                            {"description", "composim's own sweep"},
                            {"source", {{"hardware", "synthetic"}}},
                            {"run", {{"kind", "collective"}, {"op", "all_reduce"}, {"topology", topology}, {"args", args}}},
                            {"measured", {{"kind", "nccl-tests-csv"}, {"file", "measured/nccl_tests.csv"}, {"source_id", "self"}}},
                            {"tolerance", {{"busbw_pct", 10}, {"time_pct_below_1MiB", 25}}}};
  return {d.write("self.json", c.dump()), rows};
}

// calibrate --fit `c` on DIR/data, writing DIR/fit.json; its "params".
nlohmann::json calibrated(const composim::testing::TempDir& d, const std::string& c) {
  auto r = composim::testing::run_cli("calibrate --fit " + c + " --data " + d.path() + "/data --out " + d.path() + "/fit.json");
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  return nlohmann::json::parse(std::ifstream(d.path() + "/fit.json"))["params"];
}
}  // namespace

// calibrate on NVLS_TREE: composim's own 2 x 8 H100 sweep (16 MiB-8 GiB, all NVLS_TREE) with
// efficiency_nvls_tree 0.6 and 20 us network steps is fitted from the defaults (0.687, 14
// us): both come back; 2 machines give one step count (2), so NVLS's 23 us base is kept.
TEST(NvlsTree, CalibrateRecoversItsEfficiencyAndLatency) {
  composim::testing::TempDir d;
  const auto [c, rows] = self_measured_case(
      d, R"({"params": {"collective.efficiency_nvls_tree": 0.6, "collective.hop_latency_network_nvls_tree_Simple_s": 20e-6}})",
      "--bytes 16M:8G --step-factor 2", "2x-hgx-h100-ib", nlohmann::json::array(), 8, "NVLS_TREE");
  EXPECT_EQ(rows, 10);
  const auto fit = calibrated(d, c);
  EXPECT_NEAR(fit["collective.efficiency_nvls_tree"].get<double>(), 0.6, 0.002);
  EXPECT_NEAR(fit["collective.hop_latency_network_nvls_tree_Simple_s"].get<double>(), 20e-6, 0.3e-6);
  EXPECT_FALSE(fit.contains("collective.efficiency_nvls"));
  EXPECT_EQ(nlohmann::json::parse(std::ifstream(d.path() + "/fit.json"))["held_out_points"], "every 3rd point of each case, by size");
}

// NVLS_TREE bound by the network: 2 x 8 H100 with 25 Gb/s NICs. Each of the 8 heads' NICs
// carries S/8 each way at 25e9 / 8 x IB framing B/s, so 1 GiB takes 51 us + 1 GiB / 8 / 3.10 GB/s;
// the plan says the network binds (link class "network"), and calibrate then fits the
// network's efficiency, not NVLS_TREE's: composim's own sweep with network.efficiency 0.8
// gives 0.8 back.
TEST(NvlsTree, NetworkBoundFitsTheNetworksEfficiency) {
  composim::testing::TempDir d;
  auto doc = nlohmann::json::parse(std::ifstream(composim::testing::source_dir() + "/topologies/shipped/2x-hgx-h100-ib.json"));
  for (auto& l : doc["links"])
    if (l["type"] == "infiniband") l["rate_Gbps"] = 25;
  doc["name"] = "slow-nics";
  const auto topo = d.write("slow.json", doc.dump());
  auto r = composim::testing::collective_row("--bytes 1G --algo nvlstree --topology " + topo);
  const double nic_Bps = 25e9 / 8 * kIb;
  const double t_us = 51.0 + 1073741824.0 / 8 / nic_Bps * 1e6;
  EXPECT_NEAR(std::stod(r[5]), t_us, 0.002 * t_us);
  EXPECT_EQ(r[12], "network");
  EXPECT_EQ(composim::testing::collective_row("--bytes 1G --topology 2x-hgx-h100-ib")[12], "nvlink");

  const auto [c, rows] = self_measured_case(d, R"({"params": {"network.efficiency": 0.8}})", "--bytes 64M:8G --step-factor 2 --algo nvlstree", topo,
                                            {"--algo", "nvlstree"}, 12, "network");
  EXPECT_EQ(rows, 8);
  const auto fit = calibrated(d, c);
  EXPECT_NEAR(fit["network.efficiency"].get<double>(), 0.8, 0.002);
  EXPECT_FALSE(fit.contains("collective.efficiency_nvls_tree"));
}

// calibrate on trees whose steady time NCCL's per-channel tree rate bounds: that time does
// not move with the efficiencies, so those points fit latencies only. One H100 per machine,
// the table at 20 GB/s per searched channel (bound at every size), and the tree's network
// step at 40 us instead of 28: "measured" with both, fitted from the same table, the step
// comes back and no efficiency is fitted. From the defaults (41.4: not bound) the same
// points fit the network's efficiency as well.
TEST(CollectiveCommand, CalibrateFitsRateBoundTreesLatenciesOnly) {
  composim::testing::TempDir d;
  const std::string sweep = "--bytes 16M:1G --step-factor 2 --placement n0.gpu0,n1.gpu0 --algo tree --proto Simple";
  const std::string low = R"("collective.tree_max_busbw_per_channel_hopper_2nodes_Bps": 20e9)";
  const auto [c, rows] = self_measured_case(d, R"({"params": {)" + low + R"(, "collective.hop_latency_network_tree_Simple_s": 40e-6}})", sweep,
                                            "2x-hgx-h100-ib", {"--placement", "n0.gpu0,n1.gpu0", "--algo", "tree", "--proto", "Simple"}, 8, "TREE");
  EXPECT_EQ(rows, 7);
  const auto start = d.write("start.json", R"({"params": {)" + low + "}}");
  auto r = composim::testing::run_cli("calibrate --params " + start + " --fit " + c + " --data " + d.path() + "/data --out " + d.path() + "/fit.json");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("note: 5 fitted points are bound by NCCL's per-channel tree rate: they fit latencies only, not efficiencies"), std::string::npos) << r.out;
  const auto fit = nlohmann::json::parse(std::ifstream(d.path() + "/fit.json"))["params"];
  EXPECT_NEAR(fit["collective.hop_latency_network_tree_Simple_s"].get<double>(), 40e-6, 0.3e-6);  // times in the CSV have 6 digits
  EXPECT_FALSE(fit.contains("network.efficiency"));
  EXPECT_EQ(fit["collective.tree_max_busbw_per_channel_hopper_2nodes_Bps"].get<double>(), 20e9);  // carried from --params
  const auto plain = calibrated(d, c);
  EXPECT_TRUE(plain.contains("network.efficiency"));
}

// calibrate on points bound by the SHM transport (4 A100s with P2P off, 1-8 GiB, composim's
// own sweep with shm_transport_Bps 4e9; 3 fitted, 1 held out): their time does not move with pcie.link.efficiency,
// which was fitted to them (0.73 on a sweep 25% slow), and 1-8 GiB give no latency (its
// steps are 0.01% of the time): nothing is identifiable, so calibrate refuses, saying why,
// and writes no file.
TEST(CollectiveCommand, CalibrateFitsNoLinkEfficiencyToShmBoundPoints) {
  composim::testing::TempDir d;
  const auto [c, rows] = self_measured_case(d, R"({"params": {"collective.shm_transport_Bps": 4e9}})", "--bytes 1G:8G --step-factor 2 --gpus 4 --p2p off",
                                            "dgx-a100", {"--gpus", "4", "--p2p", "off"}, 8, "RING");
  EXPECT_EQ(rows, 4);
  auto r = composim::testing::run_cli("calibrate --fit " + c + " --data " + d.path() + "/data --out " + d.path() + "/fit.json");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("note: 3 fitted points are bound by the SHM transport's rate (collective.shm_transport_Bps), not by links: they fit latencies only"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("note: collective.hop_latency_pcie_ring_Simple_s (at most 0.0"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("the fitted points identify no parameter (3 points"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(d.path() + "/fit.json"));
}

// calibrate on 1-8 GiB over NVSwitch (composim's own sweep with NVLink3 at 0.7): the
// efficiency comes back; the ring's latencies, under 1% of every point's time, are kept at
// NCCL's values (fitted, one came out 16x NCCL's and moved the tuner's protocol choices).
TEST(CollectiveCommand, CalibrateKeepsLatenciesTheSizesCannotSee) {
  composim::testing::TempDir d;
  const auto [c, rows] = self_measured_case(d, R"({"params": {"nvlink.payload_efficiency_gen3": 0.7}})", "--bytes 1G:8G --step-factor 2 --gpus 4",
                                            "dgx-a100", {"--gpus", "4"}, 8, "RING");
  EXPECT_EQ(rows, 4);
  auto r = composim::testing::run_cli("calibrate --fit " + c + " --data " + d.path() + "/data --out " + d.path() + "/fit.json");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("is under 1% of every fitted point's time: kept at its value in force"), std::string::npos) << r.out;
  const auto fit = nlohmann::json::parse(std::ifstream(d.path() + "/fit.json"))["params"];
  EXPECT_NEAR(fit["nvlink.payload_efficiency_gen3"].get<double>(), 0.7, 0.002);
  EXPECT_EQ(fit.size(), 1u) << fit.dump();
}

// calibrate on NVLS: "measurements" made by composim itself with efficiency_nvls 0.7 and a
// 30 us NVLS latency (8 H100s, 4 MiB-8 GiB, all NVLS) are fitted from the defaults (0.818,
// 23 us): both come back, and the NVLink efficiency, unseen by NVLS-only rows, is untouched.
TEST(Nvls, CalibrateRecoversItsEfficiencyAndLatency) {
  composim::testing::TempDir d;
  const auto [c, rows] = self_measured_case(d, R"({"params": {"collective.efficiency_nvls": 0.7, "collective.base_latency_nvls_Simple_s": 30e-6}})",
                                            "--bytes 4M:8G --step-factor 2 --gpus 8", "2x-hgx-h100-ib", {"--gpus", "8"}, 8, "NVLS");
  EXPECT_EQ(rows, 12);
  const auto fit = calibrated(d, c);
  EXPECT_NEAR(fit["collective.efficiency_nvls"].get<double>(), 0.7, 0.002);
  EXPECT_NEAR(fit["collective.base_latency_nvls_Simple_s"].get<double>(), 30e-6, 0.3e-6);
  EXPECT_FALSE(fit.contains("nvlink.payload_efficiency_gen4"));

  // The same sweep 200 times slower fits an efficiency of 0.0031, which no parameter file may
  // hold (under 1%): calibrate says so instead of writing a file no run could load.
  std::stringstream slow;
  std::ifstream fast(d.path() + "/data/measured/nccl_tests.csv");
  std::string line;
  std::getline(fast, line);
  slow << line << "\n";
  while (std::getline(fast, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    slow << f[0] << "," << f[1] << "," << std::stod(f[2]) * 200 << "," << std::stod(f[3]) / 200 << "\n";
  }
  fast.close();
  std::ofstream(d.path() + "/data/measured/nccl_tests.csv") << slow.str();
  auto r = composim::testing::run_cli("calibrate --fit " + c + " --data " + d.path() + "/data --out " + d.path() + "/slow.json");
  EXPECT_EQ(r.exit_code, 2);
  // (0.0031: NVLS's 23 us latency, under 1% of every slowed point's time, is kept, not fitted.)
  EXPECT_NE(r.err.find("calibrate: the fit gives collective.efficiency_nvls = 0.0031"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("parameter "), std::string::npos) << "a table before the error: " << r.out;
  EXPECT_FALSE(std::filesystem::exists(d.path() + "/slow.json"));
  // --out is checked before the fit: a loop of symbolic links is refused, not a crash after it.
  std::filesystem::create_symlink(d.path() + "/loop2", d.path() + "/loop1");
  std::filesystem::create_symlink(d.path() + "/loop1", d.path() + "/loop2");
  r = composim::testing::run_cli("calibrate --fit " + c + " --data " + d.path() + "/data --out " + d.path() + "/loop1");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("loop1: --out: is a loop of symbolic links"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("in force"), std::string::npos) << r.out;
  r = composim::testing::run_cli("import " + composim::testing::source_dir() + "/examples/traces/ddp2_rank0.json --out " + d.path() + "/loop1");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(std::filesystem::is_symlink(d.path() + "/loop1")) << "the link was replaced";
}

// SimGrid aborts on a --cfg or --log value it cannot use; composim tries them first and
// reports SimGrid's complaint as an input error (exit status 2), naming the option.
TEST(CollectiveCommand, BadSimgridOptionsAreInputErrors) {
  composim::testing::expect_cli_error("collective --bytes 1M --topology dgx-a100 --log=foo",
                                      "--cfg/--log: SimGrid refused \"--log=foo\": Invalid control string 'foo'");
  composim::testing::expect_cli_error("p2p --topology dgx-a100 --cfg=network/model:foo", "SimGrid refused \"--cfg=network/model:foo\": Model 'foo' is invalid");
  composim::testing::expect_cli_error("collective --bytes 1M --topology dgx-a100 --cfg=foo:bar", "Bad config key: foo");
  // Values that fail only once links and flows exist; SimGrid's reason, not an INFO line.
  composim::testing::expect_cli_error("collective --bytes 1M:4M --topology dgx-a100 --cfg=network/bandwidth-factor:0",
                                      "Bandwidth factor cannot be 0");
  composim::testing::expect_cli_error("collective --bytes 1M --topology dgx-a100 --cfg=network/model:Constant", "there is no link in the Constant network model");
  composim::testing::expect_cli_error("collective --bytes 1M --topology dgx-a100 --log=root.thres:info --cfg=network/latency-factor:abc",
                                      "network/latency-factor:abc\": invalid double");
  // Control: options SimGrid takes run as before.
  const auto r = composim::testing::run_cli("collective --bytes 1M --topology dgx-a100 --cfg=network/crosstraffic:0 --log=root.thres:critical");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// Each size of a sweep is simulated in a process of its own: a sweep's rows are the rows of
// the same sizes run one at a time, to the printed digit.
TEST(CollectiveCommand, SweepRowsEqualSizesRunAlone) {
  composim::testing::TempDir d;
  const std::string args = " --op all_reduce --gpus 8 --topology dgx1-v100";
  auto r = composim::testing::run_cli("collective --bytes 256K:64M --step-factor 4" + args + " --out " + d.path() + "/all");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream csv(d.path() + "/all/collective.csv");
  std::string line;
  std::getline(csv, line);
  int rows = 0;
  while (std::getline(csv, line)) {
    const std::string size = line.substr(line.find(',', line.find(',') + 1) + 1, std::string::npos);
    const std::string bytes = size.substr(0, size.find(','));
    const auto alone = composim::testing::collective_row("--bytes " + bytes + args);
    std::stringstream ss(line);
    std::vector<std::string> f;
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    ASSERT_EQ(f.size(), alone.size());
    EXPECT_EQ(f[5], alone[5]) << bytes << " B: time_us in the sweep and alone";
    EXPECT_EQ(f[9], alone[9]) << bytes;
    ++rows;
  }
  EXPECT_EQ(rows, 5);  // 256K, 1M, 4M, 16M, 64M
}

// The table is printed as nccl-tests prints it, a row per size as soon as that size and the
// smaller ones are simulated (sizes run in parallel processes): rows in size order, then
// the average, each row equal to collective.csv's.
TEST(CollectiveCommand, PrintedRowsComeInSizeOrderAndMatchTheCsv) {
  composim::testing::TempDir d;
  auto r = composim::testing::run_cli("collective --op all_gather --bytes 8:64M --step-factor 8 --gpus 8 --topology dgx1-v100 --out " + d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> printed;
  std::stringstream out(r.out);
  for (std::string line; std::getline(out, line);)
    if (!line.empty() && line[0] != '#' && line.find("wrote") == std::string::npos) printed.push_back(line);
  std::ifstream csv(d.path() + "/collective.csv");
  std::string line;
  std::getline(csv, line);
  size_t k = 0;
  double last_size = -1;
  while (std::getline(csv, line)) {
    std::stringstream ss(line);
    std::vector<std::string> f;
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    ASSERT_LT(k, printed.size());
    std::stringstream row(printed[k++]);
    double size = 0, count = 0;
    row >> size >> count;
    EXPECT_EQ(size, std::stod(f[2]));
    EXPECT_GT(size, last_size);
    last_size = size;
  }
  EXPECT_EQ(k, printed.size());
  EXPECT_EQ(k, 8u);  // 8 B to 16 MiB by 8
  EXPECT_LT(r.out.find("#       size"), r.out.find("# Avg bus bandwidth"));
}
