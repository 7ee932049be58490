#!/bin/sh
# Cost of the native backend's seccomp supervisor and Landlock layer (issue 6):
# the same workloads under `ccsandbox run` (native, standard policy, supervisor
# on) and under a bare bubblewrap with equivalent binds (no supervisor), in one
# run; prints medians and ratios. Targets (docs/performance.md): create-heavy
# within 1.5x, compile-style within 1.05x.
#
#   bench/supervisor.sh [BUILD_DIR] [RUNS] [DIR]   defaults: build/default 5 /tmp
#
# Each time is the workload's alone: the median of an empty command (`true`)
# in the same mode is subtracted, so sandbox start-up (measured by
# bench/startup.sh) does not dilute the ratio. The two modes take turns, run
# after run, so that a shift in the machine's load falls on both.
#
# The workspace lives in a new directory under DIR (its file system is
# printed: on tmpfs a create costs a few µs, so the supervisor's share is at
# its largest). Every run writes to a directory of its own and nothing is
# removed until the end: soon after a large removal, ext4 (as set up on the
# development VM) steps past the recently freed inodes on every create, which
# would charge one run for the previous run's clean-up.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here/build/default}" && pwd)
runs=${2:-5}
base=${3:-/tmp}
cli="$build/bin/ccsandbox"
cmake --build "$build" --target ccsandbox-cli ccsandbox-native-bwrap >/dev/null
command -v bwrap >/dev/null || { echo "bwrap is not installed"; exit 1; }

tmp=$(mktemp -d "$base/ccsandbox-bench.XXXXXX")
# The native sandbox's /tmp is a directory of the session, made where the core
# makes session directories; the bare bubblewrap gets the same kind of /tmp
# (a tmpfs instead would make the compiler's temporary files cheaper there).
sessions=$(mktemp -d "${XDG_RUNTIME_DIR:-${TMPDIR:-/tmp}}/ccsandbox-bench-tmp.XXXXXX")
trap 'rm -rf "$tmp" "$sessions"' EXIT INT TERM
# The command runs in $tmp/work (the sandbox's workspace); inputs sit in
# $tmp/work/in (the native sandbox's /tmp is private), outputs in a new
# $tmp/work/out.XXXXXX for every run.
mkdir -p "$tmp/work/in/c" "$tmp/src/tree"
unset CC_SERVER_SANDBOX CCSANDBOX_PLUGIN_PATH

# Inputs, made outside any sandbox: an archive of 2 000 files in 40
# directories, and 40 small C files with a Makefile.
i=0
while [ $i -lt 2000 ]; do
  d=$((i % 40)); mkdir -p "$tmp/src/tree/d$d"; echo "file $i" >"$tmp/src/tree/d$d/f$i.txt"; i=$((i + 1))
done
tar -C "$tmp/src" -cf "$tmp/work/in/tree.tar" tree
i=0
objs=""
while [ $i -lt 40 ]; do
  cat >"$tmp/work/in/c/u$i.c" <<C
#include <stdio.h>
#include <string.h>
static int table[64];
int u$i(int x) { for (int k = 0; k < 64; ++k) table[k] = x * k + $i; return table[x & 63]; }
C
  objs="$objs u$i.o"; i=$((i + 1))
done
printf 'all:%s\n%%.o: %%.c\n\tcc -O1 -c -o $@ $<\n' "$objs" >"$tmp/work/in/c/Makefile"

create='mkdir -p c && cd c && seq 1 10000 | xargs touch'
untar="mkdir -p x && tar -C x -xf $tmp/work/in/tree.tar"
compile="cp -r $tmp/work/in/c cc && make -s -j1 -C cc"

now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }

# mode: native | bwrap; prints one duration in ms per run.
run_once() {
  mode=$1 script=$2
  out=$(mktemp -d "$tmp/work/out.XXXXXX")
  t0=$(now)
  if [ "$mode" = native ]; then
    (cd "$tmp/work" && "$cli" run -- sh -c "cd $out && $script") >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
  else
    bwrap --die-with-parent --unshare-all --ro-bind / / --proc /proc --dev /dev \
      --bind "$(mktemp -d "$sessions/tmp.XXXXXX")" /tmp --bind "$tmp/work" "$tmp/work" \
      --chdir "$out" -- sh -c "$script" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
  fi
  echo $(( ($(now) - t0) / 1000000 ))
}
# Both modes in turn, run after run, so that a change in the machine's load
# falls on both alike; prints "<bwrap median> <native median>".
measure() {
  : >"$tmp/t.bwrap"
  : >"$tmp/t.native"
  k=0
  while [ $k -lt "$runs" ]; do
    run_once bwrap "$1" >>"$tmp/t.bwrap"
    run_once native "$1" >>"$tmp/t.native"
    k=$((k + 1))
  done
  echo "$(median <"$tmp/t.bwrap") $(median <"$tmp/t.native")"
}

echo "workspace on $(stat -f -c %T "$tmp") ($base), /tmp on $(stat -f -c %T "$sessions");" \
  "$(uptime | sed 's/.*load/load/')"
printf '%-34s %10s %10s %8s %8s\n' workload "bwrap ms" "native ms" ratio target
set -- $(measure true)
base_bwrap=$1 base_native=$2
report() {
  name=$1 script=$2 target=$3
  set -- $(measure "$script")
  b=$(($1 - base_bwrap)) n=$(($2 - base_native))
  ratio=$(awk -v n="$n" -v b="$b" 'BEGIN { printf "%.2f", (b > 0 ? n / b : 0) }')
  printf '%-34s %10d %10d %7sx %7sx\n' "$name" "$b" "$n" "$ratio" "$target"
}
report "create 10000 files (xargs touch)" "$create" 1.5
report "tar x of 2000 files in 40 dirs" "$untar" 1.5
report "make -j1 of 40 C files" "$compile" 1.05
echo "(start-up subtracted: bwrap ${base_bwrap} ms, native ${base_native} ms; median of $runs," \
  "the two modes taking turns)"
