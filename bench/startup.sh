#!/bin/sh
# Start-up benchmark of the Linux native backend against bare bubblewrap and
# srt, in one run; prints medians and ratios (targets: docs/performance.md).
#
#   bench/startup.sh [BUILD_DIR] [RUNS]      defaults: build/default 30
#
# srt is installed from npm into a temporary directory for this run only. On
# Linux srt needs socat and ripgrep (apt-get install socat ripgrep); without
# them it cannot start and is reported as not measured. ccsandbox needs neither.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here/build/default}" && pwd)
runs=${2:-30}

cmake --build "$build" --target ccsandbox-bench-startup >/dev/null

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
srt=""
if command -v npm >/dev/null 2>&1; then
  echo "installing srt (@anthropic-ai/sandbox-runtime) from npm into $tmp ..."
  if npm install --prefix "$tmp" --no-audit --no-fund --silent @anthropic-ai/sandbox-runtime >"$tmp/npm.log" 2>&1; then
    candidate="$tmp/node_modules/.bin/srt"
    # Only a peer that really starts is measured.
    if (cd "$tmp" && "$candidate" true) >"$tmp/srt.log" 2>&1; then
      srt=$candidate
    else
      echo "srt is installed but \`srt true\` fails here, so it is not measured:"
      sed 's/^/  /' "$tmp/srt.log" | head -5
    fi
  else
    echo "npm could not install srt, so it is not measured:"
    sed 's/^/  /' "$tmp/npm.log" | tail -5
  fi
else
  echo "npm not found: srt is not measured"
fi

set -- --cli "$build/bin/ccsandbox" --runs "$runs"
[ -n "$srt" ] && set -- "$@" --srt "$srt"
"$build/bin/ccsandbox-bench-startup" "$@"
