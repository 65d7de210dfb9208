// Helpers shared by the tests: temporary files, running the composim binary, and the
// location of the shared real data (tests that need it skip with a message without it).
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include <sys/wait.h>

namespace composim::testing {

inline std::string source_dir() { return COMPOSIM_SOURCE_DIR; }

// ../shared/data, or "" when it is absent (CI and developer machines have it; a user's
// fresh clone may not).
inline std::string shared_data() {
  const std::string d = COMPOSIM_SHARED_DATA;
  return std::filesystem::is_directory(d + "/traces") ? d : std::string();
}

#define COMPOSIM_REQUIRE_SHARED_DATA()                                                           \
  do {                                                                                          \
    if (::composim::testing::shared_data().empty())                                             \
      GTEST_SKIP() << "skipped: ../shared/data is absent (real traces and measurements are read " \
                      "from there, never copied into the repo)";                               \
  } while (0)

// A fresh temporary directory, removed when the object dies.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/composim-test-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string write(const std::string& name, const std::string& content) const {
    const std::string p = path_ + "/" + name;
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }

 private:
  std::string path_;
};

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

// Runs the composim binary with `args` (a shell-quoted string); captures both streams.
inline CliResult run_cli(const std::string& args) {
  TempDir t;
  const std::string cmd = std::string(COMPOSIM_BINARY) + " " + args + " >" + t.path() + "/out 2>" + t.path() + "/err";
  CliResult r;
  const int status = std::system(cmd.c_str());
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  auto slurp = [](const std::string& p) {
    std::ifstream in(p);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  r.out = slurp(t.path() + "/out");
  r.err = slurp(t.path() + "/err");
  return r;
}

// The first data row of DIR/collective.csv (written by `composim collective --out DIR`),
// split on commas; empty if the file is missing.
inline std::vector<std::string> collective_csv_first_row(const std::string& dir) {
  std::ifstream csv(dir + "/collective.csv");
  std::string row;
  std::getline(csv, row);
  std::getline(csv, row);
  std::vector<std::string> f;
  std::stringstream ss(row);
  for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
  return f;
}

// Runs `composim ARGS` and expects it to fail as bad input does: exit status 2 and `message`
// in stderr.
inline void expect_cli_error(const std::string& args, const std::string& message) {
  auto r = run_cli(args);
  EXPECT_EQ(r.exit_code, 2) << "composim " << args << "\nstdout:\n" << r.out;
  EXPECT_NE(r.err.find(message), std::string::npos) << "composim " << args << "\nstderr:\n" << r.err;
}

// Runs `composim collective ARGS --out <a temporary directory>` and returns the first row of
// its collective.csv; a failed command is a test failure and gives a row of "nan" (20 columns).
inline std::vector<std::string> collective_row(const std::string& args) {
  TempDir d;
  auto r = run_cli("collective " + args + " --out " + d.path());
  EXPECT_EQ(r.exit_code, 0) << "composim collective " << args << ": " << r.err;
  auto f = collective_csv_first_row(d.path());
  if (f.size() < 20) f.assign(20, "nan");
  return f;
}

}  // namespace composim::testing
