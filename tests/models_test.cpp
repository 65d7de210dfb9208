#include <gtest/gtest.h>

#include <cmath>

#include "models/collective.hpp"
#include "models/gpu.hpp"
#include "models/nvlink.hpp"
#include "models/pcie.hpp"
#include "models/registry.hpp"

using namespace composim;

// Hand-computed: x16 * 8 GT/s / 8 bits * 128/130 * 256/(256+24).
// One name per element type, whatever the spelling: what ranks' traces are compared by.
TEST(CollectiveModel, CanonicalDtypeNames) {
  EXPECT_EQ(collective::canonical_dtype("Float"), "float32");
  EXPECT_EQ(collective::canonical_dtype("float32"), "float32");
  EXPECT_EQ(collective::canonical_dtype("Half"), "float16");
  EXPECT_EQ(collective::canonical_dtype("BFloat16"), "bfloat16");
  EXPECT_EQ(collective::canonical_dtype("Byte"), "uint8");
  EXPECT_EQ(collective::canonical_dtype("Char"), "int8");
  EXPECT_EQ(collective::canonical_dtype("Long"), "int64");
  EXPECT_EQ(collective::canonical_dtype("Wibble"), "");
}

TEST(PcieModel, Gen3x16PayloadBandwidth) {
  const double expected = 16 * 8e9 / 8 * (128.0 / 130.0) * (256.0 / 280.0);
  EXPECT_NEAR(pcie::link_bandwidth_Bps(3, 16), expected, 1.0);
  EXPECT_NEAR(pcie::link_bandwidth_Bps(3, 16) / 1e9, 14.40, 0.01);  // hardware.md "x16 payload ceiling"
  EXPECT_NEAR(pcie::link_bandwidth_Bps(4, 16) / 1e9, 28.81, 0.01);
  EXPECT_NEAR(pcie::link_bandwidth_Bps(5, 16) / 1e9, 57.61, 0.01);
  EXPECT_NEAR(pcie::link_bandwidth_Bps(4, 8) * 2, pcie::link_bandwidth_Bps(4, 16), 1.0);
  // Larger payloads amortise the TLP overhead: 512 B -> 512/536.
  EXPECT_NEAR(pcie::link_bandwidth_Bps(3, 16, 512), 16 * 1e9 * (128.0 / 130.0) * (512.0 / 536.0), 1.0);
  EXPECT_NEAR(pcie::link_bandwidth_Bps(2, 16) / 1e9, 16 * 5.0 / 8 * 0.8 * 256 / 280, 1e-9);
  // Gen6 FLIT mode: 236 of every 256 B are TLP bytes, and a TLP adds only its 16 B header
  // (the FLIT carries CRC, sequence number and framing; they were counted twice).
  EXPECT_NEAR(pcie::link_bandwidth_Bps(6, 16), 16 * 64e9 / 8 * (236.0 / 256.0) * (256.0 / 272.0), 1.0);
}

TEST(PcieModel, RejectsImpossibleLinks) {
  EXPECT_THROW(pcie::link_bandwidth_Bps(7, 16), std::invalid_argument);
  EXPECT_THROW(pcie::link_bandwidth_Bps(3, 12), std::invalid_argument);
  EXPECT_THROW(pcie::link_bandwidth_Bps(3, 16, 64), std::invalid_argument);
}

TEST(PcieModel, SwitchLatencyByGeneration) {
  EXPECT_DOUBLE_EQ(pcie::switch_latency_s(3), 150e-9);
  EXPECT_DOUBLE_EQ(pcie::switch_latency_s(4), 105e-9);
  EXPECT_DOUBLE_EQ(pcie::switch_latency_s(5), 115e-9);
}

TEST(NvlinkModel, Bandwidth) {
  EXPECT_DOUBLE_EQ(nvlink::link_bandwidth_Bps(2, 2), 50e9);
  EXPECT_DOUBLE_EQ(nvlink::link_bandwidth_Bps(3, 12), 300e9);
  EXPECT_DOUBLE_EQ(nvlink::link_bandwidth_Bps(5, 18), 900e9);
  EXPECT_THROW(nvlink::link_bandwidth_Bps(6, 1), std::invalid_argument);
}

TEST(GpuModel, KnownGpus) {
  bool known = false;
  auto v = gpu::find_gpu_spec("Tesla V100-SXM2-32GB", &known);
  EXPECT_TRUE(known);
  EXPECT_EQ(v.name, "V100");
  EXPECT_EQ(v.pcie_generation, 3);
  EXPECT_FALSE(gpu::find_gpu_spec("NVIDIA GeForce RTX 2080 Ti").pcie_p2p);
  gpu::find_gpu_spec("Imaginary X1", &known);
  EXPECT_FALSE(known);
}

TEST(CollectiveModel, KernelNames) {
  auto a = collective::parse_nccl_kernel_name("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)");
  EXPECT_TRUE(a.is_nccl);
  EXPECT_EQ(a.kind, collective::Kind::all_reduce);
  EXPECT_EQ(a.algorithm, "RING");
  EXPECT_FALSE(a.protocol_reliable);  // NCCL <= 2.18 names the entry kernel, not the protocol
  auto b = collective::parse_nccl_kernel_name("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  EXPECT_EQ(b.kind, collective::Kind::all_gather);
  EXPECT_EQ(b.protocol, collective::Protocol::ll);
  EXPECT_TRUE(b.protocol_reliable);
  EXPECT_EQ(collective::parse_nccl_kernel_name("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(x)").kind, collective::Kind::send_recv);
  // 2.19+ reducing collectives put the reduction and type before the algorithm.
  auto c = collective::parse_nccl_kernel_name("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  EXPECT_EQ(c.kind, collective::Kind::all_reduce);
  EXPECT_EQ(c.algorithm, "RING");
  EXPECT_EQ(c.protocol, collective::Protocol::ll);
  EXPECT_TRUE(c.protocol_reliable);
  auto d = collective::parse_nccl_kernel_name("ncclDevKernel_AllReduce_Sum_f32_NVLS_TREE_SIMPLE(ncclDevKernelArgsStorage<4096ul>)");
  EXPECT_EQ(d.algorithm, "NVLS_TREE");
  EXPECT_EQ(d.protocol, collective::Protocol::simple);
  EXPECT_TRUE(d.protocol_reliable);
  EXPECT_EQ(collective::parse_nccl_kernel_name("ncclDevKernel_ReduceScatter_Sum_f32_NVLS_SIMPLE(x)").algorithm, "NVLS");
  EXPECT_EQ(collective::parse_nccl_kernel_name("ncclDevKernel_AllReduce_Sum_f32_TREE_LL128(x)").protocol, collective::Protocol::ll128);
  auto e = collective::parse_nccl_kernel_name("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)");
  EXPECT_EQ(e.kind, collective::Kind::send_recv);
  EXPECT_FALSE(e.protocol_reliable);  // no algorithm or protocol in the name
  EXPECT_FALSE(collective::parse_nccl_kernel_name("void at::native::vectorized_elementwise_kernel").is_nccl);
  // NCCL before 2.8: nccl<Kind><Algorithm>[Protocol]Kernel_<op>_<type> (it used to be compute).
  auto old = collective::parse_nccl_kernel_name("ncclAllReduceRingLLKernel_sum_f32(CollectiveArgs)");
  EXPECT_TRUE(old.is_nccl);
  EXPECT_EQ(old.kind, collective::Kind::all_reduce);
  EXPECT_EQ(old.algorithm, "RING");
  EXPECT_EQ(old.protocol, collective::Protocol::ll);
  EXPECT_FALSE(old.protocol_reliable);
  EXPECT_EQ(collective::parse_nccl_kernel_name("ncclReduceScatterTreeLL128Kernel_sum_f16(x)").kind, collective::Kind::reduce_scatter);
  EXPECT_EQ(collective::parse_nccl_kernel_name("ncclBroadcastRingKernel_copy_i8(x)").algorithm, "RING");
  EXPECT_EQ(collective::parse_nccl_kernel_name("ncclBroadcastRingKernel_copy_i8(x)").protocol, collective::Protocol::simple);
  // A kernel whose name says no operation: NCCL's, kind unknown (the importer then keeps it
  // as a kernel at its measured duration unless its args name the operation).
  auto generic = collective::parse_nccl_kernel_name("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)");
  EXPECT_TRUE(generic.is_nccl);
  EXPECT_EQ(generic.kind, collective::Kind::unknown);
  EXPECT_FALSE(collective::parse_nccl_kernel_name("ncclInitKernel(x)").is_nccl);  // an old-style name with no operation
  EXPECT_FALSE(collective::parse_nccl_kernel_name("ncclCustomAllReduceKernel(float*)").is_nccl);  // not NCCL's own
  auto v23 = collective::parse_nccl_kernel_name("ncclAllReduceLLKernel_sum_f32(CollectiveArgs)");  // NCCL 2.3: no algorithm
  EXPECT_EQ(v23.kind, collective::Kind::all_reduce);
  EXPECT_EQ(v23.protocol, collective::Protocol::ll);
  EXPECT_EQ(v23.algorithm, "");
  EXPECT_EQ(collective::parse_nccl_kernel_name("ncclSendRecvKernel_copy_i8(x)").kind, collective::Kind::send_recv);
  EXPECT_EQ(collective::parse_kind("_allgather_base"), collective::Kind::all_gather);
  EXPECT_EQ(collective::parse_kind("reduce_scatter_tensor_coalesced"), collective::Kind::reduce_scatter);
  EXPECT_EQ(collective::dtype_size_B("BFloat16"), 2);
  EXPECT_EQ(collective::dtype_size_B("Float"), 4);
}

// NCCL 2.17-2.18's tuner caps by GPU generation (compute capability) and machines: Ampere
// is any 8.x (an RTX 4090's 8.9 too), Hopper 9.x; none before Ampere for busBw, none on
// Blackwell (10.x), which those versions predate.
TEST(CollectiveModel, TunerCapsByGeneration) {
  EXPECT_DOUBLE_EQ(collective::tuner_busbw_cap_Bps(70), INFINITY);
  EXPECT_DOUBLE_EQ(collective::tuner_busbw_cap_Bps(89), 235e9);
  EXPECT_DOUBLE_EQ(collective::tuner_busbw_cap_Bps(90), 370e9);
  EXPECT_DOUBLE_EQ(collective::tuner_busbw_cap_Bps(100), INFINITY);
  EXPECT_DOUBLE_EQ(collective::tree_max_busbw_per_channel_Bps(70, 2), 18.5e9);
  EXPECT_DOUBLE_EQ(collective::tree_max_busbw_per_channel_Bps(90, 1), INFINITY);  // one machine: not NCCL's channel count
  EXPECT_DOUBLE_EQ(collective::tree_max_busbw_per_channel_Bps(80, 2), 23.6e9);
  EXPECT_DOUBLE_EQ(collective::tree_max_busbw_per_channel_Bps(90, 5), 33.0e9);
  EXPECT_DOUBLE_EQ(collective::tree_max_busbw_per_channel_Bps(100, 2), INFINITY);
  EXPECT_DOUBLE_EQ(collective::ll128_max_busbw_per_channel_Bps(80), 20e9);
  EXPECT_DOUBLE_EQ(collective::ll128_max_busbw_per_channel_Bps(90), 36.7e9);
  EXPECT_DOUBLE_EQ(collective::ring_plateau_latency_factor(80), 1.9);
  EXPECT_DOUBLE_EQ(collective::ring_plateau_latency_factor(90), 1.5);
}

// NCCL's treeCorrectionFactor, indexed by log2(bytes / 64): 64 KiB is index 10 (LL 0.6,
// Simple 0.6), 1 MiB index 14 (LL128 0.6), 64 MiB index 20 (LL128 0.9), 256 MiB index 22
// (Simple 0.9); below 128 B
// index 0; from 512 MiB (index 23) none.
TEST(CollectiveModel, TreeCorrectionFactor) {
  using collective::Protocol;
  EXPECT_DOUBLE_EQ(collective::tree_correction_factor(Protocol::ll, 65536), 0.6);
  EXPECT_DOUBLE_EQ(collective::tree_correction_factor(Protocol::simple, 65536), 0.6);
  EXPECT_DOUBLE_EQ(collective::tree_correction_factor(Protocol::ll128, 64.0 * (1 << 20)), 0.9);
  EXPECT_DOUBLE_EQ(collective::tree_correction_factor(Protocol::ll128, 1 << 20), 0.6);
  EXPECT_DOUBLE_EQ(collective::tree_correction_factor(Protocol::simple, 256.0 * (1 << 20)), 0.9);
  EXPECT_DOUBLE_EQ(collective::tree_correction_factor(Protocol::simple, 8), 0.9);
  EXPECT_DOUBLE_EQ(collective::tree_correction_factor(Protocol::ll, 127), 1.0);
  EXPECT_DOUBLE_EQ(collective::tree_correction_factor(Protocol::simple, 512.0 * (1 << 20)), 1.0);
}

// nccl-tests doc/PERFORMANCE.md: all-reduce moves 2(n-1)/n of the buffer per rank.
TEST(CollectiveModel, RingSchedule) {
  auto ar = collective::ring_schedule(collective::Kind::all_reduce, 4, 1e6);
  EXPECT_DOUBLE_EQ(ar.bytes_per_rank, 1.5e6);
  EXPECT_EQ(ar.steps, 6);
  auto ag = collective::ring_schedule(collective::Kind::all_gather, 8, 1e6);  // input per rank
  EXPECT_DOUBLE_EQ(ag.bytes_per_rank, 7e6);
  EXPECT_EQ(collective::ring_schedule(collective::Kind::all_reduce, 1, 1e6).bytes_per_rank, 0.0);
  EXPECT_DOUBLE_EQ(collective::wire_efficiency(collective::Protocol::ll), 0.5);
  EXPECT_DOUBLE_EQ(collective::protocol_efficiency(collective::Protocol::ll, collective::Kind::all_reduce, false), 0.25);
  EXPECT_DOUBLE_EQ(collective::protocol_efficiency(collective::Protocol::ll, collective::Kind::all_gather, false), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(collective::busbw_factor(collective::Kind::all_reduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(collective::busbw_factor(collective::Kind::broadcast, 4), 1.0);
}

TEST(Registry, EveryParameterHasUnitAndSource) {
  ASSERT_GE(all_models().size(), 7u);
  for (const auto& m : all_models())
    for (const auto& p : m.params) {
      EXPECT_FALSE(p.unit.empty()) << m.name << "." << p.name;
      EXPECT_FALSE(p.source.empty()) << m.name << "." << p.name;
    }
  EXPECT_NE(format_models_table(true).find("| `launch_latency_s` | s |"), std::string::npos);
}
