// File: sim/calibrate.hpp
//
// `composim calibrate`: fits model parameters to measured collective sweeps by least
// squares (Eigen), and checks the fit on points it did not see.
//
// For every measured point i of the given collective cases, composim's own plan gives the
// terms of its model: t_i = base(a,p) + steps_i * hop(c,a,p) + bytes_i / (B_i * f_g / f0_g),
// where B_i is the plan's bandwidth with the link efficiency f0_g in force, bytes_i the
// bytes on its bottleneck, c the link class, a the algorithm, p the protocol, and g the
// efficiency parameter behind the bottleneck (NVLink of a generation, PCIe, network). With
// u_g = 1/f_g this is linear in the unknowns (u_g, hop(c,a,p), base(a,p)); rows are divided by t_i so
// relative errors are minimised; base(a,p) (the per-collective latency) is fitted too.
// Latencies are kept >= 0 (an active set: a negative one is fixed at 0 and the rest
// refitted). Base and hop are told apart by cases with different GPU counts. NVLS rows have
// no hop (one latency term: base(nvls) is fitted alone) and their g is
// collective.efficiency_nvls, fitted at the NVLink efficiency in force: a fit that also
// moves that NVLink generation's efficiency (from ring rows) moves NVLS twice, which the
// re-run's errors show.
//
// Held-out check: every `holdout_every`-th point of each case (by size) is left out of the
// fit, or whole cases with --holdout; both the fitted and the held-out points are then
// re-run with the fitted parameters and their errors reported before and after.
#pragma once

#include <string>
#include <vector>

namespace composim::sim {

struct CalibrateOptions {
  std::vector<std::string> fit_cases;      // case files (collective category)
  std::vector<std::string> holdout_cases;  // whole cases held out (optional)
  int holdout_every = 3;                   // when no holdout cases: every k-th point held out
  std::string data_dir, out_file, composim;
  std::string params_file;  // starting parameters (already loaded into the registry); "" for the defaults
};

int calibrate(const CalibrateOptions& o);

}  // namespace composim::sim
