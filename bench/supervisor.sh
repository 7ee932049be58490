#!/bin/sh
# Cost of the native backend's seccomp supervisor and Landlock layer (issue 6):
# the same workloads under `ccsandbox run` (native, standard policy, supervisor
# on) and under a bare bubblewrap with equivalent binds (no supervisor), in one
# run; prints medians and ratios. Targets (docs/performance.md): create-heavy
# within 1.5x, compile-style within 1.05x.
#
#   bench/supervisor.sh [BUILD_DIR] [RUNS]      defaults: build/default 5
#
# Each time is the workload's alone: the median of an empty command (`true`)
# in the same mode is subtracted, so sandbox start-up (measured by
# bench/startup.sh) does not dilute the ratio.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here/build/default}" && pwd)
runs=${2:-5}
cli="$build/bin/ccsandbox"
cmake --build "$build" --target ccsandbox-cli ccsandbox-native-bwrap >/dev/null
command -v bwrap >/dev/null || { echo "bwrap is not installed"; exit 1; }

tmp=$(mktemp -d /tmp/ccsandbox-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
# The command runs in $tmp/work (the sandbox's workspace); inputs sit in
# $tmp/work/in (the native sandbox's /tmp is private), outputs in $tmp/work/out.
work="$tmp/work/out"
mkdir -p "$work" "$tmp/work/in/c" "$tmp/src/tree"
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
  rm -rf "$work" && mkdir -p "$work"
  t0=$(now)
  if [ "$mode" = native ]; then
    (cd "$tmp/work" && "$cli" run -- sh -c "cd out && $script") >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
  else
    bwrap --die-with-parent --unshare-all --ro-bind / / --proc /proc --dev /dev --tmpfs /tmp \
      --bind "$tmp/work" "$tmp/work" \
      --chdir "$work" -- sh -c "$script" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
  fi
  echo $(( ($(now) - t0) / 1000000 ))
}
measure() {
  k=0
  while [ $k -lt "$runs" ]; do run_once "$1" "$2"; k=$((k + 1)); done | median
}

printf '%-34s %10s %10s %8s %8s\n' workload "bwrap ms" "native ms" ratio target
base_bwrap=$(measure bwrap true)
base_native=$(measure native true)
report() {
  name=$1 script=$2 target=$3
  b=$(( $(measure bwrap "$script") - base_bwrap ))
  n=$(( $(measure native "$script") - base_native ))
  ratio=$(awk -v n="$n" -v b="$b" 'BEGIN { printf "%.2f", (b > 0 ? n / b : 0) }')
  printf '%-34s %10d %10d %7sx %7sx\n' "$name" "$b" "$n" "$ratio" "$target"
}
report "create 10000 files (xargs touch)" "$create" 1.5
report "tar x of 2000 files in 40 dirs" "$untar" 1.5
report "make -j1 of 40 C files" "$compile" 1.05
echo "(start-up subtracted: bwrap ${base_bwrap} ms, native ${base_native} ms; median of $runs)"
