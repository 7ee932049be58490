#!/bin/sh
# Runs a confine suite as an unprivileged user (nobody) when started as root,
# as it is otherwise: the supervisor must work without any privilege.
if [ "$(id -u)" = 0 ]; then
  exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
    env HOME=/tmp TMPDIR=/tmp CCSANDBOX_CONFINE_UNPRIVILEGED=1 "$@"
fi
exec env CCSANDBOX_CONFINE_UNPRIVILEGED=1 "$@"
