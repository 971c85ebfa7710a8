#!/usr/bin/env bash
# Peak memory and time of loading a filter of every kind of at least
# 100 MiB: `bloomlab query` and `bloomlab info`, against the file's size and
# the time to read the file (cat, page cache warm). The goal (issue 10):
# peak RSS ≤ 1.1 × size + 32 MiB, load time within 2× of reading the file.
#
# The filters are empty (built from /dev/null). The load's checks cost the
# same whatever the words hold (except for dlcbf's dynamic variants, whose
# check reads each bucket's cells), so for the default configurations the
# times are those of full filters. The times include starting the process
# and, for query, the 100 000 lookups; for the load alone against
# os.ReadFile of the same file, in one process, see BenchmarkLoad in the
# repository root:
#   go test -run XXX -bench Load -benchtime 10x -count 5 . | benchstat -col /op -
#
# Usage (from the repository root): bench/rss.sh [DIR]   (DIR: scratch space, default a temp dir)
set -euo pipefail
dir=${1:-$(mktemp -d)}
mkdir -p "$dir"
go build -o "$dir/bloomlab" ./cmd/bloomlab
bl="$dir/bloomlab"
seq -f 'q-%.0f' 1 100000 > "$dir/keys.txt"
build() { # name, build args…
  local name=$1; shift
  "$bl" build -o "$dir/$name.blf" "$@" /dev/null 2>/dev/null
}
build bloom       -kind bloom       -m 900000000 -k 7
build partitioned -kind partitioned -m 900000004 -k 7
build counting    -kind counting    -m 225000000 -k 7
build blocked     -kind blocked     -m 900000000 -k 7
build choices     -kind choices     -m 900000000 -k 7
build dleft       -kind dleft       -n 60000000 -fpr 0.01
build dlcbf       -kind dlcbf       -n 48000000 -fpr 0.01
build countmin    -kind countmin    -m 2000000 -k 7
build scalable    -kind scalable    -n 80000000 -fpr 0.01
printf '%-12s %9s %12s %12s %9s %9s %8s %8s\n' kind "size MiB" "query MiB" "info MiB" "limit" "read s" "query s" "info s"
for f in bloom partitioned counting blocked choices dleft dlcbf countmin scalable; do
  file="$dir/$f.blf"
  size=$(stat -c %s "$file")
  cat "$file" > /dev/null # warm the page cache
  read_s=$( { /usr/bin/time -f %e cat "$file" > /dev/null; } 2>&1 )
  q=$( { /usr/bin/time -f '%M %e' "$bl" query -c "$file" "$dir/keys.txt" > /dev/null || true; } 2>&1 | tail -1 )
  i=$( { /usr/bin/time -f '%M %e' "$bl" info "$file" > /dev/null; } 2>&1 | tail -1 )
  awk -v k="$f" -v s="$size" -v q="$q" -v i="$i" -v r="$read_s" 'BEGIN {
    split(q, qa, " "); split(i, ia, " ")
    mib = s / 1048576; limit = 1.1 * mib + 32
    printf "%-12s %9.1f %12.1f %12.1f %9.1f %9.2f %8.2f %8.2f\n", k, mib, qa[1]/1024, ia[1]/1024, limit, r, qa[2], ia[2]
  }'
done
