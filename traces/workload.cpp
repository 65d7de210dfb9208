#include "traces/workload.hpp"

#include <algorithm>
#include <map>

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
  for (size_t i = 0; i < iterations.size(); ++i)
    if (auto [it, inserted] = step_names.emplace(iterations[i].name, i); !inserted)
      input_error(source, "step " + iterations[i].name, "appears twice: steps are matched across ranks by name");
  for (size_t i = 1; i < iterations.size(); ++i) {
    const auto& a = iterations[i - 1];
    const auto& b = iterations[i];
    if (b.ts_ns < a.ts_ns + a.dur_ns)
      input_error(source, "step " + b.name,
                  "starts at " + std::to_string(b.ts_ns) + " ns, before " + a.name + " ends at " + std::to_string(a.ts_ns + a.dur_ns) +
                      " ns: steps must be in time order and must not overlap");
  }
  std::map<std::pair<std::int32_t, std::uint64_t>, size_t> seen;
  for (size_t i = 0; i < collectives.size(); ++i) {
    const auto& c = collectives[i];
    auto [it, inserted] = seen.emplace(std::make_pair(c.communicator, c.seq), i);
    if (!inserted)
      input_error(source, "collectives[" + std::to_string(i) + "]",
                  "sequence number " + std::to_string(c.seq) + " of communicator \"" + communicators[c.communicator].name +
                      "\" is also that of collectives[" + std::to_string(it->second) +
                      "]: each collective of a communicator needs its own number (ranks are matched by it)");
  }
}

}  // namespace composim::trace
