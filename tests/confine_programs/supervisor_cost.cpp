// What the supervisor costs per call, measured without bubblewrap or the CLI:
// each workload runs once unconfined and once confined (this process acting
// as the helper), and the supervisor's own CPU time is divided by the number
// of notifications it served. CPU time and notification counts do not depend
// on the machine's load the way wall time does.
//
//   confine_supervisor_cost [RUNS [DIR [WORKLOAD [plain|confined]]]]
//
// (a development tool, not a test). WORKLOAD picks workloads by substring;
// the last argument runs one side only, e.g. under `perf stat -e instructions`.
//
// DIR defaults to /dev/shm: on tmpfs the file system's own cost is small and
// steady, so what remains is the supervisor's.
#include "confine_harness.hpp"

#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace ccsandbox;

namespace {

double cpuMs(const rusage &r) {
  auto ms = [](const timeval &t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return ms(r.ru_utime) + ms(r.ru_stime);
}

struct Sample {
  double wallMs = 0, ownCpuMs = 0, childCpuMs = 0;
  confine::SupervisorStats stats;
};

// The compiler's temporary files go to DIR/tmp, on the same file system as
// the workload (the sandbox's /tmp is a tmpfs of its own).
std::string tmpDir(const std::string &out) {
  return fs::path(out).parent_path() / "tmp";
}

// The same command unconfined, for the baseline.
int runPlain(const std::string &script, const std::string &cwd) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(cwd.c_str()) != 0) ::_exit(126);
    ::setenv("TMPDIR", tmpDir(cwd).c_str(), 1);
    ::execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char *>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

Sample measure(bool confined, const std::string &script, const std::string &dir) {
  fs::remove_all(dir + "/out");
  fs::create_directories(dir + "/out");
  rusage self0{}, child0{}, self1{}, child1{};
  ::getrusage(RUSAGE_SELF, &self0);
  ::getrusage(RUSAGE_CHILDREN, &child0);
  const auto t0 = std::chrono::steady_clock::now();
  Sample s;
  if (confined) {
    auto options = test::inDir(dir + "/out");
    options.env["TMPDIR"] = tmpDir(options.cwd);
    auto r = test::shConfined(test::standardRules(dir), script, options);
    if (r.status != 0) {
      std::fprintf(stderr, "confined run failed: %s\n", test::describe(r).c_str());
      std::exit(1);
    }
    s.stats = r.stats;
  } else if (runPlain(script, dir + "/out") != 0) {
    std::fprintf(stderr, "plain run failed: %s\n", script.c_str());
    std::exit(1);
  }
  const auto t1 = std::chrono::steady_clock::now();
  ::getrusage(RUSAGE_SELF, &self1);
  ::getrusage(RUSAGE_CHILDREN, &child1);
  s.wallMs = std::chrono::duration<double, std::milli>(t1 - t0).count();
  s.ownCpuMs = cpuMs(self1) - cpuMs(self0);
  s.childCpuMs = cpuMs(child1) - cpuMs(child0);
  return s;
}

Sample median(std::vector<Sample> v) {
  std::sort(v.begin(), v.end(), [](auto &a, auto &b) { return a.wallMs < b.wallMs; });
  Sample m = v[v.size() / 2];
  std::vector<double> own, child;
  for (auto &s : v) own.push_back(s.ownCpuMs), child.push_back(s.childCpuMs);
  std::sort(own.begin(), own.end());
  std::sort(child.begin(), child.end());
  m.ownCpuMs = own[own.size() / 2];
  m.childCpuMs = child[child.size() / 2];
  return m;
}

void makeInputs(const std::string &dir) {
  const std::string src = dir + "/src";
  for (int i = 0; i < 2000; ++i) {
    const std::string d = src + "/tree/d" + std::to_string(i % 40);
    fs::create_directories(d);
    std::ofstream(d + "/f" + std::to_string(i) + ".txt") << "file " << i << "\n";
  }
  fs::create_directories(dir + "/in/c");
  fs::create_directories(dir + "/tmp");
  const std::string tar = "tar -C " + src + " -cf " + dir + "/in/tree.tar tree";
  if (std::system(tar.c_str()) != 0) std::exit(1);
  std::string objs;
  for (int i = 0; i < 40; ++i) {
    const std::string n = std::to_string(i);
    std::ofstream(dir + "/in/c/u" + n + ".c")
        << "#include <stdio.h>\n#include <string.h>\nstatic int table[64];\nint u" << n
        << "(int x) { for (int k = 0; k < 64; ++k) table[k] = x * k + " << n
        << "; return table[x & 63]; }\n";
    objs += " u" + n + ".o";
  }
  std::ofstream(dir + "/in/c/Makefile") << "all:" << objs << "\n%.o: %.c\n\tcc -O1 -c -o $@ $<\n";
}

}  // namespace

int main(int argc, char **argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  std::string tmpl = std::string(argc > 2 ? argv[2] : "/dev/shm") + "/supervisor-cost.XXXXXX";
  if (!::mkdtemp(tmpl.data())) return 1;
  const std::string dir = tmpl;
  makeInputs(dir);
  struct Workload {
    const char *name, *script;
  } workloads[] = {
      {"empty command (true)", "true"},
      {"create 10000 files", "mkdir -p c && cd c && seq 1 10000 | xargs touch"},
      {"tar x of 2000 files", "mkdir -p x && tar -C x -xf ../in/tree.tar"},
      {"make -j1 of 40 C files", "cp -r ../in/c cc && make -s -j1 -C cc"},
  };
  std::printf("%-24s %9s %9s %7s | %9s %9s | %7s %7s %9s\n", "workload", "plain ms", "conf ms",
              "ratio", "sup cpu", "cmd cpu+", "notif", "bookk", "us/notif");
  const std::string only = argc > 3 ? argv[3] : "";
  const std::string side = argc > 4 ? argv[4] : "";
  for (const auto &w : workloads) {
    if (std::string(w.name).find(only) == std::string::npos) continue;
    std::vector<Sample> plain, conf;
    for (int i = 0; i < runs; ++i) {
      plain.push_back(side == "confined" ? Sample{} : measure(false, w.script, dir));
      conf.push_back(side == "plain" ? Sample{} : measure(true, w.script, dir));
    }
    const Sample p = median(plain), c = median(conf);
    const double calls = static_cast<double>(c.stats.notifications + c.stats.bookkept);
    std::printf("%-24s %9.1f %9.1f %6.2fx | %9.1f %9.1f | %7llu %7llu %9.1f\n", w.name, p.wallMs,
                c.wallMs, c.wallMs / p.wallMs, c.ownCpuMs, c.childCpuMs - p.childCpuMs,
                static_cast<unsigned long long>(c.stats.notifications),
                static_cast<unsigned long long>(c.stats.bookkept),
                calls > 0 ? c.ownCpuMs * 1e3 / calls : 0.0);
  }
  std::printf(
      "(median of %d; sup cpu: the supervising process's CPU time; cmd cpu+: the\n"
      " command's extra CPU time when confined)\n",
      runs);
  fs::remove_all(dir);
  return 0;
}
