#!/usr/bin/env bash
# Replication (issue 35), serve -> serve beside redis-server -> redis-server
# with RedisBloom, side by side:
#
#  lag:  a primary and its replica, both with appendfsync everysec; the
#        primary takes redis-benchmark -P 16 -c 50 -n LAG_N BF.ADD of random
#        items into one key while bench/replbench samples both offsets every
#        5 ms: the replica's lag in bytes and in milliseconds (p50, p99).
#        Goal for serve: p99 <= 1 MiB and <= 100 ms.
#  sync: a primary holding DATASET MiB of Bloom filters (keys of 1 to 100
#        MiB, their pages written), then an empty replica made its replica
#        (REPLICAOF), with 1,000 BF.ADD a second and a BF.EXISTS loop on the
#        primary meanwhile: the time until the replica's link is up and its
#        offset has caught up, the BF.EXISTS p99 and worst latency, and the
#        primary's peak RSS beyond its RSS before (Linux, root: VmHWM after
#        clear_refs). Redis sends its full sync from a forked child, whose
#        copy-on-write pages are the child's: its primary's peak does not
#        show them. Goals for serve: the time <= 1.0x Redis's, peak <=
#        0.1 x dataset + 32 MiB + what was written, reader p99 <= 50 ms.
#
# Usage (from anywhere in the repository):
#   bench/replication.sh [-rounds R] [-lag-n N] [-dataset MIB] [-o FILE] [-bloomlab BINARY]
#                        REDIS_SERVER MODULE.so
#
# Each cell is the median of R rounds (default 1); every round starts fresh
# processes in empty directories on free loopback ports, RB then serve.
set -euo pipefail
usage() {
  sed -n '/^# Usage/,/^#   *REDIS_SERVER/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
cmdline=$*
rounds=1 lagn=2000000 dataset=1024 out='' bl=''
while [ $# -gt 0 ]; do
  case $1 in
  -rounds) rounds=$2; shift 2 ;;
  -lag-n) lagn=$2; shift 2 ;;
  -dataset) dataset=$2; shift 2 ;;
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
(cd "$here" && go build -o "$tmp/replbench" ./replbench)

# launch SIDE NAME [PRIMARY_PORT]: a server in $tmp/NAME on a free port
# (echoed as "port pid"), a replica of PRIMARY_PORT if given.
launch() {
  local side=$1 name=$2 of=${3:-} p
  p=$(freeport)
  rm -rf "${tmp:?}/$name"; mkdir -p "$tmp/$name"
  case $side in
  RB)
    local rep=()
    [ -n "$of" ] && rep=(--replicaof 127.0.0.1 "$of")
    (cd "$tmp/$name" && exec "$rsrv" --port "$p" --bind 127.0.0.1 --dir "$tmp/$name" --appendonly yes --appendfsync everysec \
      --auto-aof-rewrite-percentage 0 --save '' --repl-diskless-sync yes --repl-diskless-sync-delay 0 \
      --loadmodule "$mod" "${rep[@]}" >"$tmp/$name.log" 2>&1) &
    ;;
  serve)
    local rep=()
    [ -n "$of" ] && rep=(-replicaof "127.0.0.1:$of")
    "$bl" serve -addr "127.0.0.1:$p" -dir "$tmp/$name" -appendfsync everysec -save 0 -aof-rewrite-size 0 "${rep[@]}" >"$tmp/$name.log" 2>&1 &
    ;;
  esac
  local pid=$!
  track "$pid"
  waitport "$p"
  echo "$p $pid"
}
linkup() { # until the replica on port $1 says master_link_status:up (60 s)
  for _ in $(seq 600); do
    redis-cli -p "$1" INFO replication | grep -q 'master_link_status:up' && return
    sleep 0.1
  done
  echo "replica on $1: no link" >&2
  exit 1
}
stop() { redis-cli -p "$1" SHUTDOWN NOSAVE >/dev/null 2>&1 || true; }

lagonce() { # side: "lag-bytes-p50 … lag-ms-p99 …"
  local s=$1 pp rp pinfo rinfo
  pinfo=$(launch "$s" "$s-p"); pp=${pinfo% *}
  rinfo=$(launch "$s" "$s-r" "$pp"); rp=${rinfo% *}
  linkup "$rp"
  "$tmp/replbench" -mode lag -primary "127.0.0.1:$pp" -replica "127.0.0.1:$rp" -for 600s >"$tmp/lag.out" &
  local lb=$!
  redis-benchmark -p "$pp" -q -P 16 -c 50 -n "$lagn" -r 100000000 BF.ADD lag __rand_int__ >/dev/null
  wait "$lb" # it stops a second after the primary's offset stops growing
  stop "$rp"; stop "$pp"
  cat "$tmp/lag.out"
}

# The dataset: keys of 100, 50, 25, 10, 5, 2 and 1 MiB, 100 MiB ones first,
# up to DATASET MiB; each filter's pages written by BF.ADD of random items
# (two per 4 KiB page).
sizes() {
  local left=$dataset
  for sz in 100 100 100 100 100 100 100 100 100 50 50 25 25 10 10 5 5 2 2 1 1 1 1 1 1; do
    [ "$left" -le 0 ] && break
    [ "$sz" -gt "$left" ] && sz=$left
    echo "$sz"
    left=$((left - sz))
  done
}
fill() { # port
  local i=0
  for sz in $(sizes); do
    i=$((i + 1))
    local cap=$((sz * 8 * 1048576 * 1000 / 9585))
    redis-cli -p "$1" BF.RESERVE "big$i" 0.01 "$cap" NONSCALING >/dev/null
    redis-benchmark -p "$1" -q -P 16 -c 4 -n $((sz * 512)) -r 1000000000 BF.ADD "big$i" __rand_int__ >/dev/null
  done
}
synconce() { # side: "sync-s … peak-mib …"
  local s=$1 pinfo rinfo pp ppid rp
  pinfo=$(launch "$s" "$s-p"); pp=${pinfo% *}; ppid=${pinfo#* }
  fill "$pp"
  rinfo=$(launch "$s" "$s-r"); rp=${rinfo% *}
  "$tmp/replbench" -mode sync -primary "127.0.0.1:$pp" -replica "127.0.0.1:$rp" -pid "$ppid"
  stop "$rp"; stop "$pp"
}

{
  echo "# bench/replication.sh $cmdline"
  echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $("$rsrv" --version | awk '{print $1, $3}'), dataset $dataset MiB, lag -n $lagn"
  for s in RB serve; do : >"$tmp/lag.$s"; : >"$tmp/sync.$s"; done
  for _ in $(seq "$rounds"); do
    for s in RB serve; do lagonce "$s" >>"$tmp/lag.$s"; done
    for s in RB serve; do synconce "$s" >>"$tmp/sync.$s"; done
  done
  col() { awk -v k="$2" '{for (i = 1; i < NF; i++) if ($i == k) print $(i+1)}' "$1" | median; }
  printf '%-6s %12s %12s %10s %10s\n' side lag-B-p50 lag-B-p99 lag-ms-p50 lag-ms-p99
  for s in RB serve; do
    printf '%-6s %12s %12s %10s %10s\n' "$s" "$(col "$tmp/lag.$s" lag-bytes-p50)" "$(col "$tmp/lag.$s" lag-bytes-p99)" \
      "$(col "$tmp/lag.$s" lag-ms-p50)" "$(col "$tmp/lag.$s" lag-ms-p99)"
  done
  printf '%-6s %10s %14s %14s %10s %8s\n' side sync-s exists-p99-ms exists-max-ms peak-MiB writes
  for s in RB serve; do
    printf '%-6s %10s %14s %14s %10s %8s\n' "$s" "$(col "$tmp/sync.$s" sync-s)" "$(col "$tmp/sync.$s" exists-p99-ms)" \
      "$(col "$tmp/sync.$s" exists-max-ms)" "$(col "$tmp/sync.$s" peak-mib)" "$(col "$tmp/sync.$s" writes)"
  done
} | tee "${out:-/dev/null}"
