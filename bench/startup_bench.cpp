// Start-up benchmark of the Linux native backend, against its real peers, in
// one run (docs/performance.md has the targets and the last figures):
//
//   ccsandbox run -- true           the whole thing: probe, launch, exec, destroy
//   bwrap --ro-bind / / --unshare-all true     bare bubblewrap
//   bwrap <the session's plan> true bubblewrap doing exactly the mounts of one
//                                   of our sessions (its /proc, /dev, binds,
//                                   masks), running true instead of our helper
//   srt true                        Anthropic's sandbox runtime (when given)
//   exec `true` in a warm session   what cc_server pays per command
//
// usage: ccsandbox-bench-startup --cli PATH [--srt PATH] [--runs N] [--bwrap PATH]
// Prints the median and p90 of each, then the ratios. Nothing here is a test:
// it measures, it does not judge.
#include "ccsandbox/logging.hpp"
#include "ccsandbox/runtime.hpp"
#include "quiet_run.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

using ccsandbox::bench::runQuiet;
using Clock = std::chrono::steady_clock;
using Ms = std::chrono::duration<double, std::milli>;

struct Stats {
  double median = 0, p90 = 0;
  int failures = 0;
};

struct Subject {
  std::string name;
  int every = 1;  // measured in every `every`-th round
  std::function<int()> once;
};

std::vector<Stats> measureInterleaved(int rounds, const std::vector<Subject> &subjects) {
  for (const auto &s : subjects) s.once();  // warm the page cache; not counted
  std::vector<std::vector<double>> times(subjects.size());
  std::vector<Stats> out(subjects.size());
  for (int r = 0; r < rounds; ++r)
    for (std::size_t i = 0; i < subjects.size(); ++i) {
      if (r % subjects[i].every != 0) continue;
      auto t0 = Clock::now();
      int rc = subjects[i].once();
      times[i].push_back(Ms(Clock::now() - t0).count());
      if (rc != 0) ++out[i].failures;
    }
  for (std::size_t i = 0; i < subjects.size(); ++i) {
    auto &t = times[i];
    std::sort(t.begin(), t.end());
    out[i].median = t[t.size() / 2];
    out[i].p90 = t[std::min(t.size() - 1, t.size() * 9 / 10)];
  }
  return out;
}

// The bubblewrap command line of a live session (its bwrap and bwrapArgs),
// up to and including "--": what follows is our helper and its arguments.
std::vector<std::string> bwrapPlanOf(const ccsandbox::SandboxHandle &handle) {
  const auto *bwrap = handle.details.if_contains("bwrap");
  const auto *args = handle.details.if_contains("bwrapArgs");
  if (!bwrap || !bwrap->is_string() || !args || !args->is_array()) return {};
  std::vector<std::string> argv{std::string(bwrap->get_string())};
  for (const auto &a : args->get_array()) {
    if (!a.is_string()) return {};
    argv.emplace_back(a.get_string());
    if (argv.back() == "--") return argv;
  }
  return {};
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
  // Warnings and errors only: without a sink Boost.Log prints every record.
  ccsandbox::logging::enableConsole(ccsandbox::logging::Level::warning);
  // Absolute before we move into the scratch directory.
  cli = std::filesystem::absolute(cli).string();
  if (!srt.empty()) srt = std::filesystem::absolute(srt).string();
  const std::string work = ccsandbox::bench::enterScratchDirectory();
  if (work.empty()) return 1;

  // Every subject runs once per round, in turn, so a change of load over the
  // run (other work on the machine, caches, CPU frequency) hits all of them
  // alike; srt, a hundred times slower, runs every third round.
  std::vector<Subject> subjects;
  // The standard policy: supervisor and Landlock on, as a user gets it.
  subjects.push_back({"ccsandbox run --backend native -- true", 1, [&] {
                        return runQuiet({cli, "run", "--backend", "native", "--", "true"}).status;
                      }});
  subjects.push_back({"bwrap --ro-bind / / --unshare-all true", 1, [&] {
                        return runQuiet({bwrap, "--ro-bind", "/", "/", "--unshare-all",
                                         "--die-with-parent", "true"})
                            .status;
                      }});
  subjects.push_back({"ccsandbox run --backend none -- true", 1, [&] {
                        return runQuiet({cli, "run", "--backend", "none", "--", "true"}).status;
                      }});
  if (!srt.empty())
    subjects.push_back({"srt true", 3, [&] { return runQuiet({srt, "true"}).status; }});

  // A warm session, through the core's public API as cc_server uses it
  // (standard policy). While it lives, its bubblewrap command line is also
  // the fair floor: the same mounts, with `true` where our helper would run.
  std::unique_ptr<ccsandbox::Runtime> runtime;
  std::shared_ptr<ccsandbox::Session> session;
  std::vector<std::string> plan;
  try {
    runtime = std::make_unique<ccsandbox::Runtime>();
    ccsandbox::LaunchOptions launch;
    launch.spec.bindMounts.push_back({work, work, false});
    launch.spec.guestWorkdir = work;
    launch.backend = ccsandbox::RequestedBackend::native;
    session = runtime->launch(std::move(launch));
    plan = bwrapPlanOf(session->handle());
  } catch (const std::exception &e) {
    std::printf("  warm session: %s\n", e.what());
  }
  if (!plan.empty()) {
    plan.push_back("true");
    subjects.push_back(
        {"bwrap with the session's mount plan, true", 1, [&] { return runQuiet(plan).status; }});
  }
  if (session)
    subjects.push_back({"exec `true` in a warm native session", 1,
                        [&] { return session->exec({.argv = {"true"}})->wait(); }});

  std::printf("start-up, %d interleaved rounds (after one unmeasured warm-up each), uid %d\n", runs,
              getuid());
  std::vector<Stats> stats = measureInterleaved(runs, subjects);
  for (std::size_t i = 0; i < subjects.size(); ++i) row(subjects[i].name, stats[i]);
  if (session) session->destroy();
  auto find = [&](const std::string &prefix) -> std::optional<Stats> {
    for (std::size_t i = 0; i < subjects.size(); ++i)
      if (subjects[i].name.rfind(prefix, 0) == 0) return stats[i];
    return std::nullopt;
  };
  Stats ours = *find("ccsandbox run --backend native");
  Stats bare = *find("bwrap --ro-bind");
  auto peer = find("srt");
  auto samePlan = find("bwrap with the session");
  auto warm = find("exec `true`");

  std::printf("\nratios (median):\n");
  std::printf("  ccsandbox run / bare bwrap      %6.2fx   (target: <= 3x)\n",
              ours.median / bare.median);
  if (peer)
    std::printf("  srt true / ccsandbox run        %6.2fx   (target: >= 20x)\n",
                peer->median / ours.median);
  else
    std::printf("  srt true / ccsandbox run        not measured (no --srt)\n");
  if (samePlan)
    std::printf(
        "  ccsandbox run / same-plan bwrap %6.2fx   (what ccsandbox adds to bubblewrap's\n"
        "                                            own work for the same mounts)\n",
        ours.median / samePlan->median);
  if (warm) std::printf("  warm exec / bare bwrap          %6.2fx\n", warm->median / bare.median);
  std::filesystem::remove_all(work);
  return 0;
}
