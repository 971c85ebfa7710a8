# Sourced by the bench scripts that start servers (serve.sh,
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
