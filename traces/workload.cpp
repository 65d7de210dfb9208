#include "traces/workload.hpp"

#include <algorithm>

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

}  // namespace composim::trace
