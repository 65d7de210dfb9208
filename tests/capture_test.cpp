// The CPU-only half of `composim capture`: launcher environment, CUPTI-shaped records to a
// Kineto-compatible trace, and that trace through composim's own importer. Records are
// built here as the CUPTI injection library would fill them from a run of capture_demo.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "test_util.hpp"
#include "traces/capture/capture_trace.hpp"
#include "traces/kineto.hpp"

using namespace composim;
using namespace composim::capture;
using composim::testing::TempDir;

namespace {

std::function<const char*(const char*)> env_of(const std::map<std::string, std::string>& m) {
  return [m](const char* n) -> const char* {
    auto it = m.find(n);
    return it == m.end() ? nullptr : it->second.c_str();
  };
}

// Two iterations of capture_demo: NVTX "step N", a pinned HtoD copy on the copy stream (14),
// event record + stream wait, two GEMM kernels on the compute stream (13), a pageable DtoH
// copy, a stream synchronize. Times in ns.
CaptureTrace demo_trace() {
  CaptureTrace t;
  t.add(Device{0, "NVIDIA H200", 132, 150ull << 30, 9, 0});
  std::uint32_t corr = 100;
  for (int it = 0; it < 2; ++it) {
    const std::uint64_t base = 1'000'000 + it * 10'000'000ull;
    Marker start{static_cast<std::uint32_t>(it + 1), true, false, base, "step " + std::to_string(it), "", 4242, 11};
    t.add(start);
    auto api = [&](const char* name, std::uint64_t s, std::uint64_t e) {
      t.add(ApiCall{false, name, 1, base + s, base + e, 4242, 11, ++corr});
      return corr;
    };
    const auto c_copy = api("cudaMemcpyAsync_v3020", 10'000, 15'000);
    t.add(Memcpy{CopyKind::htod, MemoryKind::pinned, MemoryKind::device, 64ull << 20, 0, 1, 14, c_copy, base + 17'000, base + 1'300'000});
    api("cudaEventRecord_v3020", 16'000, 17'000);
    api("cudaStreamWaitEvent_v3020", 18'000, 19'000);
    const auto k1 = api("cudaLaunchKernel_v7000", 20'000, 25'000);
    const auto k2 = api("cudaLaunchKernel_v7000", 26'000, 30'000);
    Kernel g1{"sm90_xmma_gemm_f32f32", 0, 1, 13, k1, base + 1'300'000, base + 4'300'000};
    Kernel g2{"sm90_xmma_gemm_f32f32", 0, 1, 13, k2, base + 4'300'000, base + 7'300'000};
    t.add(g1);
    t.add(g2);
    const auto c_back = api("cudaMemcpyAsync_v3020", 31'000, 35'000);
    t.add(Memcpy{CopyKind::dtoh, MemoryKind::device, MemoryKind::pageable, 4096, 0, 1, 13, c_back, base + 7'300'000, base + 7'305'000});
    const auto c_sync = api("cudaStreamSynchronize_v3020", 36'000, 7'310'000);
    t.add(Sync{SyncKind::stream_synchronize, base + 36'000, base + 7'310'000, c_sync, 1, 13, 0xffffffffu});
    Marker end{static_cast<std::uint32_t>(it + 1), false, true, base + 7'320'000, "", "", 4242, 11};
    t.add(end);
  }
  return t;
}

}  // namespace

TEST(Capture, RankFromLauncherVariables) {
  auto e = environment_from(env_of({{"RANK", "3"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "8"}}));
  EXPECT_EQ(e.rank, 3);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.world_size, 8);
  e = environment_from(env_of({{"OMPI_COMM_WORLD_RANK", "5"}, {"OMPI_COMM_WORLD_SIZE", "16"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "5"}}));
  EXPECT_EQ(e.rank, 5);
  EXPECT_EQ(e.world_size, 16);
  e = environment_from(env_of({{"SLURM_PROCID", "7"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "3"}}));
  EXPECT_EQ(e.rank, 7);
  EXPECT_EQ(e.local_rank, 3);
  // RANK wins over the others; garbage is ignored.
  e = environment_from(env_of({{"RANK", "0"}, {"SLURM_PROCID", "7"}, {"WORLD_SIZE", "x8"}}));
  EXPECT_EQ(e.rank, 0);
  EXPECT_EQ(e.world_size, -1);
  e = environment_from(env_of({}));
  EXPECT_EQ(e.rank, -1);
  EXPECT_EQ(output_file("/tmp/c", e, 99), "/tmp/c/proc.99.pt.trace.json.gz");
  EXPECT_EQ(output_file("/tmp/c", Environment{2, 2, 4}, 99), "/tmp/c/rank2.99.pt.trace.json.gz");
}

TEST(Capture, LauncherEnvironment) {
  auto env = launcher_environment("/out", "/lib/libcomposim_cupti.so", "/cuda/libcupti.so", false, "");
  EXPECT_EQ(env["CUDA_INJECTION64_PATH"], "/lib/libcomposim_cupti.so");
  EXPECT_EQ(env["NVTX_INJECTION64_PATH"], "/cuda/libcupti.so");
  EXPECT_EQ(env["COMPOSIM_CAPTURE_DIR"], "/out");
  EXPECT_EQ(env.count("LD_PRELOAD"), 0u);
  env = launcher_environment("/out", "/lib/libcomposim_cupti.so", "", true, "/usr/lib/libjemalloc.so");
  EXPECT_EQ(env["LD_PRELOAD"], "/lib/libcomposim_cupti.so:/usr/lib/libjemalloc.so");
  EXPECT_EQ(env["COMPOSIM_CAPTURE_PRELOAD"], "1");
  EXPECT_EQ(env.count("NVTX_INJECTION64_PATH"), 0u);
}

TEST(Capture, RecordsBecomeKinetoEvents) {
  auto doc = nlohmann::json::parse(demo_trace().to_kineto_json(Environment{1, 1, 2}, 4242));
  EXPECT_EQ(doc["deviceProperties"][0]["name"], "NVIDIA H200");
  EXPECT_EQ(doc["distributedInfo"]["rank"], 1);
  EXPECT_EQ(doc["distributedInfo"]["world_size"], 2);
  std::map<std::string, int> cats;
  bool stripped = true, named_copy = false, step = false;
  for (const auto& e : doc["traceEvents"]) {
    cats[e["cat"].get<std::string>()]++;
    if (e["cat"] == "cuda_runtime" && e["name"].get<std::string>().find("_v") != std::string::npos) stripped = false;
    if (e["name"] == "Memcpy HtoD (Pinned -> Device)" && !named_copy) {  // the first iteration's
      named_copy = true;
      EXPECT_NEAR(e["ts"].get<double>(), 1017.0, 1e-9);  // 1'017'000 ns as us
      EXPECT_NEAR(e["dur"].get<double>(), 1283.0, 1e-9);
      EXPECT_EQ(e["args"]["bytes"], 64ull << 20);
    }
    if (e["name"] == "ProfilerStep#1") step = true;
  }
  EXPECT_TRUE(stripped) << "CUPTI's _vNNNN suffixes must be dropped";
  EXPECT_TRUE(named_copy);
  EXPECT_TRUE(step) << "NVTX 'step 1' must become ProfilerStep#1";
  EXPECT_EQ(cats["kernel"], 4);
  EXPECT_EQ(cats["gpu_memcpy"], 4);
  EXPECT_EQ(cats["cuda_runtime"], 14);
  EXPECT_EQ(cats["cuda_sync"], 2);
  EXPECT_EQ(cats["ac2g"], 16);  // s + f for 8 GPU operations
  EXPECT_EQ(cats["user_annotation"], 2);
}

TEST(Capture, PeerCopiesAndNcclRanges) {
  CaptureTrace t;
  t.add(ApiCall{false, "cudaLaunchKernel_v7000", 211, 100, 110, 1, 2, 7});
  t.add(Kernel{"ncclDevKernel_AllReduce_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 0, 1, 20, 7, 200, 900});
  t.add(Marker{1, true, false, 50, "ncclAllReduce", "NCCL", 1, 2});
  t.add(Marker{1, false, true, 150, "", "", 1, 2});
  t.add(Memcpy{CopyKind::ptop, MemoryKind::device, MemoryKind::device, 1 << 20, 0, 1, 21, 8, 300, 400, 0, 1});
  auto doc = nlohmann::json::parse(t.to_kineto_json(Environment{}, 1));
  int seen = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["cat"] == "kernel") {
      EXPECT_EQ(e["args"]["Collective name"], "allreduce");
      ++seen;
    }
    if (e["cat"] == "gpu_memcpy") {
      EXPECT_EQ(e["name"], "Memcpy PtoP (Device -> Device)");
      EXPECT_EQ(e["args"]["src device"], 0);
      EXPECT_EQ(e["args"]["dst device"], 1);
      ++seen;
    }
  }
  EXPECT_EQ(seen, 2);
  EXPECT_FALSE(doc.contains("distributedInfo"));  // no rank in the environment
}

// The written file is what `composim run --trace` reads: import it and check the counts,
// the launch links, the inferred synchronisation and the iterations, then replay it.
TEST(Capture, WrittenFileImportsAndReplays) {
  TempDir d;
  const std::string path = output_file(d.path(), Environment{0, 0, 1}, 4242);
  ASSERT_TRUE(demo_trace().write(path, Environment{0, 0, 1}, 4242));
  auto w = trace::import_kineto(path);
  EXPECT_EQ(w.gpu_model, "NVIDIA H200");
  EXPECT_EQ(w.kernel_count(), 4u);
  EXPECT_EQ(w.count(trace::GpuOpKind::memcpy), 4u);
  EXPECT_EQ(w.streams.size(), 2u);
  ASSERT_EQ(w.iterations.size(), 2u);
  EXPECT_EQ(w.iterations[0].name, "ProfilerStep#0");
  EXPECT_EQ(w.iterations[0].dur_ns, 7'320'000);
  for (const auto& g : w.gpu_ops) EXPECT_GE(g.launch_op, 0) << "every GPU op is linked to its launch call";
  // The compute stream's first GEMM waits for the copy on the other stream (record/wait).
  const auto& gemm = w.gpu_ops[1];
  ASSERT_EQ(w.names[gemm.name], "sm90_xmma_gemm_f32f32");
  EXPECT_EQ(gemm.waits, std::vector<std::int32_t>{0});
  // cudaStreamSynchronize blocks until the last op on the compute stream (the DtoH copy).
  const auto& sync = w.threads[0].ops[6];
  ASSERT_EQ(w.names[sync.name], "cudaStreamSynchronize");
  EXPECT_TRUE(sync.blocking);
  auto r = composim::testing::run_cli("run --trace " + path + " --topology " + composim::testing::source_dir() +
                                      "/examples/topologies/h200-host.json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ProfilerStep#1"), std::string::npos) << r.out;
}

TEST(Capture, LauncherErrors) {
  auto r = composim::testing::run_cli("capture --out /tmp/x");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no command given"), std::string::npos) << r.err;
  r = composim::testing::run_cli("capture --bogus -- true");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unexpected argument \"--bogus\""), std::string::npos) << r.err;
}
