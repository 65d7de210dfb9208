// File: sim/process.hpp
//
// Small helpers for commands that run composim itself in child processes (validate,
// calibrate, sweep: one simulation per process).
#pragma once

#include <stdexcept>
#include <string>

namespace composim::sim {

// `s` single-quoted for /bin/sh.
std::string shell_quote(const std::string& s);

// The path of the running executable (/proc/self/exe), or `fallback` if it cannot be read.
std::string self_executable(const std::string& fallback);

// Whether std::system's `status` says the child was ended by Ctrl-C or a kill: SIGINT or
// SIGTERM, or a shell reporting one (exit status 128 + signal). std::system ignores SIGINT
// in the caller while the child runs, so the caller learns of Ctrl-C only this way.
bool ended_by_interrupt(int status);

// Thrown when a child was interrupted (ended_by_interrupt): the CLI prints the message and
// exits with 130, as a shell does for Ctrl-C, after the scratch directories are removed.
class Interrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace composim::sim
