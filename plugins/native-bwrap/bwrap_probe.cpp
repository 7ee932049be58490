#include "bwrap_probe.hpp"

#include "bwrap_process.hpp"
#include "mount_plan.hpp"
#include "unique_pipe.hpp"

#include "ccsandbox/file_identity.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

namespace ccsandbox::bwrap {

namespace {

bool isExecutableFile(const std::string &path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// A small kernel file, whole ("" when it cannot be read). Plain reads, not
// iostreams: this runs at every start (the probe's fingerprint), and the
// first stream of a plugin that carries its own C++ runtime sets up that
// runtime's locale, about 0.1 ms.
std::string readKernelFile(const char *path) {
  std::string text;
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

// The value of a sysctl: its file's first word.
std::string readSysctl(const char *path) {
  const std::string text = readKernelFile(path);
  const char *space = " \t\n";
  const auto start = text.find_first_not_of(space);
  if (start == std::string::npos) return "";
  return text.substr(start, text.find_first_of(space, start) - start);
}

// Why this kernel refuses user namespaces to this user, when it visibly does.
std::string usernsRestriction() {
  if (readSysctl("/proc/sys/user/max_user_namespaces") == "0")
    return "user.max_user_namespaces is 0";
  if (readSysctl("/proc/sys/kernel/unprivileged_userns_clone") == "0")
    return "kernel.unprivileged_userns_clone is 0";
  if (readSysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1")
    return "AppArmor restricts unprivileged user namespaces "
           "(kernel.apparmor_restrict_unprivileged_userns is 1)";
  return "";
}

struct RunOutput {
  int status = -1;
  std::string output;
  bool timedOut = false;
};

RunOutput runCaptured(const std::vector<std::string> &argv, SpawnerThread &spawner) {
  UniquePipe pipe;
  RunOutput out;
  auto process = spawner.run([&] { return BwrapProcess(argv, pipe.write(), -1); });
  pipe.closeWrite();
  out.output = pipe.readAll(std::chrono::seconds(10));
  auto status = process.waitFor(std::chrono::seconds(10));
  if (!status) {
    out.timedOut = true;
    out.status = process.kill();
  } else {
    out.status = *status;
  }
  while (!out.output.empty() && (out.output.back() == '\n' || out.output.back() == ' '))
    out.output.pop_back();
  return out;
}

std::string lineAfter(const std::string &output, const std::string &prefix) {
  std::size_t at = output.rfind(prefix);
  if (at == std::string::npos || (at != 0 && output[at - 1] != '\n')) return "";
  std::size_t end = output.find('\n', at);
  return output.substr(at + prefix.size(),
                       end == std::string::npos ? std::string::npos : end - at - prefix.size());
}

// What the trial's helper said about confining a child inside the sandbox. Filename and unlink
// rules are claimed only when the supervisor worked there; without it the router refuses policies
// that need them (fail closed). Exec control is Landlock's alone.
void addConfinement(const RunOutput &check, ProbeOutcome &out) {
  ProbeResult &r = out.result;
  std::string supervisor = lineAfter(check.output, "supervisor: ");
  std::string landlock = lineAfter(check.output, "landlock: ");
  if (check.status != 0 || supervisor.empty())
    supervisor = "the confinement trial failed: " +
                 (check.output.empty() ? std::string("no message") : check.output);
  if (supervisor != "ok") {
    r.note += "; no filename rules: " + supervisor;
    return;
  }
  out.host.confine = true;
  r.capabilities.insert(
      {capability::kFilenameRules, capability::kUnlinkRules, capability::kSupervisedViolations});
  if (landlock == "ok")
    r.capabilities.insert(capability::kExecControl);
  else
    r.note += "; " + (landlock.empty() ? std::string("Landlock state unknown") : landlock);
}

}  // namespace

std::string findExecutable(const std::string &name) {
  const char *env = std::getenv("PATH");
  std::string path = env && *env ? env : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (!dir.empty() && isExecutableFile(dir + "/" + name)) return dir + "/" + name;
    start = end + 1;
  }
  return "";
}

namespace {

// Finds bwrap and the helper; on return `out.result.hint` is set when one is missing.
void locate(const std::string &bwrapSetting, const std::string &helperSetting,
            const std::string &defaultHelper, ProbeOutcome &out) {
  ProbeResult &r = out.result;
  BwrapHost &host = out.host;

  if (!bwrapSetting.empty()) {
    if (!isExecutableFile(bwrapSetting)) {
      r.requiresInstall = true;
      r.hint = "the bwrapPath setting names " + bwrapSetting +
               ", which is not an executable file: install the bubblewrap package or fix the "
               "setting";
      return;
    }
    host.bwrapPath = bwrapSetting;
  } else {
    host.bwrapPath = findExecutable("bwrap");
    if (host.bwrapPath.empty()) {
      r.requiresInstall = true;
      r.hint =
          "bubblewrap (bwrap) is not installed: install the bubblewrap package "
          "(sudo apt-get install bubblewrap on Debian/Ubuntu, sudo dnf install bubblewrap "
          "on Fedora)";
      return;
    }
  }
  host.helperPath = helperSetting.empty() ? defaultHelper : helperSetting;
  if (!isExecutableFile(host.helperPath)) {
    r.hint = "the sandbox helper " + host.helperPath +
             " is missing or not executable: reinstall ccsandbox, or set the native-bwrap "
             "plugin's helperPath setting";
    return;
  }
  host.callerIsRoot = ::geteuid() == 0;
}

// The binary `path` and which file it is now.
std::string binaryIdentity(const std::string &path) {
  std::string id = fileIdentity(path);
  return path + "@" + (id.empty() ? "missing" : id);
}

std::string namespaceOf(const char *name) {
  char link[64] = {};
  std::string path = std::string("/proc/self/ns/") + name;
  ssize_t n = ::readlink(path.c_str(), link, sizeof link - 1);
  return n > 0 ? std::string(link, static_cast<std::size_t>(n)) : "?";
}

// The lines of /proc/self/status that decide what this process may unshare.
std::string confinementOfCaller() {
  const std::string status = readKernelFile("/proc/self/status");
  std::string out;
  for (std::size_t at = 0; at < status.size();) {
    std::size_t end = status.find('\n', at);
    if (end == std::string::npos) end = status.size();
    const std::string_view line(status.data() + at, end - at);
    for (const char *key : {"CapEff:", "NoNewPrivs:", "Seccomp:", "Seccomp_filters:"})
      if (line.starts_with(key)) (out += line) += ";";
    at = end + 1;
  }
  return out;
}

}  // namespace

std::optional<std::string> bwrapProbeFingerprint(const std::string &bwrapSetting,
                                                 const std::string &helperSetting,
                                                 const std::string &defaultHelper) {
  ProbeOutcome located;
  locate(bwrapSetting, helperSetting, defaultHelper, located);
  if (!located.result.hint.empty()) return std::nullopt;  // nothing a kept result could say
  const BwrapHost &host = located.host;
  struct utsname u {};
  ::uname(&u);
  // Everything the trial's outcome depends on that can change within one boot for one
  // user: the two binaries, the namespaces and confinement this process runs in (a
  // container shares the boot), and the sysctls that gate user namespaces.
  std::string out =
      "bwrap=" + binaryIdentity(host.bwrapPath) + ";helper=" + binaryIdentity(host.helperPath) +
      ";euid=" + std::to_string(::geteuid()) + ";egid=" + std::to_string(::getegid()) +
      ";kernel=" + u.release + ";userns=" + namespaceOf("user") + ";mntns=" + namespaceOf("mnt") +
      ";status=" + confinementOfCaller();
  for (const char *sysctl :
       {"/proc/sys/user/max_user_namespaces", "/proc/sys/kernel/unprivileged_userns_clone",
        "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"})
    ((out += ";") += sysctl) += "=" + readSysctl(sysctl);
  return out;
}

ProbeOutcome restoreBwrapProbe(const ProbeResult &earlier, const std::string &bwrapSetting,
                               const std::string &helperSetting, const std::string &defaultHelper) {
  ProbeOutcome out;
  locate(bwrapSetting, helperSetting, defaultHelper, out);
  if (!out.result.hint.empty()) throw std::runtime_error(out.result.hint);
  if (!earlier.available) throw std::runtime_error("a kept probe must say available");
  const auto *nested = earlier.state.if_contains(kStateDisableNestedUserns);
  if (!nested || !nested->is_bool())
    throw std::runtime_error(std::string("the kept probe has no state.") +
                             kStateDisableNestedUserns);
  out.host.disableNestedUserns = nested->get_bool();
  out.host.confine = earlier.has(capability::kFilenameRules);
  out.result = earlier;
  return out;
}

ProbeOutcome probeBwrap(const std::string &bwrapSetting, const std::string &helperSetting,
                        const std::string &defaultHelper, SpawnerThread &spawner) {
  ProbeOutcome out;
  ProbeResult &r = out.result;
  BwrapHost &host = out.host;
  locate(bwrapSetting, helperSetting, defaultHelper, out);
  if (!r.hint.empty()) return out;

  // The trial: the namespaces a launch asks for, our helper inside.
  // --disable-userns (no user namespace inside the sandbox) needs bubblewrap
  // 0.8; an older one says it does not know the option, and is tried without.
  host.disableNestedUserns = !host.callerIsRoot;
  // One trial does both jobs: it starts a sandbox like a launch's, and in it
  // the helper confines a child exactly as it confines a command. The
  // helper exits 0 whenever it ran, so a failure here is the sandbox's.
  auto trialRun = [&] {
    MountPlanInput in;
    in.callerIsRoot = host.callerIsRoot;
    in.disableNestedUserns = host.disableNestedUserns;
    std::vector<std::string> argv{host.bwrapPath};
    for (auto &a : namespaceArgs(in)) argv.push_back(a);
    for (const char *a : {"--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--"})
      argv.push_back(a);
    argv.push_back(host.helperPath);
    argv.push_back("--check-confinement");
    return runCaptured(argv, spawner);
  };
  RunOutput trial = trialRun();
  if (trial.status != 0 && host.disableNestedUserns &&
      trial.output.find("disable-userns") != std::string::npos) {
    host.disableNestedUserns = false;
    trial = trialRun();
  }
  if (trial.status == 0) {
    r.available = true;
    r.note = kAvailableNote;
    r.capabilities = {capability::kReadDeny, capability::kWriteRoots, capability::kWriteDeny,
                      capability::kNetworkProxy};
    addConfinement(trial, out);
    r.state[kStateDisableNestedUserns] = host.disableNestedUserns;
    return out;
  }
  std::string said = trial.timedOut ? "it did not finish within 10 s"
                                    : (trial.output.empty() ? "no message" : trial.output);
  std::string restriction = host.callerIsRoot ? "" : usernsRestriction();
  bool looksLikeUserns = said.find("namespace") != std::string::npos ||
                         said.find("uid map") != std::string::npos ||
                         said.find("Operation not permitted") != std::string::npos;
  if (!restriction.empty() || (!host.callerIsRoot && looksLikeUserns)) {
    r.hint = "the kernel forbids unprivileged user namespaces" +
             (restriction.empty() ? std::string() : " (" + restriction + ")") +
             ", so bubblewrap cannot build a sandbox for this user: allow them (sysctl), or "
             "install bwrap setuid root. bwrap said: " +
             said;
  } else {
    r.hint = "bubblewrap is installed but a trial sandbox did not start: " + said;
  }
  return out;
}

}  // namespace ccsandbox::bwrap
