// End-to-end tests of the composim binary: they run it as a user would (through
// run_cli) and check its exit code, its printed lines and the files it writes.
//
// Tests that need the real traces in ../shared/data skip with a message when that folder
// is absent; the others use the shipped example traces, the shipped topologies and the
// tiny hand-made inputs in tests/data.
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.hpp"

namespace fs = std::filesystem;
using composim::testing::CliResult;
using composim::testing::run_cli;
using composim::testing::shared_data;
using composim::testing::source_dir;
using composim::testing::TempDir;
using nlohmann::json;

namespace {

// Shell-quotes one argument for run_cli's command line.
std::string q(const std::string& s) {
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  return json::parse(in);
}

void write_json(const std::string& path, const json& j) { std::ofstream(path) << j.dump(1); }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) out.push_back(line);
  return out;
}

// The first line of `text` that starts with `prefix`, or "".
std::string line_starting(const std::string& text, const std::string& prefix) {
  for (const auto& l : lines_of(text))
    if (l.rfind(prefix, 0) == 0) return l;
  return "";
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  if (n == 0) return 0;
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string example(int rank) { return source_dir() + "/examples/traces/ddp2_rank" + std::to_string(rank) + ".json"; }
std::string example_traces() { return "--trace " + q(example(0)) + " --trace " + q(example(1)); }
std::string shipped_topology(const std::string& name) { return source_dir() + "/topologies/shipped/" + name + ".json"; }
std::string hand_made(const std::string& name) { return source_dir() + "/tests/data/" + name; }
std::string trace_path(const std::string& rel) { return shared_data() + "/traces/" + rel; }

// Bad input: status 2, exactly one line on stderr, "composim: error: ..." naming `names`.
void expect_input_error(const CliResult& r, const std::string& names) {
  EXPECT_EQ(r.exit_code, 2) << "stdout:\n" << r.out << "stderr:\n" << r.err;
  EXPECT_EQ(r.err.rfind("composim: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "expected exactly one line on stderr, got:\n" << r.err;
  EXPECT_FALSE(r.err.empty() || r.err.back() != '\n') << r.err;
  EXPECT_NE(r.err.find(names), std::string::npos) << "stderr does not name \"" << names << "\": " << r.err;
}

// No partial output: the --out folder holds no summary.json (nor any other result file).
void expect_no_output(const std::string& out_dir) {
  EXPECT_FALSE(fs::exists(out_dir + "/summary.json")) << out_dir;
  EXPECT_FALSE(fs::exists(out_dir + "/iterations.csv")) << out_dir;
  EXPECT_FALSE(fs::exists(out_dir + "/timeline.json")) << out_dir;
}

// A minimal valid single-rank Kineto trace: `n` kernels, each launched by a cudaLaunchKernel
// call with the same correlation id.
json small_kineto_trace(int n) {
  json ev = json::array();
  for (int i = 0; i < n; ++i) {
    ev.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"pid", 100}, {"tid", 100},
                  {"ts", 10.0 + 200.0 * i}, {"dur", 5.0}, {"args", {{"correlation", i + 1}}}});
    ev.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", "k"}, {"pid", 0}, {"tid", 7}, {"ts", 20.0 + 200.0 * i},
                  {"dur", 100.0}, {"args", {{"device", 0}, {"stream", 7}, {"correlation", i + 1}}}});
  }
  return {{"schemaVersion", 1},
          {"deviceProperties", json::array({{{"id", 0}, {"name", "Tesla V100-PCIE-32GB"}}})},
          {"traceEvents", ev}};
}

// "summary: predicted ... in 0.01 s" without the trailing wall-clock time.
std::string summary_without_wall_time(const std::string& out) {
  std::string s = line_starting(out, "summary: predicted");
  const auto pos = s.rfind(" in ");
  return pos == std::string::npos ? s : s.substr(0, pos);
}

// A minimal CSV reader (quoted fields allowed).
std::vector<std::map<std::string, std::string>> read_csv(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& line : lines_of(slurp(path))) {
    if (line.empty()) continue;
    std::vector<std::string> f(1);
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (c == '"') {
        if (quoted && i + 1 < line.size() && line[i + 1] == '"') f.back() += '"', ++i;
        else quoted = !quoted;
      } else if (c == ',' && !quoted) f.emplace_back();
      else if (c != '\r') f.back() += c;
    }
    rows.push_back(f);
  }
  std::vector<std::map<std::string, std::string>> out;
  for (size_t r = 1; r < rows.size(); ++r) {
    std::map<std::string, std::string> m;
    for (size_t c = 0; c < rows[0].size() && c < rows[r].size(); ++c) m[rows[0][c]] = rows[r][c];
    out.push_back(m);
  }
  return out;
}

// summary.csv names folders as they were published; the shared folder's names differ.
std::string map_summary_file(std::string f) {
  if (f.rfind("hta_dev/", 0) == 0) return "hta/" + f.substr(8);
  if (f.rfind("param_misc/", 0) == 0) return "param/" + f.substr(11);
  return f;
}

const std::string kNcclData = "hta/nccl_parser_config/nccl_data.json.gz";
const std::string kNsResolution = "hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz";
const std::string kResnet50 = "kineto_tb/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz";

}  // namespace

// ---------------------------------------------------------------------------------------
// 1. The shipped 2-rank example.

TEST(Cli, ShippedExampleWritesSummaryIterationsAndTimeline) {
  TempDir tmp;
  const std::string out = tmp.path() + "/result";
  const CliResult r = run_cli("run " + example_traces() + " --topology composable-falcon4016 --out " + q(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_NE(line_starting(r.out, "summary: predicted"), "") << r.out;
  EXPECT_NE(r.out.find("2 rank(s) on composable-falcon4016"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wrote " + out + "/summary.json"), std::string::npos) << r.out;
  ASSERT_TRUE(fs::exists(out + "/summary.json"));
  ASSERT_TRUE(fs::exists(out + "/iterations.csv"));
  ASSERT_TRUE(fs::exists(out + "/timeline.json"));

  // Measured step time, computed here from the example traces: per step the longest
  // ProfilerStep# span over the two ranks, then the median over the 4 steps.
  std::map<std::string, double> step_us;
  std::vector<double> rank0_steps_s;
  for (int rank = 0; rank < 2; ++rank) {
    const json t = read_json(example(rank));
    for (const auto& e : t.at("traceEvents")) {
      const std::string name = e.value("name", "");
      if (name.rfind("ProfilerStep#", 0) != 0 || e.value("ph", "") != "X") continue;
      const double dur = e.at("dur").get<double>();
      step_us[name] = std::max(step_us[name], dur);
      if (rank == 0) rank0_steps_s.push_back(dur * 1e-6);
    }
  }
  ASSERT_EQ(step_us.size(), 4u);
  ASSERT_EQ(rank0_steps_s.size(), 4u);
  std::vector<double> steps_s;
  for (const auto& [name, us] : step_us) steps_s.push_back(us * 1e-6);
  const double measured = median(steps_s);

  const json s = read_json(out + "/summary.json");
  for (const char* key : {"predicted_iteration_s", "measured_iteration_s", "error_pct", "iterations", "breakdown"})
    ASSERT_TRUE(s.contains(key)) << "summary.json lacks " << key;
  const double predicted = s.at("predicted_iteration_s").get<double>();
  EXPECT_GT(predicted, 0.010);
  EXPECT_LT(predicted, 0.020);
  const double meas = s.at("measured_iteration_s").get<double>();
  EXPECT_NEAR(meas, measured, 1e-3 * measured);
  EXPECT_NEAR(meas, median(rank0_steps_s), 1e-3 * median(rank0_steps_s));
  EXPECT_NEAR(s.at("error_pct").get<double>(), 100.0 * (predicted - meas) / meas, 1e-6);

  ASSERT_TRUE(s.at("iterations").is_array());
  ASSERT_EQ(s.at("iterations").size(), 4u);
  for (const auto& it : s.at("iterations")) {
    const std::string name = it.at("name").get<std::string>();
    ASSERT_TRUE(step_us.count(name)) << name;
    EXPECT_NEAR(it.at("measured_s").get<double>(), step_us[name] * 1e-6, 1e-3 * step_us[name] * 1e-6) << name;
    EXPECT_GT(it.at("predicted_s").get<double>(), 0.0) << name;
  }

  const json& b = s.at("breakdown");
  for (const char* key : {"compute_s", "exposed_communication_s", "memcpy_s", "idle_s"}) {
    ASSERT_TRUE(b.contains(key)) << "breakdown lacks " << key;
    EXPECT_GE(b.at(key).get<double>(), 0.0) << key;
  }
  EXPECT_GT(b.at("compute_s").get<double>(), 0.0);
  EXPECT_GT(b.at("exposed_communication_s").get<double>(), 0.0);  // a DDP step all-reduces gradients
  // The breakdown is of the median step (4 steps: the mean of the two middle ones), so its
  // parts add up to the headline prediction.
  EXPECT_NEAR(b.at("compute_s").get<double>() + b.at("exposed_communication_s").get<double>() + b.at("memcpy_s").get<double>() +
                  b.at("idle_s").get<double>(),
              predicted, 1e-9 * predicted);
  ASSERT_EQ(b.at("of").size(), 2u) << b.dump();
  {
    std::vector<double> kept;
    for (const auto& it : s.at("iterations")) kept.push_back(it.at("predicted_s").get<double>());
    std::sort(kept.begin(), kept.end());
    for (const auto& o : b.at("of")) {
      double p = -1;
      for (const auto& it : s.at("iterations"))
        if (it.at("name") == o.at("step")) p = it.at("predicted_s").get<double>();
      EXPECT_TRUE(p == kept[1] || p == kept[2]) << "not a middle step: " << o.dump();
    }
  }
  ASSERT_TRUE(s.at("busiest_link_utilisation").is_number()) << s.dump();
  EXPECT_GT(s.at("busiest_link_utilisation").get<double>(), 0.0);
  EXPECT_LE(s.at("busiest_link_utilisation").get<double>(), 1.0);
  EXPECT_NE(r.out.find("breakdown of the median step (mean of "), std::string::npos) << r.out;

  // Timestamps are microseconds in fixed point to the nanosecond (%g would round them).
  {
    const std::string text = slurp(out + "/timeline.json");
    const std::regex ts("\"(ts|dur)\":([^,}]*)");
    size_t checked = 0;
    for (auto m = std::sregex_iterator(text.begin(), text.end(), ts); m != std::sregex_iterator(); ++m, ++checked)
      ASSERT_TRUE(std::regex_match((*m)[2].str(), std::regex("[0-9]+\\.[0-9]{3}"))) << (*m)[0];
    EXPECT_GT(checked, 1000u);
  }

  // timeline.json: Chrome trace of both ranks (pid = rank), with collectives.
  const json tl = read_json(out + "/timeline.json");
  ASSERT_TRUE(tl.contains("traceEvents"));
  ASSERT_TRUE(tl.at("traceEvents").is_array());
  size_t complete = 0, collectives = 0;
  std::set<int> pids;
  for (const auto& e : tl.at("traceEvents")) {
    if (e.value("ph", "") != "X") continue;
    ++complete;
    const int pid = e.at("pid").get<int>();
    EXPECT_TRUE(pid == 0 || pid == 1) << e.dump();
    pids.insert(pid);
    EXPECT_GE(e.at("dur").get<double>(), 0.0) << e.dump();
    if (e.value("cat", "") == "collective") ++collectives;
  }
  EXPECT_GT(complete, 0u);
  EXPECT_EQ(pids, (std::set<int>{0, 1}));
  EXPECT_GE(collectives, 1u);

  const auto csv = lines_of(slurp(out + "/iterations.csv"));
  ASSERT_EQ(csv.size(), 5u) << slurp(out + "/iterations.csv");
  EXPECT_EQ(csv[0].rfind("iteration,", 0), 0u) << csv[0];
  for (size_t i = 1; i < csv.size(); ++i) EXPECT_EQ(csv[i].rfind("ProfilerStep#", 0), 0u) << csv[i];
}

// A 2-rank trace replicated to one rank: its all-reduces have no peer to wait for, so they
// run as NCCL's one-rank local copy, 2 x bytes / HBM rate (V100: 900 GB/s), not at the
// measured 2-rank kernel time: 3,137,000 floats -> 2 x 12.548 MB / 900 GB/s = 27.88 us
// (the trace measured 1274.8 us with its peer).
TEST(Cli, OneRankCollectivesAreLocalCopies) {
  composim::testing::TempDir d;
  const std::string ex = composim::testing::source_dir() + "/examples/traces/";
  auto r = composim::testing::run_cli("run --trace " + ex + "ddp2_rank0.json --ranks 1 --topology composable-falcon4016 --out " + d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json tl = read_json(d.path() + "/timeline.json");
  bool seen = false;
  for (const auto& e : tl.at("traceEvents")) {
    if (e.value("cat", "") != "collective" || e.at("args").at("measured_dur_us").get<double>() != 1274.8) continue;
    EXPECT_NEAR(e.at("dur").get<double>(), 2 * 3137000 * 4 / 900e9 * 1e6, 0.01) << e.dump();
    // What the trace says of the collective rides along.
    EXPECT_EQ(e.at("args").at("collective"), "all_reduce");
    EXPECT_EQ(e.at("args").at("in_bytes").get<std::uint64_t>(), 3137000u * 4);
    EXPECT_EQ(e.at("args").at("process_group"), "0");
    seen = true;
  }
  EXPECT_TRUE(seen);
}

TEST(Cli, ShippedExampleWithoutOutWritesNothing) {
  TempDir tmp;
  const fs::path old_cwd = fs::current_path();
  fs::current_path(tmp.path());
  const CliResult r = run_cli("run " + example_traces() + " --topology composable-falcon4016");
  fs::current_path(old_cwd);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(line_starting(r.out, "summary: predicted"), "") << r.out;
  EXPECT_EQ(r.out.find("wrote"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_empty(tmp.path())) << "files appeared in the working directory " << tmp.path();
}

// A V100 trace on A100s: the replay says that kernels keep their V100 durations; on the
// V100 chassis it says nothing of the kind.
TEST(Cli, RunNotesAnotherGpuModel) {
  const CliResult other = run_cli("run " + example_traces() + " --topology dgx-a100");
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_NE(other.out.find("note: the trace ran on V100 GPUs, the ranks run on A100 GPUs of dgx-a100: kernels keep their measured durations "
                           "(compute is not rescaled)"),
            std::string::npos)
      << other.out;
  const CliResult same = run_cli("run " + example_traces() + " --topology composable-falcon4016");
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_EQ(same.out.find("compute is not rescaled"), std::string::npos) << same.out;
}

// ---------------------------------------------------------------------------------------
// 2. Import counts against the shared traces' summary.csv.

TEST(Cli, ImportCountsMatchSharedSummaryCsv) {
  COMPOSIM_REQUIRE_SHARED_DATA();
  const auto rows = read_csv(shared_data() + "/traces/summary.csv");
  ASSERT_FALSE(rows.empty());
  const std::regex counts(R"(kernels (\d+) \(NCCL (\d+)\), memcpy (\d+))");
  int with_gpu = 0, without_gpu = 0;
  for (const auto& row : rows) {
    const std::string file = trace_path(map_summary_file(row.at("file")));
    SCOPED_TRACE(file);
    ASSERT_TRUE(fs::exists(file)) << "summary.csv lists a file that is not in the shared folder";
    const long kernels = std::stol(row.at("n_kernels")), nccl = std::stol(row.at("n_nccl_kernels")),
               memcpy = std::stol(row.at("n_memcpy"));
    const CliResult r = run_cli("import " + q(file));
    if (kernels == 0 && memcpy == 0) {
      ++without_gpu;
      expect_input_error(r, file);
      EXPECT_NE(r.err.find("no GPU activity"), std::string::npos) << r.err;
      continue;
    }
    ++with_gpu;
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, counts)) << r.out;
    EXPECT_EQ(std::stol(m[1]), kernels) << r.out;
    EXPECT_EQ(std::stol(m[2]), nccl) << r.out;
    EXPECT_EQ(std::stol(m[3]), memcpy) << r.out;
  }
  EXPECT_GE(with_gpu, 9);  // 10 rows in summary.csv, one of them counter-only
  EXPECT_EQ(without_gpu, 1);  // the counter-only cupti_profiler trace
}

// The hand-made trace has one CPU thread with three launch calls and one stream of three
// kernels; counts of one are printed in the singular.
TEST(Cli, ImportPrintsCountsOfSmallTrace) {
  TempDir tmp;
  write_json(tmp.path() + "/t.json", small_kineto_trace(3));
  const CliResult r = run_cli("import " + q(tmp.path() + "/t.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  1 CPU thread, 3 CPU ops, 1 stream\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kernels 3 (NCCL 0), memcpy 0, memset 0, collectives 0"), std::string::npos) << r.out;
}

TEST(Cli, ImportCounterOnlyCuptiTraceFails) {
  COMPOSIM_REQUIRE_SHARED_DATA();
  const std::string file = trace_path("hta/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz");
  const CliResult r = run_cli("import " + q(file));
  expect_input_error(r, file);
  EXPECT_NE(r.err.find("no GPU activity"), std::string::npos) << r.err;
}

// ---------------------------------------------------------------------------------------
// 3. The workload IR round trip.

TEST(Cli, ImportedIrReplaysLikeTheOriginalTrace) {
  COMPOSIM_REQUIRE_SHARED_DATA();
  TempDir tmp;
  const std::string trace = trace_path(kNcclData), ir = tmp.path() + "/nccl_data.ir.json";
  const CliResult imp = run_cli("import " + q(trace) + " --out " + q(ir));
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  EXPECT_NE(imp.out.find("wrote " + ir), std::string::npos) << imp.out;
  ASSERT_TRUE(fs::exists(ir));
  EXPECT_EQ(std::distance(fs::directory_iterator(tmp.path()), fs::directory_iterator()), 1);  // no temporary left
  const json j = read_json(ir);
  EXPECT_TRUE(j.contains("composim_workload")) << "not a composim IR file";

  // Importing the IR again gives the same counts.
  const CliResult imp2 = run_cli("import " + q(ir));
  ASSERT_EQ(imp2.exit_code, 0) << imp2.err;
  EXPECT_EQ(line_starting(imp2.out, "  kernels"), line_starting(imp.out, "  kernels")) << imp.out << imp2.out;
  EXPECT_NE(line_starting(imp.out, "  kernels"), "");

  const CliResult a = run_cli("run --trace " + q(trace) + " --topology dgx-a100");
  const CliResult b = run_cli("run --trace " + q(ir) + " --topology dgx-a100");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const std::string sa = summary_without_wall_time(a.out);
  ASSERT_NE(sa, "") << a.out;
  EXPECT_EQ(summary_without_wall_time(b.out), sa);  // the line ends with wall-clock time, which may differ
  EXPECT_EQ(line_starting(b.out, "breakdown"), line_starting(a.out, "breakdown"));
}

// ---------------------------------------------------------------------------------------
// 4. Self-replay acceptance: median predicted step within 5% of median measured.

namespace {
void expect_self_replay(const std::string& rel, const std::string& topology, double measured_ms) {
  COMPOSIM_REQUIRE_SHARED_DATA();
  TempDir tmp;
  const std::string out = tmp.path() + "/out";
  const CliResult r = run_cli("run --trace " + q(trace_path(rel)) + " --topology " + topology + " --out " + q(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json s = read_json(out + "/summary.json");
  const double meas = s.at("measured_iteration_s").get<double>(), pred = s.at("predicted_iteration_s").get<double>();
  EXPECT_NEAR(meas * 1e3, measured_ms, 0.005 * measured_ms) << "measured median step";
  EXPECT_LT(std::abs(s.at("error_pct").get<double>()), 5.0) << r.out;
  EXPECT_LT(std::abs(pred - meas) / meas, 0.05) << r.out;
  size_t steps = 0;
  for (const auto& it : s.at("iterations"))
    if (!it.at("warmup").get<bool>()) ++steps;
  EXPECT_GE(steps, 3u) << "the median should be over several steps";
}
}  // namespace

TEST(Cli, SelfReplayNcclDataOnDgxA100) { expect_self_replay(kNcclData, "dgx-a100", 222.44); }

// That self-replay matches its CPU-bound step while its collectives do not: their measured
// 46.9 ms per rank (13 GB/s for a 31.5 MB all-reduce) against 1.6 ms on DGX A100's
// NVSwitch. A note says so, with both sums (over the 2 replicated ranks).
TEST(Cli, SelfReplayNotesCollectivesUnlikeTheModel) {
  COMPOSIM_REQUIRE_SHARED_DATA();
  const CliResult r = run_cli("run --trace " + q(trace_path(kNcclData)) + " --topology dgx-a100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("note: the traces' 42 collective kernel(s) over 2 rank(s) took 93.753 ms measured and 3.201 ms replayed on dgx-a100 "
                       "(29.3 times less"),
            std::string::npos)
      << r.out;
  // The shipped example's collectives agree with the model within 2x: no such note.
  const CliResult e = run_cli("run --trace " + q(example(0)) + " --trace " + q(example(1)) + " --topology composable-falcon4016");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(e.out.find("collective kernel(s) over"), std::string::npos) << e.out;
}
TEST(Cli, SelfReplayNsResolutionOnDgx1V100) { expect_self_replay(kNsResolution, "dgx1-v100", 95.70); }
TEST(Cli, SelfReplayResnet50OnDgx1V100) { expect_self_replay(kResnet50, "dgx1-v100", 176.27); }

// ---------------------------------------------------------------------------------------
// Steps of the given lengths (ms), each a ProfilerStep# annotation around one kernel launch
// and a cudaDeviceSynchronize that waits for it; `calls` false leaves a step's annotation
// empty (no CUDA call).
json stepped_trace(const std::vector<double>& step_ms, const std::vector<bool>& calls = {}) {
  json ev = json::array();
  double t = 0;
  int corr = 0;
  for (size_t i = 0; i < step_ms.size(); ++i) {
    const double start = t, kernel_us = step_ms[i] * 1e3;
    if (calls.empty() || calls[i]) {
      ++corr;
      ev.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"pid", 1}, {"tid", 1}, {"ts", t + 5},
                    {"dur", 5}, {"args", {{"correlation", corr}}}});
      ev.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", "gemm"}, {"pid", 0}, {"tid", 7}, {"ts", t + 12}, {"dur", kernel_us},
                    {"args", {{"device", 0}, {"stream", 7}, {"correlation", corr}}}});
      ++corr;
      ev.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaDeviceSynchronize"}, {"pid", 1}, {"tid", 1}, {"ts", t + 11},
                    {"dur", kernel_us + 5}, {"args", {{"correlation", corr}}}});
    }
    t += kernel_us + 30;
    ev.push_back({{"ph", "X"}, {"cat", "user_annotation"}, {"name", "ProfilerStep#" + std::to_string(i + 1)}, {"pid", 1}, {"tid", 1},
                  {"ts", start}, {"dur", t - start}, {"args", json::object()}});
  }
  return {{"schemaVersion", 1}, {"deviceProperties", json::array({{{"id", 0}, {"name", "Tesla V100-PCIE-32GB"}}})}, {"traceEvents", ev}};
}

// Warm-up is a short run of odd leading steps before steady ones, excluded with a note;
// steps that alternate (gradient accumulation) are all kept, their median is the headline
// and a note says they vary (the old rule kept only the last of 10, 20, 10, 20, 10, 20 ms);
// steps without a CUDA call are left out.
TEST(Cli, StepsWarmupVaryingAndEmpty) {
  TempDir tmp;
  auto run = [&](const std::string& name, const json& t) {
    const CliResult r = run_cli("run --trace " + q(tmp.write(name, t.dump())) + " --topology pcie-8gpu-gen3");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  // Each step: 30 us of calls around the kernel.
  std::string out = run("alternating.json", stepped_trace({10, 20, 10, 20, 10, 20}));
  EXPECT_NE(out.find("measured 15.030 ms per iteration (median of 6)"), std::string::npos) << out;
  EXPECT_NE(out.find("note: the 6 measured steps take 10.030 to 20.030 ms, more than 20% around their median"), std::string::npos) << out;
  EXPECT_EQ(out.find("warm-up"), std::string::npos) << out;

  out = run("warmup.json", stepped_trace({20, 10, 10, 10}));
  EXPECT_NE(out.find("measured 10.030 ms per iteration (median of 3)"), std::string::npos) << out;
  EXPECT_NE(out.find("note: 1 leading step(s) (ProfilerStep#1) are excluded as warm-up: the steps after them are steady"),
            std::string::npos)
      << out;
  // Half the steps slow at the start: both are warm-up (the rule before kept neither or
  // all four, a headline matching no step).
  out = run("half.json", stepped_trace({76, 66, 16, 16}));
  EXPECT_NE(out.find("measured 16.030 ms per iteration (median of 2)"), std::string::npos) << out;
  EXPECT_NE(out.find("note: 2 leading step(s) (ProfilerStep#1 to ProfilerStep#2) are excluded as warm-up"), std::string::npos) << out;
  EXPECT_EQ(out.find("more than 20% around their median"), std::string::npos) << out;

  out = run("empty.json", stepped_trace({10, 10, 10, 0.01, 0.01, 0.01, 0.01}, {true, true, true, false, false, false, false}));
  EXPECT_NE(out.find("measured 10.030 ms per iteration (median of 3)"), std::string::npos) << out;
  EXPECT_NE(out.find("note: 4 step(s) (ProfilerStep#4, ProfilerStep#5, ProfilerStep#6, ...) have no CUDA call and are not compared"),
            std::string::npos)
      << out;
}

// Steps of zero length measured nothing: they are left out with a note, as steps without a
// CUDA call are, and a trace whose steps all have zero length is an error (it printed
// "predicted 0.000 ms vs measured 0.000 ms ... error +0.00%").
TEST(Cli, ZeroLengthStepsAreNotCompared) {
  TempDir tmp;
  auto zeroed = [&](const std::string& name, const std::set<std::string>& steps) {
    json t = stepped_trace({10, 10, 10, 10});
    for (auto& e : t["traceEvents"])
      if (steps.count(e.value("name", ""))) e["dur"] = 0;
    return tmp.write(name, t.dump());
  };
  const CliResult r = run_cli("run --trace " + q(zeroed("one.json", {"ProfilerStep#2"})) + " --topology pcie-8gpu-gen3 --out " + q(tmp.path() + "/one"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // The outputs give that step no error (null, an empty field), not 0.
  const json steps = read_json(tmp.path() + "/one/summary.json")["iterations"];
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_TRUE(steps[1]["error_pct"].is_null()) << steps.dump();
  EXPECT_TRUE(steps[1]["empty"].get<bool>());
  EXPECT_TRUE(steps[2]["error_pct"].is_number()) << steps.dump();
  const auto rows = lines_of(slurp(tmp.path() + "/one/iterations.csv"));
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[2].substr(0, rows[2].find(',')), "ProfilerStep#2");
  EXPECT_NE(rows[2].find(",,"), std::string::npos) << rows[2];  // the empty error_pct field
  EXPECT_NE(r.out.find("measured 10.030 ms per iteration (median of 3)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("      n/a  (zero length, excluded)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("note: 1 step(s) (ProfilerStep#2) have zero length and are not compared"), std::string::npos) << r.out;
  const std::string all = zeroed("all.json", {"ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"});
  composim::testing::expect_cli_error("run --trace " + q(all) + " --topology pcie-8gpu-gen3",
                                      all + ": ProfilerStep marks: every step (ProfilerStep#1, ...) has zero length: there is no measured step "
                                            "time to compare the prediction with");
}

// Traces of 2 ranks of a 4-rank job whose collectives state "Group size" 4 but no rank list
// (older PyTorch): the other members' traces are missing, an error as with a rank list;
// the 2-rank all-reduces they were replayed as took 14.565 ms, a different job's time.
TEST(Cli, GroupSizeLargerThanTheTracesGivenIsAnError) {
  TempDir tmp;
  std::string files;
  for (int r : {0, 1}) {
    json t = read_json(example(r));
    t["distributedInfo"]["world_size"] = 4;
    t["distributedInfo"].erase("pg_config");
    for (auto& e : t["traceEvents"])
      if (e.contains("args") && e["args"].contains("Group size")) {
        e["args"]["Group size"] = 4;
        for (const char* k : {"Process Group Name", "Process Group Description", "Process Group Ranks"}) e["args"].erase(k);
      }
    files += " --trace " + q(tmp.write("r" + std::to_string(r) + ".json", t.dump()));
  }
  const std::string out = tmp.path() + "/out";
  const CliResult r = run_cli("run" + files + " --topology dgx-a100 --out " + q(out));
  expect_input_error(r, "r0.json: collective all_reduce #0 of communicator \"world\": has \"Group size\" 4 but only 2 traces are given");
  expect_no_output(out);
}

// Process groups as the trace states them: without distributedInfo the collectives' group
// size is the job's (a 2-rank all-reduce replayed on 1 rank was a local copy, -10.7%), and
// a rank list that is not one, or disagrees with the group size, is an error naming the
// event ("[-1, 0]" was read as [1, 0]).
TEST(Cli, ProcessGroupsAsTheTraceStatesThem) {
  TempDir tmp;
  auto edited = [&](const std::string& name, const std::function<void(json&)>& edit) {
    json t = read_json(example(0));
    edit(t);
    return tmp.write(name, t.dump());
  };
  const std::string no_dist = edited("nodist.json", [](json& t) {
    t.erase("distributedInfo");
    for (auto& e : t["traceEvents"])
      if (e.contains("args"))
        for (const char* k : {"Process Group Name", "Process Group Description", "Process Group Ranks"}) e["args"].erase(k);
  });
  CliResult r = run_cli("run --trace " + q(no_dist) + " --topology pcie-8gpu-gen3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const CliResult both = run_cli("run --trace " + q(example(0)) + " --topology pcie-8gpu-gen3");
  EXPECT_NE(r.out.find("2 rank(s) on pcie-8gpu-gen3"), std::string::npos) << r.out;
  EXPECT_EQ(summary_without_wall_time(r.out), summary_without_wall_time(both.out));
  EXPECT_NE(r.out.find("no distributedInfo: the job is taken to have 2 ranks, from its collectives' groups"), std::string::npos) << r.out;

  auto with_args = [&](const std::string& name, const char* key, const json& value) {
    return edited(name, [&](json& t) {
      for (auto& e : t["traceEvents"])
        if (e.contains("args") && e["args"].contains(key)) e["args"][key] = value;
    });
  };
  const std::string negative = with_args("neg.json", "Process Group Ranks", "[-1, 0]");
  r = run_cli("run --trace " + q(negative) + " --topology pcie-8gpu-gen3");
  expect_input_error(r, "\"Process Group Ranks\" = \"[-1, 0]\" is not a list of ranks");
  EXPECT_NE(r.err.find(negative + ": traceEvents["), std::string::npos) << r.err;
  r = run_cli("run --trace " + q(with_args("words.json", "Process Group Ranks", "hello")) + " --topology pcie-8gpu-gen3");
  expect_input_error(r, "\"Process Group Ranks\" = \"hello\" is not a list of ranks");
  r = run_cli("run --trace " + q(with_args("gs3.json", "Group size", 3)) + " --topology pcie-8gpu-gen3");
  expect_input_error(r, "\"Group size\" = 3 but \"Process Group Ranks\" lists 2 ranks");
  // PyTorch cuts lists of more than 30 ranks short with ", ...]": read, not refused.
  r = run_cli("run --trace " + q(with_args("cut.json", "Process Group Ranks", "[0, 1, ...]")) + " --topology pcie-8gpu-gen3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(summary_without_wall_time(r.out), summary_without_wall_time(both.out));
  // The import's notes survive an IR file.
  const std::string ir = tmp.path() + "/nodist.ir.json";
  ASSERT_EQ(run_cli("import " + q(no_dist) + " --out " + q(ir)).exit_code, 0);
  r = run_cli("run --trace " + q(ir) + " --topology pcie-8gpu-gen3");
  EXPECT_NE(r.out.find("note: " + ir + ": no distributedInfo: the job is taken to have 2 ranks"), std::string::npos) << r.out;
}

// GPU work the trace lacks is named: launches without their kernels (a filter that dropped
// every kernel gave 1.98 ms for a 16.25 ms step with no word) and waits on a stream with no
// GPU work.
// One trace given twice, or also through its directory, is named as such (it read "rank 0
// is also the rank of ...").
TEST(Cli, TraceGivenTwice) {
  const CliResult r = run_cli("run --trace " + q(source_dir() + "/examples/traces") + " --trace " + q(example(1)) + " --topology dgx-a100");
  expect_input_error(r, example(1) + ": --trace: given twice (as ");
}

// Two traces of one rank: named by the rank they give; a trace that gives none (no
// distributedInfo, or one without "rank") is named as such, not as if it gave rank 0.
TEST(Cli, TracesOfOneRank) {
  TempDir tmp;
  json t = read_json(example(0));
  const std::string again = tmp.write("rank0_again.json", t.dump());
  expect_input_error(run_cli("run --trace " + q(example(0)) + " --trace " + q(again) + " --topology dgx-a100"),
                     ": distributedInfo.rank: rank 0 is also the rank of ");
  t.erase("distributedInfo");
  const std::string a = tmp.write("a.json", t.dump()), b = tmp.write("b.json", t.dump());
  expect_input_error(run_cli("run --trace " + q(a) + " --trace " + q(b) + " --topology dgx-a100"),
                     b + ": distributedInfo.rank: absent, so the trace is taken as rank 0, as is " + a + ": with several traces, each must give its rank");
  json no_rank = read_json(example(1));
  no_rank["distributedInfo"].erase("rank");
  const std::string c = tmp.write("c.json", no_rank.dump());
  expect_input_error(run_cli("run --trace " + q(example(0)) + " --trace " + q(c) + " --topology dgx-a100"),
                     c + ": distributedInfo.rank: absent, so the trace is taken as rank 0");
}

// Rank 1's collectives without a process group name ("world") never meet rank 0's (on "0"):
// the error says so, not only that rank 1 never reaches them.
TEST(Cli, UnnamedProcessGroupIsPointedAt) {
  TempDir tmp;
  json t = read_json(example(1));
  for (auto& e : t["traceEvents"])
    if (e.contains("args"))
      for (const char* k : {"Process Group Name", "Process Group Description", "Process Group Ranks"}) e["args"].erase(k);
  const std::string r1 = tmp.write("r1_unnamed.json", t.dump());
  expect_input_error(run_cli("run --trace " + q(example(0)) + " --trace " + q(r1) + " --topology composable-falcon4016"),
                     "ranks [1] (" + r1 + ") never reach this collective, which ranks [0] launch; the job would hang; rank 1's trace (" + r1 +
                         ") has all_reduces of this size on communicator \"world\" instead");
}

// A CUDA graph's kernels share its one launch, which the importer gives to the first: the
// others have none. Rank 0's GPU runs 600 us behind, so its all-reduces start in the next
// step; they were launched in the same step as rank 1's, and are not refused for it.
TEST(Cli, KernelsWithoutALaunchAreNotPlacedInSteps) {
  TempDir tmp;
  std::string traces;
  for (int rank = 0; rank < 2; ++rank) {
    const double lag_us = rank == 0 ? 600 : 100;
    json ev = json::array();
    for (int step = 1; step <= 3; ++step) {
      const double t = 1000.0 * step, g = t + 20 + lag_us;
      const int corr = 5000 + step;
      ev.push_back({{"ph", "X"}, {"cat", "user_annotation"}, {"name", "ProfilerStep#" + std::to_string(step)}, {"pid", 1}, {"tid", 1}, {"ts", t}, {"dur", 1000}});
      ev.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaGraphLaunch"}, {"pid", 1}, {"tid", 1}, {"ts", t + 10}, {"dur", 5},
                    {"args", {{"correlation", corr}}}});
      ev.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", "volta_sgemm_128x64_nn"}, {"pid", 0}, {"tid", 7}, {"ts", g}, {"dur", 400},
                    {"args", {{"device", 0}, {"stream", 7}, {"correlation", corr}}}});
      ev.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"}, {"pid", 0},
                    {"tid", 7}, {"ts", g + 410}, {"dur", 100},
                    {"args", {{"device", 0}, {"stream", 7}, {"correlation", corr}, {"Collective name", "allreduce"}, {"In msg nelems", 1 << 20},
                              {"dtype", "Float"}, {"Group size", 2}, {"Process Group Name", "0"}, {"Process Group Ranks", "[0, 1]"}}}});
    }
    json t = {{"distributedInfo", {{"rank", rank}, {"world_size", 2}}}, {"deviceProperties", json::array({{{"id", 0}, {"name", "NVIDIA A100-SXM4-80GB"}}})},
              {"traceEvents", ev}};
    traces += " --trace " + q(tmp.write("g" + std::to_string(rank) + ".json", t.dump()));
  }
  const CliResult r = run_cli("run" + traces + " --topology dgx-a100");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("3 collectives"), std::string::npos) << r.out;
}

TEST(Cli, MissingGpuWorkIsNamed) {
  TempDir tmp;
  json t = read_json(example(0));
  json kept = json::array();
  for (auto& e : t["traceEvents"])
    if (e.value("cat", "") != "kernel") kept.push_back(e);
  t["traceEvents"] = kept;
  const std::string path = tmp.write("no_kernels.json", t.dump());
  const CliResult r = run_cli("run --trace " + q(path) + " --topology pcie-8gpu-gen3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("note: " + path + ": 372 kernel launch call(s) have no kernel in the trace"), std::string::npos) << r.out;
  // Waits on a stream the trace lacks (the streams with work wait on stream 999).
  json w = read_json(example(0));
  for (auto& e : w["traceEvents"])
    if (e.value("cat", "") == "cuda_sync" && e["args"].contains("wait_on_stream")) e["args"]["wait_on_stream"] = 999;
  const std::string waits = tmp.write("wait999.json", w.dump());
  const CliResult rw = run_cli("run --trace " + q(waits) + " --topology pcie-8gpu-gen3");
  EXPECT_NE(rw.out.find("note: " + waits + ": 16 cudaStreamWaitEvent call(s) make a stream wait on one with no GPU work"), std::string::npos)
      << rw.out;
  const CliResult whole = run_cli("import " + q(example(0)));
  EXPECT_EQ(whole.out.find("note:"), std::string::npos) << whole.out;
}

// 5. Every other trace with GPU activity replays to completion.

namespace {
void expect_replays(const std::string& traces, const std::string& topology, int ranks) {
  COMPOSIM_REQUIRE_SHARED_DATA();
  const CliResult r = run_cli("run " + traces + " --topology " + topology);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(std::to_string(ranks) + " rank(s) on " + topology), std::string::npos) << r.out;
  const std::string s = line_starting(r.out, "summary: predicted");
  ASSERT_NE(s, "") << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(s, m, std::regex(R"(predicted ([0-9.]+) ms vs measured ([0-9.]+) ms)"))) << s;
  EXPECT_GT(std::stod(m[1]), 0.0) << s;
  EXPECT_GT(std::stod(m[2]), 0.0) << s;
}
std::string one(const std::string& rel) { return "--trace " + q(trace_path(rel)); }
}  // namespace

TEST(Cli, ReplaysAlexnetCriticalPathTrace) {
  expect_replays(one("hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"), "dgx-a100", 1);
}
TEST(Cli, ReplaysSimpleAddTrace) {
  expect_replays(one("hta/execution_trace/benchmark_simple_add_trace.json.gz"), "dgx-a100", 1);
}
TEST(Cli, ReplaysParamResnetOnPcie) { expect_replays(one("param/resnet_kineto.json.gz"), "pcie-8gpu-gen3", 1); }
TEST(Cli, ReplaysTracelensB200AsEightRanks) {
  expect_replays(one("tracelens/b200/eager_trace.json.gz"), "dgx-a100", 8);
}
TEST(Cli, ReplaysTwoSampledRanksTogether) {
  expect_replays(one("hta/trace_filter/sampled_rank-0.json.gz") + " " + one("hta/trace_filter/sampled_rank-1.json.gz"),
                 "dgx-a100", 2);
}

// ---------------------------------------------------------------------------------------
// 6. Bad input: status 2, one line naming the file, no partial output.

TEST(Cli, BadInputTruncatedGzip) {
  TempDir tmp;
  const std::string gz = tmp.path() + "/trace.json.gz", out = tmp.path() + "/out";
  const std::string text = small_kineto_trace(50).dump();
  gzFile f = gzopen(gz.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
  // Control: the whole file is a valid trace.
  const CliResult ok = run_cli("run --trace " + q(gz) + " --topology dgx-a100");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  const auto size = fs::file_size(gz);
  fs::resize_file(gz, size / 2);
  const CliResult r = run_cli("run --trace " + q(gz) + " --topology dgx-a100 --out " + q(out));
  expect_input_error(r, gz);
  EXPECT_TRUE(r.err.find("truncated") != std::string::npos || r.err.find("corrupt") != std::string::npos) << r.err;
  expect_no_output(out);
}

TEST(Cli, BadInputMalformedJson) {
  TempDir tmp;
  const std::string file = tmp.write("bad.json", R"({"traceEvents": [ {"ph": "X", )"), out = tmp.path() + "/out";
  const CliResult r = run_cli("run --trace " + q(file) + " --topology dgx-a100 --out " + q(out));
  expect_input_error(r, file);
  EXPECT_NE(r.err.find("malformed JSON"), std::string::npos) << r.err;
  expect_no_output(out);
}

TEST(Cli, BadInputTraceWithoutGpuActivity) {
  TempDir tmp;
  json t = small_kineto_trace(3);
  json cpu_only = json::array();
  for (const auto& e : t["traceEvents"])
    if (e["cat"] == "cuda_runtime") cpu_only.push_back(e);
  ASSERT_EQ(cpu_only.size(), 3u);
  t["traceEvents"] = cpu_only;
  const std::string file = tmp.path() + "/cpu_only.json", out = tmp.path() + "/out";
  write_json(file, t);
  const CliResult r = run_cli("run --trace " + q(file) + " --topology dgx-a100 --out " + q(out));
  expect_input_error(r, file);
  EXPECT_NE(r.err.find("no GPU activity"), std::string::npos) << r.err;
  expect_no_output(out);
}

namespace {
// A shipped topology, edited by `edit`, written to the temporary folder; runs the example
// on it with --out and returns the result.
CliResult run_on_edited_topology(const TempDir& tmp, const std::string& name, const std::function<void(json&)>& edit,
                                 std::string* topo_file) {
  json t = read_json(shipped_topology("pcie-8gpu-gen3"));
  edit(t);
  *topo_file = tmp.path() + "/" + name;
  write_json(*topo_file, t);
  return run_cli("run " + example_traces() + " --topology " + q(*topo_file) + " --out " + q(tmp.path() + "/out"));
}
}  // namespace

TEST(Cli, UnmodifiedTopologyCopyIsAccepted) {
  // Control for the edited-topology tests below: the copy itself is valid.
  TempDir tmp;
  std::string file;
  const CliResult r = run_on_edited_topology(tmp, "copy.json", [](json&) {}, &file);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(tmp.path() + "/out/summary.json"));
}

TEST(Cli, BadTopologyUnknownKey) {
  TempDir tmp;
  std::string file;
  const CliResult r = run_on_edited_topology(tmp, "unknown_key.json", [](json& t) { t["links"][0]["bandwith_Bps"] = 1; }, &file);
  expect_input_error(r, file);
  EXPECT_NE(r.err.find("unknown key"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("links[0]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("bandwith_Bps"), std::string::npos) << r.err;
  expect_no_output(tmp.path() + "/out");
}

TEST(Cli, BadTopologyMissingKey) {
  TempDir tmp;
  std::string file, place;
  const CliResult r = run_on_edited_topology(
      tmp, "missing_lanes.json",
      [&](json& t) {
        for (size_t i = 0; i < t["links"].size(); ++i)
          if (t["links"][i].value("type", "") == "pcie" && t["links"][i].contains("lanes")) {
            t["links"][i].erase("lanes");
            place = "links[" + std::to_string(i) + "]";
            return;
          }
      },
      &file);
  ASSERT_NE(place, "") << "no pcie link with \"lanes\" in pcie-8gpu-gen3.json";
  expect_input_error(r, file);
  EXPECT_NE(r.err.find("missing key \"lanes\""), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(place), std::string::npos) << r.err;
  expect_no_output(tmp.path() + "/out");
}

TEST(Cli, BadTopologyUnknownNodeType) {
  TempDir tmp;
  std::string file;
  const CliResult r = run_on_edited_topology(tmp, "node_type.json", [](json& t) { t["nodes"][2]["type"] = "pcie_swich"; }, &file);
  expect_input_error(r, file);
  EXPECT_NE(r.err.find("unknown node type"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nodes[2]"), std::string::npos) << r.err;
  expect_no_output(tmp.path() + "/out");
}

TEST(Cli, BadTopologyDanglingLink) {
  TempDir tmp;
  std::string file;
  const CliResult r = run_on_edited_topology(
      tmp, "dangling.json",
      [](json& t) {
        json l = t["links"].back();
        l["name"] = "dangling";
        l["to"] = "gpu99";
        t["links"].push_back(l);
      },
      &file);
  expect_input_error(r, file);
  EXPECT_NE(r.err.find("unknown node"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gpu99"), std::string::npos) << r.err;
  expect_no_output(tmp.path() + "/out");
}

TEST(Cli, BadInputMoreRanksThanGpus) {
  TempDir tmp;
  const std::string out = tmp.path() + "/out";
  const CliResult r = run_cli("run --trace " + q(example(0)) + " --topology composable-falcon4016 --ranks 17 --out " + q(out));
  expect_input_error(r, "composable-falcon4016");
  EXPECT_NE(r.err.find("17 ranks"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("16 GPUs"), std::string::npos) << r.err;
  expect_no_output(out);
  // Control: 16 ranks fit.
  const CliResult ok = run_cli("run --trace " + q(example(0)) + " --topology composable-falcon4016 --ranks 16");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("16 rank(s)"), std::string::npos) << ok.out;
}

TEST(Cli, BadInputCollectiveSomeRankNeverReaches) {
  TempDir tmp;
  const std::string r0 = hand_made("hang_rank0.json"), r1 = hand_made("hang_rank1.json"), out = tmp.path() + "/out";
  const auto t0 = std::chrono::steady_clock::now();
  const CliResult r = run_cli("run --trace " + q(r0) + " --trace " + q(r1) + " --topology dgx-a100 --out " + q(out));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(wall, 5.0) << "reported the hang only after " << wall << " s";
  expect_input_error(r, "hang_rank");
  EXPECT_NE(r.err.find("[1]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("all_reduce"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("#1"), std::string::npos) << "the second all-reduce is the one rank 1 never reaches: " << r.err;
  expect_no_output(out);
}

namespace {
// rank 0's first all-reduce only, so that both ranks launch exactly one.
std::string write_rank0_single(const TempDir& tmp) {
  json t = read_json(hand_made("hang_rank0.json"));
  json ev = json::array();
  for (const auto& e : t["traceEvents"])
    if (e["args"]["correlation"] == 1) ev.push_back(e);
  EXPECT_EQ(ev.size(), 2u);
  t["traceEvents"] = ev;
  const std::string p = tmp.path() + "/rank0_single.json";
  write_json(p, t);
  return p;
}
}  // namespace

TEST(Cli, HandMadeTwoRankAllReduceReplays) {
  // Control for the two tests around it: with one all-reduce on each rank the pair replays.
  TempDir tmp;
  const std::string r0 = write_rank0_single(tmp);
  const CliResult r = run_cli("run --trace " + q(r0) + " --trace " + q(hand_made("hang_rank1.json")) + " --topology dgx-a100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2 rank(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" 1 collectives"), std::string::npos) << r.out;
}

TEST(Cli, BadInputMismatchedCollectiveSizes) {
  TempDir tmp;
  const std::string r0 = write_rank0_single(tmp);
  json t1 = read_json(hand_made("hang_rank1.json"));
  bool changed = false;
  for (auto& e : t1["traceEvents"])
    if (e["cat"] == "kernel") {
      e["args"]["In msg nelems"] = 524288;
      e["args"]["Out msg nelems"] = 524288;
      changed = true;
    }
  ASSERT_TRUE(changed);
  const std::string r1 = tmp.path() + "/rank1_half.json", out = tmp.path() + "/out";
  write_json(r1, t1);
  const CliResult r = run_cli("run --trace " + q(r0) + " --trace " + q(r1) + " --topology dgx-a100 --out " + q(out));
  expect_input_error(r, tmp.path() + "/rank");
  EXPECT_NE(r.err.find("mismatched"), std::string::npos) << r.err;
  expect_no_output(out);
}

// Rank 1's trace says its all-reduce's group has 3 ranks, rank 0's says 2: not one
// communicator, whatever the matching sizes.
TEST(Cli, BadInputMismatchedGroupSize) {
  TempDir tmp;
  const std::string r0 = write_rank0_single(tmp);
  json t1 = read_json(hand_made("hang_rank1.json"));
  bool changed = false;
  for (auto& e : t1["traceEvents"])
    if (e["cat"] == "kernel" && e["args"].contains("Group size")) {
      e["args"]["Group size"] = 3;
      changed = true;
    }
  ASSERT_TRUE(changed);
  const std::string r1 = tmp.path() + "/rank1_group3.json";
  write_json(r1, t1);
  const CliResult r = run_cli("run --trace " + q(r0) + " --trace " + q(r1) + " --topology dgx-a100");
  expect_input_error(r, r1);
  // Caught in the trace itself: its group size disagrees with its own rank list.
  EXPECT_NE(r.err.find(r1 + ": traceEvents[1].args: \"Group size\" = 3 but \"Process Group Ranks\" lists 2 ranks"), std::string::npos)
      << r.err;
  // Without the kernel's rank list: against the trace's distributedInfo.pg_config.
  for (auto& e : t1["traceEvents"])
    if (e["cat"] == "kernel") e["args"].erase("Process Group Ranks");
  write_json(r1, t1);
  const CliResult r2 = run_cli("run --trace " + q(r0) + " --trace " + q(r1) + " --topology dgx-a100");
  expect_input_error(r2, r1 + ": traceEvents[1].args: \"Group size\" = 3 but process group \"0\" has 2 ranks in distributedInfo.pg_config");
  // Without pg_config either: against the job's size (3 of 2 ranks).
  ASSERT_TRUE(t1["distributedInfo"].contains("pg_config"));
  t1["distributedInfo"].erase("pg_config");
  write_json(r1, t1);
  const CliResult r3 = run_cli("run --trace " + q(r0) + " --trace " + q(r1) + " --topology dgx-a100");
  expect_input_error(r3, r1 + ": traceEvents[1].args: \"Group size\" = 3 but the job has 2 ranks (distributedInfo.world_size): a process group "
                              "is at most the whole job");
}

// Sizes that differ by one element (4 bytes) are given exactly, not as "4.0 MiB" twice.
TEST(Cli, BadInputCollectiveSizesOneElementApartAreExact) {
  TempDir tmp;
  const std::string r0 = write_rank0_single(tmp);
  json t1 = read_json(hand_made("hang_rank1.json"));
  for (auto& e : t1["traceEvents"])
    if (e["cat"] == "kernel") e["args"]["In msg nelems"] = 1048577;
  const std::string r1 = tmp.write("rank1_one_more.json", t1.dump());
  const CliResult r = run_cli("run --trace " + q(r0) + " --trace " + q(r1) + " --topology dgx-a100");
  expect_input_error(r, r1);
  EXPECT_NE(r.err.find("mismatched collective: this rank has all_reduce of 4194308 B, rank 0 has all_reduce of 4194304 B (" + r0 + ")"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("collectives on communicator"), std::string::npos) << "the counts agree: " << r.err;
}

// Three ranks whose traces disagree on who is in process group "0": ranks 0 and 1 say
// [0,1], rank 2 says [1,2]. Both lists are named (the counts alone agree).
TEST(Cli, BadInputCommunicatorMembersDifferBetweenTraces) {
  TempDir tmp;
  std::vector<std::string> paths;
  for (int rank = 0; rank < 3; ++rank) {
    json t = read_json(hand_made("hang_rank1.json"));
    const json members = rank < 2 ? json::array({0, 1}) : json::array({1, 2});
    t["distributedInfo"]["rank"] = rank;
    t["distributedInfo"]["world_size"] = 3;
    t["distributedInfo"]["pg_config"][0]["ranks"] = members;
    for (auto& e : t["traceEvents"])
      if (e["cat"] == "kernel") e["args"]["Process Group Ranks"] = members.dump();
    paths.push_back(tmp.write("r" + std::to_string(rank) + ".json", t.dump()));
  }
  const CliResult r = run_cli("run --trace " + q(paths[0]) + " --trace " + q(paths[1]) + " --trace " + q(paths[2]) + " --topology dgx-a100");
  expect_input_error(r, paths[2]);
  EXPECT_NE(r.err.find("mismatched communicator: this rank's trace gives it ranks [1,2] (group size 2), rank 0's ranks [0,1] (group size 2)"),
            std::string::npos)
      << r.err;
}

// A 4-rank job's trace of `rank`: one 4 MiB all-reduce per entry of `per_step` (that many in
// each ProfilerStep), on process group `name` of `members` (empty: no "Process Group Ranks";
// `group_size` 0: no "Group size"); `world_size` 0 leaves distributedInfo out.
json rank_trace(int rank, int world_size, const std::string& name, const json& members, int group_size, const std::vector<int>& per_step = {1}) {
  json ev = json::array();
  double t = 0;
  int corr = 0;
  for (size_t s = 0; s < per_step.size(); ++s) {
    const double start = t;
    for (int k = 0; k < per_step[s]; ++k) {
      ++corr;
      ev.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"pid", 1}, {"tid", 1}, {"ts", t + 5}, {"dur", 5},
                    {"args", {{"correlation", corr}}}});
      json args = {{"device", 0}, {"stream", 7}, {"correlation", corr}, {"Collective name", "allreduce"}, {"In msg nelems", 1048576},
                   {"Out msg nelems", 1048576}, {"dtype", "Float"}, {"Process Group Name", name}};
      if (!members.empty()) args["Process Group Ranks"] = members.dump();
      if (group_size > 0) args["Group size"] = group_size;
      ev.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"},
                    {"pid", 0}, {"tid", 7}, {"ts", t + 20}, {"dur", 100}, {"args", args}});
      t += 200;
    }
    t += 50;
    ev.push_back({{"ph", "X"}, {"cat", "user_annotation"}, {"name", "ProfilerStep#" + std::to_string(s + 1)}, {"pid", 1}, {"tid", 1},
                  {"ts", start}, {"dur", t - start}, {"args", json::object()}});
  }
  json t_out = {{"schemaVersion", 1}, {"deviceProperties", json::array({{{"id", 0}, {"name", "Tesla V100-PCIE-32GB"}}})}, {"traceEvents", ev}};
  if (world_size > 0) t_out["distributedInfo"] = {{"backend", "nccl"}, {"rank", rank}, {"world_size", world_size}};
  return t_out;
}

// Disjoint process groups of one name (a DeviceMesh's rows, which some PyTorch releases
// named by a counter of splits, not of groups): ranks 0-1 all-reduce in "1" = [0,1], ranks
// 2-3 in "1" = [2,3]. Each pair is a collective of its own, exactly as under two names.
TEST(Cli, DisjointGroupsMayShareAName) {
  TempDir tmp;
  auto run = [&](const std::string& tag, const std::string& second_name) {
    std::string args = "run --topology dgx-a100";
    for (int rank = 0; rank < 4; ++rank) {
      const json members = rank < 2 ? json::array({0, 1}) : json::array({2, 3});
      args += " --trace " + q(tmp.write(tag + std::to_string(rank) + ".json", rank_trace(rank, 4, rank < 2 ? "1" : second_name, members, 2).dump()));
    }
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("4 rank(s)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" 2 collectives"), std::string::npos) << r.out;
    return summary_without_wall_time(r.out);
  };
  const std::string same = run("same", "1"), two = run("two", "2");
  EXPECT_NE(same, "");
  EXPECT_EQ(same, two);
}

// One trace of a 4-rank job replicated to 8 (--ranks): its all-reduce over the sub-group
// [0, 2] keeps 2 members, copied 4 times, and the run says so (a data-parallel group across
// tensor-parallel ranks does not grow); the same all-reduce over the whole job gains members.
TEST(Cli, ScaledSubGroupKeepsItsSizeWithANote) {
  TempDir tmp;
  const std::string sub = tmp.write("sub.json", rank_trace(0, 4, "2", json::array({0, 2}), 2).dump());
  CliResult r = run_cli("run --trace " + q(sub) + " --ranks 8 --topology dgx-a100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("note: " + sub + ": communicator \"2\" (ranks [0,2]) keeps its 2 members on 8 ranks, copied 4 times"), std::string::npos) << r.out;
  r = run_cli("run --trace " + q(sub) + " --ranks 2 --topology dgx-a100");  // fewer ranks: nothing kept from growing
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("keeps its"), std::string::npos) << r.out;
  const std::string world = tmp.write("world.json", rank_trace(0, 4, "0", json::array({0, 1, 2, 3}), 4).dump());
  r = run_cli("run --trace " + q(world) + " --ranks 8 --topology dgx-a100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("keeps its"), std::string::npos) << r.out;
}

// --dp-group: the same trace's data-parallel group [0, 2] (stride 2 over 4 ranks) grows with
// --ranks 8 to [0, 2, 4, 6] and [1, 3, 5, 7]: 2 all-reduces of 4 members instead of 4 of 2,
// each slower (more ring steps over the same links). A group that is not evenly strided over
// the job, or a name no trace has, is refused.
TEST(Cli, DpGroupGrowsWithTheRanks) {
  TempDir tmp;
  const std::string sub = tmp.write("sub.json", rank_trace(0, 4, "2", json::array({0, 2}), 2).dump());
  CliResult kept = run_cli("run --trace " + q(sub) + " --ranks 8 --topology dgx-a100 --out " + q(tmp.path() + "/kept"));
  CliResult grown = run_cli("run --trace " + q(sub) + " --ranks 8 --dp-group 2 --topology dgx-a100 --out " + q(tmp.path() + "/grown"));
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  ASSERT_EQ(grown.exit_code, 0) << grown.err;
  EXPECT_NE(kept.out.find(" 4 collectives"), std::string::npos) << kept.out;
  EXPECT_NE(grown.out.find(" 2 collectives"), std::string::npos) << grown.out;
  EXPECT_EQ(grown.out.find("keeps its"), std::string::npos) << grown.out;
  // Rank 0's all-reduce kernel in the timeline (the step hides it: its CPU time is longer).
  auto kernel_us = [&](const std::string& dir) {
    const json timeline = read_json(tmp.path() + "/" + dir + "/timeline.json");
    for (const auto& e : timeline["traceEvents"])
      if (e.value("pid", -1) == 0 && e.value("name", "").rfind("ncclKernel_AllReduce", 0) == 0) return e["dur"].get<double>();
    return -1.0;
  };
  EXPECT_GT(kernel_us("kept"), 0);
  EXPECT_GT(kernel_us("grown"), kernel_us("kept") * 1.2);
  const std::string tp = tmp.write("tp.json", rank_trace(0, 4, "1", json::array({0, 1}), 2).dump());
  expect_input_error(run_cli("run --trace " + q(tp) + " --ranks 8 --dp-group 1 --topology dgx-a100"), "--dp-group");
  expect_input_error(run_cli("run --trace " + q(sub) + " --ranks 8 --dp-group 9 --topology dgx-a100"), "--dp-group");
}

// Two of a 4-rank job's traces whose all-reduce names neither its group's ranks nor its
// size: the group is the job (as when one trace is replicated), so ranks 2 and 3 are
// missing. It was replayed as a 2-rank all-reduce, faster, with only a note.
TEST(Cli, BadInputUnlistedGroupNeedsEveryRanksTrace) {
  TempDir tmp;
  const std::string r0 = tmp.write("r0.json", rank_trace(0, 4, "0", json::array(), 0).dump());
  const std::string r1 = tmp.write("r1.json", rank_trace(1, 4, "0", json::array(), 0).dump());
  const CliResult r = run_cli("run --trace " + q(r0) + " --trace " + q(r1) + " --topology dgx-a100");
  expect_input_error(r, r0);
  EXPECT_NE(r.err.find("collective all_reduce #0 of communicator \"0\": gives neither its group's ranks nor its size, so it spans the job's 4 "
                       "ranks (distributedInfo.world_size) but only 2 traces are given"),
            std::string::npos)
      << r.err;
}

// Both traces have ProfilerStep#1-3; rank 1 launches one all-reduce fewer in step 2. The
// error names that step and both counts, not the traces' profiler windows.
TEST(Cli, BadInputMissingCollectiveNamesItsStep) {
  TempDir tmp;
  const json members = json::array({0, 1});
  const std::string r0 = tmp.write("r0.json", rank_trace(0, 2, "0", members, 2, {2, 2, 2}).dump());
  const std::string r1 = tmp.write("r1.json", rank_trace(1, 2, "0", members, 2, {2, 1, 2}).dump());
  const CliResult r = run_cli("run --trace " + q(r0) + " --trace " + q(r1) + " --topology dgx-a100");
  expect_input_error(r, r1);
  EXPECT_NE(r.err.find("this rank launches it in ProfilerStep#3, rank 0 in ProfilerStep#2: in ProfilerStep#2 this rank launches 1 collectives on "
                       "communicator \"0\", rank 0 launches 2 (" + r0 + "): one is missing or extra there"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("profiler schedule"), std::string::npos) << r.err;
}

// A trace without distributedInfo next to one with it: the error names the absent key, not a
// world size the trace never gave.
TEST(Cli, BadInputWorldSizeAbsentIsNamedSo) {
  TempDir tmp;
  const json members = json::array({0, 1});
  const std::string r0 = tmp.write("r0.json", rank_trace(0, 2, "0", members, 2).dump());
  const std::string r1 = tmp.write("r1.json", rank_trace(1, 0, "0", json::array(), 0).dump());
  const CliResult r = run_cli("run --trace " + q(r0) + " --trace " + q(r1) + " --topology dgx-a100");
  expect_input_error(r, r1);
  EXPECT_NE(r.err.find(r1 + ": distributedInfo.world_size: absent, so the trace is taken as a job of 1 rank(s), where " + r0 + " gives 2"),
            std::string::npos)
      << r.err;
  // distributedInfo with a rank but no world size.
  json t = rank_trace(1, 2, "0", members, 2);
  t["distributedInfo"].erase("world_size");
  const std::string j1 = tmp.write("j1.json", t.dump());
  const CliResult j = run_cli("run --trace " + q(r0) + " --trace " + q(j1) + " --topology dgx-a100");
  expect_input_error(j, j1);
  EXPECT_NE(j.err.find(j1 + ": distributedInfo.world_size: absent, while distributedInfo.rank is 1: give the job's world size"), std::string::npos)
      << j.err;
}

// Groups given only by their size are taken as consecutive ranks; when that guess leaves a
// collective unmatched (the real groups were strided: {0,2} and {1,3}), the error says so.
TEST(Cli, BadInputGuessedGroupMembersAreNamed) {
  TempDir tmp;
  std::string args = "run --topology dgx-a100";
  std::vector<std::string> paths;
  for (int rank = 0; rank < 4; ++rank) {
    paths.push_back(tmp.write("r" + std::to_string(rank) + ".json", rank_trace(rank, 4, rank % 2 ? "2" : "1", json::array(), 2).dump()));
    args += " --trace " + q(paths.back());
  }
  const CliResult r = run_cli(args);
  expect_input_error(r, paths[0]);
  EXPECT_NE(r.err.find("rank 0's trace gives only the size of process group \"1\", whose members were taken as the consecutive ranks [0..1]: give traces "
                       "that list them (\"Process Group Ranks\")"),
            std::string::npos)
      << r.err;
  // Guessed right ([0,1] and [2,3]), with rank 1 one all-reduce short: the guess is not blamed.
  args = "run --topology dgx-a100";
  for (int rank = 0; rank < 4; ++rank)
    args += " --trace " + q(tmp.write("g" + std::to_string(rank) + ".json", rank_trace(rank, 4, "1", json::array(), 2, {rank == 1 ? 1 : 2}).dump()));
  const CliResult g = run_cli(args);
  EXPECT_EQ(g.exit_code, 2) << g.err;
  EXPECT_NE(g.err.find("ranks [1]"), std::string::npos) << g.err;
  EXPECT_EQ(g.err.find("taken as the consecutive ranks"), std::string::npos) << g.err;
}

// Rank 0 launches an all-reduce on process group "0" and then one on "1"; rank 1 in the
// other order, on one stream each: each waits for the other. Found when the replay stops,
// and the error says which ranks wait in which collective for which.
TEST(Cli, BadInputCrossedCollectivesNameTheWaitingRanks) {
  TempDir tmp;
  std::vector<std::string> paths;
  for (int rank = 0; rank < 2; ++rank) {
    json t = read_json(hand_made("hang_rank1.json"));
    t["distributedInfo"]["rank"] = rank;
    t["distributedInfo"]["pg_count"] = 2;
    json pg1 = t["distributedInfo"]["pg_config"][0];
    pg1["pg_name"] = "1";
    pg1["pg_desc"] = "second";
    t["distributedInfo"]["pg_config"].push_back(pg1);
    const json launch = t["traceEvents"][0], kernel = t["traceEvents"][1];
    json ev = json::array();
    for (int i = 0; i < 2; ++i) {
      json l = launch, k = kernel;
      l["ts"] = 10.0 + 200.0 * i;
      k["ts"] = 20.0 + 200.0 * i;
      l["args"]["correlation"] = k["args"]["correlation"] = i + 1;
      k["args"]["Process Group Name"] = (i == rank) ? "0" : "1";
      ev.push_back(l);
      ev.push_back(k);
    }
    t["traceEvents"] = ev;
    paths.push_back(tmp.write("crossed" + std::to_string(rank) + ".json", t.dump()));
  }
  const CliResult r = run_cli("run --trace " + q(paths[0]) + " --trace " + q(paths[1]) + " --topology dgx-a100");
  expect_input_error(r, "crossed");
  EXPECT_NE(r.err.find("ranks [0] wait in all_reduce #0 of communicator \"0\" (4.0 MiB) for ranks [1]; "
                       "ranks [1] wait in all_reduce #0 of communicator \"1\" (4.0 MiB) for ranks [0]"),
            std::string::npos)
      << r.err;
}

// Traces of ranks 2 and 3 of a 4-rank job: the breakdown, summary.json and timeline.json
// call them ranks 2 and 3, as the traces (and error messages) do, not by their order.
TEST(Cli, OutputsUseTheTracesRanks) {
  TempDir tmp;
  std::string args;
  for (int r = 0; r < 2; ++r) {
    json t = read_json(example(r));
    t["distributedInfo"]["rank"] = r + 2;
    t["distributedInfo"]["world_size"] = 4;
    t["distributedInfo"]["pg_config"][0]["ranks"] = json::array({2, 3});
    for (auto& e : t["traceEvents"])
      if (e.value("cat", "") == "kernel" && e["args"].contains("Process Group Ranks")) e["args"]["Process Group Ranks"] = "[2, 3]";
    args += " --trace " + q(tmp.write("rank" + std::to_string(r + 2) + ".json", t.dump()));
  }
  const std::string out = tmp.path() + "/out";
  const CliResult r = run_cli("run" + args + " --topology composable-falcon4016 --out " + q(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("on rank 2"), std::string::npos) << r.out;  // the breakdown's step and rank
  EXPECT_EQ(r.out.find("on rank 0"), std::string::npos) << r.out;
  const json s = read_json(out + "/summary.json");
  for (const auto& of : s.at("breakdown").at("of")) EXPECT_TRUE(of.at("rank") == 2 || of.at("rank") == 3) << of;
  std::set<std::string> names;
  const json timeline = read_json(out + "/timeline.json");
  for (const auto& e : timeline.at("traceEvents"))
    if (e.at("name") == "process_name") names.insert(e.at("args").at("name").get<std::string>().substr(0, 6));
  EXPECT_EQ(names, (std::set<std::string>{"rank 2", "rank 3"}));
}

// A trace of 8 ranks in tensor-parallel groups of 4 replicates in whole groups: --ranks 6
// would leave a group of 2 and is refused; --ranks 1, 4 and 8 run.
TEST(Cli, BadInputRanksNotAMultipleOfASubCommunicator) {
  TempDir tmp;
  json t = read_json(example(0));
  t["distributedInfo"]["world_size"] = 8;
  t["distributedInfo"]["pg_config"][0]["ranks"] = json::array({0, 1, 2, 3});
  t["distributedInfo"]["pg_config"][0]["pg_size"] = 4;
  for (auto& e : t["traceEvents"])
    if (e.value("cat", "") == "kernel" && e["args"].contains("Process Group Ranks")) {
      e["args"]["Process Group Ranks"] = "[0, 1, 2, 3]";
      e["args"]["Group size"] = 4;
    }
  const std::string tp = tmp.write("tp4.json", t.dump());
  const CliResult bad = run_cli("run --trace " + q(tp) + " --ranks 6 --topology composable-falcon4016");
  expect_input_error(bad, tp + ": communicator \"0\"");
  EXPECT_NE(bad.err.find("has 4 of the trace's 8 ranks, and 6 ranks (--ranks) cannot be made of whole copies of it: give a multiple of 4"),
            std::string::npos)
      << bad.err;
  for (const char* n : {"1", "4", "8"}) {  // one rank: every collective a local copy
    const CliResult ok = run_cli("run --trace " + q(tp) + " --ranks " + n + " --topology composable-falcon4016");
    EXPECT_EQ(ok.exit_code, 0) << n << ": " << ok.err;
  }
}

namespace {
// The trace at `path` without the events `drop` selects.
json trace_without(const std::string& path, const std::function<bool(const json&)>& drop) {
  json t = read_json(path);
  json kept = json::array();
  for (const auto& e : t["traceEvents"])
    if (!drop(e)) kept.push_back(e);
  t["traceEvents"] = std::move(kept);
  return t;
}
}  // namespace

// Per-rank traces are paired step by step by name: rank 1's trace lacks ProfilerStep#1, so
// steps #2-#4 are compared (each against the same step of both ranks) and #1 is left out
// with a note. Pairing by position would compare rank 0's #1 with rank 1's #2.
TEST(Cli, StepsAreMatchedAcrossRanksByName) {
  TempDir tmp;
  json t1 = trace_without(example(1), [](const json& e) { return e.value("name", "") == "ProfilerStep#1"; });
  ASSERT_EQ(t1["traceEvents"].size() + 1, read_json(example(1))["traceEvents"].size());
  const std::string r1 = tmp.write("rank1_no_step1.json", t1.dump()), out = tmp.path() + "/out";
  const CliResult r = run_cli("run --trace " + q(example(0)) + " --trace " + q(r1) + " --topology composable-falcon4016 --out " + q(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("note: 1 step(s) (ProfilerStep#1 of rank 0) are not in every rank's trace and are not compared"), std::string::npos)
      << r.out;
  // Measured time of each step: the slower rank's duration of that very step.
  std::map<std::string, double> step_s;
  for (const std::string& f : {example(0), r1}) {
    const json doc = read_json(f);
    for (const auto& e : doc["traceEvents"])
      if (e.value("cat", "") == "user_annotation")
        step_s[e["name"].get<std::string>()] = std::max(step_s[e["name"].get<std::string>()], e["dur"].get<double>() * 1e-6);
  }
  const json s = read_json(out + "/summary.json");
  ASSERT_EQ(s.at("iterations").size(), 3u) << s.dump();
  for (const auto& it : s.at("iterations")) {
    const std::string name = it.at("name").get<std::string>();
    EXPECT_NE(name, "ProfilerStep#1");
    EXPECT_NEAR(it.at("measured_s").get<double>(), step_s[name], 1e-9) << name;
  }
  // The dropped step's note, and the two traces' "synthetic" notes the run printed.
  ASSERT_EQ(s.at("notes").size(), 3u) << s.dump();
  EXPECT_EQ(s.at("notes")[0].get<std::string>().rfind("1 step(s) (ProfilerStep#1 of rank 0) are not in every rank's trace", 0), 0u);

  // Rank 1 without step #1's mark and without its last all-reduce: the error says the traces
  // may cover different steps (rank 0's starts at #1, rank 1's at #2), not only that the job
  // would hang.
  {
    std::string last_nccl;
    for (const auto& e : t1["traceEvents"])
      if (e.value("cat", "") == "kernel" && e.value("name", "").find("nccl") != std::string::npos) last_nccl = e.dump();
    const std::string shifted =
        tmp.write("rank1_shifted.json", trace_without(r1, [&](const json& e) { return e.dump() == last_nccl; }).dump());
    const CliResult e = run_cli("run --trace " + q(example(0)) + " --trace " + q(shifted) + " --topology composable-falcon4016");
    EXPECT_EQ(e.exit_code, 2) << e.err;
    EXPECT_NE(e.err.find("the job would hang; or the traces cover different steps (rank 0's starts at ProfilerStep#1, rank 1's at ProfilerStep#2)"),
              std::string::npos)
        << e.err;
  }
  // Rank 1's steps named #3-#6, with as many collectives as rank 0's #1-#4: pairing by order
  // would put rank 0's step 1 with rank 1's step 3 without a word. Refused, naming both.
  {
    json renamed = read_json(example(1));
    for (auto& e : renamed["traceEvents"])
      if (e.value("cat", "") == "user_annotation" && e.value("name", "").rfind("ProfilerStep#", 0) == 0)
        e["name"] = "ProfilerStep#" + std::to_string(std::stoi(e["name"].get<std::string>().substr(13)) + 2);
    const std::string later = tmp.write("rank1_later_steps.json", renamed.dump());
    const CliResult e = run_cli("run --trace " + q(example(0)) + " --trace " + q(later) + " --topology composable-falcon4016");
    expect_input_error(e, later + ": rank 1, collective #0 of communicator \"0\": this rank launches it in ProfilerStep#3, rank 0 in ProfilerStep#1 (" +
                              example(0) + "): collectives are matched by their order in each trace, so the traces must cover the same steps");
  }
  // A rank whose trace has no step marks at all cannot be compared step by step.
  for (auto& e : t1["traceEvents"])
    if (e.value("cat", "") == "user_annotation") e["name"] = "forward";
  const std::string bare = tmp.write("rank1_no_steps.json", t1.dump());
  const CliResult b = run_cli("run --trace " + q(example(0)) + " --trace " + q(bare) + " --topology composable-falcon4016 --out " + q(out + "2"));
  expect_input_error(b, bare);
  EXPECT_NE(b.err.find("no step marks but that of rank 0 has"), std::string::npos) << b.err;
  expect_no_output(out + "2");
}

namespace {
// The shipped example's rank 0, imported to the IR, mutated by `edit`, run; returns the
// result and the IR file's path.
std::pair<CliResult, std::string> run_edited_ir(const TempDir& tmp, const std::string& name, const std::function<void(json&)>& edit) {
  const std::string ir = tmp.path() + "/" + name + ".ir.json";
  const CliResult imp = run_cli("import " + q(example(0)) + " --out " + q(ir));
  EXPECT_EQ(imp.exit_code, 0) << imp.err;
  json doc = read_json(ir);
  edit(doc);
  write_json(ir, doc);
  return {run_cli("run --trace " + q(ir) + " --topology composable-falcon4016"), ir};
}
}  // namespace

// The IR is composim's own JSON, which people edit: a key given twice is an error naming
// where, as in topologies ("world_size": 2, "world_size": 4 would keep 4 silently).
TEST(Cli, BadInputIrRepeatedKey) {
  TempDir tmp;
  const std::string ir = tmp.path() + "/r0.ir.json";
  ASSERT_EQ(run_cli("import " + q(example(0)) + " --out " + q(ir)).exit_code, 0);
  std::string text = slurp(ir);
  const auto at = text.find("\"world_size\"");
  ASSERT_NE(at, std::string::npos);
  text.insert(at, "\"world_size\": 4, ");
  const std::string twice = tmp.write("twice.ir.json", text);
  const CliResult r = run_cli("run --trace " + q(twice) + " --topology composable-falcon4016");
  expect_input_error(r, twice + ": world_size: the key \"world_size\" is given twice in this object");
}

// An IR file is checked for what the replay relies on, and its errors name the IR file (not
// the trace it was imported from) and the place in it.
TEST(Cli, BadInputIrStepsSequenceNumbersAndCycles) {
  TempDir tmp;
  {  // control: the unedited IR replays
    const auto [r, ir] = run_edited_ir(tmp, "same", [](json&) {});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  {
    const auto [r, ir] = run_edited_ir(tmp, "overlap", [](json& d) { d["iterations"][1]["ts_ns"] = d["iterations"][0]["ts_ns"].get<std::int64_t>() + 1000; });
    expect_input_error(r, ir + ": step ProfilerStep#2");
    EXPECT_NE(r.err.find("must be in time order and must not overlap"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find(example(0)), std::string::npos) << "names the original trace: " << r.err;
  }
  {
    const auto [r, ir] = run_edited_ir(tmp, "twice", [](json& d) { d["iterations"][2]["name"] = "ProfilerStep#2"; });
    expect_input_error(r, ir + ": step ProfilerStep#2");
    EXPECT_NE(r.err.find("appears twice"), std::string::npos) << r.err;
  }
  {
    const auto [r, ir] = run_edited_ir(tmp, "stream", [](json& d) { d["streams"][1]["id"] = d["streams"][0]["id"]; });
    expect_input_error(r, ir + ": streams[1].id");
    EXPECT_NE(r.err.find("is also streams[0]"), std::string::npos) << r.err;
  }
  {
    const auto [r, ir] = run_edited_ir(tmp, "seq", [](json& d) { d["collectives"][3]["seq"] = 1; });
    expect_input_error(r, ir + ": collectives[3]");
    EXPECT_NE(r.err.find("sequence number 1 of communicator"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("collectives[1]"), std::string::npos) << r.err;
  }
  {  // a kernel that waits for itself
    const auto [r, ir] = run_edited_ir(tmp, "self", [](json& d) { d["gpu_ops"][5]["waits_on"] = json::array({5}); });
    expect_input_error(r, ir + ": gpu_ops[5] (kernel ");
    EXPECT_NE(r.err.find("in a cycle"), std::string::npos) << r.err;
  }
  {  // a kernel on the compute stream waiting for the last all-reduce, which follows it
    std::int64_t last_coll = -1;
    const auto [r, ir] = run_edited_ir(tmp, "later", [&](json& d) {
      last_coll = d["collectives"].back()["gpu_op"].get<std::int64_t>();
      d["gpu_ops"][3]["waits_on"] = json::array({last_coll});
    });
    expect_input_error(r, ir + ": ");
    EXPECT_NE(r.err.find("in a cycle"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("gpu_ops[3] (kernel"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("gpu_ops[" + std::to_string(last_coll) + "] (collective"), std::string::npos) << r.err;
  }
}

// An edited IR is held to what the Kineto importer checks: an unknown top-level key, an
// algorithm no NCCL kernel name gives, and two ranks calling a collective with different
// element types (same bytes) are errors naming the file and the place.
TEST(Cli, BadInputIrKeysAlgorithmAndTypes) {
  TempDir tmp;
  {
    const auto [r, ir] = run_edited_ir(tmp, "key", [](json& d) { d["extra"] = 1; });
    expect_input_error(r, ir + ": top level: unknown key \"extra\"");
  }
  {  // below the top level too: a typo would skip what the key checks
    const auto [r, ir] = run_edited_ir(tmp, "dtyp", [](json& d) { d["collectives"][1]["dtyp"] = "Half"; });
    expect_input_error(r, ir + ": collectives[1]: unknown key \"dtyp\"");
    const auto [r2, ir2] = run_edited_ir(tmp, "durr", [](json& d) { d["gpu_ops"][3]["durr_ns"] = 5; });
    expect_input_error(r2, ir2 + ": gpu_ops[3]: unknown key \"durr_ns\"");
    const auto [r3, ir3] = run_edited_ir(tmp, "op", [](json& d) { d["threads"][0]["ops"][0]["launch"] = 1; });
    expect_input_error(r3, ir3 + ": threads[0].ops[0]: unknown key \"launch\"");
  }
  {
    const auto [r, ir] = run_edited_ir(tmp, "algo", [](json& d) { d["collectives"][2]["algorithm"] = "FOO"; });
    expect_input_error(r, ir + ": collectives[2].algorithm: unknown algorithm \"FOO\" (RING, TREE, NVLS");
  }
  {  // one workload is one GPU: streams on two devices are refused, as the Kineto importer does
    const auto [r, ir] = run_edited_ir(tmp, "two_devices", [](json& d) {
      ASSERT_GE(d["streams"].size(), 2u);
      d["streams"][1]["device"] = d["streams"][0]["device"].get<int>() + 1;
    });
    expect_input_error(r, ir + ": streams[1].device: device 1, streams[0] device 0: composim replays one GPU per workload");
  }
  {  // a cut-short rank list that reaches beyond the job: the error lists the ranks it gives
    json t = read_json(example(0));
    t["distributedInfo"].erase("pg_config");
    for (auto& e : t["traceEvents"])
      if (e.contains("args") && e["args"].contains("Process Group Ranks")) e["args"]["Process Group Ranks"] = "[0, 5, ...]";
    const std::string beyond = tmp.write("beyond.json", t.dump());
    expect_input_error(run_cli("run --trace " + q(beyond) + " --topology dgx-a100"),
                       beyond + ": communicator \"0\": rank 5 is not a rank of the job (world size 2); its ranks: [0, 5] (a cut-short \"Process Group Ranks\" is "
                                "continued in its steps)");
  }
  {  // NVLS and NVLS_TREE run only in Simple: a name that says LL is not NCCL's
    const auto [r, ir] = run_edited_ir(tmp, "nvls_tree_ll", [](json& d) {
      d["collectives"][2]["algorithm"] = "NVLS_TREE";
      d["collectives"][2]["protocol"] = "LL";
      d["collectives"][2]["protocol_from_trace"] = true;
    });
    expect_input_error(r, ir + ": collectives[2].protocol: NVLS_TREE in LL: NCCL runs NVLS and NVLS_TREE only in Simple");
  }
  {  // NVLS_TREE is a name NCCL gives; an empty one is what a kernel name without one leaves
    const auto [r, ir] = run_edited_ir(tmp, "nvls_tree", [](json& d) {
      d["collectives"][2]["algorithm"] = "NVLS_TREE";
      d["collectives"][3]["algorithm"] = "";
    });
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  const std::string ir0 = tmp.path() + "/r0.ir.json", ir1 = tmp.path() + "/r1.ir.json";
  ASSERT_EQ(run_cli("import " + q(example(0)) + " --out " + q(ir0)).exit_code, 0);
  ASSERT_EQ(run_cli("import " + q(example(1)) + " --out " + q(ir1)).exit_code, 0);
  json doc = read_json(ir1);
  doc["collectives"][0]["dtype"] = "Int";  // 4 bytes, as Float: same bytes, another type
  write_json(ir1, doc);
  const CliResult r = run_cli("run --trace " + q(ir0) + " --trace " + q(ir1) + " --topology composable-falcon4016");
  expect_input_error(r, ir1 + ": rank 1, collective #0 of communicator \"0\": mismatched collective: this rank's is of type \"Int\", rank 0's of \"Float\"");
  // Spellings of one type agree ("float32" is PyTorch's "Float"); a rank without a type
  // (or with one composim does not know) is compared with none.
  doc["collectives"][0]["dtype"] = "float32";
  doc["collectives"][1]["dtype"] = "";
  doc["collectives"][2]["dtype"] = "Wibble";
  write_json(ir1, doc);
  EXPECT_EQ(run_cli("run --trace " + q(ir0) + " --trace " + q(ir1) + " --topology composable-falcon4016").exit_code, 0);

  // Kernel names that say what ran (NCCL 2.19+) must agree across ranks; names that do not
  // (protocol_from_trace false, as here) are not compared: the tuner chooses.
  doc = read_json(ir1);
  doc["collectives"][0]["algorithm"] = "TREE";
  write_json(ir1, doc);
  EXPECT_EQ(run_cli("run --trace " + q(ir0) + " --trace " + q(ir1) + " --topology composable-falcon4016").exit_code, 0);
  for (const std::string& f : {ir0, ir1}) {
    json d = read_json(f);
    d["collectives"][0]["protocol_from_trace"] = true;
    write_json(f, d);
  }
  expect_input_error(run_cli("run --trace " + q(ir0) + " --trace " + q(ir1) + " --topology composable-falcon4016"),
                     ir1 + ": rank 1, collective #0 of communicator \"0\": mismatched collective: this rank's ran TREE/LL, rank 0's RING/LL (" + ir0 +
                         "): NCCL runs one algorithm and protocol on every rank");
  doc = read_json(ir1);
  doc["collectives"][0]["algorithm"] = "RING";
  write_json(ir1, doc);
  EXPECT_EQ(run_cli("run --trace " + q(ir0) + " --trace " + q(ir1) + " --topology composable-falcon4016").exit_code, 0);

  // One all-reduce of rank 1 moved to a communicator rank 0 does not have: the pairs after it
  // shift, and the error says why.
  doc = read_json(ir1);
  doc["collectives"][0]["dtype"] = "Float";
  doc["communicators"].push_back({{"name", "7"}, {"ranks", {0, 1}}});
  int seq = 0;
  doc["collectives"][3]["communicator"] = 1;
  for (auto& c : doc["collectives"]) c["seq"] = c["communicator"] == 0 ? seq++ : 0;
  write_json(ir1, doc);
  const CliResult moved = run_cli("run --trace " + q(ir0) + " --trace " + q(ir1) + " --topology composable-falcon4016");
  expect_input_error(moved, ir1 + ": rank 1, collective #3 of communicator \"0\": mismatched collective");
  EXPECT_NE(moved.err.find("this rank has 11 collectives on communicator \"0\", rank 0 has 12: one is missing, extra or on another communicator"),
            std::string::npos)
      << moved.err;
}

// One trace is one rank on one GPU: a process that drove two GPUs, or GPU events without a
// stream, cannot be replayed as recorded.
TEST(Cli, BadInputKinetoTwoDevicesOrNoStream) {
  TempDir tmp;
  json two = small_kineto_trace(3);
  json none = two;
  int kernels = 0;
  for (auto& e : two["traceEvents"])
    if (e["cat"] == "kernel" && ++kernels == 2) e["args"]["device"] = 1;
  const std::string f2 = tmp.write("two_devices.json", two.dump());
  const CliResult a = run_cli("import " + q(f2));
  expect_input_error(a, f2 + ": traceEvents[3].args.device");
  EXPECT_NE(a.err.find("device 1 and on device 0"), std::string::npos) << a.err;

  kernels = 0;
  for (auto& e : none["traceEvents"])
    if (e["cat"] == "kernel" && ++kernels == 3) e["args"].erase("stream");
  const std::string f0 = tmp.write("no_stream.json", none.dump());
  const CliResult b = run_cli("import " + q(f0));
  expect_input_error(b, f0 + ": traceEvents[5].args");
  EXPECT_NE(b.err.find("without a \"stream\""), std::string::npos) << b.err;

  const CliResult ok = run_cli("import " + q(tmp.write("fine.json", small_kineto_trace(3).dump())));
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

TEST(Cli, LaunchLatencyIsBounded) {
  for (const char* v : {"2s", "1e308s"}) {
    const CliResult r = run_cli("run " + example_traces() + " --topology composable-falcon4016 --launch-latency " + v);
    expect_input_error(r, "--launch-latency");
    EXPECT_NE(r.err.find("more than 1 s"), std::string::npos) << r.err;
  }
  const CliResult ok = run_cli("run " + example_traces() + " --topology composable-falcon4016 --launch-latency 1s");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

// import --out is checked before the trace is read: a bad place fails at once.
TEST(Cli, ImportChecksOutBeforeReading) {
  TempDir tmp;
  const std::string file = tmp.write("a_file", "x");
  const CliResult r = run_cli("import " + q(tmp.path() + "/missing.json") + " --out " + q(file + "/ir.json"));
  expect_input_error(r, "--out");
  EXPECT_EQ(r.err.find("missing.json"), std::string::npos) << "read the trace first: " << r.err;
  const CliResult d = run_cli("import " + q(example(0)) + " --out " + q(tmp.path()));
  expect_input_error(d, "is a directory");
}

// links.csv is RFC 4180: a link name with a comma or a quote, or a node name with a quote, is one quoted field
// (a link named "up,link" gave rows of 9 fields under 8 columns).
TEST(Cli, LinksCsvQuotesNames) {
  TempDir tmp;
  const json topo = {{"schema_version", 1},
                     {"name", "q"},
                     {"nodes", {{{"name", "cpu0"}, {"type", "host"}}, {{"name", "\"gpu0"}, {"type", "gpu"}, {"model", "A100-PCIe-40GB"}}}},
                     {"links", {{{"from", "cpu0"}, {"to", "\"gpu0"}, {"type", "pcie"}, {"generation", 4}, {"lanes", 16}, {"name", "up,\"link"}}}}};
  const std::string out = tmp.path() + "/out";
  const CliResult r = run_cli("run --trace " + q(example(0)) + " --ranks 1 --topology " + q(tmp.write("q.json", topo.dump())) + " --out " + q(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = read_csv(out + "/links.csv");
  ASSERT_FALSE(rows.empty());
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("link"), "up,\"link");
    EXPECT_TRUE((row.at("from") == "cpu0" && row.at("to") == "\"gpu0") || (row.at("from") == "\"gpu0" && row.at("to") == "cpu0"))
        << row.at("from") << " -> " << row.at("to");
    EXPECT_GT(std::stod(row.at("bandwidth_GBps")), 26.0);
  }
}

// Three host-to-device copies on three streams overlap in part on the same PCIe path, so
// their rates change as each starts and ends. links.csv must never show a link direction
// above its bandwidth (spreading each copy's bytes evenly over its life did: 1.44), must
// carry every byte (150 MB on each hop), and shows the path saturated while they overlap.
TEST(Cli, LinkUtilisationIsExactWhenRatesChange) {
  TempDir tmp;
  json ev = json::array();
  const std::int64_t bytes[3] = {100'000'000, 40'000'000, 10'000'000};
  const double at_us[3] = {0, 1000, 1500};
  for (int i = 0; i < 3; ++i) {
    ev.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaMemcpyAsync"}, {"pid", 1}, {"tid", 1}, {"ts", at_us[i]},
                  {"dur", 2.0}, {"args", {{"correlation", i + 1}}}});
    ev.push_back({{"ph", "X"}, {"cat", "gpu_memcpy"}, {"name", "Memcpy HtoD (Pinned -> Device)"}, {"pid", 0}, {"tid", 7 + i},
                  {"ts", at_us[i] + 5}, {"dur", 2000.0},
                  {"args", {{"device", 0}, {"stream", 7 + i}, {"correlation", i + 1}, {"bytes", bytes[i]}}}});
  }
  const json doc = {{"deviceProperties", json::array({{{"id", 0}, {"name", "NVIDIA A100-SXM4-40GB"}}})}, {"traceEvents", ev}};
  const std::string trace = tmp.write("three_copies.json", doc.dump()), out = tmp.path() + "/out";
  const CliResult r = run_cli("run --trace " + q(trace) + " --topology dgx-a100 --out " + q(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, double> carried;
  double peak = 0;
  size_t rows = 0;
  for (const auto& row : read_csv(out + "/links.csv")) {
    ++rows;
    carried[row.at("link") + " " + row.at("from")] += std::stod(row.at("bytes"));
    peak = std::max(peak, std::stod(row.at("utilisation")));
  }
  ASSERT_GT(rows, 0u);
  EXPECT_EQ(rows % carried.size(), 0u);
  EXPECT_GE(rows / carried.size(), 51u);
  EXPECT_LE(rows / carried.size(), 100u);
  EXPECT_LE(peak, 1.0 + 1e-9);
  EXPECT_GT(peak, 0.99) << "the path is saturated while the copies overlap";
  ASSERT_FALSE(carried.empty());
  for (const auto& [link, b] : carried) EXPECT_NEAR(b, 150e6, 1.0) << link;
  const json s = read_json(out + "/summary.json");
  EXPECT_LE(s.at("busiest_link_utilisation").get<double>(), 1.0);
}

// --trace DIR: the directory's *.json and *.json.gz files, one per rank, by name; other
// and hidden files, and directories, are not traces; a broken link is an error. The same
// job as two --trace flags.
TEST(Cli, TraceDirectoryIsOneTracePerRank) {
  TempDir tmp;
  const std::string dir = tmp.path() + "/traces";
  fs::create_directories(dir);
  fs::copy_file(example(1), dir + "/ddp2_rank1.JSON");  // the extension in any case
  fs::copy_file(example(0), dir + "/ddp2_rank0.json");
  std::ofstream(dir + "/notes.txt") << "not a trace";
  std::ofstream(dir + "/.hidden.json") << "{";
  fs::create_directories(dir + "/sub.json");                  // a directory: not a trace
  // A trace that is a broken link is a rank's trace gone missing, not a file to skip.
  fs::create_symlink(dir + "/gone.json", dir + "/rank9.json");
  const CliResult broken = run_cli("run --trace " + q(dir) + " --topology composable-falcon4016");
  expect_input_error(broken, dir + "/rank9.json: --trace " + dir + ": is a link to a missing file (" + dir + "/gone.json)");
  fs::remove(dir + "/rank9.json");
  const CliResult d = run_cli("run --trace " + q(dir) + " --topology composable-falcon4016");
  const CliResult f = run_cli("run " + example_traces() + " --topology composable-falcon4016");
  ASSERT_EQ(d.exit_code, 0) << d.err;
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_NE(d.out.find("2 rank(s) on composable-falcon4016, 2 trace(s)"), std::string::npos) << d.out;
  EXPECT_EQ(summary_without_wall_time(d.out), summary_without_wall_time(f.out));
  EXPECT_NE(summary_without_wall_time(d.out), "");

  const std::string empty = tmp.path() + "/empty";
  fs::create_directories(empty);
  const CliResult e = run_cli("run --trace " + q(empty) + " --topology composable-falcon4016");
  expect_input_error(e, empty + ": --trace: directory holds no trace files");
}

// A step that ends inside a synchronize the replay shortens: the step is placed by the call
// it ends in (its offset from the call's nearer end, at most half the call's predicted
// length), so its
// predicted end is never before its start and the breakdown's parts stay non-negative.
// Hand-made: launch k0 at 0 us, cudaStreamSynchronize 2-1002 us waiting for k0 (measured
// 900-1000 us, replayed right after its launch), launch k1 at 1003 us; steps [0, 3] us and
// [1003, 1023] us.
TEST(Cli, StepEndingInsideAShortenedCallKeepsItsLength) {
  TempDir tmp;
  auto call = [](const char* name, double ts, double dur, int corr) {
    return json{{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", name}, {"pid", 1}, {"tid", 1}, {"ts", ts}, {"dur", dur}, {"args", {{"correlation", corr}}}};
  };
  auto kern = [](const char* name, double ts, double dur, int corr) {
    return json{{"ph", "X"}, {"cat", "kernel"}, {"name", name}, {"pid", 0}, {"tid", 7}, {"ts", ts}, {"dur", dur},
                {"args", {{"device", 0}, {"stream", 7}, {"correlation", corr}}}};
  };
  auto step = [](const char* name, double ts, double dur) {
    return json{{"ph", "X"}, {"cat", "user_annotation"}, {"name", name}, {"pid", 1}, {"tid", 1}, {"ts", ts}, {"dur", dur}};
  };
  const json doc = {{"traceEvents", json::array({step("ProfilerStep#1", 0, 3), step("ProfilerStep#2", 1003, 20),
                                                 call("cudaLaunchKernel", 0, 1, 1), call("cudaStreamSynchronize", 2, 1000, 2),
                                                 call("cudaLaunchKernel", 1003, 1, 3), kern("k0", 900, 100, 1), kern("k1", 1010, 10, 3)})}};
  const std::string trace = tmp.write("short_sync.json", doc.dump()), out = tmp.path() + "/out";
  const CliResult r = run_cli("run --trace " + q(trace) + " --topology dgx-a100 --warmup 0 --out " + q(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json s = read_json(out + "/summary.json");
  ASSERT_EQ(s.at("iterations").size(), 2u);
  // Step 1 ends 1 us into the synchronize, which runs longer than that in the replay too.
  EXPECT_NEAR(s.at("iterations")[0].at("predicted_s").get<double>(), 3e-6, 1e-9) << s.dump();
  EXPECT_NEAR(s.at("iterations")[1].at("predicted_s").get<double>(), 20e-6, 1e-9) << s.dump();
  double sum = 0;
  for (const char* k : {"compute_s", "exposed_communication_s", "memcpy_s", "idle_s"}) {
    EXPECT_GE(s.at("breakdown").at(k).get<double>(), 0.0) << k;
    sum += s.at("breakdown").at(k).get<double>();
  }
  EXPECT_NEAR(sum, s.at("predicted_iteration_s").get<double>(), 1e-12);
}

// Step marks on a thread that made no CUDA calls are placed on the thread of the first CUDA
// call (with a note), not left at their measured times: the same prediction as with the
// real (main) thread.
TEST(Cli, StepMarksOffTheCallingThreadAreAnchoredToIt) {
  TempDir tmp;
  json t = read_json(example(0));
  for (auto& e : t["traceEvents"])
    if (e.value("cat", "") == "user_annotation") e["tid"] = 4242;
  const std::string moved = tmp.write("marks_elsewhere.json", t.dump());
  const CliResult a = run_cli("run --trace " + q(example(0)) + " --topology composable-falcon4016");
  const CliResult b = run_cli("run --trace " + q(moved) + " --topology composable-falcon4016");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(summary_without_wall_time(b.out), summary_without_wall_time(a.out));
  EXPECT_EQ(a.out.find("+0.00%"), std::string::npos) << "the control should not be exact: " << a.out;
  EXPECT_NE(b.out.find("note: rank 0's step marks are on a thread without CUDA calls: anchored to the thread of its first CUDA call"), std::string::npos)
      << b.out;
}

// Steps that other ranks have but the first lacks are noted too.
TEST(Cli, StepsMissingOnTheFirstRankAreNoted) {
  TempDir tmp;
  const json t0 = trace_without(example(0), [](const json& e) {
    return e.value("cat", "") == "user_annotation" && (e["name"] == "ProfilerStep#3" || e["name"] == "ProfilerStep#4");
  });
  const std::string r0 = tmp.write("rank0_two_steps.json", t0.dump());
  const CliResult r = run_cli("run --trace " + q(r0) + " --trace " + q(example(1)) + " --topology composable-falcon4016");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("note: 2 step(s) (ProfilerStep#3 of rank 1, ProfilerStep#4 of rank 1) are not in every rank's trace"),
            std::string::npos)
      << r.out;
}

// Steps are paired by name; a rank whose steps carry the names in another order is noted.
// Collectives are paired by order, so with collectives the same names in another order are
// refused (one step's collectives would be paired with another's); without, noted.
TEST(Cli, StepsInAnotherOrderOnOneRankAreNoted) {
  TempDir tmp;
  json t1 = read_json(example(1));
  int swapped = 0;
  for (auto& e : t1["traceEvents"])
    if (e.value("cat", "") == "user_annotation" && (e["name"] == "ProfilerStep#3" || e["name"] == "ProfilerStep#4")) {
      e["name"] = e["name"] == "ProfilerStep#3" ? "ProfilerStep#4" : "ProfilerStep#3";
      ++swapped;
    }
  ASSERT_EQ(swapped, 2);
  const std::string with_collectives = tmp.write("rank1_swapped_nccl.json", t1.dump());
  expect_input_error(run_cli("run --trace " + q(example(0)) + " --trace " + q(with_collectives) + " --topology composable-falcon4016"),
                     "this rank launches it in ProfilerStep#4, rank 0 in ProfilerStep#3");
  auto no_nccl = [](const json& e) { return e.value("cat", "") == "kernel" && e.value("name", "").find("nccl") != std::string::npos; };
  const std::string r0 = tmp.write("rank0_no_nccl.json", trace_without(example(0), no_nccl).dump());
  const std::string r1 = tmp.write("rank1_swapped.json", trace_without(with_collectives, no_nccl).dump());
  const CliResult r = run_cli("run --trace " + q(r0) + " --trace " + q(r1) + " --topology composable-falcon4016");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("note: rank 1's steps are in another order than rank 0's (ProfilerStep#4 comes earlier there): steps are paired by name"),
            std::string::npos)
      << r.out;
  const CliResult plain = run_cli("run " + example_traces() + " --topology composable-falcon4016");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("another order"), std::string::npos) << plain.out;
}

// A rank's collective on a communicator it is not a member of cannot be matched.
TEST(Cli, BadInputCollectiveOnACommunicatorWithoutThisRank) {
  TempDir tmp;
  const auto [r, ir] = run_edited_ir(tmp, "foreign", [](json& d) { d["communicators"][0]["ranks"] = json::array({1}); });
  expect_input_error(r, ir + ": collectives[0]");
  EXPECT_NE(r.err.find("whose ranks do not include this trace's rank 0"), std::string::npos) << r.err;
}

// Outputs replace files by renaming new ones over them: a device, FIFO or directory where an
// output goes is refused before any work (root's `--out /dev/null` would otherwise replace
// /dev/null by a regular file).
TEST(Cli, OutputsNeverReplaceDevicesFifosOrDirectories) {
  TempDir tmp;
  const std::string fifo = tmp.path() + "/fifo.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  const CliResult a = run_cli("import " + q(example(0)) + " --out " + q(fifo));
  expect_input_error(a, fifo + ": --out: exists and is not a regular file");
  EXPECT_TRUE(fs::is_fifo(fifo));
  const std::string dev_link = tmp.path() + "/null.json";
  fs::create_symlink("/dev/null", dev_link);
  const CliResult b = run_cli("import " + q(example(0)) + " --out " + q(dev_link));
  expect_input_error(b, dev_link + ": --out: exists and is not a regular file");
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  // run: checked before the replay, for each of its four files.
  const std::string out = tmp.path() + "/out";
  fs::create_directories(out + "/timeline.json");
  const CliResult c = run_cli("run " + example_traces() + " --topology composable-falcon4016 --out " + q(out));
  expect_input_error(c, out + "/timeline.json: --out: is a directory");
  EXPECT_EQ(c.out, "") << "the replay ran before the check";
  EXPECT_FALSE(fs::exists(out + "/summary.json"));
  // A link to a regular file is written through: the target gets the output, the link stays.
  const std::string target = tmp.path() + "/target.json", link = tmp.path() + "/link.json";
  std::ofstream(target) << "old";
  fs::create_symlink(target, link);
  const CliResult d = run_cli("import " + q(example(0)) + " --out " + q(link));
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(read_json(target).contains("composim_workload"));
  // A dangling link (relative) is written through too: its target is created.
  const std::string dangling = tmp.path() + "/dangling.json";
  fs::create_symlink("made.json", dangling);
  const CliResult e = run_cli("import " + q(example(0)) + " --out " + q(dangling));
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_TRUE(fs::is_symlink(dangling));
  EXPECT_TRUE(read_json(tmp.path() + "/made.json").contains("composim_workload"));
}

// Two ranks whose collectives of one step (made the same size) are numbered in different
// orders wait for each other: the error names a trace and the collectives, not only
// "replay". (Numbered across steps, they are refused before: see
// StepsAreMatchedAcrossRanksByName.)
TEST(Cli, BadInputCrossRankDeadlockNamesATrace) {
  TempDir tmp;
  std::string irs[2];
  for (int r = 0; r < 2; ++r) {
    irs[r] = tmp.path() + "/r" + std::to_string(r) + ".ir.json";
    ASSERT_EQ(run_cli("import " + q(example(r)) + " --out " + q(irs[r])).exit_code, 0);
    json d = read_json(irs[r]);
    d["collectives"][2]["in_bytes"] = d["collectives"][0]["in_bytes"];
    if (r == 1) std::swap(d["collectives"][0]["seq"], d["collectives"][2]["seq"]);
    write_json(irs[r], d);
  }
  const CliResult r = run_cli("run --trace " + q(irs[0]) + " --trace " + q(irs[1]) + " --topology composable-falcon4016");
  // Both ranks stall, so both traces are named.
  expect_input_error(r, irs[0] + ", " + irs[1] + ": replay: the simulation stopped with");
  EXPECT_NE(r.err.find("all_reduce #"), std::string::npos) << r.err;
}

// Four ranks, collectives 6 on in two sub-communicators (dpA: 0, 2; dpB: 1, 3), rank 3 lacks
// dpB's last: it is named as missing, with its trace, and without the "misnamed group" hint
// (rank 3 has dpB, and all-reduces of that size on the world communicator, which are not it).
TEST(Cli, MissingCollectiveOnASubCommunicator) {
  TempDir tmp;
  json ir[2];
  for (int r = 0; r < 2; ++r) {
    const std::string out = tmp.path() + "/src" + std::to_string(r) + ".ir.json";
    ASSERT_EQ(run_cli("import " + q(example(r)) + " --out " + q(out)).exit_code, 0);
    ir[r] = read_json(out);
  }
  std::string traces;
  for (int r = 0; r < 4; ++r) {
    json d = ir[r % 2];
    d["rank"] = r;
    d["world_size"] = 4;
    d["communicators"] = json::array({{{"name", "0"}, {"ranks", {0, 1, 2, 3}}}, {{"name", "dpA"}, {"ranks", {0, 2}}}, {{"name", "dpB"}, {"ranks", {1, 3}}}});
    auto& cs = d["collectives"];
    ASSERT_GT(cs.size(), 7u);
    for (size_t i = 0; i < cs.size(); ++i) {
      cs[i]["group_size"] = i < 6 ? 4 : 2;
      if (i >= 6) cs[i]["communicator"] = r % 2 == 0 ? 1 : 2, cs[i]["seq"] = cs[i]["seq"].get<int>() - 6;
    }
    if (r == 3) {
      const int g = cs.back()["gpu_op"].get<int>();
      cs.erase(cs.size() - 1);
      d["gpu_ops"][g]["kind"] = "kernel";
      d["gpu_ops"][g].erase("collective");
    }
    traces += " --trace " + q(tmp.write("r" + std::to_string(r) + ".ir.json", d.dump()));
  }
  const CliResult r = run_cli("run" + traces + " --topology dgx-a100");
  expect_input_error(r, "of communicator \"dpB\"");
  EXPECT_NE(r.err.find("ranks [3] (" + tmp.path() + "/r3.ir.json) never reach this collective, which ranks [1] launch; the job would hang"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("instead"), std::string::npos) << r.err;
}

// timeline.json: a stream whose id is where CPU threads' tracks used to start (1000000)
// keeps a track of its own.
TEST(Cli, TimelineTracksNeverCollide) {
  TempDir tmp;
  const auto [r, ir] = run_edited_ir(tmp, "sid", [](json& d) { d["streams"][0]["id"] = 1000000; });
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string out = tmp.path() + "/out";
  ASSERT_EQ(run_cli("run --trace " + q(ir) + " --ranks 1 --topology composable-falcon4016 --out " + q(out)).exit_code, 0);
  std::map<std::int64_t, std::set<std::string>> kinds;  // tid -> event categories
  const json timeline = read_json(out + "/timeline.json");
  for (const auto& e : timeline.at("traceEvents"))
    if (e.value("ph", "") == "X") kinds[e.at("tid").get<std::int64_t>()].insert(e.at("cat").get<std::string>() == "cpu" ? "cpu" : "gpu");
  ASSERT_TRUE(kinds.count(1000000));
  for (const auto& [tid, k] : kinds) EXPECT_EQ(k.size(), 1u) << "track " << tid << " mixes CPU calls and GPU work";
}

TEST(Cli, BadInputUnknownShippedTopology) {
  TempDir tmp;
  const std::string out = tmp.path() + "/out";
  const CliResult r = run_cli("run " + example_traces() + " --topology no-such-topo --out " + q(out));
  expect_input_error(r, "no-such-topo");
  EXPECT_NE(r.err.find("not a shipped topology"), std::string::npos) << r.err;
  expect_no_output(out);
  EXPECT_FALSE(fs::exists(out)) << "a failed run created its --out directory";
}

// A failed command leaves the file system as it was: no --out directory, nested or not.
TEST(Cli, FailedCommandsCreateNoOutDirectory) {
  TempDir tmp;
  const std::string nested = tmp.path() + "/a/b/c";
  for (const std::string& args : {"collective --bytes abc --topology dgx-a100 --out " + q(nested),
                                  "collective --bytes 1M --topology dgx-a100 --placement gpu0,gpu0 --out " + q(nested),
                                  "p2p --topology no-such-topo --out " + q(nested)}) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_FALSE(fs::exists(tmp.path() + "/a")) << args;
  }
  const std::string file = tmp.path() + "/f";
  std::ofstream(file) << "x";
  composim::testing::expect_cli_error("collective --bytes 1M --gpus 2 --topology dgx-a100 --out " + q(file + "/x"),
                                      file + "/x: --out: cannot create the output directory: " + file + " is not a directory");
}

// --gpus and --placement both count GPUs; a placement must name every GPU it means.
TEST(Cli, PlacementConflictsAreErrors) {
  using composim::testing::expect_cli_error;
  expect_cli_error("collective --bytes 1M --topology dgx-a100 --gpus 2 --placement gpu0,gpu1,gpu2",
                   "--gpus: 2 GPUs but --placement names 3 (give one of the two)");
  expect_cli_error("p2p --topology dgx-a100 --gpus 3 --placement gpu0,gpu1", "--gpus: 3 GPUs but --placement names 2");
  expect_cli_error("collective --bytes 1M --topology dgx-a100 --placement gpu0,", "--placement: \"gpu0,\" ends with a comma");
  expect_cli_error("collective --bytes 1M --topology dgx-a100 --placement ''", "--placement: needs a comma-separated list of GPUs");
  expect_cli_error("p2p --topology dgx-a100 --placement ''", "--placement: needs a comma-separated list of GPUs");
  // A composition leaves GPUs unattached; p2p sees one machine, or one host of a composition.
  expect_cli_error("collective --bytes 64M --topology composable-falcon4016 --compose host0=gpu0-3 --placement gpu0,gpu8",
                   "--placement: GPU \"gpu8\" is not attached to any host in the composition");
  expect_cli_error("p2p --topology composable-falcon4016 --compose host0=gpu0-3,host1=gpu4-7 --placement gpu0,gpu4",
                   "--placement: \"gpu0\" and \"gpu4\" are on different hosts");
  expect_cli_error("p2p --topology 2x-hgx-h100-ib --placement n0.gpu0,n1.gpu0", "\"n0.gpu0\" and \"n1.gpu0\" are on different machines");
  const auto first_host = composim::testing::run_cli("p2p --topology composable-falcon4016 --compose host0=gpu0-3,host1=gpu4-7");
  EXPECT_EQ(first_host.exit_code, 0) << first_host.err;
  EXPECT_NE(first_host.out.find("   D\\D       0       1       2       3\n"), std::string::npos) << first_host.out;  // host0's 4 GPUs
  const auto agree = composim::testing::run_cli("collective --bytes 1M --topology dgx-a100 --gpus 2 --placement gpu0,gpu1");
  EXPECT_EQ(agree.exit_code, 0) << agree.err;
}

// ---------------------------------------------------------------------------------------
// 7. The topology subcommand.

TEST(Cli, TopologyRouteWithinOneSwitch) {
  const CliResult r = run_cli("topology pcie-8gpu-gen3 --route gpu0 gpu1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("gpu0 -> sw0 -> gpu1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("13.16 GB/s"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("staged"), std::string::npos) << r.out;
  EXPECT_EQ(lines_of(r.out).size(), 1u) << r.out;
}

TEST(Cli, TopologyRouteAcrossSocketsIsStaged) {
  const CliResult r = run_cli("topology pcie-8gpu-gen3 --route gpu0 gpu4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("staged"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gpu4"), std::string::npos) << r.out;
}

// Names are free text (but for , : = and blanks): the DOT file escapes quotes and
// backslashes, p2p.csv quotes as RFC 4180 does. A GPU pair without a route is listed as such
// and does not stop the listing or --dot. p2p on a first host with one GPU says so.
TEST(Cli, TopologyOutputsTakeAnyNameAndPairsWithoutRoute) {
  TempDir d;
  const std::string odd = d.write("odd.json", R"({"schema_version": 1, "name": "odd", "nodes": [{"name": "cpu0", "type": "host"},
    {"name": "sw\"0", "type": "pcie_switch", "generation": 3}, {"name": "gpu\"0", "type": "gpu", "model": "V100-PCIE"},
    {"name": "gpu\\1", "type": "gpu", "model": "V100-PCIE"}],
   "links": [{"from": "cpu0", "to": "sw\"0", "type": "pcie", "generation": 3, "lanes": 16},
    {"from": "sw\"0", "to": "gpu\"0", "type": "pcie", "generation": 3, "lanes": 16},
    {"from": "sw\"0", "to": "gpu\\1", "type": "pcie", "generation": 3, "lanes": 16}]})");
  auto r = run_cli("topology " + odd + " --dot " + d.path() + "/odd.dot");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream dot(d.path() + "/odd.dot");
  const std::string text((std::istreambuf_iterator<char>(dot)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(R"([label="sw\"0\npcie_switch")"), std::string::npos) << text;
  EXPECT_NE(text.find(R"([label="gpu\\1\ngpu)"), std::string::npos) << text;
  r = run_cli("p2p --topology " + odd + " --out " + d.path() + "/p2p");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream csv(d.path() + "/p2p/p2p.csv");
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  EXPECT_EQ(row.rfind(R"(0,1,"gpu""0",gpu\1,13.16)", 0), 0u) << row;

  // Two hosts of the chassis without their network: gpu0 and gpu8 have no route.
  nlohmann::json t = nlohmann::json::parse(std::ifstream(source_dir() + "/topologies/shipped/composable-falcon4016.json"));
  nlohmann::json nodes = nlohmann::json::array(), links = nlohmann::json::array();
  std::set<std::string> dropped;
  for (const auto& n : t["nodes"])
    if (n["type"] == "nic" || n["type"] == "network_switch") dropped.insert(n["name"].get<std::string>());
    else nodes.push_back(n);
  for (const auto& l : t["links"])
    if (!dropped.count(l["from"].get<std::string>()) && !dropped.count(l["to"].get<std::string>())) links.push_back(l);
  t["nodes"] = nodes;
  t["links"] = links;
  t["composition"] = {{"host0", {"gpu0", "gpu1"}}, {"host1", {"gpu8", "gpu9"}}};
  const std::string nonet = d.write("nonet.json", t.dump());
  r = run_cli("topology " + nonet + " --dot " + d.path() + "/nonet.dot");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  gpu0 -> leaf0 -> gpu1  [PCIe"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  gpu0 -> gpu8  [no route: they are attached to different hosts (host0, host1)"), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::exists(d.path() + "/nonet.dot"));
  r = run_cli("p2p --topology composable-falcon4016 --compose host0=gpu8,host1=gpu0-3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("the first host of topology \"composable-falcon4016\" sees 1 GPU and the copy matrix needs at least 2: name the GPUs with --placement"),
            std::string::npos) << r.err;
}

TEST(Cli, TopologyRouteNvlink) {
  const CliResult r = run_cli("topology dgx1-v100 --route gpu0 gpu1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("NVLink"), std::string::npos) << r.out;
}

TEST(Cli, TopologyRouteUnknownEndpoint) {
  const CliResult r = run_cli("topology pcie-8gpu-gen3 --route gpu0 gpu42");
  expect_input_error(r, "--route");
  EXPECT_NE(r.err.find("gpu42"), std::string::npos) << r.err;
}

TEST(Cli, TopologyDot) {
  TempDir tmp;
  const std::string dot = tmp.path() + "/t.dot";
  const CliResult r = run_cli("topology pcie-8gpu-gen3 --dot " + q(dot));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("8 GPUs"), std::string::npos) << r.out;
  ASSERT_TRUE(fs::exists(dot));
  const std::string text = slurp(dot);
  EXPECT_EQ(text.rfind("graph", 0), 0u) << text.substr(0, 80);
  EXPECT_NE(text.find("gpu7"), std::string::npos);
}

// The listing is printed whole or not at all: a --dot that cannot be written leaves nothing
// on stdout. A GPU pair without a route (two machines without NICs) is listed as such;
// asked for with --route, or by `collective`, it is an error.
TEST(Cli, TopologyListingIsWholeOrNothing) {
  TempDir tmp;
  const json two_machines = json::parse(R"({"schema_version": 1, "name": "s", "nodes": [
    {"name": "cpu0", "type": "host"}, {"name": "cpu1", "type": "host"},
    {"name": "gpu0", "type": "gpu", "model": "A100"}, {"name": "gpu1", "type": "gpu", "model": "A100"}], "links": [
    {"from": "cpu0", "to": "gpu0", "type": "pcie", "generation": 4, "lanes": 16},
    {"from": "cpu1", "to": "gpu1", "type": "pcie", "generation": 4, "lanes": 16}]})");
  const std::string file = tmp.path() + "/two.json";
  write_json(file, two_machines);
  CliResult r = run_cli("topology " + q(file));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\n  gpu0 -> gpu1  [no route: the GPUs are in different machines and one of them has no NIC]\n"), std::string::npos) << r.out;
  r = run_cli("topology " + q(file) + " --route gpu0 gpu1");
  expect_input_error(r, "route gpu0 -> gpu1: the GPUs are in different machines and one of them has no NIC");
  EXPECT_EQ(r.out, "");
  // `collective`: the table's header waits for its first row.
  r = run_cli("collective --bytes 8:1K --topology " + q(file));
  expect_input_error(r, "route gpu0 -> gpu1: the GPUs are in different machines and one of them has no NIC");
  EXPECT_EQ(r.out, "");
  std::ofstream(tmp.path() + "/afile") << "x";
  r = run_cli("topology pcie-8gpu-gen3 --dot " + q(tmp.path() + "/afile/t.dot"));
  expect_input_error(r, "--dot");
  EXPECT_EQ(r.out, "");
  r = run_cli("topology pcie-8gpu-gen3 --dot ''");
  expect_input_error(r, "--dot: expected a file name");
  EXPECT_EQ(r.out, "");
  // A --dot that names a directory makes none before it fails.
  r = run_cli("topology pcie-8gpu-gen3 --dot " + q(tmp.path() + "/a/b/"));
  expect_input_error(r, "/a/b/: --dot: names a directory; give the name of a file to write");
  EXPECT_FALSE(fs::exists(tmp.path() + "/a"));
  // The temporary a file is written to before it is moved into place is a new file: a
  // user's FILE.tmp stays as it was.
  const std::string mine = tmp.path() + "/t.dot.tmp";
  std::ofstream(mine) << "precious";
  r = run_cli("topology pcie-8gpu-gen3 --dot " + q(tmp.path() + "/t.dot"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(slurp(mine), "precious");
  EXPECT_EQ(slurp(tmp.path() + "/t.dot").rfind("graph", 0), 0u);
}

// ---------------------------------------------------------------------------------------
// 8. list-models and --version.

TEST(Cli, ListModels) {
  const CliResult r = run_cli("list-models");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("pcie.link"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("launch_latency_s"), std::string::npos) << r.out;
}

TEST(Cli, Version) {
  const CliResult r = run_cli("--version");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("composim ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("0.1.0"), std::string::npos) << r.out;
}

// Flags whose values would silently change a prediction, or fail only after a long run.
TEST(Cli, BadFlagsFailFastWithOneLine) {
  const std::string ex = composim::testing::source_dir() + "/examples/traces/ddp2_rank0.json";
  struct Case {
    std::string args, expect;
  } cases[] = {
      {"run --trace " + ex + " --topology composable-falcon4016 --launch-latency 5", "needs a unit"},
      {"run --trace " + ex + " --topology composable-falcon4016 --ranks 0", "--ranks: at least 1 rank, got 0"},
      {"run --trace " + ex + " --topology composable-falcon4016 --ranks 2.5", "--ranks: expected a whole decimal number, got \"2.5\""},
      // CLI11 alone reads 0x10 as 16 and 010 as 8 (octal).
      {"run --trace " + ex + " --topology composable-falcon4016 --ranks 0x10", "--ranks: expected a whole decimal number, got \"0x10\""},
      {"p2p --topology pcie-8gpu-gen3 --gpus 0x4", "--gpus: expected a whole decimal number, got \"0x4\""},
      {"topology generate --length-m 0x10 --out /tmp/composim-never-written.json", "--length-m: expected a decimal number, got \"0x10\""},
      {"run --trace " + ex + " --topology composable-falcon4016 --params ''", "--params: the parameter file's name is empty"},
      {"run --trace " + ex + " --topology composable-falcon4016 --warmup 9", "--warmup 9 leaves no step to measure"},
      {"run --trace " + ex + " --topology composable-falcon4016 --out /proc/composim-x", "cannot create the output directory"},
      {"run --trace " + ex + " --topology composable-falcon4016 --out ''", "--out: needs a directory"},
      {"run --trace " + ex + " --topology /tmp", "/tmp: is a directory, not a topology file"},
      {"run --trace /proc/self/fdinfo --topology composable-falcon4016", "/proc/self/fdinfo: --trace: directory holds no trace files"},
      {"run --trace " + ex + " --topology composable-falcon4016 --placement ''", "--placement: needs a comma-separated list"},
  };
  for (const auto& c : cases) {
    auto r = composim::testing::run_cli(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("composim: error: ", 0), 0u) << r.err;
  }
}

// --out naming a directory that holds a directory where an output file goes: nothing is
// left behind.
TEST(Cli, OutputIsAllOrNothing) {
  composim::testing::TempDir d;
  std::filesystem::create_directories(d.path() + "/out/timeline.json");
  auto r = composim::testing::run_cli("run --trace " + composim::testing::source_dir() +
                                      "/examples/traces/ddp2_rank0.json --topology composable-falcon4016 --out " + d.path() + "/out");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(d.path() + "/out/summary.json"));
  EXPECT_FALSE(std::filesystem::exists(d.path() + "/out/iterations.csv"));
}

// --p2p on is a what-if of a P2P-enabling driver: GeForce GPUs (P2P off in their model)
// then talk over the switch as GPUs whose nodes say "p2p": true do, not through host
// memory (NCCL's SHM) as without it or with --p2p off.
TEST(Cli, P2pOnEnablesItOnGpusWhoseDriverLacksIt) {
  TempDir d;
  auto topology = [&](const std::string& gpu_extra) {
    return d.write("t" + std::to_string(gpu_extra.size()) + ".json",
                   R"({"schema_version": 1, "name": "two-4090", "nodes": [{"name": "cpu0", "type": "host"},
      {"name": "sw0", "type": "pcie_switch", "generation": 4},
      {"name": "gpu0", "type": "gpu", "model": "RTX 4090")" + gpu_extra + R"(}, {"name": "gpu1", "type": "gpu", "model": "RTX 4090")" + gpu_extra + R"(}],
     "links": [{"from": "cpu0", "to": "sw0", "type": "pcie", "generation": 4, "lanes": 16},
      {"from": "sw0", "to": "gpu0", "type": "pcie", "generation": 4, "lanes": 16},
      {"from": "sw0", "to": "gpu1", "type": "pcie", "generation": 4, "lanes": 16}]})");
  };
  const std::string geforce = topology(""), enabled = topology(R"(, "p2p": true)");
  auto busbw = [](const std::string& args) { return std::stod(composim::testing::collective_row("--bytes 1G " + args)[7]); };
  const double shm = busbw("--topology " + geforce), off = busbw("--topology " + geforce + " --p2p off");
  const double on = busbw("--topology " + geforce + " --p2p on"), node = busbw("--topology " + enabled);
  EXPECT_DOUBLE_EQ(shm, off);
  EXPECT_DOUBLE_EQ(on, node);
  EXPECT_GT(on, 4 * shm);
}

namespace {
// The README's example trace of `rank` with its NCCL kernels changed by `edit(args)`.
json example_trace(int rank, const std::function<void(json&)>& edit) {
  json d = json::parse(std::ifstream(source_dir() + "/examples/traces/ddp2_rank" + std::to_string(rank) + ".json"));
  for (auto& e : d["traceEvents"])
    if (e.value("cat", "") == "kernel" && e.value("name", "").find("nccl") != std::string::npos) edit(e);
  return d;
}
json summary_of(const std::string& dir) { return json::parse(std::ifstream(dir + "/summary.json")); }
}  // namespace

// Multi-rank replay of what jobs do beyond one data-parallel group:
// - a replicated trace's process group [0, 8] keeps its stride: 16 copies of rank 0 replay
//   as the 16 traces of that job do (groups {r mod 8, r mod 8 + 8}, across the 2 machines),
//   not as 8 groups of neighbours inside one machine;
// - an all_to_allv whose size differs between ranks runs as an even one of the largest;
// - a trace replicated to another rank count reports its "error" as a what-if's change.
TEST(Cli, ReplayKeepsGroupStridesAndTakesAllToAllv) {
  TempDir d;
  fs::create_directories(d.path() + "/job");
  auto strided = [](int r, const std::string& ranks, int pg = -1) {
    json t = example_trace(0, [&](json& e) {
      e["args"]["Group size"] = static_cast<int>(std::count(ranks.begin(), ranks.end(), ',')) + 1;
      e["args"]["Process Group Name"] = std::to_string(pg >= 0 ? pg : 1 + r % 8);
      e["args"]["Process Group Ranks"] = ranks;
    });
    t["distributedInfo"]["rank"] = r;
    t["distributedInfo"]["world_size"] = 16;
    return t;
  };
  for (int r = 0; r < 16; ++r)
    std::ofstream(d.path() + "/job/rank" + std::to_string(r) + ".json") << strided(r, "[" + std::to_string(r % 8) + ", " + std::to_string(r % 8 + 8) + "]");
  std::ofstream(d.path() + "/neighbours.json") << strided(0, "[0, 1]");
  auto run = [&](const std::string& traces, const std::string& out, const std::string& topology = "2x-dgx-a100-ib") {
    auto r = run_cli("run " + traces + " --topology " + topology + " --out " + d.path() + "/" + out);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return summary_of(d.path() + "/" + out);
  };
  const json all = run("--trace " + d.path() + "/job", "all"), copies = run("--trace " + d.path() + "/job/rank0.json", "copies"),
             near = run("--trace " + d.path() + "/neighbours.json", "near");
  const double exposed = all["breakdown"]["exposed_communication_s"];
  EXPECT_NEAR(copies["breakdown"]["exposed_communication_s"].get<double>(), exposed, 1e-9);
  EXPECT_NEAR(copies["predicted_iteration_s"].get<double>(), all["predicted_iteration_s"].get<double>(), 1e-9);
  EXPECT_GT(exposed, 2 * near["breakdown"]["exposed_communication_s"].get<double>());  // over the network, not NVSwitch
  // Groups [b, b+1, b+8, b+9] (not evenly spaced): copies of rank 0 tile the 16 ranks as
  // the 16 traces do. A group [0, 15] cannot tile 16 ranks: consecutive pairs, with a note.
  fs::create_directories(d.path() + "/job4");
  for (int r = 0; r < 16; ++r) {
    const int b = (r % 8) / 2 * 2;
    std::ofstream(d.path() + "/job4/rank" + std::to_string(r) + ".json")
        << strided(r, "[" + std::to_string(b) + ", " + std::to_string(b + 1) + ", " + std::to_string(b + 8) + ", " + std::to_string(b + 9) + "]",
                   1 + b / 2);
  }
  const json all4 = run("--trace " + d.path() + "/job4", "all4"), copies4 = run("--trace " + d.path() + "/job4/rank0.json", "copies4");
  EXPECT_NEAR(copies4["breakdown"]["exposed_communication_s"].get<double>(), all4["breakdown"]["exposed_communication_s"].get<double>(), 1e-9);
  std::ofstream(d.path() + "/ends.json") << strided(0, "[0, 15]");
  const json ends = run("--trace " + d.path() + "/ends.json", "ends");
  ASSERT_TRUE(ends.contains("notes")) << ends.dump();
  EXPECT_NE(ends["notes"].dump().find("(ranks [0,15]) cannot be laid out over 16 ranks as in the trace"), std::string::npos) << ends["notes"].dump();

  fs::create_directories(d.path() + "/a2av");
  fs::create_directories(d.path() + "/a2a");
  fs::create_directories(d.path() + "/a2a0");
  for (int r = 0; r < 2; ++r)
    for (const double scale : {1.0, 0.5, 0.0}) {
      json t = example_trace(r, [&](json& e) {
        auto& a = e["args"];
        a["Collective name"] = "all_to_allv";
        const double s = r == 1 ? scale : 1.0;
        a["In msg nelems"] = static_cast<long long>(a["In msg nelems"].get<double>() * s);
        a["Out msg nelems"] = static_cast<long long>(a["Out msg nelems"].get<double>() * s);
        e["name"] = "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8(ncclDevComm*, unsigned long, ncclWork*)";
      });
      std::ofstream(d.path() + (scale == 1.0 ? "/a2a/r" : scale == 0.0 ? "/a2a0/r" : "/a2av/r") + std::to_string(r) + ".json") << t;
    }
  // A rank that sends nothing (0 elements: no size in the trace) is one of the sizes too.
  const json zero = run("--trace " + d.path() + "/a2a0", "zero", "composable-falcon4016");
  EXPECT_EQ(zero["all_to_all_modelled_at_largest_size"].get<int>(), 12);
  auto r = run_cli("run --trace " + d.path() + "/a2av --topology composable-falcon4016 --out " + d.path() + "/v");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("all_to_all(s) moved different amounts on different ranks (all_to_allv)"), std::string::npos) << r.out;
  const json v = summary_of(d.path() + "/v");
  EXPECT_EQ(v["all_to_all_modelled_at_largest_size"].get<int>(), 12);
  EXPECT_EQ(v["collectives"].get<int>(), 12);
  const json even = run("--trace " + d.path() + "/a2a", "even", "composable-falcon4016");
  EXPECT_EQ(even["all_to_all_modelled_at_largest_size"].get<int>(), 0);
  EXPECT_NEAR(v["predicted_iteration_s"].get<double>(), even["predicted_iteration_s"].get<double>(), 1e-9) << "the largest size sets the pace";

  // Sends and receives of different sizes on the two ranks (a pipeline): not matched (the
  // traces do not say who talks to whom), each at its measured duration, with a note.
  fs::create_directories(d.path() + "/p2p");
  for (int rank = 0; rank < 2; ++rank) {
    json t = example_trace(rank, [&](json& e) {
      auto& a = e["args"];
      a["Collective name"] = rank == 0 ? "send" : "recv";
      a["In msg nelems"] = static_cast<long long>(a["In msg nelems"].get<double>() / (rank + 1));
      e["name"] = "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8(ncclDevComm*, unsigned long, ncclWork*)";
    });
    std::ofstream(d.path() + "/p2p/r" + std::to_string(rank) + ".json") << t;
  }
  r = run_cli("run --trace " + d.path() + "/p2p --topology composable-falcon4016 --out " + d.path() + "/pp");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("24 send/recv operation(s) ran at their measured duration"), std::string::npos) << r.out;
  EXPECT_EQ(summary_of(d.path() + "/pp")["send_recv_at_measured_duration"].get<int>(), 24);
  EXPECT_NE(r.out.find("the traces do not say which peer they talk to"), std::string::npos) << r.out;
  // With their peers named (PyTorch 2.4+), rank 0's sends pair with rank 1's receives: flows
  // on the topology, not measured durations. Replicated (both ranks run rank 0's sends),
  // nothing receives them: each at its measured duration.
  fs::create_directories(d.path() + "/p2p_peers");
  for (int rank = 0; rank < 2; ++rank) {
    json t = example_trace(rank, [&](json& e) {
      auto& a = e["args"];
      a["Collective name"] = rank == 0 ? "send" : "recv";
      a[rank == 0 ? "Dst Rank" : "Src Rank"] = 1 - rank;
      e["name"] = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";
    });
    std::ofstream(d.path() + "/p2p_peers/r" + std::to_string(rank) + ".json") << t;
  }
  r = run_cli("run --trace " + d.path() + "/p2p_peers --topology composable-falcon4016 --out " + d.path() + "/paired");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("12 sends paired with their receives"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("measured duration"), std::string::npos) << r.out;
  const json paired = summary_of(d.path() + "/paired");
  EXPECT_EQ(paired["send_recv_paired"].get<int>(), 12);
  EXPECT_EQ(paired["send_recv_at_measured_duration"].get<int>(), 0);
  EXPECT_EQ(paired["collectives"].get<int>(), 0);
  r = run_cli("run --trace " + d.path() + "/p2p_peers/r0.json --topology composable-falcon4016");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("24 send/recv operation(s) ran at their measured duration: a replicated trace's peers are ranks of the run it was captured on"),
            std::string::npos)
      << r.out;
  // Paired but of no size in the traces: each pair at the shorter measured duration, and
  // not counted as a collective without size.
  fs::create_directories(d.path() + "/p2p_zero");
  for (int rank = 0; rank < 2; ++rank) {
    json t = json::parse(std::ifstream(d.path() + "/p2p_peers/r" + std::to_string(rank) + ".json"));
    for (auto& e : t["traceEvents"])
      if (e.value("cat", "") == "kernel" && e.value("name", "").find("nccl") != std::string::npos) e["args"]["In msg nelems"] = 0;
    std::ofstream(d.path() + "/p2p_zero/r" + std::to_string(rank) + ".json") << t;
  }
  r = run_cli("run --trace " + d.path() + "/p2p_zero --topology composable-falcon4016 --out " + d.path() + "/zero_paired");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("12 paired send(s) had no message size in the trace, or a size of 0: each pair ran at the shorter of its two measured durations"),
            std::string::npos)
      << r.out;
  const json zero_paired = summary_of(d.path() + "/zero_paired");
  EXPECT_EQ(zero_paired["collectives_replayed_at_measured_duration"].get<int>(), 0);
  EXPECT_EQ(zero_paired["send_recv_paired"].get<int>(), 12);
  // Traces of ranks 0 and 1 of a 4-rank pipeline, each talking to a rank without a trace.
  fs::create_directories(d.path() + "/p2p_half");
  for (int rank = 0; rank < 2; ++rank) {
    json t = example_trace(rank, [&](json& e) {
      auto& a = e["args"];
      a["Collective name"] = rank == 0 ? "send" : "recv";
      a[rank == 0 ? "Dst Rank" : "Src Rank"] = 2 + rank;
      a["Group size"] = 4;
      a["Process Group Ranks"] = "[0, 1, 2, 3]";
    });
    t["distributedInfo"]["world_size"] = 4;
    t["distributedInfo"].erase("pg_config");
    std::ofstream(d.path() + "/p2p_half/r" + std::to_string(rank) + ".json") << t;
  }
  r = run_cli("run --trace " + d.path() + "/p2p_half --topology composable-falcon4016");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("24 send/recv operation(s) ran at their measured duration: their peers' traces were not given"), std::string::npos) << r.out;

  r = run_cli("run --trace " + source_dir() + "/examples/traces/ddp2_rank0.json --topology composable-falcon4016 --ranks 16");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("measured 16.2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("on 2 rank(s) per iteration"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("change +"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the trace ran on 2 rank(s) and is replayed on 16"), std::string::npos) << r.out;
}

// A parameter file overrides registered model parameters; an unknown name is an error.
// A 4-rank job's all-reduces with "Group size" 2 and no "Process Group Ranks" ran over all 4
// ranks: they run in groups of 2 consecutive ranks, as the same trace listing [0, 1] does,
// with a note. A group larger than the job is refused (with --ranks 4 an all_gather of
// group size 8 was scaled ~5x).
TEST(Cli, GroupSizeWithoutRanksReplaysConsecutiveGroups) {
  TempDir d;
  auto edited = [&](const std::string& name, int world, int group, const std::string& ranks) {
    json t = example_trace(0, [&](json& e) {
      e["args"]["Group size"] = group;
      if (ranks.empty()) e["args"].erase("Process Group Ranks");
      else e["args"]["Process Group Ranks"] = ranks;
    });
    t["distributedInfo"]["world_size"] = world;
    t["distributedInfo"].erase("pg_config");
    return d.write(name, t.dump());
  };
  auto run = [&](const std::string& trace, const std::string& out) {
    const CliResult r = run_cli("run --trace " + trace + " --topology dgx-a100 --out " + d.path() + "/" + out);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return std::make_pair(summary_of(d.path() + "/" + out), r.out);
  };
  const auto [unlisted, unlisted_out] = run(edited("unlisted.json", 4, 2, ""), "unlisted");
  const auto [listed, listed_out] = run(edited("listed.json", 4, 2, "[0, 1]"), "listed");
  const auto [whole, whole_out] = run(edited("whole.json", 4, 4, ""), "whole");
  EXPECT_DOUBLE_EQ(unlisted["breakdown"]["exposed_communication_s"].get<double>(), listed["breakdown"]["exposed_communication_s"].get<double>());
  EXPECT_DOUBLE_EQ(unlisted["predicted_iteration_s"].get<double>(), listed["predicted_iteration_s"].get<double>());
  EXPECT_NE(unlisted["predicted_iteration_s"].get<double>(), whole["predicted_iteration_s"].get<double>());
  EXPECT_NE(unlisted_out.find("unlisted.json: process group \"0\" has 2 of the job's 4 ranks (\"Group size\") but the trace does not list them: "
                              "taken as groups of 2 consecutive ranks ([0, 1] for rank 0)"),
            std::string::npos)
      << unlisted_out;
  EXPECT_EQ(listed_out.find("consecutive ranks"), std::string::npos) << listed_out;
  const std::string big = edited("gs8.json", 2, 8, "");
  for (const std::string ranks : {"", " --ranks 4"})
    composim::testing::expect_cli_error("run --trace " + big + ranks + " --topology dgx-a100",
                                        big + ": traceEvents[449].args: \"Group size\" = 8 but the job has 2 ranks (distributedInfo.world_size): a "
                                              "process group is at most the whole job");
}

TEST(Cli, ParamsFileOverridesModelParameters) {
  composim::testing::TempDir d;
  const auto good = d.write("p.json", R"({"fitted_on": "test", "params": {"nvlink.payload_efficiency_gen2": 0.8}})");
  auto base = composim::testing::run_cli("collective --bytes 1G --gpus 2 --topology dgx1-v100 --proto Simple --out " + d.path() + "/a");
  auto fitted = composim::testing::run_cli("collective --bytes 1G --gpus 2 --topology dgx1-v100 --proto Simple --params " + good +
                                           " --out " + d.path() + "/b");
  ASSERT_EQ(base.exit_code, 0) << base.err;
  ASSERT_EQ(fitted.exit_code, 0) << fitted.err;
  auto busbw = [](const std::string& dir) { return std::stod(composim::testing::collective_csv_first_row(dir).at(7)); };
  // Bandwidth-bound at 1 GiB: busbw scales with the NVLink efficiency (0.8 / 0.902).
  EXPECT_NEAR(busbw(d.path() + "/b") / busbw(d.path() + "/a"), 0.8 / (22.55 / 25.0), 0.002);
  const auto bad = d.write("q.json", R"({"params": {"nvlink.efficency": 0.9}})");
  composim::testing::expect_cli_error("collective --bytes 1G --gpus 2 --topology dgx1-v100 --params " + bad, "params.nvlink.efficency: unknown model parameter");
}

// models/params/rccl-2.8.json puts RCCL 2.8's latency tables in place of NCCL's: a 16-byte
// all-reduce on 2 GPUs behind one PCIe switch is ring LL at RCCL's 20.5 us base + 2 steps x
// 1.3 us (NCCL: 3.6 + 2 x 1.0). --params repeats, a later file's values winning; a case's own
// parameter file must exist, and such a case cannot be calibrated.
TEST(Cli, RcclParamsFileAndRepeatedParams) {
  composim::testing::TempDir d;
  const std::string rccl = composim::testing::source_dir() + "/models/params/rccl-2.8.json";
  const std::string two = "--bytes 16 --topology composable-falcon4016 --placement gpu0,gpu1 ";
  auto nccl = composim::testing::collective_row(two);
  EXPECT_EQ(nccl.at(8), "RING");
  EXPECT_EQ(nccl.at(9), "LL");
  EXPECT_NEAR(std::stod(nccl.at(16)), 3.6 + 2 * 1.0, 1e-9);
  auto r = composim::testing::collective_row(two + "--params " + q(rccl));
  EXPECT_EQ(r.at(8), "RING");
  EXPECT_EQ(r.at(9), "LL");
  EXPECT_NEAR(std::stod(r.at(16)), 20.5 + 2 * 1.3, 1e-9);
  EXPECT_NEAR(std::stod(r.at(5)), 23.1 + 0.1, 0.05);  // + 16 B (64 on the wire in LL) over the switch
  const auto later = d.write("later.json", R"({"params": {"collective.base_latency_ring_LL_s": 10.5e-6}})");
  auto both = composim::testing::collective_row(two + "--params " + q(rccl) + " --params " + q(later));
  EXPECT_NEAR(std::stod(both.at(16)), 10.5 + 2 * 1.3, 1e-9);
  auto swapped = composim::testing::collective_row(two + "--params " + q(later) + " --params " + q(rccl));
  EXPECT_NEAR(std::stod(swapped.at(16)), 20.5 + 2 * 1.3, 1e-9);
  // A tree in Simple keeps RCCL's 5.7 us per PCIe step: 40.4 + 2 x 5.7 us. NCCL's 28 us step
  // holds a 21.8 us chunk that a running tree moves for real, but RCCL's steps are shorter
  // than that chunk: subtracting it had left RCCL's base latency alone (40.4 us).
  auto tree = composim::testing::collective_row(two + "--algo tree --proto Simple --params " + q(rccl));
  EXPECT_NEAR(std::stod(tree.at(16)), 40.4 + 2 * 5.7, 1e-9);
  auto nccl_tree = composim::testing::collective_row(two + "--algo tree --proto Simple");
  EXPECT_NEAR(std::stod(nccl_tree.at(16)), 0 + 2 * (28 - 262144 / 12e3), 1e-6);  // NCCL's tree Simple base latency is 0

  nlohmann::json c = nlohmann::json::parse(std::ifstream(source_dir() + "/validation/cases/rccl-2gpu-one-pcie-switch.json"));
  c["run"]["params"] = "no-such-params.json";
  const auto bad = d.write("bad-case.json", c.dump());
  composim::testing::expect_cli_error("validate --cases " + q(bad) + " --data " + q(d.path()), bad + ": run.params: no such file");
  // validate takes several parameter files too, and checks each before any case runs.
  const auto typo = d.write("typo.json", R"({"params": {"collective.base_latency_ring_LL_z": 1e-6}})");
  composim::testing::expect_cli_error("validate --cases " + q(source_dir() + "/validation/cases/rccl-2gpu-one-pcie-switch.json") + " --params " +
                                          q(rccl) + " --params " + q(typo) + " --data " + q(d.path()),
                                      typo + ": params.collective.base_latency_ring_LL_z: unknown model parameter");
  c["run"]["params"] = rccl;
  const auto fit = d.write("fit-case.json", c.dump());
  composim::testing::expect_cli_error("calibrate --fit " + q(fit) + " --data " + q(d.path()) + " --out " + q(d.path() + "/f.json"),
                                      fit + ": run.params: a case with its own parameter file cannot be calibrated");
}

// The tuner's NVLink rating moves where NCCL switches protocols, and nothing else: at 0.70
// (not 0.85) 8 V100s switch to Simple before 13 MiB, where NCCL still ran LL128.
TEST(Cli, ParamsFileSetsTheTunersBandwidthFraction) {
  composim::testing::TempDir d;
  auto proto = [&](const std::string& params) {
    auto r = composim::testing::run_cli("collective --bytes 13M --gpus 8 --topology dgx1-v100 " + params + " --out " + d.path());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return composim::testing::collective_csv_first_row(d.path()).at(9);
  };
  EXPECT_EQ(proto(""), "LL128");
  EXPECT_EQ(proto("--params " + d.write("low.json", R"({"params": {"collective.tuner_bandwidth_fraction_nvlink": 0.70}})")), "Simple");
  composim::testing::expect_cli_error("collective --bytes 13M --gpus 8 --topology dgx1-v100 --params " +
                                      d.write("bad.json", R"({"params": {"collective.tuner_bandwidth_fraction_nvlink": 1.5}})"), "must be in [0.01, 1]");
}

// --out naming a symbolic link to nothing: said so, not "File exists" from the write.
TEST(Cli, OutToADanglingLinkIsNamed) {
  TempDir d;
  const std::string link = d.path() + "/dangling";
  fs::create_symlink(d.path() + "/missing", link);
  expect_input_error(run_cli("collective --bytes 1M --topology dgx-a100 --out " + link), link + ": --out: is a symbolic link to nothing");
  fs::create_symlink(d.path() + "/b", d.path() + "/a");
  fs::create_symlink(d.path() + "/a", d.path() + "/b");
  expect_input_error(run_cli("collective --bytes 1M --topology dgx-a100 --out " + d.path() + "/a"), d.path() + "/a: --out: is a loop of symbolic links");
  EXPECT_FALSE(fs::exists(d.path() + "/missing"));
}

// A run records what it was computed with beyond the defaults: summary.json's
// params_overridden and a note, collective.csv's last column and a table line; none
// when nothing was changed.
TEST(Cli, OutputsRecordChangedParameters) {
  TempDir d;
  const std::string params = d.write("p.json", R"({"params": {"pcie.link.efficiency": 0.5}})");
  const std::string traces = " --trace " + example(0) + " --trace " + example(1) + " --topology composable-falcon4016";
  auto r = run_cli("run" + traces + " --params " + params + " --out " + d.path() + "/changed");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("note: model parameters set: pcie.link.efficiency=0.5"), std::string::npos) << r.out;
  EXPECT_EQ(read_json(d.path() + "/changed/summary.json")["params_overridden"], json({{"pcie.link.efficiency", 0.5}}));
  r = run_cli("run" + traces + " --out " + d.path() + "/default");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_json(d.path() + "/default/summary.json")["params_overridden"], json::object());

  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;  // 0.5 of the default 0.914 is no warning

  // A value in range but more than 10 times from its default runs, with a warning.
  r = run_cli("collective --bytes 1M --topology dgx-a100 --params " + d.write("far.json", R"({"params": {"collective.efficiency_LL128": 0.05}})"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("far.json: params.collective.efficiency_LL128 = 0.05 is 0.0543x its default 0.92; predictions with it are far from"),
            std::string::npos)
      << r.err;
  // A latency set to 0 is as far from its default.
  r = run_cli("collective --bytes 1M --topology dgx-a100 --params " + d.write("zero.json", R"({"params": {"collective.base_latency_ring_LL_s": 0}})"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("zero.json: params.collective.base_latency_ring_LL_s = 0 is 0x its default"), std::string::npos) << r.err;

  r = run_cli("collective --bytes 1M --topology dgx-a100 --nccl-buffsize 8M --params " + params + " --out " + d.path() + "/coll");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("# model parameters set: collective.nccl_buffsize_B=8388608; pcie.link.efficiency=0.5\n"), std::string::npos) << r.out;
  auto row = composim::testing::collective_csv_first_row(d.path() + "/coll");
  ASSERT_EQ(row.size(), 23u);
  EXPECT_EQ(row[22], "collective.nccl_buffsize_B=8388608; pcie.link.efficiency=0.5");
  r = run_cli("collective --bytes 1M --topology dgx-a100 --out " + d.path() + "/coll0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("model parameters set"), std::string::npos) << r.out;
  EXPECT_EQ(composim::testing::collective_csv_first_row(d.path() + "/coll0").size(), 22u);  // an empty last field
  // Exact: 1 GiB is 1073741824, not 1.07374182e+09; 0.914 is not 0.91400000000000003.
  r = run_cli("collective --bytes 1M --topology dgx-a100 --nccl-buffsize 1G --params " + d.write("eff.json", R"({"params": {"pcie.link.efficiency": 0.914}})") +
              " --out " + d.path() + "/exact");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(composim::testing::collective_csv_first_row(d.path() + "/exact").at(22), "collective.nccl_buffsize_B=1073741824; pcie.link.efficiency=0.914");

  r = run_cli("p2p --topology pcie-8gpu-gen3 --gpus 2 --params " + params + " --out " + d.path() + "/p2p");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("# model parameters set: pcie.link.efficiency=0.5\n"), std::string::npos) << r.out;
  std::ifstream csv(d.path() + "/p2p/p2p.csv");
  std::string header, first;
  std::getline(csv, header);
  std::getline(csv, first);
  EXPECT_EQ(header, "src_gpu,dst_gpu,src,dst,bandwidth_GBps,route,params");
  EXPECT_EQ(first.substr(first.rfind(',')), ",pcie.link.efficiency=0.5") << first;
}

// What a parameter file may set, and to what, is each parameter's registration: list-models
// shows it, and the same table decides. A documented constant (a switch's datasheet latency)
// is refused, as is a value outside a settable parameter's range.
TEST(Cli, ParamsFileSettingsComeFromTheRegistry) {
  composim::testing::TempDir d;
  const auto listing = composim::testing::run_cli("list-models");
  ASSERT_EQ(listing.exit_code, 0) << listing.err;
  EXPECT_NE(listing.out.find("latency_gen4_s = 1.05e-07 s, fixed  ("), std::string::npos) << listing.out;
  EXPECT_NE(listing.out.find("efficiency = 0.914 1, settable [0.01, 1]  ("), std::string::npos) << listing.out;
  EXPECT_NE(listing.out.find("nccl_buffsize_B = 4194304 B, settable whole B in [64 KiB, 1 GiB]  ("), std::string::npos) << listing.out;
  const std::string run = "collective --bytes 1M --gpus 2 --topology dgx-a100 --params ";
  composim::testing::expect_cli_error(run + d.write("fixed.json", R"({"params": {"pcie.switch.latency_gen4_s": 2e-7}})"),
                                      "fixed.json: params.pcie.switch.latency_gen4_s: cannot be set");
  composim::testing::expect_cli_error(run + d.write("off.json", R"({"params": {"collective.shm_transport_Bps": 0}})"),
                                      "params.collective.shm_transport_Bps: a rate must be at least 1e6 bytes/s");
  // 25 meant as GB/s: refused, not run at 25 bytes/s.
  composim::testing::expect_cli_error(run + d.write("gbps.json", R"({"params": {"collective.shm_transport_Bps": 25}})"), "not GB/s");
  composim::testing::expect_cli_error(run + d.write("half.json", R"({"params": {"collective.ll128_gpu_rate_nvlink_gen3_Bps": 0.5}})"),
                                      "a rate must be 0 (no such term) or at least 1e6 bytes/s");
  auto r = composim::testing::run_cli(run + d.write("zero.json", R"({"params": {"collective.ll128_gpu_rate_nvlink_gen3_Bps": 0}})"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// validate: a case whose input is missing is reported as skipped, never passed; a case
// outside its tolerance fails the run; report files are written.
// A measured table without a column the case needs, or with a short row: an input error
// naming the file and the place, not an internal one.
TEST(Cli, ValidateRejectsMalformedMeasuredTables) {
  TempDir d;
  const std::string cases = source_dir() + "/validation/cases";
  fs::create_directories(d.path() + "/data/measured");
  const std::string csv = d.path() + "/data/measured/nccl_tests.csv";
  std::ofstream(csv) << "source_id,bytes,time_in_us,busbw_GBps\nllm_insights_dgxa100_4gpu_nvswitch,1048576,10,100\n";
  composim::testing::expect_cli_error("validate --cases " + q(cases + "/nccl-dgxa100-4gpu-nvswitch.json") + " --data " + q(d.path() + "/data"),
                                      csv + ": header: no column \"time_us\"");
  std::ofstream(csv) << "source_id,bytes,time_us,busbw_GBps\nllm_insights_dgxa100_4gpu_nvswitch,x\n";
  composim::testing::expect_cli_error("validate --cases " + q(cases + "/nccl-dgxa100-4gpu-nvswitch.json") + " --data " + q(d.path() + "/data"),
                                      csv + ": row 2: 2 fields where the header has 4");
}

// A case's run must be what its rows measured (operation, GPUs, type): a run on 4 GPUs
// against rows measured on 8 is an error, not a comparison. Keys a case's "run", "measured"
// or "tolerance" does not read are typos, refused; a measured number must be all number.
TEST(Cli, ValidateChecksTheRunAgainstWhatWasMeasured) {
  TempDir d;
  const std::string cases = source_dir() + "/validation/cases", nvs = q(cases + "/nccl-dgxa100-4gpu-nvswitch.json");
  fs::create_directories(d.path() + "/data/measured");
  const std::string csv = d.path() + "/data/measured/nccl_tests.csv", data = " --data " + q(d.path() + "/data");
  std::ofstream(csv) << "source_id,bytes,time_us,busbw_GBps,collective,n_gpus,dtype\n"
                     << "llm_insights_dgxa100_4gpu_nvswitch,1073741824,7163.5,224.84,all_reduce,8,float\n";
  CliResult r = run_cli("validate --cases " + nvs + data);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("error: the run is all_reduce on 4 GPUs of type float; the measured rows are on 8 GPUs"), std::string::npos) << r.out;
  std::ofstream(csv) << "source_id,bytes,time_us,busbw_GBps,collective,n_gpus,dtype\n"
                     << "llm_insights_dgxa100_4gpu_nvswitch,1073741824,7163.5,224.84,all_gather,4,half\n";
  r = run_cli("validate --cases " + nvs + data);
  EXPECT_NE(r.out.find("the measured rows are all_gather, of type half"), std::string::npos) << r.out;
  std::ofstream(csv) << "source_id,bytes,time_us,busbw_GBps,collective,n_gpus,dtype\n"
                     << "llm_insights_dgxa100_4gpu_nvswitch,1073741824,7163.5abc,224.84,all_reduce,4,float\n";
  composim::testing::expect_cli_error("validate --cases " + nvs + data, csv + ": row 2: \"7163.5abc\" is not a positive measured value");
  std::ofstream(csv) << "source_id,bytes,time_us,busbw_GBps,collective,n_gpus,dtype\n"
                     << "llm_insights_dgxa100_4gpu_nvswitch,1073741824,7163.5,224.84,all_reduce,4,float\n";
  r = run_cli("validate --cases " + nvs + data);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;  // control: what was measured
  auto doc = nlohmann::json::parse(std::ifstream(cases + "/nccl-dgxa100-4gpu-nvswitch.json"));
  doc["run"]["arg"] = doc["run"]["args"];
  doc["run"].erase("args");
  composim::testing::expect_cli_error("validate --cases " + q(d.write("run.json", doc.dump())) + data, "run.json: run.arg: unknown key");
  doc = nlohmann::json::parse(std::ifstream(cases + "/nccl-dgxa100-4gpu-nvswitch.json"));
  doc["tolerance"]["busbw_pc"] = 5;
  composim::testing::expect_cli_error("validate --cases " + q(d.write("tol.json", doc.dump())) + data,
                                      "tol.json: tolerance.busbw_pc: unknown key for measured kind \"nccl-tests-csv\"");
}

// A case's topology named without a slash is the file beside the case when there is one
// (it was looked up from the working directory); a case given twice, by itself and through
// its folder, runs once.
TEST(Cli, ValidateFindsTopologiesBesideTheCaseAndRunsACaseOnce) {
  TempDir d;
  fs::create_directories(d.path() + "/data/measured");
  std::ofstream(d.path() + "/data/measured/nccl_tests.csv") << "source_id,bytes,time_us,busbw_GBps\nllm_insights_dgxa100_4gpu_nvswitch,1073741824,7163.5,224.84\n";
  fs::create_directories(d.path() + "/cases");
  fs::copy_file(source_dir() + "/topologies/shipped/dgx-a100.json", d.path() + "/cases/beside.json");
  auto doc = nlohmann::json::parse(std::ifstream(source_dir() + "/validation/cases/nccl-dgxa100-4gpu-nvswitch.json"));
  doc["run"]["topology"] = "beside.json";
  const std::string c = d.path() + "/cases/case.json";
  std::ofstream(c) << doc.dump();
  const CliResult r = run_cli("validate --cases " + q(c) + " " + q(c) + " --data " + q(d.path() + "/data"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("collective        1      1"), std::string::npos) << r.out;  // one case, one point
}

// A measured size that the case's run does not produce (3 MiB, off the power-of-two sweep)
// is an error row naming it, never a 0% error.
TEST(Cli, ValidateReportsMeasuredPointsWithoutPrediction) {
  TempDir d;
  const std::string cases = source_dir() + "/validation/cases";
  fs::create_directories(d.path() + "/data/measured");
  std::ofstream(d.path() + "/data/measured/nccl_tests.csv")
      << "source_id,bytes,time_us,busbw_GBps\n"
      << "llm_insights_dgxa100_4gpu_nvswitch,1048576,20,78.6\n"
      << "llm_insights_dgxa100_4gpu_nvswitch,2097152,30,104.8\n"
      << "llm_insights_dgxa100_4gpu_nvswitch,3145728,40,117.9\n";
  const CliResult r = run_cli("validate --cases " + q(cases + "/nccl-dgxa100-4gpu-nvswitch.json") + " --data " + q(d.path() + "/data"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("error: no prediction for 1 measured point(s) (3145728 B)"), std::string::npos) << r.out;
}

TEST(Cli, ValidateSkipsMissingInputsAndFailsOutOfTolerance) {
  composim::testing::TempDir d;
  const std::string cases = composim::testing::source_dir() + "/validation/cases";
  auto r = composim::testing::run_cli("validate --cases " + cases + "/replay-hta-ns-v100.json --data " + d.path() + "/nowhere");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("skipped: input missing"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 / 0 / 0 / 1"), std::string::npos) << r.out;  // pass / fail / known gap / skipped
  COMPOSIM_REQUIRE_SHARED_DATA();
  // The 8-GPU vTrain case passes at 10%; the same case at 0.5% tolerance fails the run.
  auto doc = nlohmann::json::parse(std::ifstream(cases + "/vtrain-v100-8gpu-allreduce.json"));
  doc["tolerance"]["busbw_pct"] = 0.5;
  doc["name"] = "tight, \"0.5%\"";  // report.csv quotes it (RFC 4180)
  const auto tight = d.write("tight.json", doc.dump());
  r = composim::testing::run_cli("validate --cases " + cases + "/vtrain-v100-8gpu-allreduce.json " + tight + " --data " +
                                 composim::testing::shared_data() + " --out " + d.path() + "/report");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("vtrain-v100-8gpu-allreduce"), std::string::npos);
  EXPECT_NE(r.out.find("tight"), std::string::npos);
  EXPECT_NE(r.out.find("fail"), std::string::npos) << r.out;
  const auto rows = read_csv(d.path() + "/report/report.csv");
  ASSERT_EQ(rows.size(), 22u);  // 11 sizes per case
  EXPECT_EQ(rows.back().at("case"), "tight, \"0.5%\"");
  EXPECT_EQ(rows.back().at("status"), "fail");
  auto report = nlohmann::json::parse(std::ifstream(d.path() + "/report/report.json"));
  EXPECT_EQ(report["summary"]["collective"]["cases"], 2);
  EXPECT_EQ(report["summary"]["collective"]["fail"], 1);
  EXPECT_EQ(report["summary"]["collective"]["pass"], 1);
  // A known gap does not fail the run, unless --strict.
  r = composim::testing::run_cli("validate --cases " + cases + "/nccl-h100-pcie-nvlink-pair.json --data " + composim::testing::shared_data());
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("known gap"), std::string::npos);
  r = composim::testing::run_cli("validate --strict --cases " + cases + "/nccl-h100-pcie-nvlink-pair.json --data " +
                                 composim::testing::shared_data());
  EXPECT_EQ(r.exit_code, 1) << r.out;
}

// calibrate: started from a wrong NVLink2 efficiency (0.7), fitting the V100 2, 4 and 8-GPU
// sweeps recovers the ~0.90 these V100s reach and lowers the error on the held-out 3-GPU
// sweep; the starting file's other values are carried into the output.
TEST(Cli, CalibrateFitsAndImprovesHeldOutPoints) {
  COMPOSIM_REQUIRE_SHARED_DATA();
  composim::testing::TempDir d;
  const std::string c = composim::testing::source_dir() + "/validation/cases/";
  const auto start = d.write("start.json", R"({"params": {"nvlink.payload_efficiency_gen2": 0.7, "nvlink.payload_efficiency_gen4": 0.8}})");
  auto r = composim::testing::run_cli("calibrate --params " + start + " --data " + composim::testing::shared_data() + " --fit " + c +
                                      "vtrain-v100-2gpu-allreduce.json " + c + "vtrain-v100-4gpu-allreduce.json " + c +
                                      "vtrain-v100-8gpu-allreduce.json --holdout " + c + "vtrain-v100-3gpu-allreduce.json --out " + d.path() +
                                      "/fit.json");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto fit = nlohmann::json::parse(std::ifstream(d.path() + "/fit.json"));
  const double eff = fit["params"]["nvlink.payload_efficiency_gen2"];
  EXPECT_GT(eff, 0.87);
  EXPECT_LT(eff, 0.93);
  // 0.898 with the LL128 rows' per-GPU processing time kept as a known term (the 4- and
  // 8-GPU sweeps' LL128 points); fitting it away into the link efficiency would give 0.893.
  EXPECT_NEAR(eff, 0.898, 0.002);
  EXPECT_DOUBLE_EQ(fit["params"]["nvlink.payload_efficiency_gen4"].get<double>(), 0.8);
  EXPECT_GT(fit["residuals"]["held_out_before"]["mape_pct"].get<double>(), 15.0);
  EXPECT_LT(fit["residuals"]["held_out_after"]["mape_pct"].get<double>(), 10.0);
  EXPECT_EQ(fit["fitted_on"].size(), 3u);
}

// --compose: ranks on GPUs attached to two hosts replay slower than on one switch; a rank on
// a GPU its host does not own is an error naming both.
TEST(Cli, ComposeAcrossHosts) {
  const std::string ex = composim::testing::source_dir() + "/examples/traces/";
  const std::string traces = "--trace " + ex + "ddp2_rank0.json --trace " + ex + "ddp2_rank1.json --topology composable-falcon4016 ";
  auto one = composim::testing::run_cli("run " + traces + "--compose host0=gpu0-7 --placement host0:gpu0,host0:gpu1");
  auto two = composim::testing::run_cli("run " + traces + "--compose host0=gpu0-3,host1=gpu4-7 --placement host0:gpu0,host1:gpu4");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(two.exit_code, 0) << two.err;
  auto predicted = [](const std::string& out) {
    const auto at = out.find("summary: predicted ");
    return std::stod(out.substr(at + 19));
  };
  EXPECT_GT(predicted(two.out), predicted(one.out));  // all-reduces cross 100 GbE instead of one switch
  composim::testing::expect_cli_error("run " + traces + "--compose host0=gpu0-3,host1=gpu4-7 --placement host0:gpu0,host0:gpu5", "rank 1 runs on host0 but gpu5 is attached to host1");
  composim::testing::expect_cli_error("run " + traces + "--compose host0=gpu0-3,host1=gpu3-7", "\"gpu3\" is attached to two hosts: host0 and host1");
}

// SimGrid's own flags reach SimGrid and override composim's network-model defaults:
// LV08 (TCP-calibrated: bandwidth x 0.97) is slower than composim's CM02 default.
TEST(Cli, SimgridCfgFlagsPassThrough) {
  auto cm02 = composim::testing::run_cli("collective --bytes 1G --gpus 2 --topology composable-falcon4016");
  auto lv08 = composim::testing::run_cli("collective --bytes 1G --gpus 2 --topology composable-falcon4016 --cfg=network/model:LV08");
  ASSERT_EQ(cm02.exit_code, 0) << cm02.err;
  ASSERT_EQ(lv08.exit_code, 0) << lv08.err;
  auto busbw = [](const std::string& out) {
    std::stringstream ss(out);
    for (std::string line; std::getline(ss, line);)
      if (!line.empty() && line[0] != '#') {
        std::stringstream f(line);
        std::string x;
        for (int i = 0; i < 8; ++i) f >> x;
        return std::stod(x);
      }
    return 0.0;
  };
  EXPECT_NEAR(busbw(cm02.out), 14.40 * 0.914, 0.01);  // Gen3 x16 x pcie.link.efficiency
  EXPECT_LT(busbw(lv08.out), busbw(cm02.out) * 0.99);
}

// ---------------------------------------------------------------------------------------
// Sweep specs: malformed fields are input errors before anything is created, and a
// resumed sweep runs a point again when its topology file or its output changed.

TEST(Cli, SweepSpecErrors) {
  TempDir d;
  const std::string trace = example(0);
  const json good = {{"name", "t"}, {"traces", {trace}}, {"points", {{{"topology", "pcie-8gpu-gen3"}, {"ranks", 1}}}}};
  struct Case {
    std::function<void(json&)> edit;
    std::string message;
  } cases[] = {
      {[](json& s) { s["name"] = "x\ntouch /tmp/y"; }, "name: must be one line of printable text"},
      {[](json& s) { s["name"] = 5; }, "name: expected a string"},
      {[](json& s) { s["generate"] = 5; }, "generate: expected an object"},
      {[](json& s) { s["run_args"] = {1}; }, "run_args: expected a list of strings, not 1"},
      {[&](json& s) { s["traces"] = {trace, trace}; }, "traces: expected a list with one trace file"},
      {[](json& s) { s["points"][0]["ranks"] = 4294967298LL; }, "\"ranks\" must be an integer in [1, 1000000], not 4294967298"},
      {[](json& s) { s["points"][0]["uplink_gen"] = 1; }, "\"uplink_gen\" is a generator parameter, which a point with a \"topology\" ignores"},
      {[](json& s) { s["points"][0]["label"] = 7; }, "points[0]: \"label\" must be a string"},
      {[](json& s) { s["traces"] = {"/nonexistent/t.json"}; }, "point 0: trace \"/nonexistent/t.json\" not found"},
      // A generated point: get<int>() would have read 4294967300 GPUs as 4.
      {[](json& s) { s["points"][0] = {{"gpus", 4294967300LL}, {"ranks", 1}}; }, "point 0: parameter \"gpus\" = 4294967300 is out of range"},
  };
  for (const auto& c : cases) {
    json spec = good;
    c.edit(spec);
    const std::string file = d.write("spec.json", spec.dump());
    composim::testing::expect_cli_error("sweep " + q(file) + " --out " + q(d.path() + "/out"), c.message);
    EXPECT_FALSE(fs::exists(d.path() + "/out")) << c.message;
  }
}

TEST(Cli, SweepResumeRerunsChangedTopologyAndBrokenOutput) {
  TempDir d;
  const std::string topo = d.path() + "/topo.json", out = d.path() + "/out";
  fs::copy_file(shipped_topology("pcie-8gpu-gen3"), topo);
  const json spec = {{"name", "t"}, {"traces", {example(0)}}, {"points", {{{"topology", topo}, {"ranks", 1}}}}};
  const std::string file = d.write("spec.json", spec.dump());
  auto reused = [&] {
    const CliResult r = run_cli("sweep " + q(file) + " --out " + q(out));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::smatch m;
    EXPECT_TRUE(std::regex_search(r.out, m, std::regex(R"((\d+) reused from an earlier run, (\d+) failed)"))) << r.out;
    EXPECT_EQ(m.size() > 2 ? m[2].str() : "", "0") << r.out;
    return m.size() > 1 ? std::stoi(m[1].str()) : -1;
  };
  EXPECT_EQ(reused(), 0);
  EXPECT_EQ(reused(), 1);
  // Same file name, other content (and modification time): run again.
  json t = read_json(topo);
  t["description"] = "edited";
  fs::last_write_time(topo, fs::last_write_time(topo) - std::chrono::hours(1));
  write_json(topo, t);
  EXPECT_EQ(reused(), 0);
  // A truncated summary is not a result: run again.
  std::ofstream(out + "/points/0/out/summary.json") << "{\"predicted";
  EXPECT_EQ(reused(), 0);
  EXPECT_EQ(reused(), 1);
  // A shipped topology named by its name is watched as its file: another topology
  // directory (or an edit of the shipped file) runs the point again (it was reused, stale).
  const json by_name = {{"name", "t"}, {"traces", {example(0)}}, {"points", {{{"topology", "pcie-8gpu-gen3"}, {"ranks", 1}}}}};
  d.write("spec.json", by_name.dump());
  EXPECT_EQ(reused(), 0);
  EXPECT_EQ(reused(), 1);
  fs::create_directories(d.path() + "/shipped");
  write_json(d.path() + "/shipped/pcie-8gpu-gen3.json", t);
  ASSERT_EQ(setenv("COMPOSIM_TOPOLOGY_DIR", (d.path() + "/shipped").c_str(), 1), 0);
  const int with_other_dir = reused();
  unsetenv("COMPOSIM_TOPOLOGY_DIR");
  EXPECT_EQ(with_other_dir, 0);
  // Another composim binary (a rebuild, an upgrade) runs every point again.
  const std::string copy = d.path() + "/composim";
  fs::copy_file(COMPOSIM_BINARY, copy);
  auto reused_by = [&](const std::string& binary) {
    const std::string cmd = q(binary) + " sweep " + q(file) + " --out " + q(out) + " > " + q(d.path() + "/log") + " 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
    std::ifstream log(d.path() + "/log");
    const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    std::smatch m;
    EXPECT_TRUE(std::regex_search(text, m, std::regex(R"((\d+) reused from an earlier run)"))) << text;
    return m.size() > 1 ? std::stoi(m[1].str()) : -1;
  };
  EXPECT_EQ(reused_by(copy), 0);
  EXPECT_EQ(reused_by(copy), 1);
  fs::last_write_time(copy, fs::last_write_time(copy) + std::chrono::hours(1));
  EXPECT_EQ(reused_by(copy), 0);
}

// results.csv keeps the spec's order of axes (columns, and the last axis varies fastest),
// and a point is run again when a file its run arguments name changes (--params=p.json).
TEST(Cli, SweepKeepsAxisOrderAndWatchesRunArgFiles) {
  TempDir d;
  const std::string out = d.path() + "/out", params = d.path() + "/p.json";
  std::ofstream(params) << R"({"params": {"pcie.link.efficiency": 0.9}})";
  const std::string spec = R"({"name": "t", "traces": [")" + example(0) + R"("], "run_args": ["--params=)" + params + R"("],
    "generate": {"gpus": 4, "gpu_model": "V100-PCIe-32GB", "levels": 1, "fanout": 4},
    "axes": {"ranks": [1, 2], "length_m": [1, 5]}})";
  const std::string file = d.write("spec.json", spec);
  CliResult r = run_cli("sweep " + q(file) + " --out " + q(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(0 reused from an earlier run, 0 failed)"), std::string::npos) << r.out;
  auto lines = lines_of(slurp(out + "/results.csv"));
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("point,ranks,length_m,", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("0,1,1,", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("1,1,5,", 0), 0u) << lines[2];
  const auto before = read_csv(out + "/results.csv");
  // Each point's notes are in its row, and each distinct note once on stdout with its count.
  ASSERT_EQ(before.size(), 4u);
  for (const auto& row : before) EXPECT_NE(row.at("notes").find("is a synthetic trace"), std::string::npos) << row.at("notes");
  EXPECT_NE(r.out.find("note (every point): " + example(0) + " is a synthetic trace"), std::string::npos) << r.out;
  // Same spec, other parameter values in the file it names: every point runs again.
  fs::last_write_time(params, fs::last_write_time(params) - std::chrono::hours(1));
  std::ofstream(params) << R"({"params": {"pcie.link.efficiency": 0.3}})";
  r = run_cli("sweep " + q(file) + " --out " + q(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(0 reused from an earlier run, 0 failed)"), std::string::npos) << r.out;
  const auto after = read_csv(out + "/results.csv");
  ASSERT_EQ(after.size(), before.size());
  EXPECT_GT(std::stod(after[0].at("predicted_iteration_s")), std::stod(before[0].at("predicted_iteration_s")));
}

// A spec may build topologies ("generate" with axes) and add points that name a topology
// of their own: "generate" does not apply to those (it was merged in, then refused).
TEST(Cli, SweepGenerateWithExplicitTopologyPoints) {
  TempDir d;
  const json spec = {{"name", "t"},
                     {"traces", {example(0)}},
                     {"generate", {{"gpus", 4}, {"gpu_model", "V100-PCIe-32GB"}, {"levels", 1}, {"fanout", 4}}},
                     {"axes", {{"ranks", {2}}}},
                     {"points", {{{"label", "shipped"}, {"topology", shipped_topology("pcie-8gpu-gen3")}, {"ranks", 2}}}}};
  const CliResult r = run_cli("sweep " + q(d.write("spec.json", spec.dump())) + " --out " + q(d.path() + "/out"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2 points (0 reused from an earlier run, 0 failed)"), std::string::npos) << r.out;
  const auto rows = read_csv(d.path() + "/out/results.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].at("label"), "shipped");
  EXPECT_NE(rows[0].at("busiest_link"), rows[1].at("busiest_link"));  // two different topologies ran
}

// Spec and flag mistakes found before anything runs: a missing topology (as a missing
// trace), an axis named "label", --collect with --slurm; validate --out on a file.
TEST(Cli, SweepAndValidateRefuseBadInputEarly) {
  TempDir d;
  const json missing = {{"name", "t"}, {"traces", {example(0)}}, {"points", {{{"topology", d.path() + "/nope.json"}, {"ranks", 1}}}}};
  composim::testing::expect_cli_error("sweep " + q(d.write("m.json", missing.dump())) + " --out " + q(d.path() + "/o1"),
                                      "point 0: topology \"" + d.path() + "/nope.json\" is neither a file");
  EXPECT_FALSE(fs::exists(d.path() + "/o1/points"));
  const json label_axis = {{"name", "t"}, {"traces", {example(0)}}, {"axes", {{"label", {"a", "b"}}}}};
  composim::testing::expect_cli_error("sweep " + q(d.write("l.json", label_axis.dump())) + " --out " + q(d.path() + "/o2"),
                                      "axes.label: \"label\" names a point or an axis value; it is not an axis");
  composim::testing::expect_cli_error("sweep --collect " + q(d.path()) + " --slurm", "--collect: goes without --slurm");
  // Two axes setting one parameter: the second's value ran under the first's label.
  const json two = {{"name", "t"}, {"traces", {example(0)}}, {"axes", {{"ranks", {2, 4}}, {"big", {{{"label", "x"}, {"ranks", 8}}}}}}};
  composim::testing::expect_cli_error("sweep " + q(d.write("two.json", two.dump())) + " --out " + q(d.path() + "/o3"),
                                      "axes.ranks: sets \"ranks\", which axis \"big\" sets too: each parameter must come from one axis");
  const std::string file = d.write("report", "x");
  composim::testing::expect_cli_error("validate --cases " + q(source_dir() + "/validation/cases/vtrain-v100-2gpu-allreduce.json") + " --out " + q(file),
                                      file + ": --out: exists and is not a directory");
  composim::testing::expect_cli_error("validate --cases " + q(source_dir() + "/validation/cases/vtrain-v100-2gpu-allreduce.json") + " --out " +
                                          q(file + "/sub"),
                                      file + " is not a directory");
}

// --collect counts each point once: a finished point whose summary is later broken is
// failed, not also finished (12 points: 11 finished, 1 failed).
TEST(Cli, SweepCollectCountsEachPointOnce) {
  TempDir d;
  const std::string out = d.path() + "/s";
  json small = read_json(source_dir() + "/tests/data/sweep-small.json");
  small["traces"] = json::array({example(0)});
  const std::string spec = d.write("small.json", small.dump());
  CliResult r = run_cli("sweep " + q(spec) + " --out " + q(out) + " --slurm --tasks 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli("sweep " + q(out + "/sweep.json") + " --out " + q(out) + " --task 0 --tasks 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ofstream(out + "/points/0/out/summary.json") << "{\"predicted";
  r = run_cli("sweep --collect " + q(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("12 points (11 finished, 1 failed or not run)"), std::string::npos) << r.out;
}

// results.csv is RFC 4180: a label with a comma or a quote is one quoted field, as given
// in the spec (it used to become "a; b").
TEST(Cli, SweepResultsQuoteLabels) {
  TempDir d;
  const std::string out = d.path() + "/out";
  const json spec = {{"name", "t"},
                     {"traces", {example(0)}},
                     {"axes", {{"sys, \"x\"", {{{"label", "in, host"}, {"topology", shipped_topology("pcie-8gpu-gen3")}, {"ranks", 1}}}}}},
                     {"points", {{{"label", "chassis, \"one\" host"}, {"topology", shipped_topology("pcie-8gpu-gen3")}, {"ranks", 1}}}}};
  const std::string file = d.write("spec.json", spec.dump());
  const CliResult r = run_cli("sweep " + q(file) + " --out " + q(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = lines_of(slurp(out + "/results.csv"));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].rfind("point,\"sys, \"\"x\"\"\",label,", 0), 0u) << lines[0];
  EXPECT_NE(lines[2].find(",\"chassis, \"\"one\"\" host\","), std::string::npos) << lines[2];
  const auto rows = read_csv(out + "/results.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("sys, \"x\""), "in, host");
  EXPECT_EQ(rows[1].at("label"), "chassis, \"one\" host");
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("error"), "");
    EXPECT_GT(std::stod(row.at("predicted_iteration_s")), 0.0);
  }
  // results.csv is checked before any point runs.
  const std::string out2 = d.path() + "/out2";
  fs::create_directories(out2);
  ASSERT_EQ(mkfifo((out2 + "/results.csv").c_str(), 0644), 0);
  const CliResult f = run_cli("sweep " + q(file) + " --out " + q(out2));
  expect_input_error(f, out2 + "/results.csv: --out: exists and is not a regular file");
  EXPECT_FALSE(fs::exists(out2 + "/points"));
}

// composim plot: a directory name is data, never shell (a quote in it once ran as shell);
// CSVs that are not composim's are a clear error, and nothing is claimed as written.
TEST(Cli, PlotQuotesItsDirectoryAndRejectsForeignCsv) {
  TempDir d;
  const std::string dir = d.path() + "/x'; touch " + d.path() + "/pwned; echo '";
  fs::create_directories(dir);
  std::ofstream(dir + "/report.csv") << "case,category,measured,predicted\n";
  const CliResult r = run_cli("plot " + q(dir));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("report.csv: no points to plot"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("wrote"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(d.path() + "/pwned"));
  std::ofstream(dir + "/results.csv") << "garbage\n1\n";
  composim::testing::expect_cli_error("plot " + q(dir), "a CSV there is not composim output");
  // A sweep without one successful point, and a file given for the directory: bad input (2).
  const std::string failed = d.path() + "/failed";
  fs::create_directories(failed);
  std::ofstream(failed + "/results.csv") << "point,ranks,predicted_iteration_s,error\n0,2,,no trace\n";
  composim::testing::expect_cli_error("plot " + q(failed), "results.csv: no successful point to plot");
  composim::testing::expect_cli_error("plot " + q(failed + "/results.csv"), "results.csv: not a directory");
  // All or nothing: a run directory whose iterations.csv is broken gets no links.png either
  // (it used to be written before the failure).
  const std::string run_dir = d.path() + "/run";
  fs::create_directories(run_dir);
  std::ofstream(run_dir + "/links.csv") << "link,from,to,bandwidth_GBps,bin_start_s,bin_end_s,bytes,utilisation\nl,a,b,26,0,0.001,1000,0.5\n";
  std::ofstream(run_dir + "/iterations.csv") << "iteration,measured_s,predicted_s,error_pct\nProfilerStep#1,x,0.1,0\n";
  composim::testing::expect_cli_error("plot " + q(run_dir), "a CSV there is not composim output");
  EXPECT_EQ(std::distance(fs::directory_iterator(run_dir), fs::directory_iterator()), 2) << "only the two CSVs";
  // Many iterations draw as lines, not a bar each (1200 bars made an image too wide to draw).
  std::ofstream iters(run_dir + "/iterations.csv");
  iters << "iteration,measured_s,predicted_s,error_pct\n";
  for (int i = 1; i <= 1200; ++i) iters << "ProfilerStep#" << i << ",0.016,0.0157,-2\n";
  iters.close();
  const CliResult many = run_cli("plot " + q(run_dir));
  EXPECT_EQ(many.exit_code, 0) << many.err;
  EXPECT_TRUE(fs::exists(run_dir + "/iterations.png") && fs::exists(run_dir + "/links.png"));
}

// Flags and files whose values would be silently ignored are errors.
TEST(Cli, IgnoredCalibrateFlagsAndParamKeysAreErrors) {
  TempDir d;
  const std::string cases = source_dir() + "/validation/cases/";
  composim::testing::expect_cli_error("calibrate --fit " + q(cases + "vtrain-v100-2gpu-allreduce.json") + " --holdout " +
                                          q(cases + "vtrain-v100-3gpu-allreduce.json") + " --holdout-every 3 --out " + q(d.path() + "/f.json"),
                                      "--holdout-every: goes without --holdout");
  composim::testing::expect_cli_error("calibrate --fit " + q(cases + "vtrain-v100-2gpu-allreduce.json") + " --out " + q(d.path()),
                                      d.path() + ": --out: is a directory");
  // An empty name is refused before the fit, not after it ("./: output file: is a directory").
  composim::testing::expect_cli_error("calibrate --fit " + q(cases + "vtrain-v100-2gpu-allreduce.json") + " --out ''", "--out: needs a file name");
  // A case whose run fails: the error says what composim said (its log goes with the scratch
  // folder, which a "see ....log" pointed to).
  auto bad = nlohmann::json::parse(std::ifstream(cases + "vtrain-v100-2gpu-allreduce.json"));
  bad["run"]["topology"] = "nowhere-topo";
  fs::create_directories(d.path() + "/measured/vtrain_v100_allreduce");
  std::ofstream(d.path() + "/measured/vtrain_v100_allreduce/AR_GPU2_1M_1024M_LUT")
      << "size(B),count,type,time(ns),busbw(GB/s)\n1048576,262144,float,70140,14.95\n2097152,524288,float,116000,18.08\n";
  composim::testing::expect_cli_error("calibrate --fit " + q(d.write("bad.json", bad.dump())) + " --data " + q(d.path()) + " --out " + q(d.path() + "/f.json"),
                                      "bad.json: run: composim collective failed: composim: error: nowhere-topo: no such file");
  // plot: a plot it cannot write is one line and status 2, not a Python traceback.
  fs::create_directories(d.path() + "/plot/report.png");
  std::ofstream(d.path() + "/plot/report.csv") << "case,category,point,metric,unit,measured,predicted,error_pct,tolerance_pct,within,status\n"
                                                << "c,collective,1048576 B,busbw,GB/s,10,11,10,10,1,pass\n";
  composim::testing::expect_cli_error("plot " + q(d.path() + "/plot"), d.path() + "/plot/report.png: Is a directory");
  // Both images or neither: a PDF that cannot be written takes its PNG with it.
  fs::remove(d.path() + "/plot/report.png");
  fs::create_directories(d.path() + "/plot/report.pdf");
  composim::testing::expect_cli_error("plot " + q(d.path() + "/plot"), d.path() + "/plot/report.pdf");
  EXPECT_FALSE(fs::exists(d.path() + "/plot/report.png"));
  EXPECT_EQ(std::distance(fs::directory_iterator(d.path() + "/plot"), fs::directory_iterator()), 2) << "report.csv and the report.pdf folder only";
  const std::string params = d.write("p.json", R"({"parmas": {"pcie.link.efficiency": 0.5}, "params": {}})");
  composim::testing::expect_cli_error("collective --bytes 1M --gpus 2 --topology dgx-a100 --params " + q(params),
                                      params + ": top level: unknown key \"parmas\"");
}

TEST(Cli, ComposeListsAndGeneratedNamesMustBeWhole) {
  using composim::testing::expect_cli_error;
  expect_cli_error("p2p --topology composable-falcon4016 --compose host0=gpu0-1,,host1=gpu2", "--compose: an empty item");
  expect_cli_error("p2p --topology composable-falcon4016 --compose host0=gpu0-1,", "--compose: \"host0=gpu0-1,\" ends with a comma");
  expect_cli_error("p2p --topology composable-falcon4016 --compose host0=", "--compose: \"host0=\" attaches no device");
  // A range is digits-digits at the end, nothing after (std::stoi read "gpu0-3xyz" as 0-3,
  // and the text after ";" was dropped).
  expect_cli_error("p2p --topology composable-falcon4016 --compose 'host0=gpu0-3;host1=gpu4-7'",
                   "--compose: \"host0=gpu0-3;host1=gpu4-7\" has two '='");
  expect_cli_error("p2p --topology composable-falcon4016 --compose host0=gpu0-3xyz", "--compose: unknown device \"gpu0-3xyz\" attached to host0");
  expect_cli_error("p2p --topology composable-falcon4016 --compose host0=gpu3-0", "--compose: cannot read the range \"gpu3-0\"");
  // Empty is an error, not no composition; a device twice under one host says so.
  expect_cli_error("p2p --topology composable-falcon4016 --compose ''", "--compose: needs host=devices");
  expect_cli_error("p2p --topology composable-falcon4016 --compose host0=gpu0-1,gpu1", "--compose: \"gpu1\" is listed twice for host0");
  // A server's two sockets are one system: composed apart, its NVSwitch GPUs were staged
  // through host memory (28.9 GB/s all-reduce busbw, no warning).
  expect_cli_error("p2p --topology dgx-a100 --compose cpu0=gpu0-3,cpu1=gpu4-7",
                   "--compose: cpu1 and cpu0 are sockets of one server (a CPU interconnect joins them), not hosts to compose apart");
  // A prefix with digits in it ("n0.gpu") keeps them.
  const auto r = composim::testing::run_cli("p2p --topology 2x-dgx-a100-ib --compose n0.cpu0=n0.gpu0-3");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("D\\D       0       1       2       3\n"), std::string::npos) << r.out;  // n0.gpu0 to n0.gpu3
  TempDir d;
  expect_cli_error("topology generate --name '' --out " + q(d.path() + "/g.json"), "--name must not be empty");
  expect_cli_error("topology generate --placement chassis --cable copper --length-m 100 --out " + q(d.path() + "/g.json"),
                   "a copper PCIe segment of 100 m: copper reaches 10 m at most");
  EXPECT_FALSE(fs::exists(d.path() + "/g.json"));
}

// --ranks keeps a collective's whole buffer, as a data-parallel job of the same model does:
// the example's all-reduces made all-gathers (the trace's size is the rank's shard: 2 ranks,
// n elements each) replay on 4 ranks as 4 per-rank traces whose shards are n / 2 elements,
// not n (which would double the gathered buffer); their reduce-scatters (the trace's size is
// the whole input) keep it, so the two agree, as they do on one flat parameter in FSDP.
TEST(Cli, RanksKeepsTheWholeBufferOfAllGathers) {
  TempDir tmp;
  auto edited = [&](const std::string& name, const char* op, double shard_factor, int rank, int world) {
    json t = read_json(example(0));
    std::vector<int> ranks(world);
    for (int i = 0; i < world; ++i) ranks[i] = i;
    t["distributedInfo"]["rank"] = rank;
    t["distributedInfo"]["world_size"] = world;
    t["distributedInfo"]["pg_config"][0]["ranks"] = ranks;
    t["distributedInfo"]["pg_config"][0]["pg_size"] = world;
    for (auto& e : t["traceEvents"]) {
      if (e.value("cat", "") != "kernel" || e.value("name", "").find("nccl") == std::string::npos) continue;
      const bool gather = std::string(op) == "allgather";
      e["name"] = gather ? "ncclKernel_AllGather_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"
                         : "ncclKernel_ReduceScatter_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)";
      auto& a = e["args"];
      const auto n = static_cast<std::int64_t>(a["In msg nelems"].get<double>() * shard_factor);
      a["Collective name"] = gather ? "_allgather_base" : "_reduce_scatter_base";
      a["In msg nelems"] = gather ? n : n * world;
      a["Out msg nelems"] = gather ? n * world : n;
      a["Group size"] = world;
      a["Process Group Ranks"] = json(ranks).dump();
    }
    return tmp.write(name, t.dump());
  };
  auto predicted_ms = [](const CliResult& r) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto at = r.out.find("summary: predicted ");
    return at == std::string::npos ? -1.0 : std::stod(r.out.substr(at + 19));
  };
  const double gather_scaled = predicted_ms(run_cli("run --trace " + q(edited("ag2.json", "allgather", 1, 0, 2)) + " --ranks 4 --topology composable-falcon4016"));
  std::string four;
  for (int r = 0; r < 4; ++r) four += " --trace " + q(edited("ag4_" + std::to_string(r) + ".json", "allgather", 0.5, r, 4));
  const double gather_four = predicted_ms(run_cli("run" + four + " --topology composable-falcon4016"));
  const double scatter_scaled =
      predicted_ms(run_cli("run --trace " + q(edited("rs2.json", "reducescatter", 1, 0, 2)) + " --ranks 4 --topology composable-falcon4016"));
  EXPECT_GT(gather_four, 0);
  EXPECT_NEAR(gather_scaled, gather_four, 1e-3);
  EXPECT_NEAR(scatter_scaled, gather_four, 0.01 * gather_four);
  // On one rank each is a local copy of the whole buffer: the same for both.
  const double gather_one = predicted_ms(run_cli("run --trace " + q(edited("ag2.json", "allgather", 1, 0, 2)) + " --ranks 1 --topology composable-falcon4016"));
  const double scatter_one =
      predicted_ms(run_cli("run --trace " + q(edited("rs2.json", "reducescatter", 1, 0, 2)) + " --ranks 1 --topology composable-falcon4016"));
  EXPECT_GT(gather_one, 0);
  EXPECT_NEAR(gather_one, scatter_one, 1e-3);
}

// The README's pipeline example (synthetic GPipe over two V100s, 24 sends of 32 MiB): its
// sends pair with their receives, and the step follows where the stages sit. Golden
// figures: under one leaf switch each send is 32 MiB / 13.16 GB/s + latency; through both
// hosts and 100 GbE (12.25 GB/s) slightly slower; with P2P off staged through host memory
// at 5.2 GB/s, 8% slower.
TEST(Cli, PipelineExampleSendsFollowTheStages) {
  TempDir d;
  auto step_ms = [&](const std::string& args, const std::string& name) {
    auto r = run_cli("run --trace " + source_dir() + "/examples/traces/pipeline2 --topology composable-falcon4016 " + args + " --out " + d.path() + "/" + name);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const json s = json::parse(std::ifstream(d.path() + "/" + name + "/summary.json"));
    EXPECT_EQ(s["send_recv_paired"].get<int>(), 24) << name;
    EXPECT_EQ(s["send_recv_at_measured_duration"].get<int>(), 0) << name;
    EXPECT_NEAR(s["measured_iteration_s"].get<double>() * 1e3, 100.734, 0.001) << name;
    return s["predicted_iteration_s"].get<double>() * 1e3;
  };
  EXPECT_NEAR(step_ms("--placement gpu0,gpu1", "leaf"), 99.109, 0.002);
  EXPECT_NEAR(step_ms("--compose host0=gpu0-7,host1=gpu8-15 --placement gpu0,gpu8", "hosts"), 99.501, 0.002);
  EXPECT_NEAR(step_ms("--placement gpu0,gpu1 --p2p off", "shm"), 107.087, 0.002);
}

// The pipeline example as batch_isend_irecv records it (each send and receive a batch of
// one): the kernels name nothing, each send's or receive's record_param_comms, just before
// its launch, names the peer and size. The 24 pairs replay as when the kernels name them;
// the run says where the peers came from.
TEST(Cli, PipelineExampleAsBatchedSendsReplaysAlike) {
  TempDir d;
  const char* moved[] = {"Collective name", "In msg nelems", "Out msg nelems", "Group size", "dtype", "Process Group Name", "Process Group Description",
                         "Process Group Ranks", "Dst Rank", "Src Rank"};
  std::filesystem::create_directories(d.path() + "/batched");
  for (int rank = 0; rank < 2; ++rank) {
    json doc = read_json(source_dir() + "/examples/traces/pipeline2/rank" + std::to_string(rank) + ".json");
    std::map<std::int64_t, const json*> launch_of;
    for (const auto& e : doc["traceEvents"])
      if (e.value("cat", "") == "cuda_runtime") launch_of[e["args"]["correlation"].get<std::int64_t>()] = &e;
    json records = json::array();
    int batched = 0;
    for (auto& e : doc["traceEvents"]) {
      if (e.value("cat", "") != "kernel" || !e["args"].contains("Collective name")) continue;
      const json& launch = *launch_of.at(e["args"]["correlation"].get<std::int64_t>());
      json args = {{"External id", 5000 + batched++}};
      for (const char* key : moved)
        if (e["args"].contains(key)) args[key] = e["args"][key], e["args"].erase(key);
      records.push_back({{"ph", "X"}, {"cat", "cpu_op"}, {"name", "record_param_comms"}, {"pid", launch["pid"]}, {"tid", launch["tid"]},
                         {"ts", launch["ts"].get<double>() - 1}, {"dur", 0.5}, {"args", args}});
    }
    EXPECT_EQ(batched, 24);
    for (auto& r : records) doc["traceEvents"].push_back(r);
    write_json(d.path() + "/batched/rank" + std::to_string(rank) + ".json", doc);
  }
  auto r = run_cli("run --trace " + d.path() + "/batched --topology composable-falcon4016 --placement gpu0,gpu1 --out " + d.path() + "/out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json s = read_json(d.path() + "/out/summary.json");
  EXPECT_EQ(s["send_recv_paired"].get<int>(), 24);
  EXPECT_EQ(s["send_recv_batched_kernels_paired"].get<int>(), 48);
  EXPECT_EQ(s["send_recv_at_measured_duration"].get<int>(), 0);
  EXPECT_NEAR(s["predicted_iteration_s"].get<double>() * 1e3, 99.109, 0.002);  // as PipelineExampleSendsFollowTheStages
  // The timeline shows each batched kernel's parts: rank 0's first sends its activations.
  const json tl = read_json(d.path() + "/out/timeline.json");
  const auto first = std::find_if(tl["traceEvents"].begin(), tl["traceEvents"].end(),
                                  [](const json& e) { return e.value("cat", "") == "collective" && e.value("pid", -1) == 0; });
  ASSERT_NE(first, tl["traceEvents"].end());
  EXPECT_EQ((*first)["args"]["batch"], json::parse(R"([{"p2p": "send", "peer": 1, "in_bytes": 33554432}])")) << first->dump();
  EXPECT_NE(r.out.find("24 batched send/recv kernel(s) (batch_isend_irecv) take the peers and sizes of their 24 sends and receives from the "
                       "record_param_comms their thread recorded before launching them"),
            std::string::npos)
      << r.out;
}

// The example's 12 all-reduces numbered by PyTorch's "Seq" (100-111) on both ranks replay
// exactly as when matched by order; `import` says which process groups are so numbered.
// Rank 1's trace without its first all-reduce (its profiler window starting one later):
// Seq 100 is only rank 0's, which runs it alone at its measured duration, and the other 11
// still pair (by order, as without "Seq", rank 1's first would pair with rank 0's first,
// of another size: an error).
TEST(Cli, CollectivesMatchedByPyTorchSeqAcrossProfilerWindows) {
  TempDir tmp;
  auto numbered = [&](int rank, bool drop_first, bool give_seq = true) {
    json doc = read_json(example(rank));
    json kept = json::array();
    int seq = 100;
    std::int64_t dropped_corr = -1;
    for (auto& e : doc["traceEvents"]) {
      if (e.value("cat", "") == "kernel" && e["name"].get<std::string>().rfind("ncclKernel_", 0) == 0) {
        if (drop_first && seq == 100) {
          dropped_corr = e["args"]["correlation"].get<std::int64_t>();
          ++seq;
          continue;
        }
        if (give_seq) e["args"]["Seq"] = seq;
        ++seq;
      }
      kept.push_back(e);
    }
    EXPECT_EQ(seq, 112);
    json without_launch = json::array();  // and its launch
    for (auto& e : kept)
      if (!(e.value("cat", "") == "cuda_runtime" && e.contains("args") && e["args"].value("correlation", std::int64_t{-2}) == dropped_corr))
        without_launch.push_back(e);
    doc["traceEvents"] = without_launch;
    const std::string path = tmp.path() + "/r" + std::to_string(rank) + (drop_first ? "-cut" : "") + (give_seq ? "" : "-no-seq") + ".json";
    write_json(path, doc);
    return path;
  };
  const std::string r0 = numbered(0, false), r1 = numbered(1, false), r1_cut = numbered(1, true);
  const CliResult imp = run_cli("import " + q(r0));
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  EXPECT_NE(imp.out.find("  collectives numbered by PyTorch's \"Seq\" on process group(s) \"0\"\n"), std::string::npos) << imp.out;
  const CliResult by_order = run_cli("run " + example_traces() + " --topology composable-falcon4016");
  const CliResult by_seq = run_cli("run --trace " + q(r0) + " --trace " + q(r1) + " --topology composable-falcon4016");
  ASSERT_EQ(by_seq.exit_code, 0) << by_seq.err;
  EXPECT_EQ(summary_without_wall_time(by_seq.out), summary_without_wall_time(by_order.out));
  const std::string out = tmp.path() + "/cut";
  const CliResult cut = run_cli("run --trace " + q(r0) + " --trace " + q(r1_cut) + " --topology composable-falcon4016 --out " + q(out));
  ASSERT_EQ(cut.exit_code, 0) << cut.err;
  const json summary = read_json(out + "/summary.json");
  EXPECT_EQ(summary["collectives"], 11);
  EXPECT_EQ(summary["collectives_outside_trace_window"], 1);
  // Rank 1 launches Seq 101 as far into its trace as rank 0 does: it starts with rank 0,
  // and every step is predicted within 0.5% of the whole traces' prediction.
  EXPECT_EQ(cut.out.find("start later in the replay"), std::string::npos) << cut.out;
  const std::string whole_out = tmp.path() + "/whole";
  ASSERT_EQ(run_cli("run " + example_traces() + " --topology composable-falcon4016 --out " + q(whole_out)).exit_code, 0);
  const json whole = read_json(whole_out + "/summary.json");
  ASSERT_EQ(summary["iterations"].size(), whole["iterations"].size());
  for (size_t k = 0; k < whole["iterations"].size(); ++k)
    EXPECT_NEAR(summary["iterations"][k]["predicted_s"].get<double>(), whole["iterations"][k]["predicted_s"].get<double>(),
                0.005 * whole["iterations"][k]["predicted_s"].get<double>())
        << k;
  EXPECT_NE(cut.out.find("note: 1 collective kernel(s) launched before or after another member's trace window (by PyTorch's \"Seq\") ran alone at their "
                         "measured duration"),
            std::string::npos)
      << cut.out;
  const std::string r1_cut_no_seq = numbered(1, true, false);
  const CliResult shifted = run_cli("run --trace " + q(r0) + " --trace " + q(r1_cut_no_seq) + " --topology composable-falcon4016");
  EXPECT_EQ(shifted.exit_code, 2);
  EXPECT_NE(shifted.err.find("rank 1, collective #0 of communicator \"0\": mismatched collective: this rank has all_reduce of 16.0 MiB, rank 0 has all_reduce of 12.0 MiB"),
            std::string::npos)
      << shifted.err;
}
