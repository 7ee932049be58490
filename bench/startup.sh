#!/bin/sh
# Start-up benchmark of the Linux native backend against bare bubblewrap and
# srt, in one run; prints medians and ratios (targets: docs/performance.md).
#
#   bench/startup.sh [BUILD_DIR] [RUNS]      defaults: build/default 30
#
# srt is installed from npm into <BUILD_DIR>/bench-peers/srt (kept for the next run). On
# Linux srt needs socat and ripgrep; as root the script installs them (and npm)
# from Debian's packages; without them srt cannot start and is reported as not
# measured. ccsandbox needs neither.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here/build/default}" && pwd)
runs=${2:-30}

cmake --build "$build" --target ccsandbox-bench-startup >/dev/null

# The peer's own needs, from Debian's packages, when we may install them.
missing=""
for pair in socat:socat rg:ripgrep npm:npm; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || missing="$missing ${pair#*:}"
done
if [ -n "$missing" ] && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing the peer's dependencies:$missing"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
    echo "could not install$missing; srt may not be measured"
fi

# Kept in the build tree between runs: npm's update is quick, and a fresh
# install removed after every run left thousands of just-deleted inodes on the
# file system the next run creates its runtime directories in (ext4 then
# searches past them: the next run measured slower for minutes).
peer="$build/bench-peers/srt"
mkdir -p "$peer"
srt=""
if command -v npm >/dev/null 2>&1; then
  echo "installing srt (@anthropic-ai/sandbox-runtime) from npm into $peer ..."
  if npm install --prefix "$peer" --no-audit --no-fund --silent @anthropic-ai/sandbox-runtime >"$peer/npm.log" 2>&1; then
    candidate="$peer/node_modules/.bin/srt"
    # Only a peer that really starts is measured.
    if (cd "$peer" && "$candidate" true) >"$peer/srt.log" 2>&1; then
      srt=$candidate
    else
      echo "srt is installed but \`srt true\` fails here, so it is not measured:"
      sed 's/^/  /' "$peer/srt.log" | head -5
    fi
  else
    echo "npm could not install srt, so it is not measured:"
    sed 's/^/  /' "$peer/npm.log" | tail -5
  fi
else
  echo "npm not found: srt is not measured"
fi

set -- --cli "$build/bin/ccsandbox" --runs "$runs"
[ -n "$srt" ] && set -- "$@" --srt "$srt"
"$build/bin/ccsandbox-bench-startup" "$@"
