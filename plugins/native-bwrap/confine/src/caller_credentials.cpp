#include "caller_credentials.hpp"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace ccsandbox::confine {
namespace {

int setEffectiveCaps(std::uint64_t effective) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return errno;
  data[0].effective = static_cast<std::uint32_t>(effective);
  data[1].effective = static_cast<std::uint32_t>(effective >> 32);
  // Never more than permitted: the caller cannot lend us rights we lack.
  data[0].effective &= data[0].permitted;
  data[1].effective &= data[1].permitted;
  return ::syscall(SYS_capset, &header, data) == 0 ? 0 : errno;
}

bool fsuidIs(uid_t want) {
  return static_cast<uid_t>(::syscall(SYS_setfsuid, -1)) == want;
}
bool fsgidIs(gid_t want) {
  return static_cast<gid_t>(::syscall(SYS_setfsgid, -1)) == want;
}

}  // namespace

CallerCredentials::CallerCredentials(const TaskCredentials &own, const TaskCredentials &caller)
    : own_(own) {
  if (own == caller) return;
  switched_ = true;
  // Groups and fsgid first: they need CAP_SETGID, which a non-zero fsuid
  // does not remove but a lowered effective set would.
  if (caller.groups != own.groups &&
      ::syscall(SYS_setgroups, caller.groups.size(), caller.groups.data()) != 0) {
    error_ = errno;
    return;
  }
  ::syscall(SYS_setfsgid, caller.fsgid);
  if (!fsgidIs(caller.fsgid)) {
    error_ = EPERM;
    return;
  }
  ::syscall(SYS_setfsuid, caller.fsuid);
  if (!fsuidIs(caller.fsuid)) {
    error_ = EPERM;
    return;
  }
  if (const int e = setEffectiveCaps(caller.capEffective); e != 0) error_ = e;
}

CallerCredentials::~CallerCredentials() {
  restore();
}

void CallerCredentials::restore() noexcept {
  if (!switched_) return;
  setEffectiveCaps(own_.capEffective);
  ::syscall(SYS_setfsuid, own_.fsuid);
  ::syscall(SYS_setfsgid, own_.fsgid);
  ::syscall(SYS_setgroups, own_.groups.size(), own_.groups.data());
}

}  // namespace ccsandbox::confine
