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

// What a failing composim child said: the last "composim: error:" line of its log, else its
// last non-empty line; "" if the file is absent or holds none.
std::string last_line(const std::string& path);

// Whether std::system's `status` says the child was ended by Ctrl-C or a kill: SIGINT or
// SIGTERM, or a shell reporting one (exit status 128 + signal). std::system ignores SIGINT
// in the caller while the child runs, so the caller learns of Ctrl-C only this way.
// Also true once catch_termination()'s handler has seen SIGTERM or SIGHUP sent to this
// process, whatever `status` says: the caller then stops as for Ctrl-C.
bool ended_by_interrupt(int status);

// Makes SIGTERM and SIGHUP to this process (a plain `kill`, a closed terminal) end it the
// way Ctrl-C does, after the running child finishes and the scratch directories are
// removed, instead of at once with them left behind. For commands that run children.
void catch_termination();

// Whether catch_termination()'s handler has seen SIGTERM or SIGHUP.
bool termination_requested();

// Thrown when a child was interrupted (ended_by_interrupt): the CLI prints the message and
// exits with 130, as a shell does for Ctrl-C, after the scratch directories are removed.
class Interrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown when the machine could not give a simulation what it needs (a child killed by the
// out-of-memory killer): the CLI prints "composim: error: " and the message, exit status 1.
class OutOfResources : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace composim::sim
