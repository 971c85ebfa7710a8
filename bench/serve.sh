#!/usr/bin/env bash
# `bloomlab serve` under redis-benchmark, against Debian's redis-server on
# the same machine with the same durability (appendonly, appendfsync
# everysec): BF.ADD and BF.EXISTS on bloomlab (a filter reserved for the
# keys, so that it does not grow during the run) against SET and GET on
# redis-server, random keys (-r), 50 clients, pipelines of 16. Then the
# resident memory that served filters add to `bloomlab serve`, against the
# filters' own size (issue 12: BF.ADD/BF.EXISTS ≥ 0.8 × SET/GET ops/s;
# RSS growth per filter within 10% of its size).
#
# Usage (from the repository root): bench/serve.sh [REQUESTS] [DIR]
#   REQUESTS per test (default 1000000), DIR scratch space (default a temp dir).
# The machine should be otherwise idle: redis-benchmark takes a core of its own.
set -euo pipefail
n=${1:-1000000}
dir=${2:-$(mktemp -d)}
mkdir -p "$dir"
for tool in redis-server redis-benchmark redis-cli; do
  command -v "$tool" >/dev/null || { echo "bench/serve.sh: $tool is missing (apt-get install redis-server redis-tools)" >&2; exit 1; }
done
go build -o "$dir/bloomlab" ./cmd/bloomlab
bl="$dir/bloomlab"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

. "$(dirname "$0")/ports.sh"
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }

bench() { # port, command… → "ops/s p99_ms"
  local port=$1; shift
  redis-benchmark -p "$port" -n "$n" -c 50 -P 16 -r 100000000 --csv "$@" |
    awk -F, 'NR == 2 { gsub(/"/, "", $2); gsub(/"/, "", $7); print $2, $7 }'
}

# bloomlab serve
bp=$(freeport)
rm -rf "$dir/bl" "$dir/redis"
mkdir -p "$dir/bl"
"$bl" serve -addr "127.0.0.1:$bp" -dir "$dir/bl" -appendfsync everysec -save 0 2>"$dir/bl.log" &
pids+=($!)
waitport "$bp"
redis-cli -p "$bp" BF.RESERVE f 0.01 "$n" >/dev/null
read -r add_ops add_p99 < <(bench "$bp" BF.ADD f __rand_int__)
read -r ex_ops ex_p99 < <(bench "$bp" BF.EXISTS f __rand_int__)
redis-cli -p "$bp" SHUTDOWN NOSAVE >/dev/null 2>&1 || true

# redis-server, the same durability
rp=$(freeport)
mkdir -p "$dir/redis"
redis-server --port "$rp" --bind 127.0.0.1 --dir "$dir/redis" --appendonly yes --appendfsync everysec --save '' --daemonize no >"$dir/redis.log" 2>&1 &
pids+=($!)
waitport "$rp"
read -r set_ops set_p99 < <(bench "$rp" SET key:__rand_int__ v)
read -r get_ops get_p99 < <(bench "$rp" GET key:__rand_int__)
redis-cli -p "$rp" SHUTDOWN NOSAVE >/dev/null 2>&1 || true

echo "redis-benchmark -n $n -c 50 -P 16 -r 100000000 (appendfsync everysec on both)"
printf '%-28s %12s %10s\n' test "ops/s" "p99 ms"
printf '%-28s %12s %10s\n' "bloomlab BF.ADD" "$add_ops" "$add_p99" "bloomlab BF.EXISTS" "$ex_ops" "$ex_p99" \
  "redis-server SET" "$set_ops" "$set_p99" "redis-server GET" "$get_ops" "$get_p99"
awk -v a="$add_ops" -v e="$ex_ops" -v s="$set_ops" -v g="$get_ops" \
  'BEGIN { printf "BF.ADD / SET = %.2f, BF.EXISTS / GET = %.2f (goal >= 0.80)\n", a / s, e / g }'

# Resident memory per served filter: ten copies of a 10^7-key filter at 1%
# (empty: a file's pages are all touched when it is read) against none.
"$bl" build -kind bloom -n 10000000 -fpr 0.01 -o "$dir/f.blf" /dev/null 2>/dev/null
size=$(stat -c %s "$dir/f.blf")
loads=()
for i in $(seq 10); do loads+=(-load "f$i=$dir/f.blf"); done
measure() { # extra serve flags… → RSS KiB once serving
  local p d
  p=$(freeport)
  d=$(mktemp -d -p "$dir")
  "$bl" serve -addr "127.0.0.1:$p" -dir "$d" -save 0 "$@" 2>>"$dir/rss.log" &
  local pid=$!
  pids+=($pid)
  waitport "$p"
  sleep 1
  rss_kib "$pid"
  redis-cli -p "$p" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
}
base=$(measure)
with=$(measure "${loads[@]}")
awk -v b="$base" -v w="$with" -v s="$size" 'BEGIN {
  per = (w - b) * 1024 / 10
  printf "RSS: %.1f MiB with no filter, %.1f MiB with 10 filters of %.2f MiB (file size): %.2f MiB per filter = %.3f x its size (goal <= 1.10)\n", b / 1024, w / 1024, s / 1048576, per / 1048576, per / s
}'
