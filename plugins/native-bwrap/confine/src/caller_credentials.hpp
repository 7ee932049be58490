// Taking the calling thread's filesystem credentials on the serving thread
// for the duration of one call, so that permission checks and the owner of
// what gets created are the caller's. Every change is per-thread (raw
// setfsuid, setfsgid, setgroups and capset system calls; glibc would
// broadcast setgroups to all threads).
#pragma once

#include "child_task.hpp"

namespace ccsandbox::confine {

class CallerCredentials {
 public:
  // `own` are the serving thread's credentials, `caller` the caller's. When
  // they are equal nothing changes (the common case: same uid in the userns).
  CallerCredentials(const TaskCredentials &own, const TaskCredentials &caller);
  ~CallerCredentials();
  CallerCredentials(const CallerCredentials &) = delete;
  CallerCredentials &operator=(const CallerCredentials &) = delete;

  // 0, or the errno that kept the serving thread from taking the caller's
  // credentials (the call must then be refused, never made as the supervisor).
  int error() const { return error_; }

 private:
  void restore() noexcept;
  const TaskCredentials &own_;
  bool switched_ = false;
  int error_ = 0;
};

}  // namespace ccsandbox::confine
