// Memory and concurrency of the core with the Linux native backend
// (DESIGN.md: "peak memory of the core with one session under 20 MiB; 100
// concurrent sessions on 2 cores"):
//
//   peak RSS of `ccsandbox run -- true`   the largest of its processes (the
//                                         CLI, bubblewrap, the helper, true),
//                                         from wait4's rusage, over N runs
//   N sessions alive at once              launched through the public C++ API
//                                         as cc_server does, then a command in
//                                         every one of them at the same time
//
// usage: ccsandbox-bench-sessions --cli PATH [--sessions N] [--runs N]
// Prints what it measured; nothing here judges (docs/performance.md does).
#include "ccsandbox/logging.hpp"
#include "ccsandbox/runtime.hpp"
#include "quiet_run.hpp"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using Ms = std::chrono::duration<double, std::milli>;

// A field of /proc/self/status in KiB (VmRSS, VmHWM), 0 when absent.
long selfStatusKiB(const std::string &field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::atol(line.c_str() + field.size() + 1);
  return 0;
}

int openFds() {
  int n = 0;
  if (DIR *d = ::opendir("/proc/self/fd")) {
    while (dirent *e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
  }
  return n - 1;  // the directory's own descriptor
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char **argv) {
  std::string cli;
  int sessions = 100, runs = 20;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--cli" && i + 1 < argc)
      cli = argv[++i];
    else if (a == "--sessions" && i + 1 < argc)
      sessions = std::max(1, std::atoi(argv[++i]));
    else if (a == "--runs" && i + 1 < argc)
      runs = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr,
                   "usage: ccsandbox-bench-sessions --cli PATH [--sessions N] [--runs N]\n");
      return 2;
    }
  }
  if (cli.empty()) {
    std::fprintf(stderr,
                 "ccsandbox-bench-sessions: --cli PATH (the ccsandbox binary) is required\n");
    return 2;
  }
  // Warnings and errors only: without a sink Boost.Log prints every record.
  ccsandbox::logging::enableConsole(ccsandbox::logging::Level::warning);
  cli = std::filesystem::absolute(cli).string();
  const std::string work = ccsandbox::bench::enterScratchDirectory();
  if (work.empty()) return 1;

  // 1. The one-shot CLI with one session.
  std::vector<double> peaks;
  int failed = 0;
  for (int r = 0; r < runs; ++r) {
    const auto run = ccsandbox::bench::runQuiet({cli, "run", "--backend", "native", "--", "true"});
    if (run.status != 0)
      ++failed;
    else
      peaks.push_back(static_cast<double>(run.maxRssKiB));
  }
  std::printf(
      "peak RSS of `ccsandbox run --backend native -- true` (largest of its processes), "
      "%d runs:\n  median %.1f MiB, max %.1f MiB%s   (target: < 20 MiB)\n",
      runs, median(peaks) / 1024,
      peaks.empty() ? 0.0 : *std::max_element(peaks.begin(), peaks.end()) / 1024,
      failed ? ("   (" + std::to_string(failed) + " runs failed)").c_str() : "");

  // 2. Many sessions alive at once in one core, as cc_server holds them.
  const long rssBefore = selfStatusKiB("VmRSS");
  const int fdsBefore = openFds();
  rlimit nofile{};
  ::getrlimit(RLIMIT_NOFILE, &nofile);
  std::vector<std::shared_ptr<ccsandbox::Session>> live;
  std::vector<double> launchMs;
  std::string error;
  auto t0 = Clock::now();
  {
    ccsandbox::Runtime runtime;
    for (int i = 0; i < sessions; ++i) {
      ccsandbox::LaunchOptions launch;
      launch.spec.bindMounts.push_back({work, work, false});
      launch.spec.guestWorkdir = work;
      launch.backend = ccsandbox::RequestedBackend::native;
      auto l0 = Clock::now();
      try {
        live.push_back(runtime.launch(std::move(launch)));
      } catch (const std::exception &e) {
        error = "session " + std::to_string(i + 1) + " could not launch: " + e.what();
        break;
      }
      launchMs.push_back(Ms(Clock::now() - l0).count());
    }
    const double launchAll = Ms(Clock::now() - t0).count();
    const int fdsLive = openFds();
    const long rssLive = selfStatusKiB("VmRSS");

    // One command in every session at once: all started, then all awaited.
    std::vector<std::shared_ptr<ccsandbox::Process>> commands;
    std::string execError;
    int bad = 0;
    auto c0 = Clock::now();
    for (auto &s : live) {
      try {
        commands.push_back(s->exec({.argv = {"sh", "-c", "echo ok >/dev/null"}}));
      } catch (const std::exception &e) {
        if (execError.empty()) execError = e.what();
        ++bad;
      }
    }
    const std::size_t started = commands.size();
    for (auto &c : commands)
      if (c->wait() != 0) ++bad;
    const double execAll = Ms(Clock::now() - c0).count();

    auto d0 = Clock::now();
    for (auto &s : live) s->destroy();
    const double destroyAll = Ms(Clock::now() - d0).count();
    const std::size_t count = live.size();
    live.clear();
    commands.clear();

    std::printf("\n%zu of %d native sessions alive at once in one core (fd limit %llu):\n", count,
                sessions, static_cast<unsigned long long>(nofile.rlim_cur));
    std::printf("  launched one after another in %.0f ms (median %.1f ms each)\n", launchAll,
                median(launchMs));
    std::printf("  a command in every one, all at once: %.0f ms for %zu started, %d failed\n",
                execAll, started, bad);
    if (!execError.empty()) std::printf("  first refused command: %s\n", execError.c_str());
    std::printf("  destroyed in %.0f ms\n", destroyAll);
    std::printf(
        "  core process: RSS %.1f -> %.1f MiB with them (%.0f KiB a session), "
        "descriptors %d -> %d (%.1f a session)\n",
        rssBefore / 1024.0, rssLive / 1024.0,
        count ? static_cast<double>(rssLive - rssBefore) / static_cast<double>(count) : 0.0,
        fdsBefore, fdsLive,
        count ? static_cast<double>(fdsLive - fdsBefore) / static_cast<double>(count) : 0.0);
  }
  std::printf("  after the runtime is gone: descriptors %d (before: %d), peak RSS %.1f MiB\n",
              openFds(), fdsBefore, selfStatusKiB("VmHWM") / 1024.0);
  if (!error.empty()) std::printf("  stopped: %s\n", error.c_str());
  std::filesystem::remove_all(work);
  return error.empty() ? 0 : 1;
}
