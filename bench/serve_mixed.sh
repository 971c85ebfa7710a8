#!/usr/bin/env bash
# `bloomlab serve` under a mixed load: one redis-benchmark adding random
# keys (BF.ADD) while another queries random keys (BF.EXISTS) on the same
# filter, with -appendfsync always and everysec. A reply goes out only once
# the log holds every write it observed (docs/SERVER.md, "What survives
# what"): with always, queries served while other clients write wait for
# the writers' group fsync, which this measures.
#
# Usage (from the repository root): bench/serve_mixed.sh [REQUESTS] [BINARY]
#   REQUESTS per benchmark (default 200000); BINARY a bloomlab binary to
#   measure instead of building the working tree's (to compare revisions).
# The machine should be otherwise idle.
set -euo pipefail
n=${1:-200000}
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$dir"' EXIT
for tool in redis-benchmark redis-cli; do
  command -v "$tool" >/dev/null || { echo "bench/serve_mixed.sh: $tool is missing (apt-get install redis-tools)" >&2; exit 1; }
done
bl=${2:-}
if [ -z "$bl" ]; then
  go build -o "$dir/bloomlab" ./cmd/bloomlab
  bl="$dir/bloomlab"
fi
. "$(dirname "$0")/ports.sh"
ops() { # port, command… → ops/s
  redis-benchmark -p "$1" -n "$n" -c 20 -P 16 -r 1000000 --csv "${@:2}" |
    awk -F, 'NR == 2 { gsub(/"/, "", $2); print $2 }'
}
printf '%-9s %12s %12s\n' mode "BF.ADD/s" "BF.EXISTS/s"
for mode in always everysec; do
  port=$(freeport)
  mkdir -p "$dir/$mode"
  "$bl" serve -addr "127.0.0.1:$port" -dir "$dir/$mode" -appendfsync "$mode" -save 0 2>"$dir/$mode.log" &
  pid=$!
  waitport "$port"
  ops "$port" BF.ADD f __rand_int__ >"$dir/add" &
  ex=$(ops "$port" BF.EXISTS f __rand_int__)
  wait %%
  printf '%-9s %12s %12s\n' "$mode" "$(cat "$dir/add")" "$ex"
  kill "$pid"; wait "$pid" 2>/dev/null || true
done
