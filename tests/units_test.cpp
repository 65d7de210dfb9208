#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include <filesystem>
#include <ostream>

#include "models/units.hpp"
#include "sim/process.hpp"
#include "sim/report.hpp"
#include "test_util.hpp"

using namespace composim;

TEST(Units, Durations) {
  EXPECT_DOUBLE_EQ(parse_duration_s("24us"), 24e-6);
  EXPECT_DOUBLE_EQ(parse_duration_s("1.5ms"), 1.5e-3);
  EXPECT_DOUBLE_EQ(parse_duration_s("150ns"), 150e-9);
  EXPECT_DOUBLE_EQ(parse_duration_s("2"), 2.0);
  EXPECT_THROW(parse_duration_s("fast"), std::invalid_argument);
  EXPECT_THROW(parse_duration_s("3 parsecs"), std::invalid_argument);
}

TEST(Units, BytesAndBandwidth) {
  EXPECT_EQ(parse_bytes("1GiB"), 1073741824u);
  EXPECT_EQ(parse_bytes("64KiB"), 65536u);
  EXPECT_EQ(parse_bytes("1GB"), 1000000000u);
  EXPECT_THROW(parse_bytes("1.5B"), std::invalid_argument);
  EXPECT_DOUBLE_EQ(parse_bandwidth_Bps("12GB/s"), 12e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth_Bps("100Gbps"), 12.5e9);
  EXPECT_DOUBLE_EQ(parse_rate_GTps("16GT/s"), 16.0);
  EXPECT_THROW(parse_bandwidth_Bps("12 furlongs"), std::invalid_argument);
}

// Outputs are written whole or not at all, also when a signal ends the process while they
// are written: a closed terminal (SIGHUP) and Ctrl-\ (SIGQUIT) as well as SIGINT and SIGTERM
// remove the temporary files and the output directory the write made (SIGHUP left both).
TEST(Process, SignalWhileWritingLeavesNothing) {
  namespace fs = std::filesystem;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    composim::testing::TempDir d;
    const std::string out = d.path() + "/new/out";
    const pid_t pid = fork();
    if (pid == 0) {
      for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) std::signal(s, SIG_DFL);
      sim::write_streams_atomically(out, {{"a.csv", [](std::ostream& o) { o << "x\n"; }},
                                          {"b.json", [sig](std::ostream& o) {
                                             o << "{" << std::flush;
                                             std::raise(sig);
                                           }}});
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << "signal " << sig << ", status " << status;
    EXPECT_FALSE(fs::exists(d.path() + "/new")) << "signal " << sig;
    EXPECT_EQ(std::distance(fs::directory_iterator(d.path()), fs::directory_iterator()), 0) << "signal " << sig;
  }
  // A writer that fails (out of memory, a bad value) leaves nothing either.
  {
    composim::testing::TempDir d;
    EXPECT_THROW(sim::write_streams_atomically(d.path() + "/new", {{"a.csv", [](std::ostream& o) {
                                                                      o << "x";
                                                                      throw std::runtime_error("writer failed");
                                                                    }}}),
                 std::runtime_error);
    EXPECT_EQ(std::distance(fs::directory_iterator(d.path()), fs::directory_iterator()), 0);
  }
  // An existing directory stays, without the temporary files.
  composim::testing::TempDir d;
  const pid_t pid = fork();
  if (pid == 0) {
    std::signal(SIGHUP, SIG_DFL);
    sim::write_streams_atomically(d.path(), {{"a.csv", [](std::ostream& o) {
                                                o << "x" << std::flush;
                                                std::raise(SIGHUP);
                                              }}});
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(fs::is_directory(d.path()));
  EXPECT_EQ(std::distance(fs::directory_iterator(d.path()), fs::directory_iterator()), 0);
}

// sweep, validate and calibrate stop when a child was ended by Ctrl-C or a kill, which
// they learn only from std::system's status: a signal, or a shell's exit status 128 + it.
TEST(Process, EndedByInterrupt) {
  auto status_of_child_raising = [](int sig) {
    const pid_t pid = fork();
    if (pid == 0) {
      std::signal(sig, SIG_DFL);
      std::raise(sig);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
  };
  EXPECT_TRUE(sim::ended_by_interrupt(status_of_child_raising(SIGINT)));
  EXPECT_TRUE(sim::ended_by_interrupt(status_of_child_raising(SIGTERM)));
  EXPECT_FALSE(sim::ended_by_interrupt(status_of_child_raising(SIGKILL)));  // out of memory: a failure
  EXPECT_FALSE(sim::ended_by_interrupt(status_of_child_raising(SIGSEGV)));
  EXPECT_TRUE(sim::ended_by_interrupt(std::system("exit 130")));
  EXPECT_TRUE(sim::ended_by_interrupt(std::system("exit 143")));
  EXPECT_FALSE(sim::ended_by_interrupt(std::system("exit 2")));
  EXPECT_FALSE(sim::ended_by_interrupt(std::system("true")));
  EXPECT_FALSE(sim::ended_by_interrupt(-1));  // std::system could not run a shell
}

// A child's error line is what its log says why, even when its buffered stdout (notes)
// landed after it: a sweep point's error column showed a note instead of "No space left".
TEST(Process, LastLinePrefersTheErrorLine) {
  char tmpl[] = "/tmp/composim-log-XXXXXX";
  const int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  const std::string text = "composim: error: out/summary.json: No space left on device\nnote: a.json is a synthetic trace\n\n";
  ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fd);
  EXPECT_EQ(composim::sim::last_line(tmpl), "composim: error: out/summary.json: No space left on device");
  std::FILE* f = std::fopen(tmpl, "w");
  std::fputs("step 1\nlast words\n", f);
  std::fclose(f);
  EXPECT_EQ(composim::sim::last_line(tmpl), "last words");
  std::remove(tmpl);
  EXPECT_EQ(composim::sim::last_line(tmpl), "");
}
