/* O_TMPFILE in argv[1], then give it the name argv[2] two ways: linkat of
 * /proc/self/fd/N with AT_SYMLINK_FOLLOW, and linkat(fd, "", AT_EMPTY_PATH).
 * Prints one line per step with OK or the errno name. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *result(int r) {
  return r < 0 ? strerrorname_np(errno) : "OK";
}

int main(int argc, char **argv) {
  if (argc != 3) return 64;
  int fd = open(argv[1], O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  printf("tmpfile %s\n", result(fd));
  if (fd < 0) return 0;
  if (write(fd, "secret\n", 7) != 7) return 1;
  char proc[64], target[4096];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  snprintf(target, sizeof target, "%s/%s", argv[1], argv[2]);
  printf("link-proc %s\n", result(linkat(AT_FDCWD, proc, AT_FDCWD, target, AT_SYMLINK_FOLLOW)));
  printf("link-empty %s\n", result(linkat(fd, "", AT_FDCWD, target, AT_EMPTY_PATH)));
  return 0;
}
