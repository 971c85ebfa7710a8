#!/usr/bin/env bash
# System calls and context switches per command of `bloomlab serve`
# (GOMAXPROCS=1) and of redis-server with the RedisBloom module, under the
# same redis-benchmark load (50 clients, random items), counted by
# `perf stat -e syscalls:sys_enter_*` on each server process: why a command
# whose own work is small costs serve about what it costs RedisBloom
# (docs/SERVER.md, Performance). Each server runs with an append-only log
# (appendfsync as given) and a filter reserved for the items.
#
# Usage (from the repository root, as root or with perf allowed to trace
# other processes):
#   bench/syscalls.sh [-n REQUESTS] [-P DEPTH] [-fsync everysec|always] [-cmd BF.EXISTS|BF.ADD|CF.EXISTS|…] MODULE.so
set -euo pipefail
n=1000000 depth=16 fsync=everysec cmd=BF.EXISTS
while [ $# -gt 1 ]; do
  case $1 in
  -n) n=$2; shift 2 ;;
  -P) depth=$2; shift 2 ;;
  -fsync) fsync=$2; shift 2 ;;
  -cmd) cmd=$2; shift 2 ;;
  *) echo "bench/syscalls.sh: unknown flag $1" >&2; exit 2 ;;
  esac
done
[ $# -eq 1 ] || { sed -n '/^# Usage/,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
module=$1
for tool in redis-server redis-benchmark redis-cli perf; do
  command -v "$tool" >/dev/null || { echo "bench/syscalls.sh: $tool is missing" >&2; exit 1; }
done
dir=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$dir"; }
trap cleanup EXIT
. "$(dirname "$0")/ports.sh"
go build -o "$dir/bloomlab" ./cmd/bloomlab

case $cmd in
CF.*) setup=(CF.RESERVE k 10000000) args=(k __rand_int__) ;;
CMS.INCRBY) setup=(CMS.INITBYDIM k 2000 5) args=(k __rand_int__ 1) ;;
CMS.QUERY) setup=(CMS.INITBYDIM k 2000 5) args=(k __rand_int__) ;;
*) setup=(BF.RESERVE k 0.01 10000000 NONSCALING) args=(k __rand_int__) ;;
esac
events=syscalls:sys_enter_read,syscalls:sys_enter_write,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_futex,syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync,context-switches

measure() { # name pid port
  local name=$1 pid=$2 port=$3
  redis-cli -p "$port" "${setup[@]}" >/dev/null
  perf stat -x, -e "$events" -p "$pid" -o "$dir/$name.stat" &
  local sp=$!
  sleep 0.5
  read -r u0 s0 < <(awk '{print $14, $15}' "/proc/$pid/stat")
  redis-benchmark -p "$port" -n "$n" -c 50 -P "$depth" -r 100000000 -q "$cmd" "${args[@]}" >/dev/null
  read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$pid/stat")
  kill -INT "$sp"; wait "$sp" || true
  awk -F, -v n="$n" -v name="$name" -v cpu="$(( (u1 + s1 - u0 - s0) ))" -v clk="$(getconf CLK_TCK)" '
    $3 ~ /syscalls:sys_enter_|context-switches/ { ev = $3; sub(/syscalls:sys_enter_/, "", ev); v[ev] = $1 * 1000 / n }
    END { printf "| %s | %.2f |", name, cpu * 1e6 / clk / n
          split("read write epoll_wait epoll_pwait futex fsync fdatasync context-switches", k, " ")
          for (i = 1; i <= 8; i++) printf " %.2f |", v[k[i]]; printf "\n" }' "$dir/$name.stat"
}

echo "# bench/syscalls.sh -n $n -P $depth -fsync $fsync -cmd $cmd $module"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) CPUs; $(redis-server --version | awk '{print $3}')"
echo
echo "| server | µs CPU/op | read | write | epoll_wait | epoll_pwait | futex | fsync | fdatasync | context switches |"
echo "|---|---|---|---|---|---|---|---|---|---|"
bp=$(freeport)
mkdir -p "$dir/bl"
GOMAXPROCS=1 "$dir/bloomlab" serve -addr "127.0.0.1:$bp" -dir "$dir/bl" -appendfsync "$fsync" -save 0 -aof-rewrite-size 0 2>"$dir/bl.log" &
pids+=($!)
waitport "$bp"
measure "serve" "${pids[-1]}" "$bp"
rp=$(freeport)
mkdir -p "$dir/rs"
redis-server --port "$rp" --bind 127.0.0.1 --dir "$dir/rs" --appendonly yes --appendfsync "$fsync" \
  --auto-aof-rewrite-percentage 0 --save '' --loadmodule "$module" >"$dir/rs.log" 2>&1 &
pids+=($!)
waitport "$rp"
measure "RedisBloom" "${pids[-1]}" "$rp"
echo
echo "System calls and context switches per 1000 commands (perf stat on the server process, all threads); CPU/op from /proc/PID/stat."
