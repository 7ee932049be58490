// Start-up benchmark of the Linux native backend, against its real peers, in
// one run (docs/performance.md has the targets and the last figures):
//
//   ccsandbox run -- true           the whole thing: probe, launch, exec, destroy
//   bwrap --ro-bind / / --unshare-all true     bare bubblewrap
//   srt true                        Anthropic's sandbox runtime (when given)
//   exec `true` in a warm session   what cc_server pays per command
//
// usage: ccsandbox-bench-startup --cli PATH [--srt PATH] [--runs N] [--bwrap PATH]
// Prints the median and p90 of each, then the ratios. Nothing here is a test:
// it measures, it does not judge.
#include "ccsandbox/runtime.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

extern char **environ;

namespace {

using Clock = std::chrono::steady_clock;
using Ms = std::chrono::duration<double, std::milli>;

struct Stats {
  double median = 0, p90 = 0;
  int failures = 0;
};

// Runs argv with stdio on /dev/null; returns the exit status (-1: not started).
int runQuiet(const std::vector<std::string> &argv) {
  std::vector<char *> cargv;
  for (auto &a : argv) cargv.push_back(const_cast<char *>(a.c_str()));
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  for (int fd = 0; fd < 3; ++fd) posix_spawn_file_actions_addopen(&fa, fd, "/dev/null", O_RDWR, 0);
  pid_t pid;
  int rc = posix_spawnp(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

Stats measure(int runs, const std::function<int()> &once) {
  once();  // warm the page cache; not counted
  std::vector<double> times;
  Stats s;
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    int rc = once();
    times.push_back(Ms(Clock::now() - t0).count());
    if (rc != 0) ++s.failures;
  }
  std::sort(times.begin(), times.end());
  s.median = times[times.size() / 2];
  s.p90 = times[std::min(times.size() - 1, times.size() * 9 / 10)];
  return s;
}

void row(const std::string &name, const Stats &s) {
  std::printf("  %-44s median %8.2f ms   p90 %8.2f ms%s\n", name.c_str(), s.median, s.p90,
              s.failures ? ("   (" + std::to_string(s.failures) + " runs failed)").c_str() : "");
}

}  // namespace

int main(int argc, char **argv) {
  std::string cli, srt, bwrap = "bwrap";
  int runs = 30;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--cli" && i + 1 < argc)
      cli = argv[++i];
    else if (a == "--srt" && i + 1 < argc)
      srt = argv[++i];
    else if (a == "--bwrap" && i + 1 < argc)
      bwrap = argv[++i];
    else if (a == "--runs" && i + 1 < argc)
      runs = std::max(3, std::atoi(argv[++i]));
    else {
      std::cerr
          << "usage: ccsandbox-bench-startup --cli PATH [--srt PATH] [--runs N] [--bwrap PATH]\n";
      return 2;
    }
  }
  if (cli.empty()) {
    std::cerr << "ccsandbox-bench-startup: --cli PATH (the ccsandbox binary) is required\n";
    return 2;
  }
  // Absolute before we move into the scratch directory.
  cli = std::filesystem::absolute(cli).string();
  if (!srt.empty()) srt = std::filesystem::absolute(srt).string();
  std::string work = std::filesystem::temp_directory_path() / "ccsandbox-bench-XXXXXX";
  std::vector<char> buf(work.begin(), work.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) return 1;
  work = buf.data();
  if (chdir(work.c_str()) != 0) return 1;

  std::printf("start-up, %d runs each (after one unmeasured warm-up), uid %d\n", runs, getuid());
  // Without filename rules: until the next issue lands the standard policy is
  // refused on Linux; the opt-out is the launch that can run today.
  Stats ours = measure(runs, [&] {
    return runQuiet({cli, "run", "--backend", "native", "--", "true"});
  });
  row("ccsandbox run --backend native -- true", ours);
  Stats bare = measure(runs, [&] {
    return runQuiet({bwrap, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"});
  });
  row("bwrap --ro-bind / / --unshare-all true", bare);
  Stats none = measure(runs, [&] {
    return runQuiet({cli, "run", "--backend", "none", "--", "true"});
  });
  row("ccsandbox run --backend none -- true", none);

  std::optional<Stats> peer;
  if (!srt.empty()) {
    peer = measure(std::max(3, runs / 3), [&] { return runQuiet({srt, "true"}); });
    row("srt true", *peer);
  }

  // A warm session, through the core's public API as cc_server uses it.
  std::optional<Stats> warm;
  try {
    ccsandbox::Runtime runtime;
    ccsandbox::LaunchOptions launch;
    launch.spec.bindMounts.push_back({work, work, false});
    launch.spec.guestWorkdir = work;
    launch.backend = ccsandbox::RequestedBackend::native;
    launch.policy.standardFilenameRules = false;
    auto session = runtime.launch(std::move(launch));
    warm = measure(runs * 3, [&] {
      auto p = session->exec({.argv = {"true"}});
      return p->wait();
    });
    session->destroy();
    row("exec `true` in a warm native session", *warm);
  } catch (const std::exception &e) {
    std::printf("  warm session: %s\n", e.what());
  }

  std::printf("\nratios (median):\n");
  std::printf("  ccsandbox run / bare bwrap      %6.2fx   (target: <= 3x)\n",
              ours.median / bare.median);
  if (peer)
    std::printf("  srt true / ccsandbox run        %6.2fx   (target: >= 20x)\n",
                peer->median / ours.median);
  else
    std::printf("  srt true / ccsandbox run        not measured (no --srt)\n");
  if (warm) std::printf("  warm exec / bare bwrap          %6.2fx\n", warm->median / bare.median);
  std::filesystem::remove_all(work);
  return 0;
}
