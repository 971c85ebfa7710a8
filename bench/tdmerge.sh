#!/usr/bin/env bash
# TDIGEST.MERGE of many sources (issue 34 §4): one merge of SOURCES small
# digests into a new destination of COMPRESSION 100000 (capacity 600,010
# centroids), on Redis with the RedisBloom module and on bloomlab serve,
# side by side. td_merge compresses the destination before each source,
# so RedisBloom sorts the whole destination once per source; serve merges
# the two sorted runs in one pass where no two means are equal and sorts
# as RedisBloom does otherwise, so the answers are the same, bit for bit
# (checked: TDIGEST.INFO and TDIGEST.QUANTILE of the destination must be
# equal on both servers).
#
# Usage (from anywhere in the repository):
#   bench/tdmerge.sh [-sources N] [-values N] [-rounds R] [-o FILE] [-bloomlab BINARY] REDIS_SERVER MODULE.so
#
# Each source (default 20,000) is TDIGEST.CREATE s:I then one TDIGEST.ADD
# of VALUES values (default 10): random doubles ("distinct"), or integers
# 0 … 999 ("ties": many equal means, where serve falls back to td_qsort).
# Both servers run without persistence on free loopback ports; each round
# (default 3), RB then serve: FLUSHALL, the sources (redis-cli --pipe),
# and the timed TDIGEST.MERGE dest SOURCES s:0 … COMPRESSION 100000 (wall
# time of redis-cli). A cell is the median of the rounds; the ratio serve
# ÷ RB is taken within each round.
set -euo pipefail
usage() {
  sed -n '/^# Usage/,/^#   *bench/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
cmdline=$*
sources=20000 values=10 rounds=3 out='' bl=''
while [ $# -gt 0 ]; do
  case $1 in
  -sources) sources=$2; shift 2 ;;
  -values) values=$2; shift 2 ;;
  -rounds) rounds=$2; shift 2 ;;
  -o) out=$2; shift 2 ;;
  -bloomlab) bl=$2; shift 2 ;;
  -h | -help | --help) usage ;;
  -*) echo "unknown flag $1" >&2; usage ;;
  *) break ;;
  esac
done
[ $# -eq 2 ] || usage
rsrv=$1 mod=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/ports.sh"
start_pair "$rsrv" "$mod"
for kind in distinct ties; do
  awk -v n="$sources" -v k="$values" -v kind="$kind" 'BEGIN {
    srand(1)
    for (i = 0; i < n; i++) {
      printf "TDIGEST.CREATE s:%d\nTDIGEST.ADD s:%d", i, i
      for (j = 0; j < k; j++) { if (kind == "ties") printf " %d", int(rand() * 1000); else printf " %.17g", rand() * 1000 }
      printf "\n"
    }
  }' >"$tmp/$kind.txt"
done
{ seq 0 $((sources - 1)) | sed 's/^/s:/'; echo COMPRESSION; echo 100000; } >"$tmp/keys" # one redis-cli call: xargs -s 2000000
run() { # port kind: seconds of the merge; the destination's answers in $tmp/answer.PORT
  redis-cli -p "$1" FLUSHALL >/dev/null
  redis-cli -p "$1" --pipe <"$tmp/$2.txt" >/dev/null
  local t0 t1
  t0=$(date +%s.%N)
  xargs -s 2000000 redis-cli -p "$1" TDIGEST.MERGE dest "$sources" <"$tmp/keys" >/dev/null
  t1=$(date +%s.%N)
  # Doubles compared as values: Redis 7.0 prints %.17g, serve's Redis 8
  # dialect the shortest text that reads back the same.
  { redis-cli -p "$1" TDIGEST.INFO dest; redis-cli -p "$1" TDIGEST.QUANTILE dest 0 0.001 0.01 0.25 0.5 0.75 0.99 0.999 1; } |
    awk '/^-?[0-9.]+(e[-+]?[0-9]+)?$/ { printf "%.17g\n", $0; next } { print }' >"$tmp/answer.$1"
  echo "$t1 - $t0" | bc -l
}
{
  echo "# bench/tdmerge.sh $cmdline"
  echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $("$rsrv" --version | awk '{print $1, $3}'), module $(redis-cli -p "$prb" MODULE LIST | awk 'prev == "ver" { print; exit } { prev = $0 }')"
  echo "# TDIGEST.MERGE dest $sources s:0 … COMPRESSION 100000, sources of $values values each"
  printf '%-9s %10s %10s %12s\n' values 'RB s' 'serve s' 'serve ÷ RB'
  for kind in distinct ties; do
    : >"$tmp/a"; : >"$tmp/b"; : >"$tmp/r"
    for _ in $(seq "$rounds"); do
      a=$(run "$prb" "$kind"); b=$(run "$psv" "$kind")
      cmp -s "$tmp/answer.$prb" "$tmp/answer.$psv" || { echo "$kind: the destinations differ:" >&2; diff "$tmp/answer.$prb" "$tmp/answer.$psv" >&2; exit 1; }
      echo "$a" >>"$tmp/a"; echo "$b" >>"$tmp/b"; echo "$b / $a" | bc -l >>"$tmp/r"
    done
    printf '%-9s %10.3f %10.3f %12.3f\n' "$kind" "$(median <"$tmp/a")" "$(median <"$tmp/b")" "$(median <"$tmp/r")"
  done
} | tee "${out:-/dev/null}"
