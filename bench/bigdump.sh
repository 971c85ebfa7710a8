#!/usr/bin/env bash
# Big SCANDUMP and LOADCHUNK (issue 34 §4): a whole dump of a 1 GiB Bloom
# filter and of a 1 GiB cuckoo filter, and the load of its chunks back
# into a new key, on Redis with the RedisBloom module and on bloomlab
# serve, side by side. Goal: serve's time ≤ RedisBloom's for both, and no
# more memory than one chunk beyond the filter.
#
# Usage (from anywhere in the repository):
#   bench/bigdump.sh [-rounds R] [-bf-cap N] [-cf-cap N] [-items N] [-o FILE] [-bloomlab BINARY]
#                    REDIS_SERVER MODULE.so
#
# Both servers run as production runs them, each on a free loopback port
# with its own scratch directory and an append-only log (appendfsync
# everysec; no snapshots, no log compaction, as bench/redisbloom.sh). Each
# holds BF.RESERVE big 0.01 BF-CAP NONSCALING (default 896,000,000: 1.00
# GiB of bits) and CF.RESERVE cbig CF-CAP (default 2^30: 2^29 buckets of
# 2, 1 GiB), each with ITEMS random items (default 100,000, added by
# redis-benchmark -P 16). Each round, RB then serve, for BF then CF: the
# client bench/dumpload (one command in flight at a time) SCANDUMPs the
# key from iterator 0 to the end, holding the chunks, then LOADCHUNKs them
# into a new key, checks that its INFO equals the original's, and the
# script deletes it. Per phase: the wall time the client measured, the
# server's CPU time (utime + stime of all its threads, its log writes
# included), and the memory beyond the filter: the server's peak RSS over
# the whole dump and load (VmHWM, reset through /proc/PID/clear_refs)
# minus its RSS before, minus the loaded filter's bytes. A cell is the
# median of the rounds (default 3); the ratio serve ÷ RB is taken within
# each round. Needs about 6 GiB of memory (each server holds two filters,
# the client the chunks) and root or the servers' owner for clear_refs.
set -euo pipefail
usage() {
  sed -n '/^# Usage/,/^#   *REDIS_SERVER/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
cmdline=$*
rounds=3 bfcap=896000000 cfcap=1073741824 items=100000 out='' bl=''
while [ $# -gt 0 ]; do
  case $1 in
  -rounds) rounds=$2; shift 2 ;;
  -bf-cap) bfcap=$2; shift 2 ;;
  -cf-cap) cfcap=$2; shift 2 ;;
  -items) items=$2; shift 2 ;;
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
tmp=$(mktemp -d)
trap stop_tracked EXIT
if [ -z "$bl" ]; then
  (cd "$here/.." && go build -o "$tmp/bloomlab" ./cmd/bloomlab)
  bl=$tmp/bloomlab
fi
(cd "$here" && go build -o "$tmp/dumpload" ./dumpload)
declare -A port pid
launch() { # side: start it on its port and directory, wait until it answers
  local s=$1 p=${port[$1]}
  case $s in
  RB) "$rsrv" --port "$p" --bind 127.0.0.1 --dir "$tmp/$s" --appendonly yes --appendfsync everysec \
        --auto-aof-rewrite-percentage 0 --save '' --daemonize no --loadmodule "$mod" >>"$tmp/$s.log" 2>&1 & ;;
  serve) "$bl" serve -addr "127.0.0.1:$p" -dir "$tmp/$s" -appendfsync everysec -save 0 -aof-rewrite-size 0 2>>"$tmp/$s.log" & ;;
  esac
  pid[$s]=$!
  track $!
  waitport "$p"
}
fill() { # side: the two filters, ITEMS random items each
  local p=${port[$1]}
  redis-cli -p "$p" BF.RESERVE big 0.01 "$bfcap" NONSCALING >/dev/null
  redis-cli -p "$p" CF.RESERVE cbig "$cfcap" >/dev/null
  redis-benchmark -p "$p" -q -n "$items" -r 1000000000 -P 16 BF.ADD big __rand_int__ >/dev/null
  redis-benchmark -p "$p" -q -n "$items" -r 1000000000 -P 16 CF.ADD cbig __rand_int__ >/dev/null
}
fresh() { # side: a new process in an empty directory, the filters filled
  redis-cli -p "${port[$1]}" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
  while kill -0 "${pid[$1]}" 2>/dev/null; do sleep 0.2; done
  rm -rf "${tmp:?}/$1"; mkdir -p "$tmp/$1"
  launch "$1"
  fill "$1"
}
for s in RB serve; do
  port[$s]=$(freeport)
  mkdir -p "$tmp/$s"
  launch "$s"
done
rss() { awk '/^VmRSS/ {printf "%.0f\n", $2 * 1024}' "/proc/$1/status"; }
hwm() { awk '/^VmHWM/ {printf "%.0f\n", $2 * 1024}' "/proc/$1/status"; }
# one side, one family: "scan load scancpu loadcpu scanmem loadmem" (seconds, MiB)
once() {
  local s=$1 fam=$2 key=$3 p=${port[$1]} pd=${pid[$1]} r0 line scanmem loadmem bytes
  fresh "$s" # a fresh process: its peak is this run's, not an earlier one's garbage
  p=${port[$s]} pd=${pid[$s]}
  echo 5 >"/proc/$pd/clear_refs"; r0=$(rss "$pd")
  line=$("$tmp/dumpload" -addr "127.0.0.1:$p" -family "$fam" -key "$key" -to "${key}2" -pid "$pd")
  bytes=$(echo "$line" | awk '{print $NF}')
  h=$(hwm "$pd")
  loadmem=$(( (h - r0 - bytes) / 1048576 ))
  redis-cli -p "$p" DEL "${key}2" >/dev/null
  echo "$line" | awk -v lm="$loadmem" '{print $2, $4, $6, $8, lm}'
}
{
  echo "# bench/bigdump.sh $cmdline"
  echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $("$rsrv" --version | awk '{print $1, $3}'), module $(redis-cli -p "${port[RB]}" MODULE LIST | awk 'prev == "ver" { print; exit } { prev = $0 }')"
  echo "# wall s and server CPU s per whole dump (SCANDUMP) and whole load (LOADCHUNK);"
  echo "# mem: peak RSS beyond the loaded filter over the run (MiB; one chunk is 16)"
  printf '%-3s %-6s %8s %8s %9s %9s %8s\n' fam side scan load scan-cpu load-cpu mem
  for fam in BF CF; do
    key=big; [ "$fam" = CF ] && key=cbig
    for s in RB serve; do : >"$tmp/$fam.$s"; done
    for _ in $(seq "$rounds"); do
      for s in RB serve; do once "$s" "$fam" "$key" >>"$tmp/$fam.$s"; done
    done
    for s in RB serve; do
      printf '%-3s %-6s' "$fam" "$s"
      for c in 1 2 3 4 5; do printf ' %8s' "$(awk -v c=$c '{print $c}' "$tmp/$fam.$s" | median)"; done
      echo
    done
    printf '%-3s %-6s' "$fam" 'ratio'
    for c in 1 2 3 4; do
      printf ' %8.2f' "$(paste "$tmp/$fam.serve" "$tmp/$fam.RB" | awk -v c=$c '{print $c / $(c+5)}' | median)"
    done
    echo
  done
} | tee "${out:-/dev/null}"
