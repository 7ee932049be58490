// The native backend as a user meets it: `ccsandbox probe`, `ccsandbox run`
// routed to native by default, the refusal of the standard policy, violation
// events, `--backend none`, and no sandbox process outliving a killed
// `ccsandbox`. Runs as root and again unprivileged.
#define BOOST_TEST_MODULE native_bwrap_cli
#include <boost/test/unit_test.hpp>

#include "support/child_process.hpp"
#include "support/proc_file.hpp"
#include "support/temp_tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>

using namespace ccsandbox::test;

namespace {

const std::string kCli = CCSANDBOX_CLI;

ChildResult cli(std::vector<std::string> args, const std::string &cwd = "",
                std::map<std::string, std::string> env = {}) {
  args.insert(args.begin(), kCli);
  ChildOptions o;
  o.cwd = cwd;
  o.unsetEnv = {"CC_SERVER_SANDBOX", "CCSANDBOX_PLUGIN_PATH", "CCSANDBOX_PROBE_CACHE",
                "XDG_RUNTIME_DIR"};
  o.setEnv = std::move(env);
  return runChild(args, o);
}

// Host pids whose command line contains `needle`.
std::set<pid_t> pidsWithCmdline(const std::string &needle) {
  std::set<pid_t> out;
  DIR *d = ::opendir("/proc");
  while (dirent *e = ::readdir(d)) {
    pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    std::string cmd = readProcFile("/proc/" + std::string(e->d_name) + "/cmdline");
    if (cmd.find(needle) != std::string::npos) out.insert(pid);
  }
  ::closedir(d);
  return out;
}

pid_t parentOf(pid_t pid) {
  std::string stat = readProcFile("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  char state;
  int ppid = -1;
  std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid);
  return ppid;
}

// Alive: exists and is not a zombie.
bool alive(pid_t pid) {
  std::string stat = readProcFile("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

// `ccsandbox run -- sh -c SCRIPT` as a job of its own (a process group, as
// a shell makes one), stdin and stdout on /dev/null, stderr kept in a file.
// SCRIPT's "%s" becomes a token that sleeper() finds the command by. The
// group is killed if the test ends first.
struct Job {
  Job(const std::string &dir, std::string script) : errFile(dir + "/job-stderr") {
    std::mt19937 rng{std::random_device{}()};
    token = "1000." + std::to_string(100000 + rng() % 800000);
    script.replace(script.find("%s"), 2, token);
    pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);
      if (::chdir(dir.c_str()) != 0) ::_exit(127);
      ::unsetenv("XDG_RUNTIME_DIR");
      ::unsetenv("CCSANDBOX_PROBE_CACHE");
      int devnull = ::open("/dev/null", O_RDWR);
      int err = ::open(errFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(devnull, 0);
      ::dup2(devnull, 1);
      ::dup2(err, 2);
      ::execl(kCli.c_str(), kCli.c_str(), "run", "--", "sh", "-c", script.c_str(), (char *)nullptr);
      ::_exit(127);
    }
    ::setpgid(pid, pid);  // whichever of us runs first
  }
  ~Job() {
    if (reaped) return;
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  // The host pid of the command's `sleep TOKEN`, once it runs (bounded wait).
  pid_t sleeper() const {
    std::set<pid_t> sleeps;
    for (int i = 0; i < 1000 && sleeps.empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      sleeps = pidsWithCmdline(std::string("sleep\0", 6) + token);
    }
    BOOST_REQUIRE_EQUAL(sleeps.size(), 1u);
    return *sleeps.begin();
  }
  int wait() {
    int status = 0;
    BOOST_REQUIRE_EQUAL(::waitpid(pid, &status, 0), pid);
    reaped = true;
    return status;
  }
  std::string err() const {
    std::ifstream in(errFile);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  std::string errFile, token;
  pid_t pid = -1;
  bool reaped = false;
};

}  // namespace

BOOST_AUTO_TEST_CASE(probe_reports_native_available_with_its_note) {
  auto r = cli({"probe"});
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(r.out.find("native-bwrap") != std::string::npos);
  BOOST_TEST(r.out.find("agent sandbox ON bubblewrap — namespace isolation, no kernel boundary") !=
                 std::string::npos,
             r.out);
}

// A one-shot CLI keeps the probe result for the next one; `probe` re-checks.
BOOST_AUTO_TEST_CASE(run_reuses_a_kept_probe_and_probe_refreshes_it) {
  TempTree tree;
  std::string cache = tree.path() + "/cache";
  std::map<std::string, std::string> env{{"CCSANDBOX_PROBE_CACHE", cache}};
  const std::string kept = "probe of native-bwrap: kept result from " + cache;
  auto first = cli({"run", "-v", "--", "true"}, tree.path(), env);
  BOOST_TEST(first.status == 0, first.err);
  BOOST_TEST(first.err.find(kept) == std::string::npos, first.err);
  BOOST_TEST(std::filesystem::exists(cache + "/probe-native-bwrap.json"));
  auto second = cli({"run", "-v", "--events", "-", "--", "true"}, tree.path(), env);
  BOOST_TEST(second.status == 0, second.err);
  BOOST_TEST(second.err.find(kept) != std::string::npos, second.err);
  BOOST_TEST(second.out.find(R"("backend":"native")") != std::string::npos, second.out);
  auto probe = cli({"probe", "-v"}, tree.path(), env);
  BOOST_TEST(probe.status == 0, probe.err);
  BOOST_TEST(probe.err.find(kept) == std::string::npos, probe.err);

  auto off = cli({"run", "-v", "--", "true"}, tree.path(), {{"CCSANDBOX_PROBE_CACHE", "off"}});
  BOOST_TEST(off.status == 0, off.err);
  BOOST_TEST(off.err.find("kept result") == std::string::npos, off.err);
  auto bad = cli({"run", "--", "true"}, tree.path(), {{"CCSANDBOX_PROBE_CACHE", "sometimes"}});
  BOOST_TEST(bad.status == 125);
  BOOST_TEST(
      bad.err.find("CCSANDBOX_PROBE_CACHE: invalid value \"sometimes\"") != std::string::npos,
      bad.err);
}

BOOST_AUTO_TEST_CASE(run_routes_to_native_under_the_standard_policy) {
  TempTree tree;
  auto standard = cli({"run", "--", "cat", "/proc/1/cmdline"}, tree.path());
  BOOST_TEST(standard.status == 0, standard.err);
  BOOST_TEST(standard.out.find("ccsandbox-bwrap-helper") != std::string::npos);  // inside a sandbox
  auto weaker = cli({"run", "--no-filename-rules", "--", "cat", "/proc/1/cmdline"}, tree.path());
  BOOST_TEST(weaker.status == 0, weaker.err);
  BOOST_TEST(weaker.out.find("ccsandbox-bwrap-helper") != std::string::npos);
  auto none = cli({"run", "--backend", "none", "--", "sh", "-c", "echo host; exit 3"}, tree.path());
  BOOST_TEST(none.status == 3);
  BOOST_TEST(none.out == "host\n");
}

// Issue 6's "done when": natively, no file, exactly one violation naming it.
BOOST_AUTO_TEST_CASE(redirect_to_dot_env_is_refused_natively_with_one_violation) {
  TempTree tree;
  auto r = cli({"run", "--events", "-", "--", "sh", "-c", "echo x > .env"}, tree.path());
  BOOST_TEST(r.status != 0);
  BOOST_TEST(r.out.find(R"("backend":"native")") != std::string::npos, r.out);
  BOOST_TEST(::access((tree.path() + "/.env").c_str(), F_OK) != 0);
  std::size_t count = 0;
  for (std::size_t at = 0; (at = r.out.find(R"("type":"violation")", at)) != std::string::npos;
       ++at)
    ++count;
  BOOST_TEST(count == 1u, r.out);
  BOOST_TEST(r.out.find(R"("action":"file-write-create","target":")" + tree.path() + R"(/.env")") !=
                 std::string::npos,
             r.out);
}

BOOST_AUTO_TEST_CASE(denials_become_violation_events_and_stderr_passes_through) {
  TempTree tree;
  auto r = cli({"run", "--no-filename-rules", "--events", "-", "--", "touch", "/usr/ccsandbox-x"},
               tree.path());
  BOOST_TEST(r.status != 0);
  BOOST_TEST(r.out.find(R"("type":"violation")") != std::string::npos, r.out);
  BOOST_TEST(r.out.find(R"("target":"/usr/ccsandbox-x")") != std::string::npos, r.out);
  BOOST_TEST(r.out.find(R"("action":"file-write-create")") != std::string::npos, r.out);
  // Without --events the stream reaches stderr unchanged.
  auto plain = cli({"run", "--no-filename-rules", "--", "touch", "/usr/ccsandbox-x"}, tree.path());
  BOOST_TEST(plain.err.find("touch: cannot touch '/usr/ccsandbox-x': Permission denied\n") !=
                 std::string::npos,
             plain.err);
}

// The helper of a sanitizer build cannot run out of descriptors and still
// tell right from wrong: UBSan's vptr check probes memory through a pipe, so
// with no descriptor free every virtual call is reported as a bad object.
boost::test_tools::assertion_result helperNotSanitized(boost::unit_test::test_unit_id) {
#if defined(__SANITIZE_ADDRESS__)
  boost::test_tools::assertion_result r(false);
  r.message() << "not in a sanitizer build (its runtime needs descriptors this test takes away)";
  return r;
#else
  return true;
#endif
}

BOOST_AUTO_TEST_CASE(the_network_bridge_outlasts_a_command_that_holds_every_descriptor,
                     *boost::unit_test::precondition(helperNotSanitized)) {
  // The command opens connection after connection to the bridge on loopback
  // and keeps them, until the helper (pid 1) has no descriptor left to accept
  // with. The helper must then wait rather than retry at full speed (the
  // queued connection keeps its listener readable): its CPU time over a
  // second stays far below the second a spinning loop burns. Once the command
  // lets go, the bridge serves again.
  TempTree tree;
  {
    std::ofstream script(tree.path() + "/hold.py");
    script << R"py(import os, socket, resource, time
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
port = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
held = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(400)]
time.sleep(0.5)
def ticks():
    f = open("/proc/1/stat").read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])
t0 = ticks()
time.sleep(1.0)
t1 = ticks()
print("ticks", t1 - t0, "per", os.sysconf("SC_CLK_TCK"))
for c in held:
    c.close()
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.sendall(b"GET http://refused.invalid/ HTTP/1.1\r\nHost: refused.invalid\r\n\r\n")
print(s.recv(12).decode())
)py";
  }
  // 256 descriptors for ccsandbox and so for the helper (it inherits them):
  // 400 relayed connections need 800.
  ChildOptions o;
  o.cwd = tree.path();
  o.unsetEnv = {"CC_SERVER_SANDBOX", "CCSANDBOX_PLUGIN_PATH", "XDG_RUNTIME_DIR"};
  auto r = runChild({"sh", "-c", "ulimit -Sn 256 && exec \"$0\" run -- python3 hold.py", kCli}, o);
  BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
  int ticks = -1, perSecond = 0;
  BOOST_REQUIRE(std::sscanf(r.out.c_str(), "ticks %d per %d", &ticks, &perSecond) == 2);
  BOOST_TEST(ticks < perSecond / 4, ticks << " of " << perSecond << " ticks: pid 1 spins");
  BOOST_TEST(r.out.find("HTTP/1.1 403") != std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(what_a_command_leaves_unremovable_in_tmp_goes_with_the_session) {
  // Directories a command made read-only or unreadable in its /tmp: the
  // session's end still removes everything (run unprivileged, where the modes
  // bind; root passes them anyway), its runtime directory included.
  TempTree tree;
  const std::string temp = tree.dir("temp"), runtime = tree.dir("runtime");
  auto r = cli({"run", "--", "sh", "-c",
                "mkdir -p /tmp/ro/deep && touch /tmp/ro/deep/f && chmod 0500 /tmp/ro/deep && "
                "chmod 0 /tmp/ro"},
               tree.path(), {{"TMPDIR", temp}, {"XDG_RUNTIME_DIR", runtime}});
  BOOST_TEST(r.status == 0, r.err);
  // Everything of the session's: what stays in the runtime base is the probe
  // cache (`ccsandbox`), never a session directory (`ccsandbox-XXXXXX`).
  auto sessionEntries = [](const std::string &dir) {
    int n = 0;
    for (const auto &e : std::filesystem::directory_iterator(dir))
      if (e.path().filename().string().rfind("ccsandbox-", 0) == 0) ++n;
    return n;
  };
  BOOST_TEST(sessionEntries(temp) == 0);
  BOOST_TEST(sessionEntries(runtime) == 0);
}

BOOST_AUTO_TEST_CASE(a_long_runtime_dir_still_gets_a_working_network_bridge) {
  // The session's proxy sockets live in its runtime directory, under
  // XDG_RUNTIME_DIR when it is set; a long one puts them past the 108 bytes
  // of a socket address.
  TempTree tree;
  const std::string tmp = tree.dir(std::string(100, 't'));
  auto r = cli({"run", "--", "curl", "-sS", "--max-time", "20", "http://refused.invalid/"},
               tree.path(), {{"XDG_RUNTIME_DIR", tmp}, {"TMPDIR", tmp}});
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(r.out.find("refused.invalid:80 refused") != std::string::npos, r.out << r.err);
}

BOOST_AUTO_TEST_CASE(a_program_in_the_workspace_is_refused_with_the_way_to_allow_it) {
  // Exec from a write root is blocked (Landlock) unless an execGrantRoots
  // entry reopens it; the refusal says so instead of a bare EACCES.
  TempTree tree;
  const std::string work = std::filesystem::canonical(tree.path()).string();
  {
    std::ofstream script(work + "/build.sh");
    script << "#!/bin/sh\necho built\n";
  }
  std::filesystem::permissions(work + "/build.sh", std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::add);
  auto refused = cli({"run", "--", "./build.sh"}, work);
  BOOST_TEST(refused.status == 126);
  BOOST_TEST(refused.err.find("./build.sh: Permission denied (programs in the writable " + work) !=
                 std::string::npos,
             refused.err);
  BOOST_TEST(refused.err.find("--exec-grant " + work + ")") != std::string::npos, refused.err);
  auto granted = cli({"run", "--exec-grant", work, "--", "./build.sh"}, work);
  BOOST_TEST(granted.status == 0, granted.err);
  BOOST_TEST(granted.out == "built\n");
  // A file that is not executable at all gets no such hint.
  std::filesystem::permissions(work + "/build.sh", std::filesystem::perms::owner_exec,
                               std::filesystem::perm_options::remove);
  auto plain = cli({"run", "--exec-grant", work, "--", "./build.sh"}, work);
  BOOST_TEST(plain.status == 126);
  BOOST_TEST(plain.err.find("exec-grant") == std::string::npos, plain.err);
}

BOOST_AUTO_TEST_CASE(closed_standard_streams_are_empty_not_ours) {
  // A closed stdin used to be the number of one of ccsandbox's own pipes,
  // which the command then read from (cat waited forever); a closed stdout,
  // the number of a file or socket of ours that its output would go into.
  TempTree tree;
  ChildOptions o;
  o.cwd = tree.path();
  o.unsetEnv = {"CC_SERVER_SANDBOX", "CCSANDBOX_PLUGIN_PATH", "XDG_RUNTIME_DIR"};
  o.limit = std::chrono::seconds(30);
  auto in = runChild({"sh", "-c", "exec \"$0\" run -- sh -c 'cat; echo done' <&-", kCli}, o);
  BOOST_TEST(!in.timedOut);
  BOOST_TEST(in.status == 0, in.err);
  BOOST_TEST(in.out == "done\n");
  auto out = runChild(
      {"sh", "-c", "\"$0\" run -- sh -c 'echo out; echo err >&2' >&-; echo status $?", kCli}, o);
  BOOST_TEST(!out.timedOut);
  BOOST_TEST(out.out == "status 0\n", out.out);
  BOOST_TEST(out.err == "err\n", out.err);
}

BOOST_AUTO_TEST_CASE(a_spec_with_its_own_guest_paths_runs_there_and_leaves_nothing_behind) {
  // The spec's guestWorkdir is the command's directory; a guest path over the
  // place of our own tools (here: the build's libexec) neither fails the
  // launch nor gets their mount point made in the host directory behind it.
  TempTree tree;
  const std::string libexec = std::string(CCSANDBOX_BINARY_DIR) + "/libexec";
  BOOST_REQUIRE(std::filesystem::is_directory(libexec + "/ccsandbox"));
  const std::string host = tree.dir("g");
  for (bool readOnly : {false, true}) {
    {
      std::ofstream spec(tree.path() + "/spec.json");
      spec << R"({"bindMounts":[{"hostPath":")" << host << R"(","guestPath":")" << libexec
           << R"(","readOnly":)" << (readOnly ? "true" : "false") << R"(}],"guestWorkdir":")"
           << libexec << R"("})";
    }
    auto r = cli({"run", "--spec", "spec.json", "--", "sh", "-c", "pwd; ls -A"}, tree.path());
    BOOST_TEST(r.status == 0, r.err);
    BOOST_TEST(r.out == libexec + "\n", r.out);
    BOOST_TEST(std::filesystem::is_empty(host));
  }
}

BOOST_AUTO_TEST_CASE(a_bind_of_a_missing_path_is_refused_as_the_request_s_and_keeps_the_probe) {
  // Said before bubblewrap runs, naming the mount; it says nothing about the
  // host, so the kept probe result stays kept.
  TempTree tree;
  BOOST_REQUIRE(cli({"run", "--", "true"}, tree.path()).status == 0);  // a kept probe
  const std::string missing = tree.path() + "/not-there";
  auto r = cli({"run", "--bind", missing, "--", "true"}, tree.path());
  BOOST_TEST(r.status == 125);
  BOOST_TEST(r.err.find("cannot mount " + missing + " at " + missing +
                        " in the sandbox: " + missing + " does not exist") != std::string::npos,
             r.err);
  BOOST_TEST(r.err.find("probe") == std::string::npos, r.err);
  auto next = cli({"run", "-v", "--", "true"}, tree.path());
  BOOST_TEST(next.err.find("kept result") != std::string::npos, next.err);
}

BOOST_AUTO_TEST_CASE(ctrl_c_at_a_terminal_reaches_the_command_and_not_bubblewrap) {
  // A terminal's Ctrl-C signals the whole foreground process group. Only
  // ccsandbox may be in it: it forwards SIGINT to the command, whose handler
  // runs and whose status ccsandbox returns. bubblewrap in that group would
  // die of it and take the sandbox down (status 137, "ended unexpectedly").
  TempTree tree;
  Job job(tree.path(), "trap 'exit 5' INT; sleep %s & wait");
  job.sleeper();
  BOOST_REQUIRE_EQUAL(::kill(-job.pid, SIGINT), 0);
  const int status = job.wait();
  const std::string err = job.err();
  BOOST_TEST(WIFEXITED(status));
  BOOST_TEST(WEXITSTATUS(status) == 5, "status " << status << ", stderr: " << err);
  BOOST_TEST(err.find("unexpectedly") == std::string::npos, err);
}

// The state letter of a process ('S', 'T', ...), or 0 when it is gone.
char stateOf(pid_t pid) {
  std::string stat = readProcFile("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() ? stat[close + 2] : 0;
}

// Waits (bounded) until `pid` is, or is no longer, stopped.
bool becomes(pid_t pid, bool stopped) {
  for (int i = 0; i < 500; ++i) {
    if ((stateOf(pid) == 'T') == stopped) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

BOOST_AUTO_TEST_CASE(ctrl_z_stops_the_command_with_ccsandbox_and_fg_resumes_both) {
  // The command runs in a session of its own inside the sandbox: a terminal's
  // SIGTSTP and SIGCONT reach it only through ccsandbox.
  TempTree tree;
  Job job(tree.path(), "sleep %s");
  const pid_t sleeper = job.sleeper();

  BOOST_REQUIRE_EQUAL(::kill(-job.pid, SIGTSTP), 0);  // Ctrl-Z
  int status = 0;
  BOOST_REQUIRE_EQUAL(::waitpid(job.pid, &status, WUNTRACED), job.pid);
  BOOST_TEST(WIFSTOPPED(status));
  BOOST_TEST(becomes(sleeper, true), "the command kept running: " << stateOf(sleeper));

  BOOST_REQUIRE_EQUAL(::kill(-job.pid, SIGCONT), 0);  // fg
  BOOST_TEST(becomes(sleeper, false), "the command stayed stopped");
  BOOST_TEST(becomes(job.pid, false));

  BOOST_REQUIRE_EQUAL(::kill(-job.pid, SIGINT), 0);
  status = job.wait();
  BOOST_TEST(WIFEXITED(status));
  BOOST_TEST(WEXITSTATUS(status) == 128 + SIGINT, "status " << status);
}

BOOST_AUTO_TEST_CASE(kill_9_of_ccsandbox_leaves_no_sandbox_process) {
  TempTree tree;
  // Orphans come to us, so what is left can be told apart from a zombie.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  std::mt19937 rng{std::random_device{}()};
  std::string token = "1000." + std::to_string(100000 + rng() % 800000);
  // The session's runtime directory goes here, and the sandbox's /tmp there,
  // where the test can see them.
  std::string base = tree.dir("runtime"), temp = tree.dir("temp");
  pid_t cli = ::fork();
  if (cli == 0) {
    ::chdir(tree.path().c_str());
    ::setenv("TMPDIR", temp.c_str(), 1);
    ::setenv("XDG_RUNTIME_DIR", base.c_str(), 1);
    int devnull = ::open("/dev/null", O_RDWR);
    ::dup2(devnull, 0);
    ::dup2(devnull, 1);
    ::execl(kCli.c_str(), kCli.c_str(), "run", "--no-filename-rules", "--", "sh", "-c",
            ("sleep " + token + " & sleep " + token + "; wait").c_str(), (char *)nullptr);
    ::_exit(127);
  }
  // Whatever happens below, the child does not outlive the test.
  struct Reap {
    pid_t pid;
    bool done = false;
    ~Reap() {
      if (done) return;
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  } reapCli{cli};
  // Wait (bounded) for both sleeps to be running inside the sandbox.
  std::set<pid_t> sleeps;
  for (int i = 0; i < 1000 && sleeps.size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    sleeps = pidsWithCmdline(std::string("sleep\0", 6) + token);
  }
  BOOST_REQUIRE_EQUAL(sleeps.size(), 2u);
  // Everything between the sleeps and ccsandbox: the shell, the helper, bwrap.
  std::set<pid_t> sandbox = sleeps;
  for (pid_t p : sleeps)
    for (pid_t a = parentOf(p); a > 1 && a != cli; a = parentOf(a)) sandbox.insert(a);
  BOOST_TEST(sandbox.size() >= 5u);  // 2 sleeps, sh, helper, bwrap

  ::kill(cli, SIGKILL);
  int status;
  ::waitpid(cli, &status, 0);
  reapCli.done = true;
  std::set<pid_t> left = sandbox;
  for (int i = 0; i < 500 && !left.empty(); ++i) {
    for (auto it = left.begin(); it != left.end();)
      it = alive(*it) ? std::next(it) : left.erase(it);
    while (::waitpid(-1, &status, WNOHANG) > 0) {
    }
    if (!left.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  BOOST_TEST(left.empty(), left.size() << " sandbox process(es) outlived ccsandbox");
  BOOST_TEST(pidsWithCmdline(std::string("sleep\0", 6) + token).empty());
  for (pid_t p : left) ::kill(p, SIGKILL);

  // No destructor ran: the dead session's directory and its sandbox /tmp are
  // still there, and the next session of the user removes them (the lock is free).
  auto sessionDirs = [&] {
    std::vector<std::string> out;
    for (const auto &e : std::filesystem::directory_iterator(base))
      if (std::filesystem::exists(e.path() / ".session-lock")) out.push_back(e.path());
    return out;
  };
  auto entries = [](const std::string &dir) {
    return std::distance(std::filesystem::directory_iterator(dir),
                         std::filesystem::directory_iterator());
  };
  BOOST_TEST(sessionDirs().size() == 1u);
  BOOST_TEST(entries(temp) == 1);
  ChildOptions o;
  o.cwd = tree.path();
  o.unsetEnv = {"CC_SERVER_SANDBOX", "CCSANDBOX_PLUGIN_PATH"};
  o.setEnv = {{"TMPDIR", temp}, {"XDG_RUNTIME_DIR", base}};
  auto next = runChild({kCli, "run", "--no-filename-rules", "--", "true"}, o);
  BOOST_TEST(next.status == 0, next.err);
  BOOST_TEST(sessionDirs().empty());
  BOOST_TEST(entries(temp) == 0);
}
