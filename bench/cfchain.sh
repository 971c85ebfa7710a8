#!/usr/bin/env bash
# CF chains (issue 34 §4): N copies of one item into a cuckoo filter that
# holds two, CF.RESERVE cf 2 BUCKETSIZE 1 EXPANSION 1 then one CF.INSERT cf
# ITEMS 1 1 … 1 (RedisBloom's tests/flow/test_cuckoo.py
# test_counter_overflow_with_large_number_of_items: 140,000 copies). Every
# full sub-filter adds another of two slots, so the chain grows to N/2
# sub-filters (both stop at 65,535 sub-filters, 131,070 copies: the
# CF.COUNT column, checked equal on both) and RedisBloom's insert, which scans every sub-filter for a
# free slot, is quadratic in N; serve skips full sub-filters 64 at a time.
#
# Usage (from anywhere in the repository):
#   bench/cfchain.sh [-n 'N1 N2 …'] [-rounds R] [-o FILE] [-bloomlab BINARY] REDIS_SERVER MODULE.so
#
# Both servers run side by side on free loopback ports, each with its own
# scratch directory and no persistence (redis-server --save '' --appendonly
# no; serve -appendfsync no, its default -maxmemory): for each N
# (default 5000 40000 140000), R rounds (default 3) of RB then serve, each a
# FLUSHALL, the CF.RESERVE and the timed CF.INSERT (wall time of redis-cli,
# which sends the one command and waits for its reply). A cell is the
# median of the rounds; the ratio serve ÷ RB is taken within each round.
set -euo pipefail
usage() {
  sed -n '/^# Usage/,/^#   *bench/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
cmdline=$*
ns='5000 40000 140000' rounds=3 out='' bl=''
while [ $# -gt 0 ]; do
  case $1 in
  -n) ns=$2; shift 2 ;;
  -rounds) rounds=$2; shift 2 ;;
  -o) out=$2; shift 2 ;;
  -bloomlab) bl=$2; shift 2 ;;
  -h | -help | --help) usage ;;
  -*) echo "unknown flag $1" >&2; usage ;;
  *) break ;;
  esac
done
[ $# -eq 2 ] || usage
redis_server=$1 module=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/ports.sh"
start_pair "$redis_server" "$module"

run() { # port n: seconds of the CF.INSERT of n copies
  redis-cli -p "$1" flushall >/dev/null
  redis-cli -p "$1" cf.reserve cf 2 BUCKETSIZE 1 EXPANSION 1 >/dev/null
  local t0 t1
  t0=$(date +%s.%N)
  yes 1 | head -n "$2" | xargs -s 2000000 redis-cli -p "$1" cf.insert cf ITEMS >/dev/null
  t1=$(date +%s.%N)
  redis-cli -p "$1" cf.count cf 1 >"$tmp/count.$1"
  echo "$t1 - $t0" | bc -l
}
{
  echo "# bench/cfchain.sh $cmdline"
  echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $("$redis_server" --version | awk '{print $1, $3}'), module $(basename "$module")"
  printf '%-8s %9s %12s %12s %14s\n' N CF.COUNT 'RB s' 'serve s' 'serve ÷ RB'
  for n in $ns; do
    : >"$tmp/a" ; : >"$tmp/b"; : >"$tmp/r"
    for _ in $(seq "$rounds"); do
      a=$(run "$prb" "$n"); b=$(run "$psv" "$n")
      # Both stop at 65,535 sub-filters (131,070 copies); the counts must agree.
      cmp -s "$tmp/count.$prb" "$tmp/count.$psv" || { echo "N=$n: CF.COUNT $(cat "$tmp/count.$prb") on RB, $(cat "$tmp/count.$psv") on serve" >&2; exit 1; }
      echo "$a" >>"$tmp/a"; echo "$b" >>"$tmp/b"; echo "$b / $a" | bc -l >>"$tmp/r"
    done
    printf '%-8s %9s %12.3f %12.3f %14.3f\n' "$n" "$(cat "$tmp/count.$prb")" "$(median <"$tmp/a")" "$(median <"$tmp/b")" "$(median <"$tmp/r")"
  done
} | tee "${out:-/dev/null}"
