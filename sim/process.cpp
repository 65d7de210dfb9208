#include "sim/process.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>

namespace composim::sim {

std::string last_line(const std::string& path) {
  std::ifstream in(path);
  std::string line, last, error;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    last = line;
    // A child's stderr and its buffered stdout interleave in one log: its error may come
    // before the notes it printed, and it is what says why.
    if (line.rfind("composim: error:", 0) == 0) error = line;
  }
  return error.empty() ? last : error;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string self_executable(const std::string& fallback) {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  return n > 0 ? std::string(self, static_cast<size_t>(n)) : fallback;
}

namespace {
volatile std::sig_atomic_t termination_seen = 0;
extern "C" void note_termination(int) { termination_seen = 1; }
}  // namespace

void catch_termination() {
  struct sigaction sa {};
  sa.sa_handler = note_termination;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // std::system's wait goes on; the loops look at the flag
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
}

bool termination_requested() { return termination_seen != 0; }

bool ended_by_interrupt(int status) {
  if (termination_seen) return true;
  if (status == -1) return false;
  if (WIFSIGNALED(status)) return WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM;
  return WIFEXITED(status) && (WEXITSTATUS(status) == 128 + SIGINT || WEXITSTATUS(status) == 128 + SIGTERM);
}

}  // namespace composim::sim
