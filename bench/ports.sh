# Sourced by the bench scripts that start servers (serve.sh, cfchain.sh,
# tdmerge.sh, bigdump.sh, replication.sh,
# serve_mixed.sh, redisbloom.sh, scaling.sh, bigfilter.sh): loopback
# ports and waiting for a server to answer.

freeport() { # a loopback port nothing listens on (a connection is refused)
  local p
  while :; do
    p=$((20000 + RANDOM % 20000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
}

waitport() { # until the server on port $1 answers PING (30 s at most)
  for _ in $(seq 300); do [ "$(redis-cli -p "$1" ping 2>/dev/null)" = PONG ] && return; sleep 0.1; done
  echo "no server on $1" >&2
  exit 1
}

median() { # the median of the numbers on standard input, one a line
  sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'
}

# track PID: a server to stop at exit, kept in $tmp/pids (a file, not an
# array: servers started inside a pipeline's or a $(…)'s subshell count
# too); stop_tracked, the scripts' EXIT trap, stops them all.
track() { echo "$1" >>"$tmp/pids"; }
stop_tracked() {
  [ -f "$tmp/pids" ] && kill $(cat "$tmp/pids") 2>/dev/null
  wait 2>/dev/null
  rm -rf "$tmp"
  return 0
}

# start_pair REDIS_SERVER MODULE.so (cfchain.sh, tdmerge.sh): a scratch
# directory $tmp removed at exit with the servers, $bl built from the
# working tree unless set, then redis-server with the module and bloomlab
# serve, both without persistence, on free ports $prb and $psv.
start_pair() {
  local here
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  tmp=$(mktemp -d)
  trap stop_tracked EXIT
  if [ -z "$bl" ]; then
    (cd "$here/.." && go build -o "$tmp/bloomlab" ./cmd/bloomlab)
    bl=$tmp/bloomlab
  fi
  prb=$(freeport)
  mkdir -p "$tmp/rb" "$tmp/serve"
  (cd "$tmp/rb" && exec "$1" --port "$prb" --bind 127.0.0.1 --save '' --appendonly no --loadmodule "$2" >"$tmp/rb.log" 2>&1) &
  track $!
  waitport "$prb"
  psv=$(freeport)
  "$bl" serve -addr "127.0.0.1:$psv" -dir "$tmp/serve" -appendfsync no >"$tmp/serve.log" 2>&1 &
  track $!
  waitport "$psv"
}
