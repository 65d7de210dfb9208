// File: sim/validate.hpp
//
// `composim validate`: runs measured cases (validation/cases/*.json) and scores composim
// against them. A case names what to run (a trace replay, a collective sweep, a GPU-to-GPU
// copy matrix), where its measured values come from (a file under ../shared/data, or
// figures entered from a publication, with the citation), the tolerance and a category
// (self-replay, collective, p2p, end-to-end). Each case runs in its own composim process
// (one simulation per process), several at once.
//
// Case status: pass (every point within tolerance), fail, skipped (an input is missing:
// reported with the reason, never as passed), known gap (a case that states why composim
// does not meet it yet: reported as "known gap" when outside tolerance and "known gap
// closed" when inside; it does not fail the run unless `strict`). The run exits 1 when any
// other case fails.
#pragma once

#include <string>
#include <vector>

namespace composim::sim {

struct ValidateOptions {
  std::vector<std::string> cases;  // files or directories
  std::string category;            // empty: all
  std::string data_dir;            // ../shared/data
  std::string out_dir;             // empty: no files
  std::vector<std::string> params_files;  // passed to every case's run, in order
  std::string composim;            // this executable
  int jobs = 2;
  bool strict = false;             // known gaps outside their tolerance fail the run too
};

// Runs the cases; prints the table and the per-category summary; writes report.csv,
// report.json and report.png (through plots/validation.py, when matplotlib is available)
// into out_dir. Returns the process exit status. Throws InputError for a malformed case.
int validate(const ValidateOptions& o);

}  // namespace composim::sim
