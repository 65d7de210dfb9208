// File: sim/sweep.hpp
//
// `composim sweep SPEC.json --out DIR [-j N]`: runs the cartesian product of the spec's axes,
// each point in its own composim process (one simulation per process), N at once, with a
// progress bar on stderr, and writes DIR/results.csv (one row per point, in point order, so
// the file is the same whatever N). Re-running resumes: a point whose summary.json exists
// for the same parameters is not run again. A failing point records its error in its row.
//
// Spec:
//   {"name": ..., "traces": ["{data}/traces/....json.gz"],        // one (a file, or a directory
//                                                                  // of per-rank traces), or an axis "trace"
//    "generate": {"gpus": 16, "gpu_model": "A100-PCIe-40GB", ...}, // topology generator defaults
//    "axes": {"ranks": [1, 2, 4],                                  // scalar axes: one parameter
//             "system": [{"label": "in host", "placement": "in-host"}, ...]},  // object axes: several
//    "points": [{"label": "one extra", "ranks": 8, "topology": "dgx-a100"}],  // explicit points, after the product
//    "run_args": ["--warmup", "1"]}
// Parameters are the generator's (topologies/generate.hpp, with snake_case names:
// placement, hosts, gpus, levels, fanout, switch_gen, uplink_gen, uplink_lanes, gpu_gen,
// cable, length_m, retimers, gpu_model, p2p, fabric_p2p, host_nic_gbps, compose_split) plus
// "ranks", "trace", "compose" (a --compose string) and "topology" (a shipped name or file,
// instead of generating one);
// "compose_split": "ranks" attaches half of the ranks' GPUs to each of two hosts.
//
// On a cluster: `composim sweep SPEC --out DIR --slurm [--tasks N]` writes DIR/sweep.slurm
// (sbatch it); every array task writes into the same DIR; `composim sweep --collect DIR`
// then writes DIR/results.csv, marking points that have not run.
#pragma once

#include <string>

namespace composim::sim {

struct SweepRunOptions {
  std::string spec_file, out_dir, composim, data_dir;
  int jobs = 1;
  // Slurm: `slurm` prepares every point and writes DIR/sweep.slurm, a job array of `tasks`
  // tasks; task k (`task` = k) runs the points i with i % tasks == k; `collect` runs
  // nothing and merges the finished points into results.csv (from DIR/sweep.json, the spec
  // saved when the array was written).
  bool slurm = false, collect = false;
  int task = -1, tasks = 0;
};

int run_sweep_spec(const SweepRunOptions& o);

}  // namespace composim::sim
