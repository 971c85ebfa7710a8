#!/usr/bin/env bash
# Interleaved before/after run of the bench at two revisions, for a noisy
# machine: each revision's benchmark binary is built from its own checkout,
# then the two run alternately ROUNDS times, so that both see the same
# load. Compare the outputs with benchstat or by the median of each
# benchmark's rounds.
#
# Usage (from the repository root):
#   bench/ab.sh BEFORE_REV AFTER_REV [ROUNDS] [REGEXP] [OUTDIR]
# e.g. bench/ab.sh 8415f67 HEAD 5 'BenchmarkFilters/fpr=0.0(1|01)/lib=(bloomlab-bloom|bitsandblooms-samemk|bloomlab-counting|boom-counting|bloomlab-blocked)/'
set -euo pipefail
before=$1 after=$2 rounds=${3:-5}
re=${4:-BenchmarkFilters}
out=${5:-$(mktemp -d)}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$tmp/before" 2>/dev/null || true; git -C "$root" worktree remove --force "$tmp/after" 2>/dev/null || true; rm -rf "$tmp"' EXIT
for v in before after; do
  rev=$before
  [ "$v" = after ] && rev=$after
  git -C "$root" worktree add --detach -q "$tmp/$v" "$rev"
  (cd "$tmp/$v/bench" && go test -c -o "$tmp/bench-$v.test" .)
done
mkdir -p "$out"
for i in $(seq "$rounds"); do
  for v in before after; do
    (cd "$tmp/$v/bench" && "$tmp/bench-$v.test" -test.run XXX -test.bench "$re" -test.benchtime 0.5s) >> "$out/$v.txt"
  done
done
echo "bench/ab.sh: $out/before.txt and $out/after.txt ($rounds interleaved rounds)"
