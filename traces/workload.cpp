#include "traces/workload.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "models/error.hpp"

namespace composim::trace {

std::string_view to_string(GpuOpKind k) {
  switch (k) {
    case GpuOpKind::kernel: return "kernel";
    case GpuOpKind::memcpy: return "memcpy";
    case GpuOpKind::memset: return "memset";
    case GpuOpKind::collective: return "collective";
  }
  return "?";
}

std::string rank_list_text(const std::vector<int>& ranks, std::size_t max_shown) {
  std::string s;
  for (std::size_t i = 0; i < ranks.size() && i < max_shown; ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > max_shown) s += ", ... (" + std::to_string(ranks.size()) + " ranks)";
  return s;
}

std::string_view to_string(CopyKind k) {
  switch (k) {
    case CopyKind::none: return "none";
    case CopyKind::htod: return "HtoD";
    case CopyKind::dtoh: return "DtoH";
    case CopyKind::dtod: return "DtoD";
    case CopyKind::ptop: return "PtoP";
    case CopyKind::htoh: return "HtoH";
  }
  return "?";
}

std::string_view to_string(P2pRole r) {
  switch (r) {
    case P2pRole::none: return "none";
    case P2pRole::send: return "send";
    case P2pRole::recv: return "recv";
  }
  return "?";
}

std::string Workload::peer_problem(P2pRole role, int peer, std::int32_t communicator) const {
  const auto& comm = communicators[communicator];
  const char* op = role == P2pRole::send ? "send" : "receive";
  if (peer == rank && rank_known) return std::string("is this trace's own rank: a ") + op + " needs another rank of the job";
  if (peer >= world_size)
    return "is not a rank of the job (world size " + std::to_string(world_size) +
           (world_size_given ? "" : ", from its groups and peers: the trace gives no world size") + "): a " + op + " needs another rank of the job";
  if (!comm.ranks.empty() && std::find(comm.ranks.begin(), comm.ranks.end(), peer) == comm.ranks.end())
    return "is not a rank of process group \"" + comm.name + "\" (" + (comm.ranks_guessed ? "taken as the consecutive ranks [" : "ranks [") +
           rank_list_text(comm.ranks, 16) + "]" + (comm.ranks_guessed ? " from its \"Group size\": the trace does not list them" : "") + ")";
  return "";
}

std::size_t Workload::count(GpuOpKind k) const {
  return static_cast<std::size_t>(std::count_if(gpu_ops.begin(), gpu_ops.end(), [k](const GpuOp& g) { return g.kind == k; }));
}

std::size_t Workload::cpu_op_count() const {
  std::size_t n = 0;
  for (const auto& t : threads) n += t.ops.size();
  return n;
}

std::uint32_t Workload::intern(const std::string& s) {
  if (name_index.size() != names.size()) {
    name_index.clear();
    for (std::size_t i = 0; i < names.size(); ++i) name_index.emplace(names[i], static_cast<std::uint32_t>(i));
  }
  auto [it, inserted] = name_index.emplace(s, static_cast<std::uint32_t>(names.size()));
  if (inserted) names.push_back(s);
  return it->second;
}

void Workload::check() const {
  std::map<std::string, size_t> step_names;
  for (size_t i = 0; i < iterations.size(); ++i) {
    const std::string& name = iterations[i].name;
    if (name.empty() || std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == ',' || c == '"'; })) {
      std::string shown;
      for (char c : name.substr(0, 60)) shown += static_cast<unsigned char>(c) < 0x20 ? '?' : c;
      input_error(source, "iterations[" + std::to_string(i) + "]",
                  "step name \"" + shown + "\" must be non-empty, on one line, without commas or quotes (it names a row of the outputs)");
    }
    if (auto [it, inserted] = step_names.emplace(name, i); !inserted)
      input_error(source, "step " + name, "appears twice: steps are matched across ranks by name");
  }
  for (size_t i = 1; i < iterations.size(); ++i) {
    const auto& a = iterations[i - 1];
    const auto& b = iterations[i];
    if (b.ts_ns < a.ts_ns + a.dur_ns)
      input_error(source, "step " + b.name,
                  "starts at " + std::to_string(b.ts_ns) + " ns, before " + a.name + " ends at " + std::to_string(a.ts_ns + a.dur_ns) +
                      " ns: steps must be in time order and must not overlap");
  }
  // Communicators: ranks are matched by name, so names are unique; members are ranks of
  // the job, each once; a rank's collectives are on communicators it belongs to.
  std::map<std::string, size_t> comm_names;
  for (size_t i = 0; i < communicators.size(); ++i) {
    const auto& c = communicators[i];
    const std::string place = "communicator \"" + c.name + "\"";
    if (auto [it, inserted] = comm_names.emplace(c.name, i); !inserted) input_error(source, place, "appears twice: communicators are matched by name");
    std::vector<int> sorted = c.ranks;
    std::sort(sorted.begin(), sorted.end());
    for (size_t k = 0; k < sorted.size(); ++k) {
      if (sorted[k] < 0 || sorted[k] >= world_size) {
        input_error(source, place,
                    "rank " + std::to_string(sorted[k]) + " is not a rank of the job (world size " + std::to_string(world_size) + "); its ranks: [" +
                        rank_list_text(c.ranks, 16) + "]" +
                        (format.rfind("kineto", 0) == 0 ? " (a cut-short \"Process Group Ranks\" is continued in its steps)" : ""));
      }
      if (k > 0 && sorted[k] == sorted[k - 1]) input_error(source, place, "rank " + std::to_string(sorted[k]) + " is listed twice");
    }
  }
  // A communicator numbered by PyTorch's "Seq" (seq_from_trace) has its collectives' numbers
  // increase in launch order, as PyTorch counts them: the replay takes the first and last as
  // the trace's window on it.
  const bool numbered = std::any_of(communicators.begin(), communicators.end(), [](const Communicator& c) { return c.seq_from_trace; });
  std::vector<std::int64_t> last_of(communicators.size(), -1);
  std::vector<size_t> by_start(numbered ? collectives.size() : 0);  // in the order their kernels start
  for (size_t i = 0; i < by_start.size(); ++i) by_start[i] = i;
  auto start_of = [&](size_t i) {
    const auto g = collectives[i].gpu_op;
    return g >= 0 && static_cast<size_t>(g) < gpu_ops.size() ? gpu_ops[g].ts_ns : std::int64_t{0};
  };
  std::stable_sort(by_start.begin(), by_start.end(), [&](size_t a, size_t b) { return start_of(a) < start_of(b); });
  for (const size_t i : by_start) {
    const auto& c = collectives[i];
    if (c.kind == collective::Kind::send_recv || c.communicator < 0 || static_cast<size_t>(c.communicator) >= communicators.size() ||
        !communicators[c.communicator].seq_from_trace)
      continue;
    auto& last = last_of[c.communicator];
    if (last >= 0 && c.seq <= collectives[last].seq)
      input_error(source, "collectives[" + std::to_string(i) + "]",
                  "seq " + std::to_string(c.seq) + " follows seq " + std::to_string(collectives[last].seq) + " of collectives[" + std::to_string(last) +
                      "] on communicator \"" + shown_text(communicators[c.communicator].name) +
                      "\", whose seq are PyTorch's \"Seq\" (seq_from_trace): they increase in the order the kernels start");
    last = static_cast<std::int64_t>(i);
  }
  std::map<std::tuple<std::int32_t, std::uint64_t, bool>, size_t> seen;  // send/recv numbered apart
  for (size_t i = 0; i < collectives.size(); ++i) {
    const auto& c = collectives[i];
    const auto& r = communicators[c.communicator].ranks;
    if (!r.empty() && std::find(r.begin(), r.end(), rank) == r.end())
      input_error(source, "collectives[" + std::to_string(i) + "]",
                  "is on communicator \"" + communicators[c.communicator].name + "\", whose ranks do not include this trace's rank " +
                      std::to_string(rank));
    // The group size is the communicator's (all the job's ranks when it lists none): the
    // replay scales by it, so another size would model ranks that are not there.
    const int members = r.empty() ? world_size : static_cast<int>(r.size());
    if (c.group_size > 0 && c.group_size != members)
      input_error(source, "collectives[" + std::to_string(i) + "]",
                  "group_size " + std::to_string(c.group_size) + " but communicator \"" + communicators[c.communicator].name + "\" has " +
                      (r.empty() ? "no ranks listed, so all " + std::to_string(world_size) + " ranks of the job (world_size)"
                                 : std::to_string(members) + " ranks") +
                      ": they must agree");
    // A send's or receive's peer is another rank of its communicator: the replay pairs it
    // with that rank's receive or send.
    if (c.peer >= 0 || c.p2p_role != P2pRole::none) {
      const std::string place = "collectives[" + std::to_string(i) + "]";
      if (c.kind != collective::Kind::send_recv) input_error(source, place, "is a send or receive (p2p, peer) but a " + std::string(collective::to_string(c.kind)));
      if (c.peer >= 0 && c.p2p_role == P2pRole::none) input_error(source, place, "a peer needs a direction (send or recv)");
      if (const std::string why = c.peer >= 0 ? peer_problem(c) : ""; !why.empty()) input_error(source, place, "peer " + std::to_string(c.peer) + " " + why);
    }
    // A batched send/recv's parts, each a send or receive to another rank of its communicator;
    // the kernel itself names none.
    if (!c.batch.empty()) {
      const std::string place = "collectives[" + std::to_string(i) + "].batch";
      if (c.kind != collective::Kind::send_recv) input_error(source, place, "a batch of sends and receives, but the kind is " + std::string(collective::to_string(c.kind)));
      if (c.p2p_role != P2pRole::none || c.peer >= 0) input_error(source, place, "a batch has its parts' directions and peers, not its own (p2p, peer)");
      std::uint64_t total = 0;
      for (const auto& part : c.batch) total = std::min(total + part.in_bytes, std::uint64_t{1} << 62);  // each at most 2^50: no overflow
      if (total != c.in_bytes)
        input_error(source, "collectives[" + std::to_string(i) + "].in_bytes",
                    std::to_string(c.in_bytes) + " but its batch's parts add up to " + std::to_string(total) + " bytes: they must agree");
      for (size_t k = 0; k < c.batch.size(); ++k) {
        const auto& part = c.batch[k];
        if (part.role == P2pRole::none) input_error(source, place + "[" + std::to_string(k) + "]", "needs a direction (send or recv)");
        if (const std::string why = peer_problem(part.role, part.peer, c.communicator); !why.empty())
          input_error(source, place + "[" + std::to_string(k) + "]", "peer " + std::to_string(part.peer) + " " + why);
      }
    }
    auto [it, inserted] = seen.emplace(std::make_tuple(c.communicator, c.seq, c.kind == collective::Kind::send_recv), i);
    if (!inserted)
      input_error(source, "collectives[" + std::to_string(i) + "]",
                  "sequence number " + std::to_string(c.seq) + " of communicator \"" + communicators[c.communicator].name +
                      "\" is also that of collectives[" + std::to_string(it->second) +
                      "]: each collective of a communicator needs its own number (ranks are matched by it)");
  }
}

}  // namespace composim::trace
