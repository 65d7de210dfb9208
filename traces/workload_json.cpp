#include "traces/workload_json.hpp"

#include <nlohmann/json.hpp>

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
  doc["source"] = w.source;
  doc["format"] = w.format;
  doc["synthetic"] = w.synthetic;
  doc["rank"] = w.rank;
  doc["world_size"] = w.world_size;
  doc["gpu_model"] = w.gpu_model;
  doc["base_ns"] = w.base_ns;
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
  for (const auto& c : w.communicators) comms.push_back({{"name", c.name}, {"ranks", c.ranks}});
  doc["communicators"] = std::move(comms);
  ordered colls = ordered::array();
  for (const auto& c : w.collectives)
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
  doc["collectives"] = std::move(colls);
  ordered iters = ordered::array();
  for (const auto& it : w.iterations)
    iters.push_back({{"name", it.name}, {"ts_ns", it.ts_ns}, {"dur_ns", it.dur_ns}, {"thread", it.thread}});
  doc["iterations"] = std::move(iters);
  return doc.dump(1) + "\n";
}

Workload workload_from_json(const json& doc, const std::string& path) {
  Workload w;
  std::string place = "top level";
  try {
    w.source = doc.value("source", path);
    w.format = "composim-ir";
    w.synthetic = doc.value("synthetic", false);
    w.rank = doc.at("rank").get<int>();
    w.world_size = doc.at("world_size").get<int>();
    w.gpu_model = doc.value("gpu_model", "");
    w.base_ns = doc.value("base_ns", std::int64_t{0});
    const auto& threads = doc.at("threads");
    for (size_t i = 0; i < threads.size(); ++i) {
      place = "threads[" + std::to_string(i) + "]";
      CpuThread t;
      t.id = threads[i].at("id").get<std::string>();
      const auto& ops = threads[i].at("ops");
      for (size_t k = 0; k < ops.size(); ++k) {
        place = "threads[" + std::to_string(i) + "].ops[" + std::to_string(k) + "]";
        const auto& o = ops[k];
        CpuOp op;
        op.name = w.intern(o.at("name").get<std::string>());
        op.ts_ns = o.at("ts_ns").get<std::int64_t>();
        op.dur_ns = o.at("dur_ns").get<std::int64_t>();
        op.gpu_op = o.value("launches", -1);
        op.blocking = o.value("blocking", false);
        if (o.contains("waits_on")) op.waits = o["waits_on"].get<std::vector<std::int32_t>>();
        t.ops.push_back(std::move(op));
      }
      w.threads.push_back(std::move(t));
    }
    const auto& streams = doc.at("streams");
    for (size_t i = 0; i < streams.size(); ++i) {
      place = "streams[" + std::to_string(i) + "]";
      w.streams.push_back({streams[i].at("id").get<std::int64_t>(), streams[i].at("device").get<int>(),
                           streams[i].at("ops").get<std::vector<std::int32_t>>()});
    }
    const auto& gpu = doc.at("gpu_ops");
    for (size_t i = 0; i < gpu.size(); ++i) {
      place = "gpu_ops[" + std::to_string(i) + "]";
      const auto& o = gpu[i];
      GpuOp g;
      g.kind = kind_from(o.at("kind").get<std::string>());
      g.name = w.intern(o.at("name").get<std::string>());
      g.stream = o.at("stream").get<std::int32_t>();
      g.ts_ns = o.at("ts_ns").get<std::int64_t>();
      g.dur_ns = o.at("dur_ns").get<std::int64_t>();
      g.bytes = o.value("bytes", std::uint64_t{0});
      g.copy = copy_from(o.value("copy", std::string("none")));
      g.pageable = o.value("pageable", false);
      if (o.contains("waits_on")) g.waits = o["waits_on"].get<std::vector<std::int32_t>>();
      g.collective = o.value("collective", -1);
      w.gpu_ops.push_back(std::move(g));
    }
    for (const auto& c : doc.at("communicators"))
      w.communicators.push_back({c.at("name").get<std::string>(), c.at("ranks").get<std::vector<int>>()});
    const auto& colls = doc.at("collectives");
    for (size_t i = 0; i < colls.size(); ++i) {
      place = "collectives[" + std::to_string(i) + "]";
      const auto& o = colls[i];
      Collective c;
      c.kind = collective::parse_kind(o.at("kind").get<std::string>());
      if (c.kind == collective::Kind::unknown) throw std::invalid_argument("unknown collective kind");
      c.in_bytes = o.at("in_bytes").get<std::uint64_t>();
      c.dtype = o.value("dtype", "");
      c.group_size = o.value("group_size", 0);
      c.communicator = o.at("communicator").get<std::int32_t>();
      c.seq = o.at("seq").get<std::uint64_t>();
      c.algorithm = o.value("algorithm", "RING");
      c.protocol = protocol_from(o.value("protocol", std::string("Simple")));
      c.protocol_from_trace = o.value("protocol_from_trace", false);
      c.gpu_op = o.at("gpu_op").get<std::int32_t>();
      w.collectives.push_back(std::move(c));
    }
    for (const auto& it : doc.at("iterations"))
      w.iterations.push_back({it.at("name").get<std::string>(), it.at("ts_ns").get<std::int64_t>(),
                              it.at("dur_ns").get<std::int64_t>(), it.value("thread", -1)});
  } catch (const json::exception& e) {
    input_error(path, place, std::string("expected a composim workload field: ") + e.what());
  } catch (const std::invalid_argument& e) {
    input_error(path, place, e.what());
  }
  // Cross-references must point inside the document.
  auto check = [&](bool ok, const std::string& where, const std::string& what) {
    if (!ok) input_error(path, where, what);
  };
  const auto n_gpu = static_cast<std::int32_t>(w.gpu_ops.size());
  for (size_t i = 0; i < w.gpu_ops.size(); ++i) {
    const auto& g = w.gpu_ops[i];
    const std::string where = "gpu_ops[" + std::to_string(i) + "]";
    check(g.stream >= 0 && g.stream < static_cast<std::int32_t>(w.streams.size()), where, "stream index out of range");
    for (auto x : g.waits) check(x >= 0 && x < n_gpu, where, "waits_on index out of range");
    check(g.collective < static_cast<std::int32_t>(w.collectives.size()), where, "collective index out of range");
  }
  for (size_t ti = 0; ti < w.threads.size(); ++ti)
    for (size_t k = 0; k < w.threads[ti].ops.size(); ++k) {
      auto& op = w.threads[ti].ops[k];
      const std::string where = "threads[" + std::to_string(ti) + "].ops[" + std::to_string(k) + "]";
      check(op.gpu_op < n_gpu, where, "launches index out of range");
      for (auto x : op.waits) check(x >= 0 && x < n_gpu, where, "waits_on index out of range");
      if (op.gpu_op >= 0) {
        w.gpu_ops[op.gpu_op].launch_thread = static_cast<std::int32_t>(ti);
        w.gpu_ops[op.gpu_op].launch_op = static_cast<std::int32_t>(k);
      }
    }
  for (size_t i = 0; i < w.collectives.size(); ++i)
    check(w.collectives[i].communicator >= 0 && w.collectives[i].communicator < static_cast<std::int32_t>(w.communicators.size()) &&
              w.collectives[i].gpu_op >= 0 && w.collectives[i].gpu_op < n_gpu,
          "collectives[" + std::to_string(i) + "]", "communicator or gpu_op index out of range");
  for (const auto& s : w.streams)
    for (auto x : s.ops) check(x >= 0 && x < n_gpu, "streams", "op index out of range");
  if (w.gpu_ops.empty()) input_error(path, "gpu_ops", "no GPU activity to replay");
  return w;
}

}  // namespace composim::trace
