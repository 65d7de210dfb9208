#include "traces/workload_json.hpp"

#include <algorithm>
#include <climits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string_view>

#include "models/error.hpp"
#include "traces/kineto.hpp"

namespace composim::trace {

using nlohmann::json;
using ordered = nlohmann::ordered_json;

namespace {

CopyKind copy_from(const std::string& s) {
  for (CopyKind k : {CopyKind::none, CopyKind::htod, CopyKind::dtoh, CopyKind::dtod, CopyKind::ptop, CopyKind::htoh})
    if (to_string(k) == s) return k;
  throw std::invalid_argument("unknown copy kind \"" + s + "\"");
}

GpuOpKind kind_from(const std::string& s) {
  for (GpuOpKind k : {GpuOpKind::kernel, GpuOpKind::memcpy, GpuOpKind::memset, GpuOpKind::collective})
    if (to_string(k) == s) return k;
  throw std::invalid_argument("unknown GPU op kind \"" + s + "\"");
}

collective::Protocol protocol_from(const std::string& s) {
  if (s == "LL") return collective::Protocol::ll;
  if (s == "LL128") return collective::Protocol::ll128;
  if (s == "Simple") return collective::Protocol::simple;
  throw std::invalid_argument("unknown protocol \"" + s + "\" (expected LL, LL128 or Simple)");
}

}  // namespace

std::string workload_to_json(const Workload& w) {
  ordered doc;
  doc["composim_workload"] = 1;
  doc["source"] = w.origin.empty() ? w.source : w.origin;
  doc["format"] = w.format;
  doc["synthetic"] = w.synthetic;
  doc["rank"] = w.rank;
  doc["world_size"] = w.world_size;
  doc["gpu_model"] = w.gpu_model;
  doc["base_ns"] = w.base_ns;
  if (!w.notes.empty()) doc["notes"] = w.notes;  // what the import left out or inferred: runs say it again
  ordered threads = ordered::array();
  for (const auto& t : w.threads) {
    ordered ops = ordered::array();
    for (const auto& op : t.ops) {
      ordered o;
      o["name"] = w.names[op.name];
      o["ts_ns"] = op.ts_ns;
      o["dur_ns"] = op.dur_ns;
      if (op.gpu_op >= 0) o["launches"] = op.gpu_op;
      if (op.blocking) {
        o["blocking"] = true;
        o["waits_on"] = op.waits;
      }
      ops.push_back(std::move(o));
    }
    threads.push_back({{"id", t.id}, {"ops", std::move(ops)}});
  }
  doc["threads"] = std::move(threads);
  ordered streams = ordered::array();
  for (const auto& s : w.streams) streams.push_back({{"id", s.id}, {"device", s.device}, {"ops", s.ops}});
  doc["streams"] = std::move(streams);
  ordered gpu = ordered::array();
  for (const auto& g : w.gpu_ops) {
    ordered o;
    o["kind"] = to_string(g.kind);
    o["name"] = w.names[g.name];
    o["stream"] = g.stream;
    o["ts_ns"] = g.ts_ns;
    o["dur_ns"] = g.dur_ns;
    if (g.kind == GpuOpKind::memcpy || g.kind == GpuOpKind::memset) o["bytes"] = g.bytes;
    if (g.kind == GpuOpKind::memcpy) {
      o["copy"] = to_string(g.copy);
      o["pageable"] = g.pageable;
    }
    if (!g.waits.empty()) o["waits_on"] = g.waits;
    if (g.collective >= 0) o["collective"] = g.collective;
    gpu.push_back(std::move(o));
  }
  doc["gpu_ops"] = std::move(gpu);
  ordered comms = ordered::array();
  for (const auto& c : w.communicators) {
    comms.push_back({{"name", c.name}, {"ranks", c.ranks}});
    if (c.seq_from_trace) comms.back()["seq_from_trace"] = true;  // its collectives' seq are PyTorch's "Seq"
  }
  doc["communicators"] = std::move(comms);
  ordered colls = ordered::array();
  for (const auto& c : w.collectives) {
    colls.push_back({{"kind", collective::to_string(c.kind)},
                     {"in_bytes", c.in_bytes},
                     {"dtype", c.dtype},
                     {"group_size", c.group_size},
                     {"communicator", c.communicator},
                     {"seq", c.seq},
                     {"algorithm", c.algorithm},
                     {"protocol", collective::to_string(c.protocol)},
                     {"protocol_from_trace", c.protocol_from_trace},
                     {"gpu_op", c.gpu_op}});
    if (c.p2p_role != P2pRole::none) colls.back()["p2p"] = to_string(c.p2p_role);  // a send or a receive
    if (c.peer >= 0) colls.back()["peer"] = c.peer;                                  // whose peer the trace gives
    if (!c.batch.empty()) {  // a batched send/recv's sends and receives
      ordered parts = ordered::array();
      for (const auto& part : c.batch) parts.push_back({{"p2p", to_string(part.role)}, {"peer", part.peer}, {"in_bytes", part.in_bytes}});
      colls.back()["batch"] = std::move(parts);
    }
  }
  doc["collectives"] = std::move(colls);
  ordered iters = ordered::array();
  for (const auto& it : w.iterations)
    iters.push_back({{"name", it.name}, {"ts_ns", it.ts_ns}, {"dur_ns", it.dur_ns}, {"thread", it.thread}});
  doc["iterations"] = std::move(iters);
  return doc.dump(1) + "\n";
}

namespace {

// Typed, range-checked access to the IR document; every failure names the JSON path.
class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {}
  [[noreturn]] void fail(const std::string& place, const std::string& what) const { input_error(path_, place, what); }
  // Refuses a key workload_to_json() does not write there: a typo ("dtyp") would be ignored.
  void only_keys(const json& obj, const std::string& place, std::initializer_list<std::string_view> keys) const {
    if (!obj.is_object()) fail(place, "expected an object");
    for (auto it = obj.begin(); it != obj.end(); ++it)
      if (std::find(keys.begin(), keys.end(), it.key()) == keys.end()) fail(place, "unknown key \"" + shown_text(it.key()) + "\"");
  }
  const json& member(const json& obj, const char* key, const std::string& place) const {
    if (!obj.is_object()) fail(place, "expected an object");
    auto it = obj.find(key);
    if (it == obj.end()) fail(place, std::string("missing key \"") + key + "\"");
    return *it;
  }
  const json& array(const json& obj, const char* key, const std::string& place) const {
    const json& a = member(obj, key, place);
    if (!a.is_array()) fail(place + "." + key, "expected an array");
    return a;
  }
  std::int64_t integer(const json& v, const std::string& place, std::int64_t min, std::int64_t max) const {
    if (!v.is_number_integer()) fail(place, "expected an integer");
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) fail(place, "integer out of range");
    const std::int64_t x = v.get<std::int64_t>();
    if (x < min || x > max) fail(place, std::to_string(x) + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    return x;
  }
  std::int64_t integer(const json& obj, const char* key, const std::string& place, std::int64_t min, std::int64_t max,
                       std::optional<std::int64_t> def = std::nullopt) const {
    if (def && (!obj.is_object() || !obj.contains(key))) return *def;
    return integer(member(obj, key, place), place + "." + key, min, max);
  }
  std::string string(const json& obj, const char* key, const std::string& place, std::optional<std::string> def = std::nullopt) const {
    if (def && (!obj.is_object() || !obj.contains(key))) return *def;
    const json& v = member(obj, key, place);
    if (!v.is_string()) fail(place + "." + key, "expected a string");
    return v.get<std::string>();
  }
  bool boolean(const json& obj, const char* key, const std::string& place, bool def) const {
    if (!obj.is_object() || !obj.contains(key)) return def;
    const json& v = obj.at(key);
    if (!v.is_boolean()) fail(place + "." + key, "expected true or false");
    return v.get<bool>();
  }
  std::vector<std::int32_t> indices(const json& obj, const char* key, const std::string& place, std::int64_t size) const {
    std::vector<std::int32_t> out;
    if (!obj.contains(key)) return out;
    const json& a = member(obj, key, place);
    if (!a.is_array()) fail(place + "." + key, "expected an array of indices");
    for (size_t i = 0; i < a.size(); ++i)
      out.push_back(static_cast<std::int32_t>(integer(a[i], place + "." + key + "[" + std::to_string(i) + "]", 0, size - 1)));
    return out;
  }

 private:
  const std::string& path_;
};

constexpr std::int64_t kMaxNs = 1'000'000'000'000'000;  // 11.6 days
constexpr std::int64_t kMaxBytes = std::int64_t{1} << 50;
constexpr std::int64_t kMaxRanks = 1'000'000;

}  // namespace

Workload workload_from_json(const json& doc, const std::string& path) {
  Reader r(path);
  const std::string top = "top level";
  Workload w;
  if (!doc.is_object()) r.fail(top, "expected an object");
  if (r.integer(doc, "composim_workload", top, 1, 1) != 1) r.fail(top, "unsupported composim_workload version");
  // What workload_to_json() writes, and "notes"; anything else is a typo whose content
  // would be ignored.
  static const std::set<std::string> kKeys = {"composim_workload", "source",    "format",  "synthetic", "rank",          "world_size",  "gpu_model", "base_ns",
                                              "notes",             "threads",   "streams", "gpu_ops",   "communicators", "collectives", "iterations"};
  for (auto it = doc.begin(); it != doc.end(); ++it)
    if (!kKeys.count(it.key())) r.fail(top, "unknown key \"" + shown_text(it.key()) + "\"");
  w.source = path;
  w.origin = r.string(doc, "source", top, path);
  w.format = "composim-ir";
  w.synthetic = r.boolean(doc, "synthetic", top, false);
  w.world_size = static_cast<int>(r.integer(doc, "world_size", top, 1, kMaxRanks));
  w.rank = static_cast<int>(r.integer(doc, "rank", top, 0, w.world_size - 1));
  w.gpu_model = r.string(doc, "gpu_model", top, std::string());
  w.base_ns = r.integer(doc, "base_ns", top, INT64_MIN + 1, INT64_MAX, 0);
  if (auto it = doc.find("notes"); it != doc.end()) {
    if (!it->is_array()) r.fail("notes", "expected a list of strings");
    for (size_t i = 0; i < it->size(); ++i) {
      if (!(*it)[i].is_string()) r.fail("notes[" + std::to_string(i) + "]", "expected a string");
      w.notes.push_back((*it)[i].get<std::string>());
    }
  }
  const json& threads = r.array(doc, "threads", top);
  const json& streams = r.array(doc, "streams", top);
  const json& gpu = r.array(doc, "gpu_ops", top);
  const json& comms = r.array(doc, "communicators", top);
  const json& colls = r.array(doc, "collectives", top);
  const json& iters = r.array(doc, "iterations", top);
  const auto n_gpu = static_cast<std::int64_t>(gpu.size());
  const auto n_streams = static_cast<std::int64_t>(streams.size());
  const auto n_colls = static_cast<std::int64_t>(colls.size());
  if (n_gpu == 0) r.fail("gpu_ops", "no GPU activity to replay");
  for (size_t i = 0; i < threads.size(); ++i) {
    const std::string place = "threads[" + std::to_string(i) + "]";
    r.only_keys(threads[i], place, {"id", "ops"});
    CpuThread t;
    t.id = r.string(threads[i], "id", place);
    const json& ops = r.array(threads[i], "ops", place);
    for (size_t k = 0; k < ops.size(); ++k) {
      const std::string op_place = place + ".ops[" + std::to_string(k) + "]";
      const json& o = ops[k];
      r.only_keys(o, op_place, {"name", "ts_ns", "dur_ns", "launches", "blocking", "waits_on"});
      CpuOp op;
      op.name = w.intern(r.string(o, "name", op_place));
      op.ts_ns = r.integer(o, "ts_ns", op_place, 0, kMaxNs);
      op.dur_ns = r.integer(o, "dur_ns", op_place, 0, kMaxNs);
      op.gpu_op = static_cast<std::int32_t>(r.integer(o, "launches", op_place, -1, n_gpu - 1, -1));
      op.blocking = r.boolean(o, "blocking", op_place, false);
      op.waits = r.indices(o, "waits_on", op_place, n_gpu);
      if (k > 0 && op.ts_ns < t.ops.back().ts_ns) r.fail(op_place, "ops of a thread must be in time order");
      t.ops.push_back(std::move(op));
    }
    w.threads.push_back(std::move(t));
  }
  for (size_t i = 0; i < gpu.size(); ++i) {
    const std::string place = "gpu_ops[" + std::to_string(i) + "]";
    const json& o = gpu[i];
    r.only_keys(o, place, {"kind", "name", "stream", "ts_ns", "dur_ns", "bytes", "copy", "pageable", "waits_on", "collective"});
    GpuOp g;
    try {
      g.kind = kind_from(r.string(o, "kind", place));
      g.copy = copy_from(r.string(o, "copy", place, std::string("none")));
    } catch (const std::invalid_argument& e) {
      r.fail(place, e.what());
    }
    g.name = w.intern(r.string(o, "name", place));
    g.stream = static_cast<std::int32_t>(r.integer(o, "stream", place, 0, n_streams - 1));
    g.ts_ns = r.integer(o, "ts_ns", place, 0, kMaxNs);
    g.dur_ns = r.integer(o, "dur_ns", place, 0, kMaxNs);
    g.bytes = static_cast<std::uint64_t>(r.integer(o, "bytes", place, 0, kMaxBytes, 0));
    g.pageable = r.boolean(o, "pageable", place, false);
    g.waits = r.indices(o, "waits_on", place, n_gpu);
    g.collective = static_cast<std::int32_t>(r.integer(o, "collective", place, -1, n_colls - 1, -1));
    if ((g.kind == GpuOpKind::collective) != (g.collective >= 0))
      r.fail(place, "a \"collective\" op needs a collective index, and only such ops have one");
    w.gpu_ops.push_back(std::move(g));
  }
  std::vector<int> in_stream(gpu.size(), -1);
  std::map<std::pair<int, std::int64_t>, size_t> stream_index;  // (device, id) -> streams[i]: one track, one order
  for (size_t i = 0; i < streams.size(); ++i) {
    const std::string place = "streams[" + std::to_string(i) + "]";
    r.only_keys(streams[i], place, {"id", "device", "ops"});
    Stream st;
    st.id = r.integer(streams[i], "id", place, INT32_MIN, std::int64_t{1} << 40);  // as the Kineto importer takes
    st.device = static_cast<int>(r.integer(streams[i], "device", place, 0, 1 << 20));
    if (auto [it, fresh] = stream_index.emplace(std::pair{st.device, st.id}, i); !fresh)
      r.fail(place + ".id", "stream " + std::to_string(st.id) + " is also streams[" + std::to_string(it->second) + "]");
    // As the Kineto importer: one workload is one rank on one GPU.
    if (i > 0 && st.device != w.streams.front().device)
      r.fail(place + ".device", "device " + std::to_string(st.device) + ", streams[0] device " + std::to_string(w.streams.front().device) +
                                    ": composim replays one GPU per workload (one per rank)");
    st.ops = r.indices(streams[i], "ops", place, n_gpu);
    for (auto x : st.ops) {
      if (in_stream[x] >= 0) r.fail(place, "gpu op " + std::to_string(x) + " is listed in more than one stream or twice");
      if (w.gpu_ops[x].stream != static_cast<std::int32_t>(i))
        r.fail(place, "gpu op " + std::to_string(x) + " says it is on stream " + std::to_string(w.gpu_ops[x].stream));
      in_stream[x] = static_cast<int>(i);
    }
    w.streams.push_back(std::move(st));
  }
  for (size_t i = 0; i < in_stream.size(); ++i)
    if (in_stream[i] < 0) r.fail("gpu_ops[" + std::to_string(i) + "]", "not listed in the ops of its stream");
  for (size_t i = 0; i < comms.size(); ++i) {
    const std::string place = "communicators[" + std::to_string(i) + "]";
    r.only_keys(comms[i], place, {"name", "ranks", "seq_from_trace"});
    Communicator c;
    c.name = r.string(comms[i], "name", place);
    for (auto x : r.indices(comms[i], "ranks", place, w.world_size)) c.ranks.push_back(x);
    c.seq_from_trace = r.boolean(comms[i], "seq_from_trace", place, false);
    w.communicators.push_back(std::move(c));
  }
  for (size_t i = 0; i < colls.size(); ++i) {
    const std::string place = "collectives[" + std::to_string(i) + "]";
    const json& o = colls[i];
    r.only_keys(o, place, {"kind", "in_bytes", "dtype", "group_size", "communicator", "seq", "algorithm", "protocol", "protocol_from_trace", "gpu_op", "p2p", "peer", "batch"});
    Collective c;
    const std::string kind = r.string(o, "kind", place);
    c.kind = collective::kind_named(kind);
    if (c.kind == collective::Kind::unknown) r.fail(place + ".kind", "unknown collective kind \"" + shown_text(kind) + "\" (" + collective::kKindNames + ")");
    c.in_bytes = static_cast<std::uint64_t>(r.integer(o, "in_bytes", place, 0, kMaxBytes));
    c.dtype = r.string(o, "dtype", place, std::string());
    c.group_size = static_cast<int>(r.integer(o, "group_size", place, 0, kMaxRanks, 0));
    c.communicator = static_cast<std::int32_t>(r.integer(o, "communicator", place, 0, static_cast<std::int64_t>(comms.size()) - 1));
    c.seq = static_cast<std::uint64_t>(r.integer(o, "seq", place, 0, INT64_MAX));
    c.algorithm = r.string(o, "algorithm", place, std::string("RING"));
    if (!c.algorithm.empty() && !collective::is_nccl_algorithm_name(c.algorithm))
      r.fail(place + ".algorithm", "unknown algorithm \"" + shown_text(c.algorithm) + "\" (" + collective::kNcclAlgorithmNames + ", as NCCL's kernel names give them)");
    try {
      c.protocol = protocol_from(r.string(o, "protocol", place, std::string("Simple")));
    } catch (const std::invalid_argument& e) {
      r.fail(place, e.what());
    }
    c.protocol_from_trace = r.boolean(o, "protocol_from_trace", place, false);
    if (c.protocol_from_trace && collective::runs_only_in_simple(c.algorithm) && c.protocol != collective::Protocol::simple)
      r.fail(place + ".protocol", c.algorithm + " in " + std::string(collective::to_string(c.protocol)) + ": NCCL runs NVLS and NVLS_TREE only in Simple");
    if (o.contains("peer") && !o.contains("p2p")) r.fail(place, "has a \"peer\" but no \"p2p\" (send or recv)");
    if (o.contains("p2p")) {
      const std::string role = r.string(o, "p2p", place);
      if (role != "send" && role != "recv") r.fail(place + ".p2p", "\"" + shown_text(role) + "\" is not send or recv");
      c.p2p_role = role == "send" ? P2pRole::send : P2pRole::recv;
      if (o.contains("peer")) c.peer = static_cast<int>(r.integer(o, "peer", place, 0, kMaxRanks - 1));
    }
    if (o.contains("batch")) {
      const json& parts = o["batch"];
      if (!parts.is_array() || parts.empty()) r.fail(place + ".batch", "expected a non-empty array of sends and receives ({\"p2p\": \"send\", \"peer\": 1, \"in_bytes\": 4096})");
      for (size_t k = 0; k < parts.size(); ++k) {
        const std::string at = place + ".batch[" + std::to_string(k) + "]";
        if (!parts[k].is_object()) r.fail(at, "expected an object ({\"p2p\": \"send\", \"peer\": 1, \"in_bytes\": 4096})");
        r.only_keys(parts[k], at, {"p2p", "peer", "in_bytes"});
        P2pPart part;
        const std::string role = r.string(parts[k], "p2p", at);
        if (role != "send" && role != "recv") r.fail(at + ".p2p", "\"" + shown_text(role) + "\" is not send or recv");
        part.role = role == "send" ? P2pRole::send : P2pRole::recv;
        part.peer = static_cast<int>(r.integer(parts[k], "peer", at, 0, kMaxRanks - 1));
        part.in_bytes = static_cast<std::uint64_t>(r.integer(parts[k], "in_bytes", at, 0, kMaxBytes, 0));
        c.batch.push_back(part);
      }
    }
    c.gpu_op = static_cast<std::int32_t>(r.integer(o, "gpu_op", place, 0, n_gpu - 1));
    if (w.gpu_ops[c.gpu_op].collective != static_cast<std::int32_t>(i))
      r.fail(place, "gpu_op " + std::to_string(c.gpu_op) + " does not point back to this collective");
    w.collectives.push_back(std::move(c));
  }
  for (size_t i = 0; i < iters.size(); ++i) {
    const std::string place = "iterations[" + std::to_string(i) + "]";
    r.only_keys(iters[i], place, {"name", "ts_ns", "dur_ns", "thread"});
    Iteration it;
    it.name = r.string(iters[i], "name", place);
    it.ts_ns = r.integer(iters[i], "ts_ns", place, 0, kMaxNs);
    it.dur_ns = r.integer(iters[i], "dur_ns", place, 0, kMaxNs);
    it.thread = static_cast<std::int32_t>(r.integer(iters[i], "thread", place, -1, static_cast<std::int64_t>(w.threads.size()) - 1, -1));
    w.iterations.push_back(std::move(it));
  }
  for (size_t ti = 0; ti < w.threads.size(); ++ti)
    for (size_t k = 0; k < w.threads[ti].ops.size(); ++k) {
      const auto& op = w.threads[ti].ops[k];
      if (op.gpu_op < 0) continue;
      auto& g = w.gpu_ops[op.gpu_op];
      if (g.launch_thread >= 0) r.fail("threads[" + std::to_string(ti) + "].ops[" + std::to_string(k) + "]", "gpu op " + std::to_string(op.gpu_op) + " is launched twice");
      g.launch_thread = static_cast<std::int32_t>(ti);
      g.launch_op = static_cast<std::int32_t>(k);
    }
  w.check();
  return w;
}

}  // namespace composim::trace
