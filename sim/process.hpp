// File: sim/process.hpp
//
// Small helpers for commands that run composim itself in child processes (validate,
// calibrate, sweep: one simulation per process).
#pragma once

#include <string>

namespace composim::sim {

// `s` single-quoted for /bin/sh.
std::string shell_quote(const std::string& s);

// The path of the running executable (/proc/self/exe), or `fallback` if it cannot be read.
std::string self_executable(const std::string& fallback);

}  // namespace composim::sim
