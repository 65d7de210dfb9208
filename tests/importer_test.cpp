#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include <zlib.h>

#include <fstream>
#include <random>

#include "models/error.hpp"
#include "test_util.hpp"
#include "traces/kineto.hpp"
#include "traces/workload_json.hpp"

using namespace composim;
using composim::testing::TempDir;

namespace {

// What importing `text` (written to dir/bad.json) stops with; "no error" if it imports.
std::string import_error(const TempDir& dir, const std::string& text) {
  try {
    trace::import_kineto(dir.write("bad.json", text));
  } catch (const InputError& e) {
    return std::string(e.what());
  }
  return std::string("no error");
}

// A small current-schema trace: two threads, a compute and an NCCL stream, an event
// record/wait pair, a blocking pageable copy, a stream synchronize and two steps.
const char* kCurrent = R"JSON({
 "schemaVersion": 1,
 "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-40GB"}],
 "distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 2,
   "pg_config": [{"pg_name": "0", "backend_config": "cuda:nccl", "pg_size": 2, "ranks": [0, 1]}]},
 "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 1000.0, "dur": 400.0, "args": {}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 1, "ts": 1000.0, "dur": 50.0, "args": {"correlation": 1}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 1010.0, "dur": 30.0, "args": {"device": 0, "stream": 7, "correlation": 1, "bytes": 65536}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 1060.0, "dur": 5.0, "args": {"correlation": 2}},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 1070.0, "dur": 100.0, "args": {"device": 0, "stream": 7, "correlation": 2}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaEventRecord", "pid": 1, "tid": 2, "ts": 1070.0, "dur": 2.0, "args": {"correlation": 3}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamWaitEvent", "pid": 1, "tid": 2, "ts": 1073.0, "dur": 2.0, "args": {"correlation": 4}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 1076.0, "dur": 5.0, "args": {"correlation": 5}},
  {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", "pid": 0, "tid": 20, "ts": 1170.0, "dur": 50.0,
   "args": {"device": 0, "stream": 20, "correlation": 5, "Collective name": "allreduce", "In msg nelems": 1000, "dtype": "Float", "Group size": 2, "Process Group Name": "0", "Process Group Ranks": "[0, 1]"}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 1, "tid": 1, "ts": 1100.0, "dur": 80.0, "args": {"correlation": 6}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 1400.0, "dur": 300.0, "args": {}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1400.0, "dur": 5.0, "args": {"correlation": 7}},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 1410.0, "dur": 100.0, "args": {"device": 0, "stream": 7, "correlation": 7}},
  {"ph": "s", "id": 2, "pid": 1, "tid": 2, "ts": 1060.0, "cat": "ac2g", "name": "ac2g"},
  {"ph": "f", "id": 2, "pid": 0, "tid": 7, "ts": 1070.0, "cat": "ac2g", "name": "ac2g", "bp": "e"}
 ]})JSON";

// The older schema: Kernel / Runtime / Memcpy categories and string thread ids.
const char* kLegacy = R"JSON({
 "schemaVersion": 1,
 "deviceProperties": [{"id": 0, "name": "Tesla V100-DGXS-32GB"}],
 "traceEvents": [
  {"ph": "X", "cat": "Operator", "name": "ProfilerStep#5", "pid": 10, "tid": "10", "ts": 100, "dur": 200, "args": {}},
  {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": "10", "ts": 100, "dur": 6, "args": {"cbid": 211, "correlation": 9}},
  {"ph": "X", "cat": "Kernel", "name": "conv", "pid": 0, "tid": "stream 7", "ts": 110, "dur": 50, "args": {"device": 0, "stream": 7, "correlation": 9}},
  {"ph": "X", "cat": "Runtime", "name": "cudaMemsetAsync", "pid": 10, "tid": "10", "ts": 120, "dur": 4, "args": {"correlation": 10}},
  {"ph": "X", "cat": "Memset", "name": "Memset (Device)", "pid": 0, "tid": "stream 7", "ts": 160, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 10, "bytes": 4096}}
 ]})JSON";

}  // namespace

TEST(Importer, CurrentSchema) {
  TempDir d;
  auto w = trace::import_kineto(d.write("t.json", kCurrent));
  EXPECT_EQ(w.format, "kineto");
  EXPECT_EQ(w.rank, 1);
  EXPECT_EQ(w.world_size, 2);
  EXPECT_EQ(w.gpu_model, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(w.threads.size(), 2u);
  EXPECT_EQ(w.streams.size(), 2u);
  EXPECT_EQ(w.kernel_count(), 3u);
  EXPECT_EQ(w.count(trace::GpuOpKind::memcpy), 1u);
  ASSERT_EQ(w.collectives.size(), 1u);
  const auto& c = w.collectives[0];
  EXPECT_EQ(c.kind, collective::Kind::all_reduce);
  EXPECT_EQ(c.in_bytes, 4000u);
  EXPECT_EQ(w.communicators[c.communicator].ranks, (std::vector<int>{0, 1}));
  // Times are ns from the first event.
  const auto& memcpy_op = w.gpu_ops[0];
  EXPECT_EQ(memcpy_op.ts_ns, 10000);
  EXPECT_EQ(memcpy_op.copy, trace::CopyKind::htod);
  EXPECT_EQ(memcpy_op.bytes, 65536u);
  // The pageable copy blocks its thread.
  const auto& t1 = w.threads[0].ops;
  EXPECT_TRUE(t1[0].blocking);
  EXPECT_EQ(t1[0].waits, std::vector<std::int32_t>{0});
  // The NCCL kernel waits for the gemm recorded before it (record on the compute stream,
  // wait by the stream of the next launch).
  const auto& nccl = w.gpu_ops[c.gpu_op];
  EXPECT_EQ(nccl.waits, std::vector<std::int32_t>{1});
  // cudaStreamSynchronize on the main thread waits for the last op enqueued on stream 7
  // before it, even though the other thread launched it.
  EXPECT_TRUE(t1[1].blocking);
  EXPECT_EQ(t1[1].waits, std::vector<std::int32_t>{1});
  ASSERT_EQ(w.iterations.size(), 2u);
  EXPECT_EQ(w.iterations[0].name, "ProfilerStep#1");
  EXPECT_EQ(w.iterations[0].dur_ns, 400000);
  EXPECT_EQ(w.iterations[1].thread, w.iterations[0].thread);
}

TEST(Importer, LegacySchema) {
  TempDir d;
  auto w = trace::import_kineto(d.write("t.json", kLegacy));
  EXPECT_EQ(w.format, "kineto-legacy");
  EXPECT_EQ(w.kernel_count(), 1u);
  EXPECT_EQ(w.count(trace::GpuOpKind::memset), 1u);
  EXPECT_EQ(w.gpu_ops[0].launch_op, 0);
  EXPECT_EQ(w.gpu_ops[1].bytes, 4096u);
  ASSERT_EQ(w.iterations.size(), 1u);
  EXPECT_EQ(w.iterations[0].dur_ns, 200000);
}

TEST(Importer, IrRoundTrip) {
  TempDir d;
  auto w = trace::import_kineto(d.write("t.json", kCurrent));
  const std::string ir = d.write("t.ir.json", trace::workload_to_json(w));
  auto back = trace::load_workload(ir);
  EXPECT_EQ(back.format, "composim-ir");
  const auto a = trace::workload_to_json(back), b = trace::workload_to_json(w);
  EXPECT_EQ(a.substr(a.find("\"threads\"")), b.substr(b.find("\"threads\"")));
  EXPECT_EQ(back.gpu_ops[w.collectives[0].gpu_op].waits, w.gpu_ops[w.collectives[0].gpu_op].waits);
}

// A gzip trace damaged in the middle: the error says how far the compressed stream was read,
// not only the decompressed block before the damage.
TEST(Importer, CorruptGzipNamesTheCompressedByte) {
  TempDir d;
  std::string text = R"({"traceEvents": [)";
  std::mt19937 rng(7);
  for (int i = 0; i < 4000; ++i)
    text += (i ? "," : "") + std::string(R"({"ph": "X", "cat": "cpu_op", "name": "op)") + std::to_string(rng()) + R"(", "pid": 1, "tid": 1, "ts": )" +
            std::to_string(i) + R"(, "dur": 1})";
  text += "]}";
  const std::string path = d.path() + "/t.json.gz";
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  gzclose(f);
  std::string gz;
  {
    std::ifstream in(path, std::ios::binary);
    gz.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GT(gz.size(), 20000u);
  for (size_t i = gz.size() / 2; i < gz.size() / 2 + 64; ++i) gz[i] = static_cast<char>(gz[i] ^ 0x5a);
  std::ofstream(path, std::ios::binary) << gz;
  try {
    trace::import_kineto(path);
    FAIL() << "a corrupt gzip file was read";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(path + ": after byte "), std::string::npos) << m;
    EXPECT_NE(m.find(" of the decompressed data (compressed byte "), std::string::npos) << m;
    EXPECT_NE(m.find("corrupt or truncated gzip data"), std::string::npos) << m;
  }
}

namespace {
// `text` gzip-compressed as one member.
std::string gzip_member(const std::string& text) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, static_cast<uLong>(text.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// A trace of `n` kernels on one stream, as text (over 128 KiB for n = 2000: more than one
// block of the reader's input buffer).
std::string kernels_trace(int n) {
  std::string text = R"({"traceEvents": [)";
  for (int i = 0; i < n; ++i)
    text += (i ? "," : "") + std::string(R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": )") + std::to_string(10 * i) +
            R"(, "dur": 5, "args": {"device": 0, "stream": 7, "correlation": )" + std::to_string(i + 1) + "}}";
  return text + "]}";
}
}  // namespace

// Several gzip members one after another (`cat a.gz b.gz`) are one text, as gunzip reads them;
// the same text plain, or through a pipe, reads the same.
TEST(Importer, GzipMembersAreOneText) {
  TempDir d;
  const std::string text = kernels_trace(2000);
  ASSERT_GT(text.size(), 200000u);
  const size_t cut = text.size() / 3;
  const std::string two = d.write("two.json.gz", gzip_member(text.substr(0, cut)) + gzip_member("") + gzip_member(text.substr(cut)));
  const std::string plain = d.write("plain.json", text);
  EXPECT_EQ(trace::read_maybe_gzip(two), text);
  EXPECT_EQ(trace::read_maybe_gzip(plain), text);
  EXPECT_EQ(trace::import_kineto(two).gpu_ops.size(), 2000u);
  EXPECT_EQ(trace::import_kineto(plain).gpu_ops.size(), 2000u);
}

// Bytes after the last gzip member that are not another member (a damaged or appended-to
// file) are an error naming where they start, not silently dropped as zlib's gzread does.
TEST(Importer, BytesAfterGzipDataAreAnError) {
  TempDir d;
  const std::string text = kernels_trace(10), gz = gzip_member(text);
  for (const std::string& tail : {std::string("GARBAGE\n"), std::string("\x1f"), std::string(3, '\0')}) {
    const std::string path = d.write("t.json.gz", gz + tail);
    try {
      trace::import_kineto(path);
      FAIL() << "a gzip file with " << tail.size() << " bytes after its data was read";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), path + ": compressed byte " + std::to_string(gz.size()) + " (after byte " + std::to_string(text.size()) +
                                           " of the decompressed data): bytes after the end of the gzip data that are not another gzip member (a damaged or "
                                           "appended-to file; gzip -t calls them trailing garbage)");
    }
  }
  // Control: without them the file reads.
  EXPECT_EQ(trace::import_kineto(d.write("ok.json.gz", gz)).gpu_ops.size(), 10u);
}

TEST(Importer, RejectsBadInputWithPlace) {
  TempDir d;
  auto msg = [](const std::string& path) {
    try {
      trace::load_workload(path);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const auto bad = d.write("bad.json", "{\"traceEvents\": [ {\"ph\": ");
  EXPECT_NE(msg(bad).find(bad + ": byte"), std::string::npos) << msg(bad);
  EXPECT_NE(msg(bad).find("malformed JSON"), std::string::npos);
  const auto empty = d.write("cpu.json", R"({"traceEvents": [{"ph": "X", "cat": "cuda_runtime", "name": "cudaFree", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]})");
  EXPECT_NE(msg(empty).find("no GPU activity"), std::string::npos) << msg(empty);
  // A number no double holds: the byte where the parser stopped.
  const auto huge = d.write("huge.json", R"({"traceEvents":[{"ph":"X","name":"a","dur":1e400}]})");
  EXPECT_NE(msg(huge).find(huge + ": byte 48: unreadable JSON: "), std::string::npos) << msg(huge);
  // composim's own outputs are said to be that.
  const auto timeline = d.write("timeline.json", R"({"displayTimeUnit": "ms", "otherData": {"generator": "composim"}, "traceEvents": []})");
  EXPECT_NE(msg(timeline).find(timeline + ": otherData.generator: this is a timeline composim wrote"), std::string::npos) << msg(timeline);
  const auto summary = d.write("summary.json", R"({"predicted_iteration_s": 0.1, "breakdown": {}})");
  EXPECT_NE(msg(summary).find(summary + ": top level: this is a summary composim wrote"), std::string::npos) << msg(summary);
  const auto notrace = d.write("x.json", R"({"nodes": []})");
  EXPECT_NE(msg(notrace).find("not a Chrome trace"), std::string::npos) << msg(notrace);
  EXPECT_NE(msg(d.path() + "/missing.json").find("cannot open"), std::string::npos);
  // The IR reader checks cross-references.
  auto w = trace::import_kineto(d.write("t.json", kCurrent));
  auto doc = nlohmann::json::parse(trace::workload_to_json(w));
  doc["gpu_ops"][1]["stream"] = 42;
  const auto ir = d.write("bad.ir.json", doc.dump());
  EXPECT_NE(msg(ir).find("gpu_ops[1].stream: 42 is out of range [0, 1]"), std::string::npos) << msg(ir);
  doc = nlohmann::json::parse(trace::workload_to_json(w));
  doc["iterations"][0]["thread"] = 7;
  const auto ir2 = d.write("bad2.ir.json", doc.dump());
  EXPECT_NE(msg(ir2).find("iterations[0].thread: 7 is out of range"), std::string::npos) << msg(ir2);
  doc = nlohmann::json::parse(trace::workload_to_json(w));
  doc["gpu_ops"][0]["dur_ns"] = -5;
  const auto ir3 = d.write("bad3.ir.json", doc.dump());
  EXPECT_NE(msg(ir3).find("gpu_ops[0].dur_ns: -5 is out of range"), std::string::npos) << msg(ir3);
  doc = nlohmann::json::parse(trace::workload_to_json(w));
  doc["streams"][0]["ops"].push_back(0);
  const auto ir4 = d.write("bad4.ir.json", doc.dump());
  EXPECT_NE(msg(ir4).find("more than one stream or twice"), std::string::npos) << msg(ir4);
  // A collective's kind is one of the IR's names, not any text containing one.
  doc = nlohmann::json::parse(trace::workload_to_json(w));
  ASSERT_FALSE(doc["collectives"].empty());
  doc["collectives"][0]["kind"] = "alreduce";
  const auto ir5 = d.write("bad5.ir.json", doc.dump());
  EXPECT_NE(msg(ir5).find("collectives[0].kind: unknown collective kind \"alreduce\""), std::string::npos) << msg(ir5);
}

// Steps that touch in microseconds are not an overlap after rounding to nanoseconds
// (start 0.0006 us -> 1 ns plus duration 1.0006 us -> 1001 ns ends at 1002 ns, past the next
// step's start 1.0012 us -> 1001 ns); a real overlap is still an error.
TEST(Importer, TouchingStepsAreNotOverlapping) {
  TempDir d;
  auto doc = [](double second_ts) {
    return std::string(R"({"traceEvents": [)") +
           R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 0, "dur": 0.2, "args": {"stream": 7}},)" +
           R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0.0006, "dur": 1.0006},)" +
           R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": )" + std::to_string(second_ts) +
           R"(, "dur": 1.0}]})";
  };
  const trace::Workload w = trace::load_workload(d.write("touch.json", doc(1.0012)));
  ASSERT_EQ(w.iterations.size(), 2u);
  EXPECT_LE(w.iterations[0].ts_ns + w.iterations[0].dur_ns, w.iterations[1].ts_ns);
  try {
    trace::load_workload(d.write("overlap.json", doc(0.5)));
    ADD_FAILURE() << "a real overlap was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("must not overlap"), std::string::npos) << e.what();
  }
}

// Kineto writes nanoseconds as three decimals of microseconds since the epoch; a double holds
// 1.7e15 us only to 0.25 us, so the importer reads them from the text.
TEST(Importer, NanosecondTimestampsAreExact) {
  TempDir d;
  const std::string t = R"({"traceEvents": [)"
                        R"({"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 7, "ts": 1712195495519689.047, "dur": 0.5, "args": {"stream": 7}},)"
                        R"({"ph": "X", "cat": "kernel", "name": "b", "pid": 0, "tid": 7, "ts": 1712195495519689.301, "dur": 0.5, "args": {"stream": 7}},)"
                        R"({"ph": "X", "cat": "kernel", "name": "c", "pid": 0, "tid": 7, "ts": 1712195495519690.0004999, "dur": 0.5, "args": {"stream": 7}},)"
                        R"({"ph": "X", "cat": "kernel", "name": "d", "pid": 0, "tid": 7, "ts": 1712195495519691, "dur": 0.5, "args": {"stream": 7}},)"
                        R"({"ph": "X", "cat": "kernel", "name": "e", "pid": 0, "tid": 7, "ts": 1.7121954955196915e15, "dur": 0.5, "args": {"stream": 7}}]})";
  const trace::Workload w = trace::import_kineto(d.write("ns.json", t));
  ASSERT_EQ(w.gpu_ops.size(), 5u);
  EXPECT_EQ(w.base_ns, 1712195495519689047);
  EXPECT_EQ(w.gpu_ops[0].ts_ns, 0);
  EXPECT_EQ(w.gpu_ops[1].ts_ns, 254);   // as a double: 250
  EXPECT_EQ(w.gpu_ops[2].ts_ns, 953);   // the fourth decimal rounds: 0.0004999 us is 0 ns
  EXPECT_EQ(w.gpu_ops[3].ts_ns, 1953);  // integer microseconds are exact
  EXPECT_EQ(w.gpu_ops[4].ts_ns, 2453);  // an exponent: the double, exact here
  // A repeated "ts" replaces the first, exact value included.
  const std::string dup = R"({"traceEvents": [)"
                          R"({"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 7, "ts": 100, "dur": 0.5, "args": {"stream": 7}},)"
                          R"({"ph": "X", "cat": "kernel", "name": "b", "pid": 0, "tid": 7, "ts": 0.5, "ts": 500, "dur": 0.5, "args": {"stream": 7}}]})";
  const trace::Workload wd = trace::import_kineto(d.write("dup.json", dup));
  EXPECT_EQ(wd.base_ns, 100000);
  ASSERT_EQ(wd.gpu_ops.size(), 2u);
  EXPECT_EQ(wd.gpu_ops[1].ts_ns, 400000);
}

// Values that would silently change the prediction are errors naming the event.
TEST(Importer, RejectsOutOfRangeEventFields) {
  TempDir d;
  auto msg = [&](const std::string& text) {
    try {
      trace::load_workload(d.write("t.json", text));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  auto trace_with = [](const std::string& kernel_fields, const std::string& dist = "") {
    return "{" + dist + R"("traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, )" + kernel_fields + "}]}";
  };
  EXPECT_NE(msg(trace_with(R"("ts": 1, "dur": -3, "args": {"stream": 7})")).find("traceEvents[0] (\"k\"): \"dur\" = -3 is out of range"),
            std::string::npos);
  EXPECT_NE(msg(trace_with(R"("dur": 3, "args": {"stream": 7})")).find("missing \"ts\""), std::string::npos);
  // Ids of calls and syncs are checked as a GPU event's are (1e300 was cast, undefined).
  {
    const std::string t = R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 3, "args": {"stream": 7}},
      {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 7, "ts": 2, "dur": 0, "args": {"wait_on_stream": 1e300}}]})";
    EXPECT_NE(msg(t).find("traceEvents[1].args: \"wait_on_stream\" = 1e+300 is not an integer"), std::string::npos) << msg(t);
  }
  // A timestamp whose nanoseconds overflow an int64 (it was imported as base_ns INT64_MIN).
  EXPECT_NE(msg(trace_with(R"("ts": 9.3e15, "dur": 3, "args": {"stream": 7})"))
                .find("\"ts\" = 9.3e+15 is out of range (expected microseconds in [-9.2e+15, 9.2e+15])"),
            std::string::npos)
      << msg(trace_with(R"("ts": 9.3e15, "dur": 3, "args": {"stream": 7})"));
  EXPECT_NE(msg(trace_with(R"("ts": "1", "dur": 3, "args": {"stream": 7})")).find("\"ts\" must be a number"), std::string::npos);
  EXPECT_NE(msg(trace_with(R"("ts": 1, "dur": 3, "args": {"stream": "abc"})")).find("\"stream\" = \"abc\" is not an integer"),
            std::string::npos);
  EXPECT_NE(msg(trace_with(R"("ts": 1, "dur": 3, "args": [])")).find("\"args\" must be an object"), std::string::npos);
  const std::string k = R"("ts": 1, "dur": 3, "args": {"stream": 7})";
  EXPECT_NE(msg(trace_with(k, R"("distributedInfo": {"rank": 5, "world_size": 2},)")).find("distributedInfo: \"rank\" = 5 is out of range [0, 1]"),
            std::string::npos);
  EXPECT_NE(msg(trace_with(k, R"("distributedInfo": {"rank": 0, "world_size": 0},)"))
                .find("distributedInfo: \"world_size\" = 0 is out of range [1, 1000000]"),
            std::string::npos);
  // Not wrapped or truncated: 1e30 and 1.9 are not ranks.
  EXPECT_NE(msg(trace_with(k, R"("distributedInfo": {"rank": 0, "world_size": 1e30},)")).find("\"world_size\" = 1e+30 is not an integer"),
            std::string::npos)
      << msg(trace_with(k, R"("distributedInfo": {"rank": 0, "world_size": 1e30},)"));
  EXPECT_NE(msg(trace_with(k, R"("distributedInfo": {"rank": 1.9, "world_size": 2},)")).find("\"rank\" = 1.9 is not an integer"),
            std::string::npos);
  // Process groups' ranks are ranks of the job, each once; a rank's collectives are on
  // groups it belongs to.
  EXPECT_NE(msg(trace_with(k, R"("distributedInfo": {"rank": 0, "world_size": 2, "pg_config": [{"pg_name": "0", "ranks": [0, 1099511627776]}]},)"))
                .find("distributedInfo.pg_config[0].ranks[1]: \"rank\" = 1099511627776 is out of range [0, 1]"),
            std::string::npos);
  EXPECT_NE(msg(trace_with(k, R"("distributedInfo": {"rank": 0, "world_size": 2, "pg_config": [{"pg_name": "0", "ranks": [1, 1]}]},)"))
                .find("communicator \"0\": rank 1 is listed twice"),
            std::string::npos);
  EXPECT_NE(msg(trace_with(k, R"("distributedInfo": {"rank": 0, "world_size": 2, "pg_config": [{"pg_name": "0", "ranks": [0]}, {"pg_name": "0", "ranks": [1]}]},)"))
                .find("communicator \"0\": appears twice"),
            std::string::npos);
  // A span of more than 11.6 days is a broken timestamp (nanoseconds would overflow).
  {
    const std::string t = R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 3, "args": {"stream": 7}},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaFree", "pid": 1, "tid": 1, "ts": 9e15, "dur": 1}]})";
    EXPECT_NE(msg(t).find("traceEvents[1]: ends 9000000000 s after traceEvents[0] starts; a trace may span at most 11.6 days"), std::string::npos)
        << msg(t);
  }
  // Collective sizes whose bytes would overflow, or negative ones, are errors, not "unknown".
  EXPECT_NE(msg(trace_with(R"("ts": 1, "dur": 3, "args": {"stream": 7, "In msg nelems": 4611686018427387904})"))
                .find("traceEvents[0].args: \"In msg nelems\" = 4611686018427387904 is out of range [0, 140737488355328]"),
            std::string::npos);
  EXPECT_NE(msg(trace_with(R"("ts": 1, "dur": 3, "args": {"stream": 7, "Out msg nelems": -1})")).find("\"Out msg nelems\" = -1 is out of range"),
            std::string::npos);
  EXPECT_NE(msg(trace_with(R"("ts": 1, "dur": 3, "args": {"stream": 7, "Group size": -2})")).find("\"Group size\" = -2 is out of range"),
            std::string::npos);
  // A numeric string stream id is what some exporters write: accepted.
  EXPECT_EQ(msg(trace_with(R"("ts": 1, "dur": 3, "args": {"stream": "7"})")), "");
}

// Events the importer does not read (cpu_op, flows) are dropped while parsing, but the
// others keep their index in errors; a device is refused (reading /dev/zero never ended).
TEST(Importer, DroppedEventsKeepIndicesAndOnlyRegularFiles) {
  TempDir d;
  const std::string path = d.write("t.json", R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 2},
    {"ph": "s", "cat": "ac2g", "name": "launch", "pid": 1, "tid": 1, "ts": 1, "id": 5},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": -3, "args": {"stream": 7}}]})");
  try {
    trace::load_workload(path);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("traceEvents[2] (\"k\"): \"dur\" = -3 is out of range"), std::string::npos) << e.what();
  }
  try {
    trace::load_workload("/dev/null");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "/dev/null: is not a file or a pipe (a trace is read from a file, plain or gzip)");
  }
}

// Args the importer does not read are dropped while parsing, whatever their shape (arrays,
// objects, nested both ways, before and after the args it reads); the ones it reads are
// kept, in an array-of-events trace as in a traceEvents one.
TEST(Importer, UnreadArgsAreDroppedAndReadArgsKept) {
  TempDir d;
  const char* events = R"JSON([
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 0, "dur": 5,
     "args": {"External id": {"a": [1, {"b": [2, 3]}], "c": {}}, "cbid": 211, "correlation": 4}},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 9,
     "ts": 10, "dur": 20, "args": {"grid": [8, 1, 1], "device": 0, "block": [[640], {"x": 1}], "stream": 9,
     "est. achieved occupancy %": 3, "correlation": 4, "queued": null, "In msg nelems": 256, "context": {"id": [1]},
     "dtype": "Float", "Group size": 4, "Process Group Name": "pg", "Process Group Ranks": "[0, 1, 2, 3]", "shared memory": 0}}
  ])JSON";
  for (const std::string& text : {std::string(events), std::string(R"({"traceEvents": )") + events + "}"}) {
    const auto w = trace::import_kineto(d.write("t.json", text));
    ASSERT_EQ(w.gpu_ops.size(), 1u);
    EXPECT_EQ(w.streams[w.gpu_ops[0].stream].id, 9);
    EXPECT_EQ(w.threads[0].ops[0].gpu_op, 0);  // the launch found its kernel by correlation
    ASSERT_EQ(w.collectives.size(), 1u);
    EXPECT_EQ(w.collectives[0].kind, collective::Kind::all_gather);
    EXPECT_EQ(w.collectives[0].in_bytes, 1024u);
    EXPECT_EQ(w.collectives[0].group_size, 4);
    EXPECT_EQ(w.communicators[w.collectives[0].communicator].name, "pg");
    EXPECT_EQ(w.communicators[w.collectives[0].communicator].ranks, (std::vector<int>{0, 1, 2, 3}));
  }
  // A read arg of the wrong type is still reported, after dropped ones.
  try {
    trace::import_kineto(d.write("bad.json", R"([{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 3,
      "args": {"grid": [1, 1, 1], "stream": "seven"}}])"));
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("\"stream\""), std::string::npos) << e.what();
  }
}

// An NCCL kernel whose name and args give no operation (NCCL 2.19+'s ncclDevKernel_Generic
// without PyTorch's "Collective name") stays a kernel at its measured duration, with a note:
// it used to become a collective of no kind, which the replay moved as 0 bytes (free). The
// args' name wins over the kernel's.
TEST(Importer, NcclKernelOfNoKnownOperationKeepsItsMeasuredTime) {
  TempDir d;
  const std::string generic = R"J({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", "pid": 0,
     "tid": 9, "ts": 10, "dur": 20, "args": {"device": 0, "stream": 9, "In msg nelems": 256, "dtype": "Float", "Group size": 2)J";
  auto w = trace::import_kineto(d.write("g.json", "[" + generic + "}}]"));
  ASSERT_EQ(w.gpu_ops.size(), 1u);
  EXPECT_EQ(w.gpu_ops[0].kind, trace::GpuOpKind::kernel);
  EXPECT_EQ(w.gpu_ops[0].dur_ns, 20000);
  EXPECT_TRUE(w.collectives.empty());
  ASSERT_FALSE(w.notes.empty());
  EXPECT_NE(w.notes[0].find("1 NCCL kernel(s) say neither in their name"), std::string::npos) << w.notes[0];
  w = trace::import_kineto(d.write("n.json", "[" + generic + R"(, "Collective name": "allreduce"}}])"));
  ASSERT_EQ(w.collectives.size(), 1u);
  EXPECT_EQ(w.collectives[0].kind, collective::Kind::all_reduce);
}

// A PyTorch execution trace (host graph: "schema" and "nodes", no "traceEvents") is named as
// such; the generic "not a Chrome trace" check ran first and hid it.
TEST(Importer, ExecutionTraceIsNamed) {
  TempDir d;
  try {
    trace::import_kineto(d.write("et.json", R"({"schema": "1.0.1", "pid": 1, "nodes": []})"));
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("et.json: top level: this is a PyTorch execution trace (host graph), not a Kineto trace"),
              std::string::npos)
        << e.what();
  }
}

// Two GPU events with one correlation id (an edited or merged trace): the second has no
// launch, and a note says why (only "a launch call has no kernel" was said, misleading).
TEST(Importer, SharedCorrelationIdsAreNoted) {
  TempDir d;
  const auto w = trace::import_kineto(d.write("c.json", R"({"traceEvents": [
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 0, "dur": 5, "args": {"correlation": 4}},
    {"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 7, "ts": 10, "dur": 20, "args": {"stream": 7, "correlation": 4}},
    {"ph": "X", "cat": "kernel", "name": "b", "pid": 0, "tid": 7, "ts": 40, "dur": 20, "args": {"stream": 7, "correlation": 4}}]})"));
  ASSERT_EQ(w.gpu_ops.size(), 2u);
  EXPECT_EQ(w.gpu_ops[0].launch_op, 0);
  EXPECT_LT(w.gpu_ops[1].launch_op, 0);
  ASSERT_EQ(w.notes.size(), 1u);
  EXPECT_EQ(w.notes[0].rfind("1 GPU event(s) share their \"correlation\" id with an earlier one", 0), 0u) << w.notes[0];
  // A CUDA graph's kernels all carry its launch's id (CUPTI): no note.
  const auto g = trace::import_kineto(d.write("g.json", R"({"traceEvents": [
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 1, "tid": 1, "ts": 0, "dur": 5, "args": {"correlation": 4}},
    {"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 7, "ts": 10, "dur": 20, "args": {"stream": 7, "correlation": 4}},
    {"ph": "X", "cat": "kernel", "name": "b", "pid": 0, "tid": 7, "ts": 40, "dur": 20, "args": {"stream": 7, "correlation": 4}}]})"));
  EXPECT_TRUE(g.notes.empty()) << g.notes[0];
}

// The JSON parser ends its input at a NUL byte; what follows one is an error, not dropped
// (a trace, and any JSON input: topology, parameters, IR). A NUL or blanks alone at the end
// are harmless.
TEST(Importer, TextAfterANulByteIsAnError) {
  TempDir d;
  const std::string trace = R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 3, "args": {"stream": 7}}]})";
  const std::string tail = std::string(1, '\0') + "more";
  try {
    trace::import_kineto(d.write("t.json", trace + tail));
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("t.json: byte " + std::to_string(trace.size()) + ": data after the end of the JSON text"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(trace::import_kineto(d.write("ok.json", trace + std::string(1, '\0') + "\n")).gpu_ops.size(), 1u);
  std::istringstream params(R"({"params": {}})" + tail);
  try {
    parse_json_input(params, "p.json");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("p.json: byte 14: data after the end of the JSON text"), std::string::npos) << e.what();
  }
}

// A process group's ranks must agree wherever the trace gives them (in any order):
// distributedInfo.pg_config and a collective's args, or two collectives' args. Which is
// right cannot be told, and either would be replayed without a word.
TEST(Importer, ProcessGroupRanksMustAgree) {
  TempDir d;
  auto trace = [&](const std::string& name, const std::string& pg_config, const std::string& first, const std::string& second) {
    auto k = [](int corr, double ts, const std::string& ranks) {
      return R"x({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": )x" + std::to_string(ts) +
             R"x(, "dur": 5, "args": {"correlation": )x" + std::to_string(corr) + R"x(}},
        {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", "pid": 0, "tid": 20, "ts": )x" +
             std::to_string(ts + 7) + R"x(, "dur": 50, "args": {"device": 0, "stream": 20, "correlation": )x" + std::to_string(corr) +
             R"x(, "Collective name": "allreduce", "In msg nelems": 1000, "dtype": "Float", "Group size": 2, "Process Group Name": "0", "Process Group Ranks": ")x" +
             ranks + R"x("}})x";
    };
    return d.write(name, R"x({"distributedInfo": {"rank": 0, "world_size": 3)x" + pg_config + R"x(}, "traceEvents": [)x" + k(1, 0, first) + ",\n" +
                             k(2, 100, second) + "]}");
  };
  const std::string cfg = R"x(, "pg_config": [{"pg_name": "0", "backend_config": "cuda:nccl", "pg_size": 2, "ranks": [0, 1]}])x";
  EXPECT_EQ(trace::import_kineto(trace("ok.json", cfg, "[0, 1]", "[1, 0]")).communicators[0].ranks, (std::vector<int>{0, 1}));
  try {
    trace::import_kineto(trace("size.json", R"x(, "pg_config": [{"pg_name": "0", "backend_config": "cuda:nccl", "pg_size": 3, "ranks": [0, 1]}])x",
                               "[0, 1]", "[0, 1]"));
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("size.json: distributedInfo.pg_config[0]: \"pg_size\" = 3 but \"ranks\" lists 2 ranks"), std::string::npos)
        << e.what();
  }
  try {
    trace::import_kineto(trace("cfg.json", cfg, "[0, 1]", "[0, 2]"));
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cfg.json: traceEvents[3].args: \"Process Group Ranks\" = \"[0, 2]\" but process group \"0\" has ranks [0, 1] in distributedInfo.pg_config"),
              std::string::npos)
        << e.what();
  }
  try {
    trace::import_kineto(trace("args.json", "", "[0, 2]", "[0, 1]"));
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("args.json: traceEvents[3].args: \"Process Group Ranks\" = \"[0, 1]\" but process group \"0\" has ranks [0, 2] in an earlier collective"),
              std::string::npos)
        << e.what();
  }
}

// JSON nested 100,000 levels deep (200 KB) overflowed the stack when the value was copied
// or printed: every JSON input is refused past 512 levels, naming the byte; 512 are read.
// An error quotes at most 80 characters of a value.
TEST(Importer, DeepNestingIsRefusedAndLongValuesAreCut) {
  TempDir d;
  auto msg = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string deep(100000, '['), closed(100000, ']');
  // A rank nested in arrays: the root object and distributedInfo are levels 1 and 2, so the
  // 511th bracket opens level 513.
  const std::string rank_prefix = R"({"distributedInfo": {"rank": )";
  const std::string rank = d.write("deeprank.json", rank_prefix + deep + "0" + closed + R"(}, "traceEvents": []})");
  EXPECT_EQ(msg([&] { trace::load_workload(rank); }),
            rank + ": byte " + std::to_string(rank_prefix.size() + 511) + ": nesting deeper than 512 levels of arrays and objects");
  // A kernel's stream: root object, traceEvents array, event, args are levels 1 to 4.
  const std::string stream_prefix = R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {"stream": )";
  const std::string stream = d.write("deepstream.json", stream_prefix + deep + "7" + closed + "}}]}");
  EXPECT_EQ(msg([&] { trace::import_kineto(stream); }),
            stream + ": byte " + std::to_string(stream_prefix.size() + 509) + ": nesting deeper than 512 levels of arrays and objects");
  // In an arg the importer drops, and in a gzip file, the same.
  const std::string dropped = d.write("dropped.json", R"([{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {"stream": 7, "grid": )" +
                                                         deep + closed + "}}]");
  EXPECT_NE(msg([&] { trace::import_kineto(dropped); }).find(": nesting deeper than 512 levels"), std::string::npos);
  // 512 levels are read: the value is refused for what it is, and quoted cut short.
  const std::string ok_depth = d.write("512.json", stream_prefix + std::string(508, '[') + "7" + std::string(508, ']') + "}}]}");
  const std::string shown = msg([&] { trace::import_kineto(ok_depth); });
  EXPECT_EQ(shown, ok_depth + ": traceEvents[0].args: \"stream\" = " + std::string(80, '[') + "... is not an integer in [-2147483648, 1099511627776]");
  // A long string value is cut to 80 characters too.
  const std::string long_stream = d.write("long.json", R"([{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {"stream": ")" +
                                                           std::string(100000, 'a') + "\"}}]");
  EXPECT_EQ(msg([&] { trace::import_kineto(long_stream); }),
            long_stream + ": traceEvents[0].args: \"stream\" = \"" + std::string(79, 'a') + "... is not an integer in [-2147483648, 1099511627776]");
  // Files parsed by parse_json_input (topologies, parameters, IR files, cases): the same
  // limit, with the byte for a file and the path for a stream that cannot tell it.
  std::istringstream topo(R"({"nodes": )" + deep + closed + "}");
  EXPECT_EQ(msg([&] { parse_json_input(topo, "topo.json"); }), "topo.json: byte 522: nesting deeper than 512 levels of arrays and objects");
  std::istringstream ok512(std::string(512, '[') + std::string(512, ']'));
  EXPECT_EQ(msg([&] { parse_json_input(ok512, "ok.json"); }), "no error");
  const std::string ir = d.write("deep.ir.json", R"({"composim_workload": 1, "notes": )" + deep + closed + "}");
  EXPECT_NE(msg([&] { trace::load_workload(ir); }).find("deep.ir.json: byte "), std::string::npos);
}

// A collective whose "Group size" is smaller than the job but whose ranks the trace does not
// list ran over the whole job: its group is now the rank's block of that many consecutive
// ranks, with a note (as a layout that cannot be tiled is replayed). A list cut short whose
// shown ranks are not in that block, sizes that differ on one group, and a group larger than
// the job are errors naming the event.
TEST(Importer, GroupSizeWithoutRanksIsConsecutiveGroups) {
  TempDir d;
  // Rank `rank` of `world`; one all-reduce per entry of `groups` (its "Group size") on
  // process group "pg", with `ranks` as its "Process Group Ranks" unless empty.
  auto trace = [&](int rank, int world, const std::vector<int>& groups, const std::string& ranks = "") {
    std::string events;
    for (size_t k = 0; k < groups.size(); ++k) {
      const std::string corr = std::to_string(k + 1), ts = std::to_string(100 * k);
      events += std::string(k ? ",\n" : "") + R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": )" + ts +
                R"(, "dur": 5, "args": {"correlation": )" + corr + R"x(}},
        {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", "pid": 0, "tid": 20, "ts": )x" +
                ts + R"(, "dur": 50, "args": {"device": 0, "stream": 20, "correlation": )" + corr +
                R"(, "In msg nelems": 1000, "dtype": "Float", "Process Group Name": "pg", "Group size": )" + std::to_string(groups[k]) +
                (ranks.empty() ? "" : R"(, "Process Group Ranks": ")" + ranks + "\"") + "}}";
    }
    return d.write("t.json", R"({"distributedInfo": {"rank": )" + std::to_string(rank) + R"(, "world_size": )" + std::to_string(world) +
                                 R"(}, "traceEvents": [)" + events + "]}");
  };
  auto error = [](const std::string& path) {
    try {
      trace::import_kineto(path);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  {
    const std::string path = trace(2, 4, {2, 2});
    const auto w = trace::import_kineto(path);
    ASSERT_EQ(w.collectives.size(), 2u);
    EXPECT_EQ(w.communicators[w.collectives[0].communicator].ranks, (std::vector<int>{2, 3}));
    EXPECT_NE(std::find(w.notes.begin(), w.notes.end(),
                        "process group \"pg\" has 2 of the job's 4 ranks (\"Group size\") but the trace does not list them: taken as groups of 2 "
                        "consecutive ranks ([2, 3] for rank 2)"),
              w.notes.end());
  }
  // The whole job's size, or no size: all ranks, as before, without a note.
  EXPECT_TRUE(trace::import_kineto(trace(2, 4, {4})).communicators[0].ranks.empty());
  EXPECT_TRUE(trace::import_kineto(trace(2, 4, {0})).communicators[0].ranks.empty());
  // A list cut short that continues with its stride is completed; one that does not is
  // taken as consecutive ranks where its shown ranks are in that block, else refused.
  EXPECT_EQ(trace::import_kineto(trace(0, 8, {4}, "[0, 2, ...]")).communicators[0].ranks, (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(trace::import_kineto(trace(5, 8, {4}, "[4, 5, 7, ...]")).communicators[0].ranks, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(error(trace(0, 8, {4}, "[0, 1, 5, ...]")),
            d.path() + "/t.json: traceEvents[1].args: \"Process Group Ranks\" is cut short, its ranks do not continue with one stride, and it shows "
                       "rank 5, which is not in rank 0's group of 4 consecutive ranks ([0, 1, 2, 3]): the group's members cannot be told");
  EXPECT_EQ(error(trace(0, 4, {2, 4})), d.path() + "/t.json: traceEvents[3].args: \"Group size\" = 4 but that of traceEvents[1], on the same "
                                                   "process group \"pg\", is 2 (the trace does not list the group's ranks)");
  EXPECT_EQ(error(trace(0, 6, {4})), d.path() + "/t.json: traceEvents[1].args: \"Group size\" = 4 of the job's 6 ranks, and the trace does not list "
                                                "the group's ranks (\"Process Group Ranks\"): groups of 4 consecutive ranks cannot make up the job");
  // Larger than the job: refused (an all_gather's scale came from it).
  EXPECT_EQ(error(trace(0, 2, {8})), d.path() + "/t.json: traceEvents[1].args: \"Group size\" = 8 but the job has 2 ranks "
                                                "(distributedInfo.world_size): a process group is at most the whole job");
}

// In the IR a collective's group_size is its communicator's size (the job's where the
// communicator lists no ranks): group_size 8 on ranks [0, 1] scaled an all_gather by 4.
TEST(Importer, IrGroupSizeMustBeTheCommunicators) {
  TempDir d;
  const auto w = trace::import_kineto(d.write("t.json", kCurrent));
  auto error = [&](const std::function<void(nlohmann::json&)>& edit) {
    auto doc = nlohmann::json::parse(trace::workload_to_json(w));
    edit(doc);
    try {
      trace::load_workload(d.write("w.ir.json", doc.dump()));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error([](nlohmann::json&) {}), "no error");
  EXPECT_EQ(error([](nlohmann::json& doc) { doc["collectives"][0]["group_size"] = 0; }), "no error");
  EXPECT_EQ(error([](nlohmann::json& doc) { doc["collectives"][0]["group_size"] = 8; }),
            d.path() + "/w.ir.json: collectives[0]: group_size 8 but communicator \"0\" has 2 ranks: they must agree");
  EXPECT_EQ(error([](nlohmann::json& doc) {
              doc["world_size"] = 4;
              doc["communicators"][0]["ranks"] = nlohmann::json::array();
            }),
            d.path() + "/w.ir.json: collectives[0]: group_size 2 but communicator \"0\" has no ranks listed, so all 4 ranks of the job (world_size): "
                       "they must agree");
}

// A GPU event's or CUDA call's "name" that is not a string: an NCCL kernel named 5 silently
// stopped being a collective. An error naming the event.
TEST(Importer, EventNameMustBeAString) {
  TempDir d;
  auto error = [&](const std::string& kernel_name, const std::string& call_name) {
    try {
      trace::import_kineto(d.write("t.json", R"([{"ph": "X", "cat": "cuda_runtime", "name": )" + call_name +
                                                 R"(, "pid": 1, "tid": 1, "ts": 0, "dur": 5, "args": {"correlation": 1}},
        {"ph": "X", "cat": "kernel", "name": )" + kernel_name + R"(, "pid": 0, "tid": 7, "ts": 10, "dur": 50, "args": {"stream": 7, "correlation": 1}}])"));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error(R"("ncclKernel_AllReduce_RING_LL_Sum_float")", R"("cudaLaunchKernel")"), "no error");
  EXPECT_EQ(error("5", R"("cudaLaunchKernel")"), d.path() + "/t.json: traceEvents[1]: \"name\" must be a string, not 5");
  EXPECT_EQ(error(R"(["ncclKernel_AllReduce"])", R"("cudaLaunchKernel")"),
            d.path() + "/t.json: traceEvents[1]: \"name\" must be a string, not [\"ncclKernel_AllReduce\"]");
  EXPECT_EQ(error(R"("gemm")", "null"), d.path() + "/t.json: traceEvents[0]: \"name\" must be a string, not null");
  // An NCCL 2.19+ kernel name with NVLS_TREE in LL, which NCCL never runs.
  EXPECT_EQ(error(R"x("ncclDevKernel_AllReduce_Sum_f32_NVLS_TREE_LL(ncclDevKernelArgsStorage<4096ul>)")x", R"("cudaLaunchKernel")"),
            d.path() + "/t.json: traceEvents[1].name: kernel \"ncclDevKernel_AllReduce_Sum_f32_NVLS_TREE_LL(ncclDevKernelArgsStorage<4096ul>)\" names NVLS_TREE in LL, "
                       "which NCCL runs only in Simple");
  // A CPU annotation (where step marks are) too: a ProfilerStep named 7 silently dropped its step.
  try {
    trace::import_kineto(d.write("s.json", R"([{"ph": "X", "cat": "user_annotation", "name": 7, "pid": 1, "tid": 1, "ts": 0, "dur": 100},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 0, "dur": 5, "args": {"correlation": 1}},
        {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 10, "dur": 50, "args": {"stream": 7, "correlation": 1}}])"));
    ADD_FAILURE() << "a step mark named 7 was read";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), d.path() + "/s.json: traceEvents[0]: \"name\" must be a string, not 7");
  }
}

// A single send or receive names its peer's global rank (PyTorch 2.4+: "Dst Rank" on a
// send, "Src Rank" on a receive, a number or a numeric string); the IR keeps it. A peer
// that is not a rank, is the trace's own rank or is outside the job is an error naming
// the event; so is an IR peer without a direction.
TEST(Importer, SendAndReceiveNameTheirPeer) {
  TempDir d;
  auto trace = [&](const std::string& send_peer, const std::string& recv_peer) {
    const std::string kernel = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";
    return R"({"distributedInfo": {"rank": 1, "world_size": 4}, "traceEvents": [
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 0, "dur": 5, "args": {"correlation": 1}},
      {"ph": "X", "cat": "kernel", "name": ")" + kernel + R"(", "pid": 0, "tid": 9, "ts": 10, "dur": 20,
       "args": {"device": 0, "stream": 9, "correlation": 1, "Collective name": "send", "In msg nelems": 256, "dtype": "Float",
                "Group size": 4, "Process Group Name": "0", "Process Group Ranks": "[0, 1, 2, 3]", "Dst Rank": )" + send_peer + R"(}},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 40, "dur": 5, "args": {"correlation": 2}},
      {"ph": "X", "cat": "kernel", "name": ")" + kernel + R"(", "pid": 0, "tid": 9, "ts": 50, "dur": 20,
       "args": {"device": 0, "stream": 9, "correlation": 2, "Collective name": "recv", "In msg nelems": 256, "dtype": "Float",
                "Group size": 4, "Process Group Name": "0", "Process Group Ranks": "[0, 1, 2, 3]", "Src Rank": )" + recv_peer + R"(}}]})";
  };
  const auto w = trace::import_kineto(d.write("t.json", trace("2", "\"0\"")));
  ASSERT_EQ(w.collectives.size(), 2u);
  EXPECT_EQ(w.collectives[0].kind, collective::Kind::send_recv);
  EXPECT_EQ(w.collectives[0].p2p_role, trace::P2pRole::send);
  EXPECT_EQ(w.collectives[0].peer, 2);
  EXPECT_EQ(w.collectives[1].p2p_role, trace::P2pRole::recv);
  EXPECT_EQ(w.collectives[1].peer, 0);
  const auto back = trace::load_workload(d.write("t.ir.json", trace::workload_to_json(w)));
  EXPECT_EQ(back.collectives[0].p2p_role, trace::P2pRole::send);
  EXPECT_EQ(back.collectives[0].peer, 2);
  EXPECT_EQ(back.collectives[1].p2p_role, trace::P2pRole::recv);
  EXPECT_EQ(back.collectives[1].peer, 0);

  auto error = [&](const std::string& text) { return import_error(d, text); };
  EXPECT_EQ(error(trace("\"two\"", "0")), d.path() + "/bad.json: traceEvents[1].args: \"Dst Rank\" = \"two\" is not a rank (expected the destination's global rank, e.g. 1)");
  EXPECT_EQ(error(trace("2", "-1")), d.path() + "/bad.json: traceEvents[3].args: \"Src Rank\" = -1 is not a rank (expected the source's global rank, e.g. 1)");
  EXPECT_EQ(error(trace("1", "0")),
            d.path() + "/bad.json: traceEvents[1].args: \"Dst Rank\" = 1 is this trace's own rank: a send needs another rank of the job");
  EXPECT_EQ(error(trace("2", "4")),
            d.path() + "/bad.json: traceEvents[3].args: \"Src Rank\" = 4 is not a rank of the job (world size 4): a receive needs another rank of the job");
  std::string pair_group = trace("2", "0");
  for (auto at = pair_group.find("[0, 1, 2, 3]"); at != std::string::npos; at = pair_group.find("[0, 1, 2, 3]")) pair_group.replace(at, 12, "[0, 1]");
  for (auto at = pair_group.find("\"Group size\": 4"); at != std::string::npos; at = pair_group.find("\"Group size\": 4")) pair_group.replace(at, 15, "\"Group size\": 2");
  EXPECT_EQ(error(pair_group), d.path() + "/bad.json: traceEvents[1].args: \"Dst Rank\" = 2 is not a rank of process group \"0\" (ranks [0, 1])");
  // "Send" and "Recv" as some releases spell them; without distributedInfo the peers count
  // towards the job's size, as the groups do.
  std::string no_info = trace("2", "3");
  no_info.replace(no_info.find("\"distributedInfo\": {\"rank\": 1, \"world_size\": 4}, "), 49, "");
  for (auto at = no_info.find("\"send\""); at != std::string::npos; at = no_info.find("\"send\"")) no_info.replace(at, 6, "\"Send\"");
  // A send that names no peer (a batched one) is still a send, in the IR too.
  std::string peerless = trace("2", "0");
  peerless.erase(peerless.find(", \"Dst Rank\": 2"), 15);
  const auto batched = trace::import_kineto(d.write("peerless.json", peerless));
  EXPECT_EQ(batched.collectives[0].p2p_role, trace::P2pRole::send);
  EXPECT_EQ(batched.collectives[0].peer, -1);
  const auto batched_ir = trace::load_workload(d.write("peerless.ir.json", trace::workload_to_json(batched)));
  EXPECT_EQ(batched_ir.collectives[0].p2p_role, trace::P2pRole::send);
  EXPECT_EQ(batched_ir.collectives[0].peer, -1);
  const auto guessed = trace::import_kineto(d.write("no_info.json", no_info));
  EXPECT_EQ(guessed.world_size, 4);  // the group of 4
  EXPECT_EQ(guessed.collectives[0].p2p_role, trace::P2pRole::send);
  EXPECT_EQ(guessed.collectives[0].peer, 2);

  auto doc = nlohmann::json::parse(trace::workload_to_json(w));
  doc["collectives"][0].erase("p2p");
  try {
    trace::load_workload(d.write("w.ir.json", doc.dump()));
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("collectives[0]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("\"p2p\""), std::string::npos) << e.what();
  }
  doc["collectives"][0]["p2p"] = "sideways";
  try {
    trace::load_workload(d.write("w.ir.json", doc.dump()));
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("collectives[0].p2p: \"sideways\" is not send or recv"), std::string::npos) << e.what();
  }
}

// Kineto before 2025 copies a send's "Collective name" and sizes to its kernel but not its
// peer: that stays on the record_param_comms CPU op whose "External id" the kernel repeats.
TEST(Importer, SendPeerFromItsRecordParamCommsOp) {
  TempDir d;
  auto trace = [&](const std::string& dst) {
    return R"J({"distributedInfo": {"rank": 1, "world_size": 4}, "traceEvents": [
      {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 0, "dur": 8,
       "args": {"External id": 77, "Collective name": "send", "Rank": 1, "Dst Rank": )J" + dst + R"J(, "Group size": 4}},
      {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 20, "dur": 8,
       "args": {"External id": 78, "Collective name": "send", "Dst Rank": 0, "Group size": 4}},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1, "dur": 5, "args": {"correlation": 1, "External id": 77}},
      {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 9, "ts": 10, "dur": 20,
       "args": {"device": 0, "stream": 9, "correlation": 1, "External id": 77, "Collective name": "send", "In msg nelems": 256,
                "dtype": "Float", "Group size": 4, "Process Group Name": "0", "Process Group Ranks": "[0, 1, 2, 3]"}}]})J";
  };
  const auto w = trace::import_kineto(d.write("t.json", trace("3")));
  ASSERT_EQ(w.collectives.size(), 1u);
  EXPECT_EQ(w.collectives[0].p2p_role, trace::P2pRole::send);
  EXPECT_EQ(w.collectives[0].peer, 3);  // the op of External id 77, not 78's
  EXPECT_EQ(import_error(d, trace("1")), d.path() + "/bad.json: traceEvents[0].args: \"Dst Rank\" = 1 is this trace's own rank: a send needs another rank of the job");
  // An id not given exactly matches nothing ("77abc" is not 77); two ops of the kernel's id
  // giving different peers are an error, not the first one's.
  std::string loose = trace("3");
  loose.replace(loose.find("\"External id\": 77,"), 18, "\"External id\": \"77abc\",");
  EXPECT_EQ(trace::import_kineto(d.write("loose.json", loose)).collectives[0].peer, -1);
  std::string long_id = trace("3");  // 19 digits: an int64, as a string
  long_id.replace(long_id.find("\"External id\": 77,"), 18, "\"External id\": \"1234567890123456789\",");
  long_id.replace(long_id.find("\"External id\": 77,"), 18, "\"External id\": 1234567890123456789,");
  EXPECT_EQ(trace::import_kineto(d.write("long_id.json", long_id)).collectives[0].peer, 3);
  std::string twice = trace("3");
  twice.replace(twice.find("\"External id\": 78,"), 18, "\"External id\": 77,");
  EXPECT_NE(import_error(d, twice).find("traceEvents[3].args: \"External id\" 77 is that of two record_param_comms giving different \"Dst Rank\""),
            std::string::npos)
      << import_error(d, twice);
}

// A batched send/recv (batch_isend_irecv): NCCL launches one kernel at ncclGroupEnd, after
// each send's and receive's record_param_comms has ended, so the kernel names no peer and
// repeats none of their "External id"s (pytorch/pytorch#194693). Its parts are the
// record_param_comms no kernel repeats the id of, recorded by the launching thread since its
// previous send/recv kernel launch, in order; a single send keeps its own kernel. The IR
// keeps the parts.
TEST(Importer, BatchedSendRecvTakesItsPartsFromRecordParamComms) {
  TempDir d;
  auto record = [](int ts, int id, const char* name, const char* peer_key, const std::string& peer, int nelems, const char* pg = "0") {
    return R"J({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": )J" + std::to_string(ts) +
           R"J(, "dur": 1, "args": {"External id": )J" + std::to_string(id) + R"J(, "Collective name": ")J" + name + R"J(", ")J" + peer_key +
           "\": " + peer + R"J(, "In msg nelems": )J" + std::to_string(nelems) + R"J(, "dtype": "Float", "Group size": 3, "Process Group Name": ")J" +
           pg + R"J(", "Process Group Ranks": "[0, 1, 2]"}},)J";
  };
  auto launch = [](int ts, int corr, int id, const std::string& args) {
    return R"J({"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernelEx", "pid": 1, "tid": 1, "ts": )J" + std::to_string(ts) +
           R"J(, "dur": 3, "args": {"correlation": )J" + std::to_string(corr) + R"J(}},
      {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 9, "ts": )J" +
           std::to_string(ts + 10) + R"J(, "dur": 20, "args": {"device": 0, "stream": 9, "correlation": )J" + std::to_string(corr) +
           R"J(, "External id": )J" + std::to_string(id) + args + "}}";
  };
  auto trace = [&](const std::string& first_peer, const char* second_pg = "0") {
    return R"J({"distributedInfo": {"rank": 1, "world_size": 3}, "traceEvents": [)J" + record(0, 50, "send", "Dst Rank", first_peer, 256) +
           record(2, 51, "recv", "Src Rank", "0", 512, second_pg) + launch(5, 1, 52, "") + "," + record(100, 53, "recv", "Src Rank", "2", 128) +
           launch(105, 2, 54, "") + "," + record(150, 70, "recv", "Src Rank", "0", 32) + record(200, 60, "send", "Dst Rank", "0", 64) +
           launch(202, 3, 60, R"J(, "Collective name": "send", "In msg nelems": 64, "dtype": "Float", "Group size": 3, "Process Group Name": "0")J") + "," +
           record(300, 71, "send", "Dst Rank", "2", 16) + launch(305, 4, 72, "") + "]}";
  };
  const auto w = trace::import_kineto(d.write("t.json", trace("2")));
  ASSERT_EQ(w.collectives.size(), 4u);
  const auto& a = w.collectives[0];
  EXPECT_EQ(a.kind, collective::Kind::send_recv);
  EXPECT_EQ(a.p2p_role, trace::P2pRole::none);
  EXPECT_EQ(a.peer, -1);
  ASSERT_EQ(a.batch.size(), 2u);
  EXPECT_EQ(a.batch[0].role, trace::P2pRole::send);
  EXPECT_EQ(a.batch[0].peer, 2);
  EXPECT_EQ(a.batch[0].in_bytes, 1024u);
  EXPECT_EQ(a.batch[1].role, trace::P2pRole::recv);
  EXPECT_EQ(a.batch[1].peer, 0);
  EXPECT_EQ(a.batch[1].in_bytes, 2048u);
  EXPECT_EQ(a.in_bytes, 3072u);
  EXPECT_EQ(w.communicators[a.communicator].name, "0");
  EXPECT_EQ(w.communicators[a.communicator].ranks, (std::vector<int>{0, 1, 2}));
  ASSERT_EQ(w.collectives[1].batch.size(), 1u);  // the next launch's: only what came after the first
  EXPECT_EQ(w.collectives[1].batch[0].peer, 2);
  EXPECT_EQ(w.collectives[1].batch[0].in_bytes, 512u);
  EXPECT_TRUE(w.collectives[2].batch.empty());  // a single send: its op's id is its kernel's
  EXPECT_EQ(w.collectives[2].p2p_role, trace::P2pRole::send);
  EXPECT_EQ(w.collectives[2].peer, 0);
  // A record that no kernel repeats the id of but a single send's launch follows is no
  // batch's: the next batch has only its own part.
  ASSERT_EQ(w.collectives[3].batch.size(), 1u);
  EXPECT_EQ(w.collectives[3].batch[0].in_bytes, 64u);
  EXPECT_NE(std::find(w.notes.begin(), w.notes.end(),
                      "3 batched send/recv kernel(s) (batch_isend_irecv) take the peers and sizes of their 4 sends and receives from the "
                      "record_param_comms their thread recorded before launching them"),
            w.notes.end());
  // The IR keeps the parts, and checks them.
  const auto back = trace::load_workload(d.write("t.ir.json", trace::workload_to_json(w)));
  ASSERT_EQ(back.collectives[0].batch.size(), 2u);
  EXPECT_EQ(back.collectives[0].batch[1].in_bytes, 2048u);
  EXPECT_EQ(trace::workload_to_json(back).substr(trace::workload_to_json(back).find("\"collectives\"")),
            trace::workload_to_json(w).substr(trace::workload_to_json(w).find("\"collectives\"")));
  auto doc = nlohmann::json::parse(trace::workload_to_json(w));
  doc["collectives"][0]["batch"][1]["peer"] = 1;
  try {
    trace::load_workload(d.write("bad.ir.json", doc.dump()));
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), d.path() + "/bad.ir.json: collectives[0].batch[1]: peer 1 is this trace's own rank: a receive needs another rank of the job");
  }
  doc = nlohmann::json::parse(trace::workload_to_json(w));
  doc["collectives"][0]["in_bytes"] = 5;
  try {
    trace::load_workload(d.write("bad2.ir.json", doc.dump()));
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), d.path() + "/bad2.ir.json: collectives[0].in_bytes: 5 but its batch's parts add up to 3072 bytes: they must agree");
  }
  // A part's peer is checked where it is given; a batch is of one process group.
  EXPECT_EQ(import_error(d, trace("1")), d.path() + "/bad.json: traceEvents[0].args: \"Dst Rank\" = 1 is this trace's own rank: a send needs another rank of the job");
  EXPECT_EQ(import_error(d, trace("-3")), d.path() + "/bad.json: traceEvents[0].args: \"Dst Rank\" = -3 is not a rank (expected the destination's global rank, e.g. 1)");
  EXPECT_EQ(import_error(d, trace("2", "7")),
            d.path() + "/bad.json: traceEvents[1].args: \"Process Group Name\" = \"7\" but \"0\" on traceEvents[0], a send or receive of the same batched "
                       "kernel (traceEvents[3]): a batch is of one process group");
  auto edited = [&](std::string t, const std::string& from, const std::string& to, int nth = 1) {
    size_t at = t.find(from);
    while (--nth > 0 && at != std::string::npos) at = t.find(from, at + 1);
    return at == std::string::npos ? std::string("not found: ") + from : t.replace(at, from.size(), to);
  };
  EXPECT_EQ(import_error(d, edited(trace("2"), "\"External id\": 52", "\"External id\": 52, \"Process Group Name\": \"7\"")),
            d.path() + "/bad.json: traceEvents[3].args: \"Process Group Name\" = \"7\" but its sends and receives (traceEvents[0], ...) are on \"0\": a "
                       "batch is of one process group");
  EXPECT_EQ(import_error(d, edited(trace("2"), "\"[0, 1, 2]\"", "\"[0, x]\"", 2)),
            d.path() + "/bad.json: traceEvents[1].args: \"Process Group Ranks\" = \"[0, x]\" is not a list of ranks (expected e.g. \"[0, 1]\")");
  // A rank is given exactly, and a batch's size is at most 2^50 bytes (the IR's bound).
  EXPECT_EQ(import_error(d, trace("\"2a\"")),
            d.path() + "/bad.json: traceEvents[0].args: \"Dst Rank\" = \"2a\" is not a rank (expected the destination's global rank, e.g. 1)");
  std::string huge = edited(edited(trace("2"), "\"In msg nelems\": 256", "\"In msg nelems\": 140737488355328"), "\"In msg nelems\": 512",
                            "\"In msg nelems\": 140737488355328");
  huge = edited(edited(huge, "\"Float\"", "\"Double\""), "\"Float\"", "\"Double\"");
  EXPECT_EQ(import_error(d, huge), d.path() + "/bad.json: traceEvents[3].args: its 2 sends and receives (traceEvents[0], ...) add up to 2251799813685248 bytes, more than 2^50");
  // A record at its launch's own timestamp is the launch's. A kernel of another library
  // launched between records and their batched kernel (PyTorch's NaN check of a send) leaves
  // them pending; a launch whose kernel the trace lost ends them (counted, with a note), and
  // the batched kernel after it is unnamed.
  EXPECT_EQ(trace::import_kineto(d.write("at.json", edited(trace("2"), "\"ts\": 100,", "\"ts\": 105,"))).collectives[1].batch.size(), 1u);
  const auto nan_check = trace::import_kineto(d.write("nan.json", edited(trace("2"), "]}", R"J(,
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 302, "dur": 2, "args": {"correlation": 9}},
      {"ph": "X", "cat": "kernel", "name": "checkForNaN", "pid": 0, "tid": 7, "ts": 400, "dur": 20, "args": {"device": 0, "stream": 7, "correlation": 9}}]})J")));
  ASSERT_EQ(nan_check.collectives.size(), 4u);
  EXPECT_EQ(nan_check.collectives[3].batch.size(), 1u);
  EXPECT_EQ(nan_check.p2p_records_without_kernel, 1u);  // the record at 150, before the single send
  const auto lost = trace::import_kineto(d.write("lost.json", edited(trace("2"), "]}", R"J(,
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 302, "dur": 2, "args": {"correlation": 9}}]})J")));
  ASSERT_EQ(lost.collectives.size(), 4u);
  EXPECT_TRUE(lost.collectives[3].batch.empty());
  EXPECT_EQ(lost.collectives[3].peer, -1);
  EXPECT_EQ(lost.p2p_records_without_kernel, 2u);
  EXPECT_NE(std::find_if(lost.notes.begin(), lost.notes.end(), [](const std::string& n) { return n.rfind("2 send/recv record_param_comms of no kernel", 0) == 0; }),
            lost.notes.end());
  // A record on a thread that launches nothing is of no kernel either.
  const auto elsewhere = trace::import_kineto(d.write("elsewhere.json", edited(trace("2"), "\"tid\": 1, \"ts\": 300", "\"tid\": 5, \"ts\": 300")));
  EXPECT_TRUE(elsewhere.collectives[3].batch.empty());
  EXPECT_EQ(elsewhere.p2p_records_without_kernel, 2u);
  // A send's record names its destination: its source alone is malformed, not unknown.
  EXPECT_EQ(import_error(d, edited(trace("2"), "\"Dst Rank\": 2", "\"Src Rank\": 2")),
            d.path() + "/bad.json: traceEvents[0].args: a send gives \"Src Rank\" but not its \"Dst Rank\"");
}

// PyTorch numbers each collective of a process group ("Seq", the same on every rank; since
// March 2026): on the kernel, or on the record_param_comms of the kernel's "External id".
// A process group whose collectives all give it, increasing, is numbered by it, and the
// IR keeps it; one where some do not, or where it does not increase, is numbered by order,
// with a note. Sends and receives keep their own order (PyTorch numbers them apart). A "Seq"
// that is not a whole number is an error naming its event.
TEST(Importer, CollectivesNumberedByPyTorchSeq) {
  TempDir d;
  auto trace = [&](const std::string& s0, const std::string& s1, const std::string& op_seq) {
    auto seq = [](const std::string& s) { return s.empty() ? std::string() : ", \"Seq\": " + s; };
    auto launch_and_kernel = [](int corr, int ts, const std::string& extra) {
      return R"J(
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": )J" + std::to_string(ts) +
             R"J(, "dur": 5, "args": {"correlation": )J" + std::to_string(corr) + R"J(}},
      {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 9, "ts": )J" +
             std::to_string(ts + 10) + R"J(, "dur": 20, "args": {"device": 0, "stream": 9, "correlation": )J" + std::to_string(corr) +
             R"J(, "Collective name": "allreduce", "In msg nelems": 256, "dtype": "Float", "Group size": 2, "Process Group Name": "0", "Process Group Ranks": "[0, 1]")J" +
             extra + "}}";
    };
    return R"J({"distributedInfo": {"rank": 0, "world_size": 2}, "traceEvents": [
      {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 80, "dur": 8,
       "args": {"External id": 90, "Collective name": "allreduce")J" + seq(op_seq) + R"J(}},)J" +
           launch_and_kernel(1, 0, seq(s0)) + "," + launch_and_kernel(2, 40, seq(s1)) + "," + launch_and_kernel(3, 80, ", \"External id\": 90") + R"J(,
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 120, "dur": 5, "args": {"correlation": 4}},
      {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 9, "ts": 130, "dur": 20,
       "args": {"device": 0, "stream": 9, "correlation": 4, "Collective name": "send", "In msg nelems": 256, "dtype": "Float", "Group size": 2,
                "Process Group Name": "0", "Process Group Ranks": "[0, 1]", "Dst Rank": 1, "Seq": 7}}]})J";
  };
  auto seqs = [](const trace::Workload& w) {
    std::vector<std::uint64_t> v;
    for (const auto& c : w.collectives) v.push_back(c.seq);
    return v;
  };
  const auto w = trace::import_kineto(d.write("t.json", trace("12", "\"13\"", "14")));
  ASSERT_EQ(w.collectives.size(), 4u);
  EXPECT_EQ(seqs(w), (std::vector<std::uint64_t>{12, 13, 14, 0}));  // the send: the first of its own count
  EXPECT_TRUE(w.communicators[w.collectives[0].communicator].seq_from_trace);
  EXPECT_TRUE(w.notes.empty());
  const auto back = trace::load_workload(d.write("t.ir.json", trace::workload_to_json(w)));
  EXPECT_EQ(seqs(back), seqs(w));
  EXPECT_TRUE(back.communicators[back.collectives[0].communicator].seq_from_trace);

  const auto repeated = trace::import_kineto(d.write("r.json", trace("12", "12", "14")));
  EXPECT_EQ(seqs(repeated), (std::vector<std::uint64_t>{0, 1, 2, 0}));
  EXPECT_FALSE(repeated.communicators[0].seq_from_trace);
  ASSERT_EQ(repeated.notes.size(), 1u);
  EXPECT_EQ(repeated.notes[0], "process group \"0\": \"Seq\" 12 (traceEvents[4]) launches after \"Seq\" 12 (traceEvents[2]), so its collectives are matched "
                               "across ranks by their order in the trace");
  const auto partial = trace::import_kineto(d.write("p.json", trace("12", "", "14")));
  EXPECT_EQ(seqs(partial), (std::vector<std::uint64_t>{0, 1, 2, 0}));
  ASSERT_EQ(partial.notes.size(), 1u);
  EXPECT_EQ(partial.notes[0], "process group \"0\": 2 of its 3 collectives give PyTorch's \"Seq\", so its collectives are matched across ranks by their order in the trace");

  auto error = [&](const std::string& text) { return import_error(d, text); };
  EXPECT_EQ(error(trace("\"x\"", "13", "14")), d.path() + "/bad.json: traceEvents[2].args: \"Seq\" = \"x\" is not a sequence number (expected PyTorch's whole "
                                                          "number of the collective in its process group, e.g. 17)");
  EXPECT_EQ(error(trace("12", "13", "-3")), d.path() + "/bad.json: traceEvents[0].args: \"Seq\" = -3 is not a sequence number (expected PyTorch's whole "
                                                        "number of the collective in its process group, e.g. 17)");
  EXPECT_EQ(error(trace("12", "13", "2.5")), d.path() + "/bad.json: traceEvents[0].args: \"Seq\" = 2.5 is not a sequence number (expected PyTorch's whole "
                                                         "number of the collective in its process group, e.g. 17)");
  // The kernel's own "Seq" and its op's must agree.
  std::string both = trace("12", "13", "14");
  const std::string linked = ", \"External id\": 90}}";
  both.replace(both.find(linked), linked.size(), ", \"External id\": 90, \"Seq\": 15}}");
  EXPECT_EQ(error(both), d.path() + "/bad.json: traceEvents[6].args: \"Seq\" = 15 (traceEvents[6]) but \"Seq\" = 14 on traceEvents[0], the "
                                    "record_param_comms of its \"External id\" 90: the collective's number cannot be told");
  // A process group name is shown with its control characters escaped.
  std::string odd = trace("12", "", "14");
  for (auto at = odd.find("\"Process Group Name\": \"0\""); at != std::string::npos; at = odd.find("\"Process Group Name\": \"0\""))
    odd.replace(at, 25, "\"Process Group Name\": \"a\\nb\\u001b\"");
  const auto odd_w = trace::import_kineto(d.write("odd.json", odd));
  ASSERT_FALSE(odd_w.notes.empty());
  EXPECT_EQ(odd_w.notes[0].substr(0, 32), "process group \"a\\nb\\u001b\": 2 of");
  // In the IR, numbers from PyTorch must increase in the order the kernels start, whatever
  // the order of the collectives array.
  auto swapped = nlohmann::json::parse(trace::workload_to_json(w));
  std::swap(swapped["collectives"][0], swapped["collectives"][1]);
  swapped["gpu_ops"][swapped["collectives"][0]["gpu_op"].get<int>()]["collective"] = 0;
  swapped["gpu_ops"][swapped["collectives"][1]["gpu_op"].get<int>()]["collective"] = 1;
  EXPECT_EQ(seqs(trace::load_workload(d.write("swapped.ir.json", swapped.dump()))), (std::vector<std::uint64_t>{13, 12, 14, 0}));
  auto doc = nlohmann::json::parse(trace::workload_to_json(w));
  doc["collectives"][1]["seq"] = 11;
  try {
    trace::load_workload(d.write("w.ir.json", doc.dump()));
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), d.path() + "/w.ir.json: collectives[1]: seq 11 follows seq 12 of collectives[0] on communicator \"0\", whose seq are "
                                                "PyTorch's \"Seq\" (seq_from_trace): they increase in the order the kernels start");
  }
}
