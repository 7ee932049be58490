#!/bin/sh
# Runs a test binary as an unprivileged user (nobody) when started as root, so
# the native backend is exercised with a user namespace as a real user has it.
# Started by a non-root user, it runs the binary as that user.
if [ "$(id -u)" = 0 ]; then
  export HOME=/nonexistent TMPDIR=/tmp
  unset XDG_RUNTIME_DIR
  exec setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
fi
exec "$@"
