// The control channel between the plugin and its helper (pid 1 inside the
// sandbox): one end of a socketpair each, so nothing else can reach it — no
// path on disk that a sandboxed process could connect to.
//
// A message is a type, a list of strings, and optionally file descriptors
// (SCM_RIGHTS, attached to the message's first byte). On the wire:
//   u32 length | u8 type | u32 count | (u32 size | bytes) * count
// Both sides are built from this one file, so they cannot disagree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ccsandbox::bwrap {

enum class MessageType : std::uint8_t {
  // plugin -> helper
  exec = 1,    // execId, cwd, argc, argv..., env "K=V"...; fds: stdin, stdout, stderr
  signal = 2,  // execId, signal number
  // The write rules every later command is confined with (Landlock, the
  // seccomp supervisor), in the sandbox's view; sent once, before any exec.
  // Fields: "1"/"0" execBlockWritableRoots, then four lists, each as a count
  // followed by its items: writeRoots, writeDeny, writeDenyGlobs, execGrantRoots.
  confine = 3,
  // The plugin's first message: the loopback bridges the helper opens, each
  // "HOST:PORT=SOCKET" (none for an open network). The helper's command line
  // is fixed before the proxies' ports are known, so they come this way.
  bridges = 4,
  // helper -> plugin
  ready = 10,      // the helper is up and its bridges listen (the answer to `bridges`)
  started = 11,    // execId
  failed = 12,     // execId, exit code (126/127), message: the command could not start
  exited = 13,     // execId, exit code (128+n for signal n), signal number or 0
  log = 14,        // a line for the host's log
  violation = 15,  // execId, action, target, reason: a call the supervisor refused
  // The answer to the end of the plugin's stream: every other process of the
  // sandbox has ended and been reaped; the helper exits next (bubblewrap and
  // the namespaces follow it without anything of the sandbox left to run).
  gone = 16,
};

struct Message {
  MessageType type = MessageType::ready;
  std::vector<std::string> fields;
  std::vector<int> fds;  // received: owned by the receiver, close-on-exec
};

// Encodes `message` and sends it on the stream socket `fd` with its fds.
// Throws std::system_error; EPIPE when the other side is gone.
void sendMessage(int fd, const Message &message);

// Reads one message. Returns false on a clean end of stream (the peer closed).
// Throws std::system_error on a read error or std::runtime_error on a frame
// that does not decode.
bool receiveMessage(int fd, Message &message);

// Largest frame accepted: a command's argv and environment fit many times over.
inline constexpr std::uint32_t kMaxFrame = 64u * 1024u * 1024u;
// Most fds one message carries (the three stdio streams).
inline constexpr int kMaxFds = 3;

}  // namespace ccsandbox::bwrap
