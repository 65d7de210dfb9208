// Replay semantics on tiny hand-made traces, against hand-computed times. Each TEST must
// run in its own process (one SimGrid simulation per process): ctest does that.
#include <gtest/gtest.h>

#include <simgrid/s4u/Engine.hpp>
#include <xbt/log.h>

#include <nlohmann/json.hpp>

#include "models/collective.hpp"
#include "models/error.hpp"
#include "sim/replay.hpp"
#include "sim/report.hpp"
#include "test_util.hpp"
#include "traces/kineto.hpp"

using namespace composim;
using composim::testing::TempDir;

namespace {

// Two A100s under one Gen4 switch under one host.
const char* kTopo = R"({
  "schema_version": 1, "name": "two-gpu-switch",
  "nodes": [
    {"name": "cpu0", "type": "host"},
    {"name": "sw0", "type": "pcie_switch", "generation": 4},
    {"name": "gpu0", "type": "gpu", "model": "A100"},
    {"name": "gpu1", "type": "gpu", "model": "A100"}
  ],
  "links": [
    {"from": "cpu0", "to": "sw0", "type": "pcie", "generation": 4, "lanes": 16},
    {"from": "sw0", "to": "gpu0", "type": "pcie", "generation": 4, "lanes": 16},
    {"from": "sw0", "to": "gpu1", "type": "pcie", "generation": 4, "lanes": 16}
  ]})";

bool engine_ready() {
  static int uses = 0;
  if (uses++ > 0) return false;
  static int argc = 1;
  static char name[] = "replay_test";
  static char* argv[] = {name, nullptr};
  xbt_log_control_set("root.thresh:critical");
  new simgrid::s4u::Engine(&argc, argv);
  sim::configure_engine();
  return true;
}

#define NEED_ENGINE() \
  if (!engine_ready()) GTEST_SKIP() << "one simulation per process: run this test alone (ctest does)"

std::string call(const char* name, int tid, double ts, double dur, int corr) {
  char b[256];
  std::snprintf(b, sizeof b, R"({"ph":"X","cat":"cuda_runtime","name":"%s","pid":1,"tid":%d,"ts":%.3f,"dur":%.3f,"args":{"correlation":%d}})",
                name, tid, ts, dur, corr);
  return b;
}
std::string kernel(const char* name, int stream, double ts, double dur, int corr, const std::string& extra = "") {
  char b[512];
  std::snprintf(b, sizeof b, R"({"ph":"X","cat":"kernel","name":"%s","pid":0,"tid":%d,"ts":%.3f,"dur":%.3f,"args":{"device":0,"stream":%d,"correlation":%d%s}})",
                name, stream, ts, dur, stream, corr, extra.c_str());
  return b;
}
std::string trace_doc(const std::vector<std::string>& events, const std::string& dist = "") {
  std::string s = "{\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA A100-SXM4-40GB\"}]," + dist + "\"traceEvents\":[";
  for (size_t i = 0; i < events.size(); ++i) s += (i ? "," : "") + events[i];
  return s + "]}";
}

// A ProfilerStep mark on the CPU thread of call().
std::string step_mark(const char* name, const std::string& ts_us, const std::string& dur_us) {
  return std::string(R"({"ph":"X","cat":"user_annotation","name":")") + name + R"(","pid":1,"tid":1,"ts":)" + ts_us + R"(,"dur":)" + dur_us + "}";
}

const topo::Topology& two_gpu_topology() {
  static const topo::Topology t = topo::Topology::parse(nlohmann::json::parse(kTopo), "two-gpu-switch.json");
  return t;
}

// Four A100s under one Gen4 switch.
const topo::Topology& four_gpu_topology() {
  static const topo::Topology t = topo::Topology::parse(nlohmann::json::parse(R"({
    "schema_version": 1, "name": "four-gpu-switch",
    "nodes": [{"name": "cpu0", "type": "host"}, {"name": "sw0", "type": "pcie_switch", "generation": 4},
              {"name": "gpu0", "type": "gpu", "model": "A100"}, {"name": "gpu1", "type": "gpu", "model": "A100"},
              {"name": "gpu2", "type": "gpu", "model": "A100"}, {"name": "gpu3", "type": "gpu", "model": "A100"}],
    "links": [{"from": "cpu0", "to": "sw0", "type": "pcie", "generation": 4, "lanes": 16},
              {"from": "sw0", "to": "gpu0", "type": "pcie", "generation": 4, "lanes": 16}, {"from": "sw0", "to": "gpu1", "type": "pcie", "generation": 4, "lanes": 16},
              {"from": "sw0", "to": "gpu2", "type": "pcie", "generation": 4, "lanes": 16}, {"from": "sw0", "to": "gpu3", "type": "pcie", "generation": 4, "lanes": 16}]})"),
                                                        "four-gpu-switch.json");
  return t;
}
// The traces (written as t0.json, t1.json, ...) replayed on `topology` (two_gpu_topology()
// when null).
sim::ReplayResult replay(const std::vector<std::string>& docs, sim::ReplayOptions opt = {}, const topo::Topology* topology = nullptr) {
  static TempDir dir;
  std::vector<trace::Workload> w;
  for (size_t i = 0; i < docs.size(); ++i) w.push_back(trace::import_kineto(dir.write("t" + std::to_string(i) + ".json", docs[i])));
  sim::Replay r(topology ? *topology : two_gpu_topology(), std::move(w), opt);
  return r.run();
}

// The error such a replay stops with, its temporary folder left out; "no error" if none.
std::string replay_error(const std::vector<std::string>& docs, const topo::Topology* topology = nullptr) {
  try {
    replay(docs, {}, topology);
  } catch (const InputError& e) {
    std::string what = e.what();
    for (auto at = what.find("/tmp/"); at != std::string::npos; at = what.find("/tmp/")) what.erase(at, what.find("/t", at + 5) + 1 - at);
    return what;
  }
  return "no error";
}

constexpr double us = 1e-6;

}  // namespace

// Two kernels launched back to back: the second waits for the stream, not for its launch.
TEST(Replay, StreamOrder) {
  NEED_ENGINE();
  auto res = replay({trace_doc({call("cudaLaunchKernel", 1, 0, 5, 1), call("cudaLaunchKernel", 1, 5, 5, 2),
                                kernel("a", 7, 7, 100, 1), kernel("b", 7, 107, 100, 2)})});
  const auto& r = res.ranks[0];
  EXPECT_NEAR(r.gpu_start[0], 7 * us, 1e-12);   // launch returns at 5 us, + 2 us launch latency
  EXPECT_NEAR(r.gpu_end[0], 107 * us, 1e-12);
  EXPECT_NEAR(r.gpu_start[1], 107 * us, 1e-12);  // eligible at 12 us, stream busy until 107 us
  EXPECT_NEAR(r.gpu_end[1], 207 * us, 1e-12);
  EXPECT_NEAR(r.cpu_end[0][1], 10 * us, 1e-12);
}

// cudaEventRecord after a kernel on stream 7, cudaStreamWaitEvent before a launch on
// stream 20: the second kernel starts when the first ends, not when it is launched.
TEST(Replay, EventWaitAcrossStreams) {
  NEED_ENGINE();
  auto res = replay({trace_doc({call("cudaLaunchKernel", 1, 0, 5, 1), call("cudaEventRecord", 1, 6, 1, 2),
                                call("cudaStreamWaitEvent", 1, 8, 1, 3), call("cudaLaunchKernel", 1, 10, 5, 4),
                                call("cudaLaunchKernel", 1, 16, 5, 5), kernel("a", 7, 7, 100, 1),
                                kernel("b", 20, 107, 10, 4), kernel("c", 21, 23, 10, 5)})});
  const auto& r = res.ranks[0];
  // GPU ops are numbered in measured start order: a (7 us), c (23 us), b (107 us).
  EXPECT_NEAR(r.gpu_start[2], 107 * us, 1e-12);  // b waited for a
  EXPECT_NEAR(r.gpu_end[2], 117 * us, 1e-12);
  EXPECT_NEAR(r.gpu_start[1], 23 * us, 1e-12);   // c on another stream did not wait: 21 + 2
}

// A stream synchronize returns when the awaited kernel ends plus the measured return
// latency (3 us here), so a slower launch path delays the next CPU call.
TEST(Replay, SynchronizeBlocksTheCpu) {
  NEED_ENGINE();
  const auto doc = trace_doc({call("cudaLaunchKernel", 1, 0, 5, 1), kernel("a", 7, 7, 1000, 1),
                              call("cudaStreamSynchronize", 1, 10, 1000, 2), call("cudaLaunchKernel", 1, 1015, 5, 3),
                              kernel("b", 7, 1022, 10, 3)});
  sim::ReplayOptions opt;
  opt.launch_latency_s = 52 * us;  // 50 us later than measured
  auto res = replay({doc}, opt);
  const auto& r = res.ranks[0];
  EXPECT_NEAR(r.gpu_end[0], 1057 * us, 1e-12);
  EXPECT_NEAR(r.cpu_end[0][1], 1060 * us, 1e-12);
  EXPECT_NEAR(r.cpu_start[0][2], 1065 * us, 1e-12);
  EXPECT_NEAR(r.gpu_start[1], 1070 * us + 52 * us, 1e-12);
}

// A CPU that launches copies every 5 us and never synchronizes. Measured, each 10 MB copy
// took 4 us (the GPU kept up, the queue never filled); replayed over the Gen4 switch each
// takes latency + 10 MB / 26.3 GB/s = 380 us, so the GPU falls behind. CUDA's launch queue
// (gpu::kLaunchQueueDepth = 1024 per stream) then holds the CPU from about call 1036 on,
// when copy k - 1024 has not ended by the call's start: call k returns 5 us after it ends.
TEST(Replay, LaunchQueueHoldsTheCpuBack) {
  NEED_ENGINE();
  std::vector<std::string> ev;
  const int n = 1100;
  char b[512];
  for (int k = 0; k < n; ++k) {
    ev.push_back(call("cudaMemcpyAsync", 1, 5.0 * k, 5, k + 1));
    std::snprintf(b, sizeof b,
                  R"JSON({"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pinned -> Device)","pid":0,"tid":7,"ts":%.3f,"dur":4,"args":{"device":0,"stream":7,"correlation":%d,"bytes":10000000}})JSON",
                  7 + 5.0 * k, k + 1);
    ev.push_back(b);
  }
  auto res = replay({trace_doc(ev)});
  const auto& r = res.ranks[0];
  const double copy_s = r.gpu_end[0] - r.gpu_start[0];
  EXPECT_NEAR(copy_s, 1e-6 + 105e-9 + 1e7 / (16 * 16e9 / 8 * (128.0 / 130.0) * (256.0 / 280.0) * 0.914), 1e-9);
  EXPECT_NEAR(r.cpu_end[0][1030], 5155 * us, 1e-9);  // copy 6 ended before the call: as measured
  for (int k : {1040, 1070, n - 1}) EXPECT_NEAR(r.cpu_end[0][k], r.gpu_end[k - 1024] + 5 * us, 1e-9) << "call " << k;
  EXPECT_GT(r.cpu_end[0][n - 1], 25e-3);  // held back: 5.5 ms without the queue
}

// The same CPU measured with its queue full (each call from 1077 on waits for kernel
// k - 1024, then returns 5 us later): the self-replay ends every call when it was measured
// to, counting the wait once.
TEST(Replay, LaunchQueueWaitIsNotCountedTwice) {
  NEED_ENGINE();
  std::vector<std::string> ev;
  std::vector<double> end;
  double t = 0;
  for (int k = 0; k < 1100; ++k) {
    const double free_at = k >= 1024 ? 107 + 100.0 * (k - 1024) : 0;
    end.push_back(std::max(t, free_at) + 5);
    ev.push_back(call("cudaLaunchKernel", 1, t, end.back() - t, k + 1));
    ev.push_back(kernel("k", 7, 7 + 100.0 * k, 100, k + 1));
    t = end.back();
  }
  auto res = replay({trace_doc(ev)});
  const auto& r = res.ranks[0];
  for (int k : {0, 1076, 1077, 1078, 1099}) EXPECT_NEAR(r.cpu_end[0][k], end[k] * us, 1e-9) << "call " << k;
}

// An all-reduce of 14.4 MB between two ranks that arrive 500 us apart: nobody moves data
// before the last rank arrives, then the ring flow (S bytes each way for n = 2) crosses the
// switch at the Gen4 x16 rate x 0.914 (pcie.link.efficiency), then NCCL's latency;
// both kernels end together.
TEST(Replay, CollectiveWaitsForEveryRank) {
  NEED_ENGINE();
  const std::string dist0 = R"("distributedInfo":{"rank":0,"world_size":2,"pg_config":[{"pg_name":"0","backend_config":"cuda:nccl","ranks":[0,1]}]},)";
  const std::string dist1 = R"("distributedInfo":{"rank":1,"world_size":2,"pg_config":[{"pg_name":"0","backend_config":"cuda:nccl","ranks":[0,1]}]},)";
  const std::string args = R"(,"Collective name":"allreduce","In msg nelems":3600000,"dtype":"Float","Group size":2,"Process Group Name":"0","Process Group Ranks":"[0, 1]")";
  const char* name = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)";
  auto r0 = trace_doc({call("cudaLaunchKernel", 1, 0, 5, 1), kernel(name, 20, 7, 3000, 1, args)}, dist0);
  auto r1 = trace_doc({call("cudaFree", 1, 0, 500, 9), call("cudaLaunchKernel", 1, 500, 5, 1), kernel(name, 20, 507, 2500, 1, args)}, dist1);
  auto res = replay({r0, r1});
  const double bytes = 3600000.0 * 4;
  const double bw = 16 * 16e9 / 8 * (128.0 / 130.0) * (256.0 / 280.0) * 0.914;
  const double expected = 507 * us + bytes / bw + 105e-9 + collective::latency_s(collective::Protocol::simple, collective::LinkClass::pcie, 2);
  EXPECT_NEAR(res.ranks[0].gpu_start[0], 7 * us, 1e-12);  // rank 0's kernel starts and waits
  EXPECT_NEAR(res.ranks[0].gpu_end[0], expected, 1e-9);
  EXPECT_NEAR(res.ranks[1].gpu_end[0], expected, 1e-9);
  EXPECT_EQ(res.collectives, 1u);
  EXPECT_EQ(res.flows, 2u);
}

// Host-to-device copies of two ranks share the host's x16 uplink: each takes twice as long
// as alone (26.33 MB at Gen4 x16's 26.33 GB/s = 1 ms alone).
TEST(Replay, CopiesContendForTheSwitchUplink) {
  NEED_ENGINE();
  const std::string memcpy_ev =
      R"JSON({"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pinned -> Device)","pid":0,"tid":7,"ts":7,"dur":1000,"args":{"device":0,"stream":7,"correlation":1,"bytes":28807090}})JSON";
  const auto doc = trace_doc({call("cudaMemcpyAsync", 1, 0, 5, 1), memcpy_ev}, R"("distributedInfo":{"rank":0,"world_size":2},)");
  auto res = replay({doc});
  const double bw = 16 * 16e9 / 8 * (128.0 / 130.0) * (256.0 / 280.0) * 0.914;  // x pcie.link.efficiency
  const double latency = 1e-6 + 105e-9;  // root complex + one switch
  for (int r = 0; r < 2; ++r) {
    EXPECT_NEAR(res.ranks[r].gpu_start[0], 7 * us, 1e-12);
    EXPECT_NEAR(res.ranks[r].gpu_end[0], 7 * us + latency + 2 * 28807090.0 / bw, 1e-7) << "rank " << r;
  }
}

TEST(Replay, MoreRanksThanGpusIsAnError) {
  NEED_ENGINE();
  const auto doc = trace_doc({call("cudaLaunchKernel", 1, 0, 5, 1), kernel("a", 7, 7, 100, 1)});
  sim::ReplayOptions opt;
  opt.ranks = 3;
  try {
    replay({doc}, opt);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("3 ranks (--ranks) but topology \"two-gpu-switch\" has only 2 GPUs (give --ranks 2 or fewer, or a topology with more GPUs)"), std::string::npos) << e.what();
  }
}

// Two CPU threads: thread 2 (like PyTorch's autograd thread) starts its call 30 us after
// thread 1's synchronize returns. When the GPU work thread 1 waits for takes 50 us longer,
// thread 2's call moves by the same 50 us: the threads are coupled through the trigger, not
// replayed independently.
TEST(Replay, CrossThreadTriggerMovesTheWaitingThread) {
  NEED_ENGINE();
  const auto doc = trace_doc({call("cudaLaunchKernel", 1, 0, 5, 1), kernel("a", 7, 7, 1000, 1),
                              call("cudaStreamSynchronize", 1, 10, 1000, 2),  // returns at 1010 us
                              call("cudaLaunchKernel", 2, 0, 1, 9), kernel("z", 8, 3, 1, 9),
                              call("cudaLaunchKernel", 2, 1040, 5, 3), kernel("b", 8, 1047, 10, 3)});
  sim::ReplayOptions opt;
  opt.launch_latency_s = 52 * us;  // kernel a ends 50 us later than measured: at 1057 us
  auto res = replay({doc}, opt);
  const auto& r = res.ranks[0];
  // Thread order of import: "1/1" first (thread 0), "1/2" (thread 1).
  EXPECT_NEAR(r.cpu_end[0][1], 1060 * us, 1e-12);       // the synchronize returns 50 us late
  EXPECT_NEAR(r.cpu_start[1][1], 1060 * us + 30 * us, 1e-12);  // and the other thread follows it
}

// An LL128 all-reduce on two V100s of a DGX-1 (the trace names the protocol; NCCL's tuner
// would pick Simple at this size): replay adds
// what the nccl-tests emulation adds after the flows, NCCL's latency and each GPU's LL128
// processing time (bus bytes / 294 GB/s, 14.3 us here), so the two give the same time.
TEST(Replay, V100Ll128AllReduceTakesTheEmulationsTime) {
  NEED_ENGINE();
  const std::string dist = R"("distributedInfo":{"rank":%d,"world_size":2,"pg_config":[{"pg_name":"0","backend_config":"cuda:nccl","ranks":[0,1]}]},)";
  const std::string args = R"(,"Collective name":"allreduce","In msg nelems":1048576,"dtype":"Float","Group size":2,"Process Group Name":"0","Process Group Ranks":"[0, 1]")";
  // NCCL >= 2.19's name: the protocol that ran (older names give the kernel's entry point).
  const char* name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL128(ncclDevKernelArgsStorage<4096ul>)";
  std::vector<std::string> docs;
  for (int rank = 0; rank < 2; ++rank) {
    char d[256];
    std::snprintf(d, sizeof d, dist.c_str(), rank);
    docs.push_back(trace_doc({call("cudaLaunchKernel", 1, 0, 5, 1), kernel(name, 20, 7, 100, 1, args)}, d));
  }
  static TempDir dir;
  std::vector<trace::Workload> w;
  for (size_t i = 0; i < docs.size(); ++i) w.push_back(trace::import_kineto(dir.write("v" + std::to_string(i) + ".json", docs[i])));
  const auto topology = topo::Topology::load("dgx1-v100");
  const auto res = sim::Replay(topology, std::move(w), {}).run();
  const auto f = composim::testing::collective_row("--bytes 4M --gpus 2 --topology dgx1-v100 --proto LL128");
  ASSERT_EQ(f[9], "LL128");
  EXPECT_NEAR(std::stod(f[18]), 4194304.0 / 294e9 * 1e6, 0.001);  // 2(n-1)/n = 1: the bus bytes are the buffer
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_NEAR(res.ranks[rank].gpu_start[0], 7 * us, 1e-12);
    EXPECT_NEAR((res.ranks[rank].gpu_end[0] - res.ranks[rank].gpu_start[0]) / us, std::stod(f[5]), 0.01) << "rank " << rank;
  }
}

namespace {
// Rank r's trace of a send to or a receive from the other rank, of `nelems` floats, launched
// at `at_us` (one kernel each, `count` times, 100 us apart).
std::string p2p_trace(int rank, bool send, double at_us, long nelems, int count = 1, const char* group = "0", const char* step = nullptr) {
  char d[256];
  std::snprintf(d, sizeof d, R"("distributedInfo":{"rank":%d,"world_size":2,"pg_config":[{"pg_name":"0","backend_config":"cuda:nccl","ranks":[0,1]}]},)", rank);
  char args[512];
  std::snprintf(args, sizeof args,
                R"(,"Collective name":"%s","In msg nelems":%ld,"dtype":"Float","Group size":2,"Process Group Name":"%s","Process Group Ranks":"[0, 1]","%s":%d)",
                send ? "send" : "recv", nelems, group, send ? "Dst Rank" : "Src Rank", 1 - rank);
  std::vector<std::string> ev;
  if (at_us > 0) ev.push_back(call("cudaFree", 1, 0, at_us, 99));  // the CPU is busy until then
  if (step)  // one profiler step around everything
    ev.push_back(step_mark(step, "0", std::to_string(static_cast<int>(at_us) + 100 * count + 100)));
  for (int k = 0; k < count; ++k) {
    ev.push_back(call("cudaLaunchKernel", 1, at_us + 100 * k, 5, k + 1));
    ev.push_back(kernel("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", 20, at_us + 100 * k + 7, 90, k + 1, args));
  }
  return trace_doc(ev, d);
}
}  // namespace

// A send of 14.4 MB from rank 0 and its receive on rank 1, posted 500 us later: no data
// moves before the receive is posted (NCCL's rendezvous), then one flow crosses the switch
// at the Gen4 x16 rate x 0.914 (Simple, efficiency 1), plus the route's latency and one
// step of NCCL's latency; both kernels end together.
TEST(Replay, SendPairsWithItsReceive) {
  NEED_ENGINE();
  auto res = replay({p2p_trace(0, true, 0, 3600000), p2p_trace(1, false, 500, 3600000)});
  const double bw = 16 * 16e9 / 8 * (128.0 / 130.0) * (256.0 / 280.0) * 0.914;
  const double expected = 507 * us + 3600000.0 * 4 / bw + 105e-9 + collective::latency_s(collective::Protocol::simple, collective::LinkClass::pcie, 1);
  EXPECT_NEAR(res.ranks[0].gpu_start[0], 7 * us, 1e-12);  // the send starts and waits
  EXPECT_NEAR(res.ranks[0].gpu_end[0], expected, 1e-9);
  EXPECT_NEAR(res.ranks[1].gpu_end[0], expected, 1e-9);
  EXPECT_EQ(res.p2p_paired, 1u);
  EXPECT_EQ(res.p2p_at_measured_duration, 0u);
  EXPECT_EQ(res.collectives, 0u);
  EXPECT_EQ(res.flows, 1u);
}

namespace {
// One send or receive of a batched kernel: its direction, its peer and its floats.
struct Part {
  bool send;
  int peer;
  long nelems;
};
// Rank `rank` of a job of `world` ranks: one send/recv kernel launched at `at_us`. Batched
// (`batched`): each part's record_param_comms just before the launch, the kernel naming
// none, as batch_isend_irecv's; else a single send or receive naming its peer.
// Ranks [0, world) as a list's items ("0, 1, 2").
std::string ranks_upto(int world) {
  std::string ranks;
  for (int r = 0; r < world; ++r) ranks += (r ? ", " : "") + std::to_string(r);
  return ranks;
}
// distributedInfo of rank `rank` of a job of `world` ranks, one process group "0" of them all.
std::string job_info(int rank, int world) {
  return "\"distributedInfo\":{\"rank\":" + std::to_string(rank) + ",\"world_size\":" + std::to_string(world) +
         ",\"pg_config\":[{\"pg_name\":\"0\",\"backend_config\":\"cuda:nccl\",\"ranks\":[" + ranks_upto(world) + "]}]},";
}
// A send's or receive's args on process group "0" of `world` ranks, as record_param_comms
// (or a single one's kernel) gives them.
std::string part_args(const Part& p, int world) {
  return std::string("\"Collective name\":\"") + (p.send ? "send" : "recv") + "\",\"In msg nelems\":" + std::to_string(p.nelems) +
         ",\"dtype\":\"Float\",\"Group size\":" + std::to_string(world) + ",\"Process Group Name\":\"0\",\"Process Group Ranks\":\"[" +
         ranks_upto(world) + "]\",\"" + (p.send ? "Dst Rank" : "Src Rank") + "\":" + std::to_string(p.peer);
}

std::string batch_trace(int rank, int world, double at_us, const std::vector<Part>& parts, bool batched = true) {
  const std::string d = job_info(rank, world);
  auto args = [&](const Part& p) { return part_args(p, world); };
  std::vector<std::string> ev;
  if (at_us > 0) ev.push_back(call("cudaFree", 1, 0, at_us, 99));  // the CPU is busy until then
  if (batched)
    for (size_t k = 0; k < parts.size(); ++k)
      ev.push_back(R"({"ph":"X","cat":"cpu_op","name":"record_param_comms","pid":1,"tid":1,"ts":)" + std::to_string(at_us + 0.5 * static_cast<double>(k)) +
                   R"(,"dur":0.2,"args":{"External id":)" + std::to_string(100 + k) + "," + args(parts[k]) + "}}");
  ev.push_back(call("cudaLaunchKernel", 1, at_us + 2, 5, 1));
  ev.push_back(kernel("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", 20, at_us + 9, 90, 1, batched ? "" : "," + args(parts.front())));
  return trace_doc(ev, d);
}

// A send of `nelems` floats between two A100s under one Gen4 x16 switch: one flow at the
// links' TLP rate x 0.914 (Simple), then the route's 105 ns and one step of NCCL's latency.
double pcie_send_s(long nelems) {
  const double bw = 16 * 16e9 / 8 * (128.0 / 130.0) * (256.0 / 280.0) * 0.914;
  return static_cast<double>(nelems) * 4.0 / bw + 105e-9 + collective::latency_s(collective::Protocol::simple, collective::LinkClass::pcie, 1);
}
}  // namespace

// Two ranks swap 14.4 MB in one batched kernel each (batch_isend_irecv of a send and a
// receive), rank 1 launching 500 us later: each part pairs with the other rank's and moves
// once both kernels have launched, as SendPairsWithItsReceive's single send; the switch's
// links carry the two directions apart, so both flows run at the full rate and both
// kernels end together. A part's size must be its peer's.
TEST(Replay, BatchedSendsAndReceivesPairPartByPart) {
  NEED_ENGINE();
  const long n = 3600000;
  EXPECT_EQ(replay_error({batch_trace(0, 2, 0, {{false, 1, 1000}, {true, 1, 1000}}), batch_trace(1, 2, 0, {{true, 0, 1000}, {false, 0, 1024}})}),
            "t1.json: rank 1, send #0 from rank 0 to rank 1 on communicator \"0\": mismatched send/recv: rank 0 sends 3.9 KiB, rank 1 receives 4.0 KiB; "
            "rank 0 sends 1 time(s) to rank 1 on communicator \"0\" (t0.json), which receives 1 time(s) from it (t1.json)");
  auto res = replay({batch_trace(0, 2, 0, {{true, 1, n}, {false, 1, n}}), batch_trace(1, 2, 500, {{false, 0, n}, {true, 0, n}})});
  const double expected = 509 * us + pcie_send_s(n);
  EXPECT_NEAR(res.ranks[0].gpu_start[0], 7 * us, 1e-12);  // rank 0's kernel starts and waits (its trace begins at the launch)
  EXPECT_NEAR(res.ranks[0].gpu_end[0], expected, 1e-9);
  EXPECT_NEAR(res.ranks[1].gpu_end[0], expected, 1e-9);
  EXPECT_EQ(res.p2p_paired, 2u);
  EXPECT_EQ(res.p2p_batches_paired, 2u);
  EXPECT_EQ(res.p2p_at_measured_duration, 0u);
  EXPECT_EQ(res.flows, 2u);
}

// A pipeline's middle stage: rank 1 receives 14.4 MB from rank 0 and sends 7.2 MB to rank 2
// in one batched kernel, its peers each a single send or receive, all launched at once (7 us
// into each trace, which begins at the first launch). The two flows use different links;
// rank 2's kernel ends with the smaller transfer, rank 1's batched one with its last part,
// rank 0's send.
TEST(Replay, BatchedKernelEndsWithItsLastPart) {
  NEED_ENGINE();
  const long a = 3600000, b = 1800000;
  auto res = replay({batch_trace(0, 3, 0, {{true, 1, a}}, false), batch_trace(1, 3, 0, {{false, 0, a}, {true, 2, b}}), batch_trace(2, 3, 0, {{false, 1, b}}, false)},
                    {}, &four_gpu_topology());
  EXPECT_NEAR(res.ranks[0].gpu_end[0], 7 * us + pcie_send_s(a), 1e-9);
  EXPECT_NEAR(res.ranks[1].gpu_end[0], 7 * us + pcie_send_s(a), 1e-9);
  EXPECT_NEAR(res.ranks[2].gpu_end[0], 7 * us + pcie_send_s(b), 1e-9);
  EXPECT_EQ(res.p2p_paired, 2u);
  EXPECT_EQ(res.p2p_batches_paired, 1u);
  EXPECT_EQ(res.p2p_parts_left_out, 0u);
}

// The same middle stage without rank 2's trace: its send to rank 2 cannot be paired and is
// left out (counted, and the run's note says so); the kernel ends with its receive.
TEST(Replay, BatchedPartWithoutItsPeersTraceIsLeftOut) {
  NEED_ENGINE();
  const long a = 3600000, b = 1800000;
  auto res = replay({batch_trace(0, 3, 0, {{true, 1, a}}, false), batch_trace(1, 3, 0, {{false, 0, a}, {true, 2, b}})}, {}, &four_gpu_topology());
  EXPECT_NEAR(res.ranks[1].gpu_end[0], 7 * us + pcie_send_s(a), 1e-9);
  EXPECT_EQ(res.p2p_paired, 1u);
  EXPECT_EQ(res.p2p_batches_paired, 1u);
  EXPECT_EQ(res.p2p_parts_left_out, 1u);
  EXPECT_EQ(res.p2p_at_measured_duration, 0u);
}

namespace {
// One op of a pipeline stage's program: a compute kernel of `dur_us`, or a send/recv kernel of
// its parts (one part and !batched: a single send or receive naming its peer).
struct StageOp {
  double dur_us = 0;
  std::vector<Part> parts;
};
// Megatron's 1F1B schedule for stage s of p with m micro-batches (forward F, backward B us;
// activations and gradients of n floats): warm-up forwards, then one forward and one backward
// each, whose sends and receives to one neighbour are batched as Megatron's
// send_forward_recv_backward and send_backward_recv_forward are, then the cool-down.
std::vector<StageOp> one_f_one_b(int s, int p, int m, double F, double B, long n) {
  std::vector<StageOp> prog;
  auto comm = [&](std::vector<Part> parts) {
    if (!parts.empty()) prog.push_back({0, std::move(parts)});
  };
  const bool first = s == 0, last = s == p - 1;
  auto some = [](bool given, Part part) { return given ? std::vector<Part>{part} : std::vector<Part>{}; };
  auto both = [](std::vector<Part> a, const std::vector<Part>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const auto recv_fwd = some(!first, {false, s - 1, n}), send_fwd = some(!last, {true, s + 1, n});
  const auto recv_bwd = some(!last, {false, s + 1, n}), send_bwd = some(!first, {true, s - 1, n});
  const int warm = std::min(p - s - 1, m), rest = m - warm;
  for (int i = 0; i < warm; ++i) {
    comm(recv_fwd);
    prog.push_back({F, {}});
    comm(send_fwd);
  }
  if (rest > 0) comm(recv_fwd);
  for (int i = 0; i < rest; ++i) {
    prog.push_back({F, {}});
    comm(both(send_fwd, recv_bwd));
    prog.push_back({B, {}});
    comm(i == rest - 1 ? send_bwd : both(send_bwd, recv_fwd));
  }
  for (int i = 0; i < warm; ++i) {
    comm(recv_bwd);
    prog.push_back({B, {}});
    comm(send_bwd);
  }
  return prog;
}

// Stage `rank`'s trace of `prog`: its kernels on one stream, launched 10 us apart from 10 us
// (the CPU runs ahead); a batched kernel's parts recorded just before its launch.
std::string stage_trace(int rank, int world, const std::vector<StageOp>& prog) {
  const std::string d = job_info(rank, world);
  auto args = [&](const Part& p) { return part_args(p, world); };
  std::vector<std::string> ev;
  double gpu = 0;
  int id = 100;
  for (size_t i = 0; i < prog.size(); ++i) {
    const double at = 10.0 + 10.0 * static_cast<double>(i);
    const bool batched = prog[i].parts.size() > 1;
    if (batched)
      for (size_t k = 0; k < prog[i].parts.size(); ++k)
        ev.push_back(R"({"ph":"X","cat":"cpu_op","name":"record_param_comms","pid":1,"tid":1,"ts":)" + std::to_string(at - 3 + 0.5 * static_cast<double>(k)) +
                     R"(,"dur":0.2,"args":{"External id":)" + std::to_string(id++) + "," + args(prog[i].parts[k]) + "}}");
    ev.push_back(call("cudaLaunchKernel", 1, at, 5, static_cast<int>(i) + 1));
    gpu = std::max(gpu, at + 7);
    const double dur = prog[i].parts.empty() ? prog[i].dur_us : 100;
    ev.push_back(kernel(prog[i].parts.empty() ? "gemm" : "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", 20, gpu, dur,
                        static_cast<int>(i) + 1, prog[i].parts.size() == 1 ? "," + args(prog[i].parts.front()) : ""));
    gpu += dur;
  }
  return trace_doc(ev, d);
}
}  // namespace

// A 4-stage 1F1B pipeline of 4 micro-batches (Megatron's schedule, its sends and receives to
// one neighbour batched) on 4 A100s under one switch: no deadlock, and every kernel ends when
// an independent reference says: a stream runs its kernels in order from 7 us; a send/recv
// kernel's parts each take one transfer's time (pcie_send_s: no two share a link direction,
// as a stage's kernel sends at most once and receives at most once) from when both ends'
// kernels have started, and the kernel ends with its last part.
TEST(Replay, PipelineOneForwardOneBackwardBatchesMatchAReference) {
  NEED_ENGINE();
  const int p = 4, m = 4;
  const long n = 1 << 20;
  std::vector<std::vector<StageOp>> progs;
  std::vector<std::string> docs;
  for (int s = 0; s < p; ++s) {
    progs.push_back(one_f_one_b(s, p, m, 1000, 2000, n));
    docs.push_back(stage_trace(s, p, progs.back()));
  }
  const auto res = replay(docs, {}, &four_gpu_topology());
  // The reference: each part keyed (src, dst, k-th of that pair), found on both ranks.
  const double T = pcie_send_s(n);
  std::map<std::tuple<int, int, int>, std::vector<std::pair<int, size_t>>> ends_of;
  std::vector<std::vector<std::vector<std::tuple<int, int, int>>>> keys(p);
  for (int r = 0; r < p; ++r) {
    std::map<std::pair<int, int>, int> count;
    for (size_t i = 0; i < progs[r].size(); ++i) {
      keys[r].emplace_back();
      for (const auto& part : progs[r][i].parts) {
        const int src = part.send ? r : part.peer, dst = part.send ? part.peer : r;
        const auto key = std::make_tuple(src, dst, count[{src, dst}]++);
        keys[r][i].push_back(key);
        ends_of[key].push_back({r, i});
      }
    }
  }
  std::vector<std::vector<double>> start(p), end(p);
  for (int r = 0; r < p; ++r) start[r].assign(progs[r].size(), -1), end[r].assign(progs[r].size(), -1);
  for (bool moved = true; moved;) {
    moved = false;
    for (int r = 0; r < p; ++r)
      for (size_t i = 0; i < progs[r].size(); ++i) {
        if (start[r][i] < 0 && (i == 0 || end[r][i - 1] >= 0)) start[r][i] = i == 0 ? 7 * us : end[r][i - 1], moved = true;
        if (start[r][i] < 0 || end[r][i] >= 0) continue;
        double e = start[r][i] + progs[r][i].dur_us * us;
        bool ready = true;
        for (const auto& key : keys[r][i]) {
          const auto& both = ends_of.at(key);
          ASSERT_EQ(both.size(), 2u);
          const double s1 = start[both[0].first][both[0].second], s2 = start[both[1].first][both[1].second];
          if (s1 < 0 || s2 < 0) ready = false;
          e = std::max(e, std::max(s1, s2) + T);
        }
        if (ready) end[r][i] = e, moved = true;
      }
  }
  for (int r = 0; r < p; ++r)
    for (size_t i = 0; i < progs[r].size(); ++i) {
      ASSERT_GE(end[r][i], 0) << "the reference deadlocks at rank " << r << ", op " << i;
      EXPECT_NEAR(res.ranks[r].gpu_end[i], end[r][i], 1e-9) << "rank " << r << ", op " << i;
    }
  EXPECT_EQ(res.p2p_paired, static_cast<std::uint64_t>(2 * m * (p - 1)));  // each micro-batch's activation and gradient, per boundary
  EXPECT_EQ(res.p2p_at_measured_duration, 0u);
  EXPECT_GT(res.p2p_batches_paired, 0u);
}

// A batched kernel whose record_param_comms the profiler window cut names neither its peer
// nor its process group: it may hold the receives of both of rank 0's sends (a batch holds
// any number), on whichever group, so all run unpaired at their measured durations (not an
// error naming a hang).
TEST(Replay, BatchedKernelNamingNoGroupMayBeTheMissingOnes) {
  NEED_ENGINE();
  std::string cut = p2p_trace(1, false, 0, 1000);
  const auto from = cut.find(",\"Collective name\"");
  cut.erase(from, cut.find(",\"Src Rank\":0") + 13 - from);
  ASSERT_EQ(cut.find("Process Group"), std::string::npos);
  const auto res = replay({p2p_trace(0, true, 0, 1000, 2), cut});
  EXPECT_EQ(res.p2p_at_measured_duration, 3u);
  EXPECT_EQ(res.p2p_peer_batched, 2u);
  EXPECT_EQ(res.p2p_without_peer, 1u);
  EXPECT_EQ(res.p2p_paired, 0u);
}

// Two sends and one receive: the second send would wait for ever. An error naming both
// ranks, their traces and counts, before anything runs; so is a receive of another size,
// and a receive on a process group of another name, which the error points out.
TEST(Replay, SendWithoutItsReceiveIsAnError) {
  NEED_ENGINE();
  const auto error = [](const std::vector<std::string>& docs) { return replay_error(docs); };
  EXPECT_EQ(error({p2p_trace(0, true, 0, 1000, 2), p2p_trace(1, false, 0, 1000, 1)}),
            "t1.json: send #1 from rank 0 to rank 1 on communicator \"0\": rank 1 never receives it, which rank 0 sends; the job would hang: rank 0 sends 2 "
            "time(s) to rank 1 on communicator \"0\" (t0.json), which receives 1 time(s) from it (t1.json)");
  EXPECT_EQ(error({p2p_trace(0, true, 0, 1000), p2p_trace(1, false, 0, 1024)}),
            "t1.json: rank 1, send #0 from rank 0 to rank 1 on communicator \"0\": mismatched send/recv: rank 0 sends 3.9 KiB, rank 1 receives 4.0 KiB; "
            "rank 0 sends 1 time(s) to rank 1 on communicator \"0\" (t0.json), which receives 1 time(s) from it (t1.json)");
  EXPECT_EQ(error({p2p_trace(0, true, 0, 1000), p2p_trace(1, false, 0, 1000, 1, "1")}),
            "t1.json: send #0 from rank 0 to rank 1 on communicator \"0\": rank 1 never receives it, which rank 0 sends; the job would hang: rank 0 sends 1 "
            "time(s) to rank 1 on communicator \"0\" (t0.json), which receives 0 time(s) from it (t1.json); rank 1 receives 1 time(s) from rank 0 on other "
            "communicators: do the traces name the process group alike (\"Process Group Name\")?");
  // A receive that names no peer (a batched one) may be the send's match: both then run
  // unpaired at their measured durations (the run's note says so), not an error.
  std::string batched = p2p_trace(1, false, 0, 1000);
  batched.erase(batched.find(",\"Src Rank\":0"), 13);
  EXPECT_EQ(error({p2p_trace(0, true, 0, 1000), batched}), "no error");
  // A trace ending with a send's record and not its kernel (its window ended inside a
  // batch_isend_irecv): the error says so.
  std::string ends_in_batch = p2p_trace(0, true, 0, 1000);
  ends_in_batch.replace(ends_in_batch.rfind("]}"), 2,
                        R"(,{"ph":"X","cat":"cpu_op","name":"record_param_comms","pid":1,"tid":1,"ts":300,"dur":1,"args":{"External id":9,)"
                        R"("Collective name":"send","In msg nelems":1000,"dtype":"Float","Process Group Name":"0","Dst Rank":1}}]})");
  EXPECT_NE(error({ends_in_batch, p2p_trace(1, false, 0, 1000, 2)})
                .find("; rank 0's trace has 1 send/recv record_param_comms whose kernel it does not hold: its profiler window may end inside a batched "
                      "send/recv, or the profiler lost kernels"),
            std::string::npos)
      << error({ends_in_batch, p2p_trace(1, false, 0, 1000, 2)});
  // Three sends that one batched receive cannot all be: still an error, which says so.
  EXPECT_NE(error({p2p_trace(0, true, 0, 1000, 3), batched}).find("rank 1's trace has 1 receive(s) on it that name no peer"), std::string::npos);
  // Traces of different profiler windows pair by order no more than collectives do.
  EXPECT_EQ(error({p2p_trace(0, true, 0, 1000, 1, "0", "ProfilerStep#1"), p2p_trace(1, false, 0, 1000, 1, "0", "ProfilerStep#2")}),
            "t1.json: rank 1, send #0 from rank 0 to rank 1 on communicator \"0\": this rank launches it in ProfilerStep#2, rank 0 in ProfilerStep#1 "
            "(t0.json): sends and receives between two ranks are paired by their order in each trace, so the traces must cover the same steps (give "
            "traces of one profiler schedule)");
}

// A step whose mark closes as its synchronize returns ends when the replayed synchronize
// does: the kernel ends 50 us later than measured (launch latency 52 us), so the step is
// 1060 us (kernel end 1057 + the measured 3 us return), not the measured 1010 us. (It used
// to be cut at the call's measured length: a slower replay read as no slower.)
TEST(Replay, StepClosedBySynchronizeEndsWithIt) {
  NEED_ENGINE();
  static TempDir dir;
  const auto doc = trace_doc({step_mark("ProfilerStep#1", "0", "1010"),
                              call("cudaLaunchKernel", 1, 0, 5, 1), kernel("a", 7, 7, 1000, 1), call("cudaStreamSynchronize", 1, 10, 1000, 2)});
  const auto w = trace::import_kineto(dir.write("step.json", doc));
  sim::ReplayOptions opt;
  opt.launch_latency_s = 52 * us;
  const auto& topology = two_gpu_topology();
  const auto res = sim::Replay(topology, {w}, opt).run();
  const auto rep = sim::analyse({w}, res, 0);
  ASSERT_EQ(rep.iterations.size(), 1u);
  EXPECT_NEAR(rep.iterations[0].measured_s, 1010 * us, 1e-12);
  EXPECT_NEAR(rep.iterations[0].predicted_s, 1060 * us, 1e-9);
  // A mark closing 1 ns before the call returns (profiler and CUPTI clocks differ) follows
  // the call's return too, 1 ns before it.
  std::string early = doc;
  early.replace(early.find("\"dur\":1010}"), 11, "\"dur\":1009.999}");
  const auto w2 = trace::import_kineto(dir.write("step_early.json", early));
  const auto rep2 = sim::analyse({w2}, res, 0);
  EXPECT_NEAR(rep2.iterations[0].predicted_s, 1060 * us - 1e-9, 1e-12);
}

// A synchronize measured without waiting (its stream's work had ended) begins after its gap
// and lasts its measured 60 us: its start is not its end. Steps that begin at it keep their
// measured 100 us (they read +60% and -60% when its start was taken at its end).
TEST(Replay, SynchronizeThatDidNotWaitKeepsItsStart) {
  NEED_ENGINE();
  static TempDir dir;
  const auto doc = trace_doc({step_mark("ProfilerStep#1", "0", "100"),
                              step_mark("ProfilerStep#2", "100", "100"),
                              call("cudaLaunchKernel", 1, 0, 5, 1), kernel("k", 7, 7, 10, 1), call("cudaLaunchKernel", 1, 50, 5, 2),
                              kernel("k", 7, 57, 10, 2), call("cudaStreamSynchronize", 1, 100, 60, 3), call("cudaLaunchKernel", 1, 190, 5, 4),
                              kernel("k", 7, 197, 2, 4)});
  const auto w = trace::import_kineto(dir.write("nw.json", doc));
  const auto& topology = two_gpu_topology();
  const auto res = sim::Replay(topology, {w}, {}).run();
  EXPECT_NEAR(res.ranks[0].cpu_start[0][2], 100 * us, 1e-12);
  EXPECT_NEAR(res.ranks[0].cpu_end[0][2], 160 * us, 1e-12);
  const auto rep = sim::analyse({w}, res, 0);
  ASSERT_EQ(rep.iterations.size(), 2u);
  for (const auto& it : rep.iterations) EXPECT_NEAR(it.predicted_s, 100 * us, 1e-12) << it.name;
}

// A mark inside a call the replay lengthens moves continuously: 1 ns later in the trace is
// at most a few ns later in the replay, wherever in the call (the kernel ends 48 us later
// than measured with a 50 us launch latency, so the 1000 us synchronize lasts 1048 us).
TEST(Replay, StepMarkInsideACallMovesContinuously) {
  NEED_ENGINE();
  static TempDir dir;
  auto doc = [](const std::string& mark_us) {
    return trace_doc({step_mark("ProfilerStep#1", "0", mark_us),
                      call("cudaLaunchKernel", 1, 0, 5, 1), kernel("k", 7, 7, 1000, 1), call("cudaStreamSynchronize", 1, 10, 1000, 2),
                      call("cudaLaunchKernel", 1, 1050, 5, 3), kernel("k2", 7, 1057, 10, 3)});
  };
  sim::ReplayOptions opt;
  opt.launch_latency_s = 50 * us;
  const auto& topology = two_gpu_topology();
  const auto res = sim::Replay(topology, {trace::import_kineto(dir.write("m.json", doc("510")))}, opt).run();
  double previous = 0, previous_mark = 0;
  for (const char* mark : {"15", "259.999", "260", "509.999", "510", "510.001", "759.999", "760", "1009.999", "1010"}) {
    const auto rep = sim::analyse({trace::import_kineto(dir.write("m.json", doc(mark)))}, res, 0);
    const double t = rep.iterations[0].predicted_s;
    EXPECT_GT(t, previous) << mark;
    if (std::stod(mark) - previous_mark < 0.0015) {  // 1 ns after the previous mark
      EXPECT_LT(t - previous, 5e-9) << mark << " us jumps";
    }
    previous = t;
    previous_mark = std::stod(mark);
  }
  // The ends keep their offsets: 5 us into the call, and the call's replayed return.
  EXPECT_NEAR(sim::analyse({trace::import_kineto(dir.write("m.json", doc("15")))}, res, 0).iterations[0].predicted_s, 5 * us + 10 * us, 1e-12);
  EXPECT_NEAR(sim::analyse({trace::import_kineto(dir.write("m.json", doc("1010")))}, res, 0).iterations[0].predicted_s, 1058 * us, 1e-9);
}

// A synchronize measured without waiting that a cross-thread trigger starts (the main
// thread resuming after the autograd thread's launch) lasts its measured 60 us from its
// own start: the self-replay's steps are the measured 100 and 200 us (step 2 was -30%).
TEST(Replay, TriggeredSynchronizeThatDidNotWaitLastsItsDuration) {
  NEED_ENGINE();
  static TempDir dir;
  const auto doc = trace_doc({step_mark("ProfilerStep#1", "0", "100"),
                              step_mark("ProfilerStep#2", "100", "200"),
                              call("cudaLaunchKernel", 1, 0, 5, 1), kernel("A", 7, 7, 10, 1), call("cudaLaunchKernel", 2, 30, 5, 2),
                              kernel("B", 8, 37, 3, 2), call("cudaStreamSynchronize", 1, 100, 60, 3), call("cudaLaunchKernel", 1, 200, 5, 4),
                              kernel("C", 7, 207, 50, 4), call("cudaStreamSynchronize", 1, 206, 52, 5)});
  const auto w = trace::import_kineto(dir.write("trig.json", doc));
  const auto& topology = two_gpu_topology();
  const auto res = sim::Replay(topology, {w}, {}).run();
  EXPECT_NEAR(res.ranks[0].cpu_end[0][1] - res.ranks[0].cpu_start[0][1], 60 * us, 1e-12);  // the synchronize
  const auto rep = sim::analyse({w}, res, 0);
  ASSERT_EQ(rep.iterations.size(), 2u);
  EXPECT_NEAR(rep.iterations[0].predicted_s, 100 * us, 1e-12);
  EXPECT_NEAR(rep.iterations[1].predicted_s, 200 * us, 1e-12);
}

namespace {
// Rank r's trace of all-reduces of 1 MiB floats numbered `seqs` by PyTorch ("Seq"; none
// when empty), launched 100 us apart, each kernel lasting 90 us.
// (On a job of `world` ranks, the group being `group` of ranks `members`.)
std::string seq_trace(int rank, const std::vector<int>& seqs, bool give_seq = true, long nelems = 262144, int world = 2,
                      const std::vector<int>& members = {0, 1}, const std::string& group = "0") {
  std::string list;
  for (int m : members) list += (list.empty() ? "" : ", ") + std::to_string(m);
  const std::string d = "\"distributedInfo\":{\"rank\":" + std::to_string(rank) + ",\"world_size\":" + std::to_string(world) + "},";
  std::vector<std::string> ev;
  for (size_t k = 0; k < seqs.size(); ++k) {
    const std::string args = R"(,"Collective name":"allreduce","In msg nelems":)" + std::to_string(k == 1 && rank == 1 ? nelems : 262144) +
                             R"(,"dtype":"Float","Group size":)" + std::to_string(members.size()) + R"(,"Process Group Name":")" + group +
                             R"(","Process Group Ranks":"[)" + list + "]\"" + (give_seq ? ",\"Seq\":" + std::to_string(seqs[k]) : "");
    ev.push_back(call("cudaLaunchKernel", 1, 100.0 * k, 5, static_cast<int>(k) + 1));
    ev.push_back(kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", 20, 100.0 * k + 7, 90, static_cast<int>(k) + 1, args));
  }
  return trace_doc(ev, d);
}

// A job's distributedInfo, and the args of an all-reduce of 1 MiB floats numbered `seq` on
// process group `group` of two ranks `members` ("[0, 1]").
std::string dist_info(int rank, int world) {
  return "\"distributedInfo\":{\"rank\":" + std::to_string(rank) + ",\"world_size\":" + std::to_string(world) + "},";
}
std::string all_reduce_args(const char* group, const char* members, int seq) {
  return std::string(R"(,"Collective name":"allreduce","In msg nelems":262144,"dtype":"Float","Group size":2,"Process Group Name":")") + group +
         R"(","Process Group Ranks":")" + members + R"(","Seq":)" + std::to_string(seq);
}
constexpr const char* kAllReduceKernel = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)";
}  // namespace

// Rank 0's profiler window starts one all-reduce earlier than rank 1's, and ends one
// earlier: by PyTorch's "Seq" the two in both windows (5 and 6) are matched and end
// together; Seq 4 (only rank 0's) and Seq 7 (only rank 1's) each run alone at their
// measured 90 us. By order, as without "Seq", rank 0's 4 would pair with rank 1's 5.
// Seq 5 ended 197 us into rank 0's trace, 97 us into rank 1's: rank 1's trace began 100 us
// after rank 0's, when rank 0 launched Seq 5. Rank 1 starts in the replay when rank 0's
// launch call does, so both kernels of Seq 5 start at 107 us (launch at 100, + 2 us launch
// latency after the 5 us call) and neither waits for the other.
TEST(Replay, CollectivesMatchByPyTorchSeq) {
  NEED_ENGINE();
  auto res = replay({seq_trace(0, {4, 5, 6}), seq_trace(1, {5, 6, 7})});
  EXPECT_EQ(res.collectives, 2u);
  EXPECT_EQ(res.collectives_outside_window, 2u);
  const auto &r0 = res.ranks[0], &r1 = res.ranks[1];
  EXPECT_NEAR(r0.gpu_end[0] - r0.gpu_start[0], 90 * us, 1e-12);  // Seq 4, alone
  EXPECT_NEAR(r1.gpu_end[2] - r1.gpu_start[2], 90 * us, 1e-12);  // Seq 7, alone
  EXPECT_NEAR(r0.gpu_start[1], 107 * us, 1e-12);                 // Seq 5 on both, from 107 us
  EXPECT_NEAR(r1.gpu_start[0], 107 * us, 1e-12);
  EXPECT_NEAR(r0.gpu_end[1], r1.gpu_end[0], 1e-12);
  EXPECT_NEAR(r0.gpu_end[2], r1.gpu_end[1], 1e-12);              // Seq 6 on both
  EXPECT_GT(r0.gpu_end[2] - r0.gpu_start[2], 0.0);
  ASSERT_EQ(res.notes.size(), 2u);
  EXPECT_EQ(res.notes[0],
            "1 rank(s) whose traces began later than another member's (their first collectives differ, by PyTorch's \"Seq\") start in the replay when "
            "the rank whose trace began first reaches the moment they began, told by the ends of collectives they share: rank 1 at 0.100 ms into rank 0's "
            "trace");
  EXPECT_NE(res.notes[1].find("2 collective kernel(s) launched before or after another member's trace window"), std::string::npos) << res.notes[1];
}

// Without "Seq" the same traces pair by order: three collectives, rank 0's first with rank
// 1's first. With "Seq" on one rank only, order too, with a note.
TEST(Replay, CollectivesWithoutSeqMatchByOrder) {
  NEED_ENGINE();
  auto res = replay({seq_trace(0, {4, 5, 6}), seq_trace(1, {5, 6, 7}, false)});
  EXPECT_EQ(res.collectives, 3u);
  EXPECT_EQ(res.collectives_outside_window, 0u);
  EXPECT_NEAR(res.ranks[0].gpu_end[0], res.ranks[1].gpu_end[0], 1e-12);
  ASSERT_EQ(res.notes.size(), 1u);
  EXPECT_EQ(res.notes[0],
            "process group \"0\" (ranks [0, 1]): 1 trace(s) number its collectives by PyTorch's \"Seq\", 1 do not: its collectives are matched by their order in "
            "each trace");
}

// A Seq inside a member's window that it does not launch: it never reaches it (the job would
// hang), an error naming its Seq and the member's window; a size mismatch on one Seq is
// named without the order-shift hint.
TEST(Replay, CollectiveMissingInsideTheSeqWindowIsAnError) {
  NEED_ENGINE();
  const auto error = [](const std::vector<std::string>& docs) { return replay_error(docs); };
  EXPECT_EQ(error({seq_trace(0, {4, 5, 6}), seq_trace(1, {4, 6})}),
            "t0.json: all_reduce Seq 5 of communicator \"0\" (1.0 MiB): ranks [1] (t1.json) never reach this collective, which ranks [0] launch; the job would "
            "hang; rank 1's trace has the collectives Seq 4 to 6 of this process group but not this one");
  EXPECT_EQ(error({seq_trace(0, {4, 5, 6}), seq_trace(1, {4, 5, 6}, true, 1000)}),
            "t1.json: rank 1, collective Seq 5 of communicator \"0\": mismatched collective: this rank has all_reduce of 3.9 KiB, rank 0 has all_reduce of "
            "1.0 MiB (t0.json)");
  // Windows that share no collective: nothing could be matched.
  EXPECT_EQ(error({seq_trace(0, {4, 5}), seq_trace(1, {6, 7})}),
            "t1.json: process group \"0\": rank 0's trace (t0.json) has its collectives \"Seq\" 4 to 5, rank 1's \"Seq\" 6 to 7: they share none, so the "
            "traces are of different profiler windows (give traces of one profiler schedule)");
}


// Three ranks: rank 1's window starts at Seq 6, rank 2's holds 4 to 6 but not 5. Seq 5 is
// missing inside rank 2's window only: the error names rank 2, not rank 1 (whose window
// does not reach it).
TEST(Replay, CollectiveMissingInsideOneMembersWindowNamesThatMember) {
  NEED_ENGINE();
  const std::vector<int> g{0, 1, 2};
  EXPECT_EQ(replay_error({seq_trace(0, {4, 5, 6}, true, 262144, 3, g), seq_trace(1, {6, 7}, true, 262144, 3, g), seq_trace(2, {4, 6}, true, 262144, 3, g)}, &four_gpu_topology()),
            "t0.json: all_reduce Seq 5 of communicator \"0\" (1.0 MiB): ranks [2] (t2.json) never reach this collective, which ranks [0] launch; the job would "
            "hang; rank 2's trace has the collectives Seq 4 to 6 of this process group but not this one");
}

// Three ranks whose windows start one all-reduce apart (rank 0 at Seq 4, rank 1 at 5, rank 2
// at 6): rank 1 is placed by Seq 5, which rank 2 does not have, rank 2 by Seq 6; every
// kernel of Seq 5 and 6 starts as its rank launches it (107 and 207 us), waiting for none.
TEST(Replay, StaggeredWindowsArePlacedPairByPair) {
  NEED_ENGINE();
  const std::vector<int> g{0, 1, 2};
  const auto res = replay({seq_trace(0, {4, 5, 6}, true, 262144, 3, g), seq_trace(1, {5, 6}, true, 262144, 3, g), seq_trace(2, {6}, true, 262144, 3, g)},
                          {}, &four_gpu_topology());
  EXPECT_NEAR(res.ranks[0].gpu_start[1], 107 * us, 1e-12);
  EXPECT_NEAR(res.ranks[1].gpu_start[0], 107 * us, 1e-12);
  EXPECT_NEAR(res.ranks[0].gpu_start[2], 207 * us, 1e-12);
  EXPECT_NEAR(res.ranks[1].gpu_start[1], 207 * us, 1e-12);
  EXPECT_NEAR(res.ranks[2].gpu_start[0], 207 * us, 1e-12);
}

// Group A is ranks [0, 1], group B [1, 2]. Rank 0's trace begins first, rank 2's 50 us
// later, rank 1's 100 us later (told by the ends of A's Seq 5 and B's Seq 8). Rank 2 is
// placed 50 us into rank 0's replay although it shares no collective with it (it used to
// start at 0, then wait in Seq 8), and rank 1 by both: every shared kernel starts as its
// rank launches it (A's Seq 5 at 107 us, B's Seq 8 at 207 us), and B's Seq 7, outside rank
// 1's window, runs alone at 57 us.
TEST(Replay, EveryRankOfLinkedWindowsIsPlaced) {
  NEED_ENGINE();
  auto dist = [](int rank) { return dist_info(rank, 3); };
  const auto args = all_reduce_args;
  const char* name = kAllReduceKernel;
  const auto r0 = trace_doc({call("cudaLaunchKernel", 1, 0, 5, 1), kernel(name, 20, 7, 90, 1, args("A", "[0, 1]", 4)), call("cudaLaunchKernel", 1, 100, 5, 2),
                             kernel(name, 20, 107, 90, 2, args("A", "[0, 1]", 5))},
                            dist(0));
  const auto r1 = trace_doc({call("cudaLaunchKernel", 1, 0, 5, 1), kernel(name, 20, 7, 90, 1, args("A", "[0, 1]", 5)), call("cudaLaunchKernel", 1, 100, 5, 2),
                             kernel(name, 21, 107, 90, 2, args("B", "[1, 2]", 8))},
                            dist(1));
  const auto r2 = trace_doc({call("cudaLaunchKernel", 1, 0, 5, 1), kernel(name, 21, 7, 90, 1, args("B", "[1, 2]", 7)), call("cudaLaunchKernel", 1, 150, 5, 2),
                             kernel(name, 21, 157, 90, 2, args("B", "[1, 2]", 8))},
                            dist(2));
  const auto res = replay({r0, r1, r2}, {}, &four_gpu_topology());
  EXPECT_NEAR(res.ranks[2].gpu_start[0], 57 * us, 1e-12);
  EXPECT_NEAR(res.ranks[2].gpu_end[0], 147 * us, 1e-12);  // Seq 7 alone, at its measured 90 us
  EXPECT_NEAR(res.ranks[0].gpu_start[1], 107 * us, 1e-12);
  EXPECT_NEAR(res.ranks[1].gpu_start[0], 107 * us, 1e-12);
  EXPECT_NEAR(res.ranks[1].gpu_start[1], 207 * us, 1e-12);
  EXPECT_NEAR(res.ranks[2].gpu_start[1], 207 * us, 1e-12);
}

// A window cut by time: rank 1's trace begins 150 us after rank 0's, with the kernel of Seq 5
// (launched before its window: no launch call), which ends 47 us in (197 us in rank 0's).
// Rank 0 synchronizes on Seq 5 from 110 us. Rank 1 is placed after rank 0's last CPU op to
// end before 150 us (the launch at 100-105 us), not after the synchronize, which started
// before 150 us but waits for Seq 5, which waits for rank 1: that would never end.
TEST(Replay, LaterWindowIsPlacedAfterAnOpThatCannotWaitForIt) {
  NEED_ENGINE();
  const std::string d0 = dist_info(0, 2), d1 = dist_info(1, 2);
  auto args = [](int seq) { return all_reduce_args("0", "[0, 1]", seq); };
  const char* name = kAllReduceKernel;
  const auto r0 = trace_doc({call("cudaLaunchKernel", 1, 0, 5, 1), kernel(name, 20, 7, 90, 1, args(4)), call("cudaLaunchKernel", 1, 100, 5, 2),
                             kernel(name, 20, 107, 90, 2, args(5)), call("cudaStreamSynchronize", 1, 110, 88, 3)},
                            d0);
  const auto r1 = trace_doc({kernel(name, 20, 0, 47, 7, args(5)), call("cudaLaunchKernel", 1, 60, 5, 8), kernel(name, 20, 67, 20, 8, args(6))}, d1);
  auto res = replay({r0, r1});
  EXPECT_NEAR(res.ranks[1].gpu_start[0], 150 * us, 1e-12);  // 105 us + the 45 us from the call's end
  EXPECT_NEAR(res.ranks[0].gpu_end[1], res.ranks[1].gpu_end[0], 1e-12);
  EXPECT_GT(res.ranks[0].gpu_end[1], 150 * us);
  EXPECT_GE(res.ranks[0].cpu_end[0][2], res.ranks[0].gpu_end[1]);  // the synchronize waits for Seq 5
}

// Disjoint groups of one name ([0, 1] and [2, 3], both "1"): one numbered by "Seq" with
// windows one collective apart, the other without "Seq". Each is numbered its own way: no
// note that the traces disagree, and the first group still matches by Seq.
TEST(Replay, DisjointGroupsOfOneNameAreNumberedApart) {
  NEED_ENGINE();
  const std::vector<int> a{0, 1}, b{2, 3};
  const auto res = replay({seq_trace(0, {4, 5, 6}, true, 262144, 4, a, "1"), seq_trace(1, {5, 6, 7}, true, 262144, 4, a, "1"),
                           seq_trace(2, {4, 5, 6}, false, 262144, 4, b, "1"), seq_trace(3, {4, 5, 6}, false, 262144, 4, b, "1")},
                          {}, &four_gpu_topology());
  EXPECT_EQ(res.collectives, 2u + 3u);
  EXPECT_EQ(res.collectives_outside_window, 2u);
  for (const auto& n : res.notes) EXPECT_EQ(n.find("do not: its collectives are matched by their order"), std::string::npos) << n;
}
