#!/usr/bin/env bash
# `bloomlab serve` against Redis with the RedisBloom module, side by side
# (issue 24 §1): the same commands under redis-benchmark on both servers, each
# with an append-only log (appendfsync everysec, then always), and per command
# the server's CPU per operation, throughput and latency.
#
# Usage (from anywhere in the repository):
#   bench/redisbloom.sh [-n REQUESTS] [-quick] [-rounds R] [-o FILE] [-bloomlab BINARY]
#                       REDIS_SERVER REDIS_BENCHMARK [MODULE.so]
#
# Three servers run side by side, each started once per appendfsync mode on
# a free loopback port with its own scratch directory:
#   RB      REDIS_SERVER --appendonly yes --appendfsync MODE --loadmodule MODULE.so
#   serve1  GOMAXPROCS=1 bloomlab serve -appendfsync MODE
#   serve2  GOMAXPROCS=2 bloomlab serve -appendfsync MODE
# Log compaction is off on all three (auto-aof-rewrite-percentage 0,
# -aof-rewrite-size 0, no snapshots): what is measured is the command path
# and its log write. Each measurement is one REDIS_BENCHMARK run, -c 50
# -r 100000000, pipeline depth 16 and 1, with the random items of
# __rand_int__; CPU per op is the server process's utime + stime (all its
# threads: /proc/PID/stat fields 14 and 15) over that run divided by the
# requests. /proc counts in ticks of 1/CLK_TCK s (10 ms): a pilot run on every
# side sizes each measurement's requests for about 200 ticks of the cheapest
# side (at most -n REQUESTS, default 3000000), and the output states the
# fewest ticks any measurement had (a cell from a measurement under 100 ticks
# is marked *). Keys are reserved before each write command's run (DEL, then
# BF.RESERVE / CF.RESERVE with room for every item the run adds, so that
# nothing grows; CMS.INITBYPROB 0.001 0.01; TOPK.RESERVE 50 2000 7 0.925;
# TDIGEST.CREATE COMPRESSION 100), the same on every side; a query command
# runs against the key its write command just filled (BF.EXISTS after
# BF.ADD, and so on). The sides are interleaved, RB serve1 serve2 RB serve1
# serve2 for -rounds R (default 2), so that drift on the machine hits all of
# them; a cell shows the two rounds' values lo–hi (the median for R ≥ 3),
# and a ratio is taken within each round.
#
# Without MODULE.so the comparison is against plain Redis: SET for every
# write, GET for every query, MSET/MGET of 10 or 100 keys for the
# multi-item commands (as bench/serve.sh does), and the output says so.
#
# -quick: appendfsync everysec only, one round, no pilot (REQUESTS default
# 100000, divided by the items per command): to check that it runs, not to
# measure. -o FILE also writes the report to FILE. -bloomlab BINARY measures
# that binary instead of building the working tree's cmd/bloomlab.
#
# The machine should be otherwise idle; redis-benchmark takes a core of its
# own. The full run takes about half an hour on a 2-core VM (longer where
# fsync is slow: appendfsync always at depth 1 waits for the disk).
set -euo pipefail
usage() {
  sed -n '/^# Usage/,/^#   *REDIS_SERVER/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
cmdline=$*
n_max='' quick=0 rounds=2 out='' bl=''
while [ $# -gt 0 ]; do
  case $1 in
  -n) n_max=$2; shift 2 ;;
  -quick) quick=1; shift ;;
  -rounds) rounds=$2; shift 2 ;;
  -o) out=$2; shift 2 ;;
  -bloomlab) bl=$2; shift 2 ;;
  -h | -help | --help) usage ;;
  -*) echo "bench/redisbloom.sh: unknown flag $1" >&2; usage ;;
  *) break ;;
  esac
done
[ $# -ge 2 ] && [ $# -le 3 ] || usage
rsrv=$1 rbm=$2 mod=${3:-}
if [ -z "$n_max" ]; then
  n_max=3000000
  [ "$quick" = 1 ] && n_max=100000
fi
[ "$quick" = 1 ] && rounds=1
case $n_max$rounds in *[!0-9]*) echo "bench/redisbloom.sh: -n and -rounds take positive integers" >&2; exit 2 ;; esac
cli=$(dirname "$rbm")/redis-cli
[ -x "$cli" ] || cli=$(command -v redis-cli || true)
for tool in "$rsrv" "$rbm" "$cli"; do
  [ -n "$tool" ] && command -v "$tool" >/dev/null || { echo "bench/redisbloom.sh: ${tool:-redis-cli} is missing (apt-get install redis-server redis-tools)" >&2; exit 1; }
done
[ -z "$mod" ] || [ -r "$mod" ] || { echo "bench/redisbloom.sh: no module at $mod" >&2; exit 1; }
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ -z "$bl" ]; then
  (cd "$root" && go build -o "$tmp/bloomlab" ./cmd/bloomlab)
  bl=$tmp/bloomlab
fi
. "$root/bench/ports.sh"
redis-cli() { "$cli" "$@"; } # ports.sh's freeport and waitport use the given redis-cli
clk=$(getconf CLK_TCK)
say() { echo "bench/redisbloom.sh: $*" >&2; }

ticks() { # pid → utime + stime of the process (all threads), in 1/CLK_TCK s
  sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

# The rows: name, items per op, the key, its reservation (N: the requests
# of the run), the command, and plain Redis's stand-in.
r10=$(printf ' __rand_int__%.0s' $(seq 10))
r100=$(printf ' __rand_int__%.0s' $(seq 100))
p10=$(printf ' k:__rand_int__ v%.0s' $(seq 10))
p100=$(printf ' k:__rand_int__ v%.0s' $(seq 100))
g10=$(printf ' k:__rand_int__%.0s' $(seq 10))
g100=$(printf ' k:__rand_int__%.0s' $(seq 100))
rows=(
  'BF.ADD|1|bf1|BF.RESERVE bf1 0.01 CAP1|BF.ADD bf1 __rand_int__|SET k:__rand_int__ v'
  'BF.EXISTS|1|bf1||BF.EXISTS bf1 __rand_int__|GET k:__rand_int__'
  "BF.MADD (10)|10|bf10|BF.RESERVE bf10 0.01 CAP10|BF.MADD bf10$r10|MSET$p10"
  "BF.MEXISTS (10)|10|bf10||BF.MEXISTS bf10$r10|MGET$g10"
  "BF.MADD (100)|100|bf100|BF.RESERVE bf100 0.01 CAP100|BF.MADD bf100$r100|MSET$p100"
  "BF.MEXISTS (100)|100|bf100||BF.MEXISTS bf100$r100|MGET$g100"
  'BF.INSERT|1|bfi|BF.RESERVE bfi 0.01 CAP1|BF.INSERT bfi ITEMS __rand_int__|SET k:__rand_int__ v'
  'CF.ADD|1|cf|CF.RESERVE cf CAP2|CF.ADD cf __rand_int__|SET k:__rand_int__ v'
  'CF.EXISTS|1|cf||CF.EXISTS cf __rand_int__|GET k:__rand_int__'
  'CMS.INCRBY|1|cms|CMS.INITBYPROB cms 0.001 0.01|CMS.INCRBY cms __rand_int__ 1|SET k:__rand_int__ v'
  'CMS.QUERY|1|cms||CMS.QUERY cms __rand_int__|GET k:__rand_int__'
  'TOPK.ADD|1|tk|TOPK.RESERVE tk 50 2000 7 0.925|TOPK.ADD tk __rand_int__|SET k:__rand_int__ v'
  'TDIGEST.ADD|1|td|TDIGEST.CREATE td COMPRESSION 100|TDIGEST.ADD td __rand_int__|SET k:__rand_int__ v'
)
sides=(RB serve1 serve2)
declare -A port pid

start() { # mode: the three servers, fresh directories
  local mode=$1 s p
  for s in "${sides[@]}"; do
    p=$(freeport)
    mkdir -p "$tmp/$mode/$s"
    case $s in
    RB)
      "$rsrv" --port "$p" --bind 127.0.0.1 --dir "$tmp/$mode/$s" --appendonly yes --appendfsync "$mode" \
        --auto-aof-rewrite-percentage 0 --save '' --daemonize no ${mod:+--loadmodule "$mod"} >"$tmp/$mode.$s.log" 2>&1 &
      ;;
    serve*)
      GOMAXPROCS=${s#serve} "$bl" serve -addr "127.0.0.1:$p" -dir "$tmp/$mode/$s" -appendfsync "$mode" \
        -save 0 -aof-rewrite-size 0 2>"$tmp/$mode.$s.log" &
      ;;
    esac
    pid[$s]=$!
    pids+=($!)
    port[$s]=$p
    (waitport "$p") || { say "$s did not start; its log:"; tail -5 "$tmp/$mode.$s.log" >&2; exit 1; }
  done
  [ -z "$mod" ] || rbver=$("$cli" -p "${port[RB]}" MODULE LIST | awk 'prev == "ver" { print; exit } { prev = $0 }')
}

stop() { # the three servers
  local s
  for s in "${sides[@]}"; do
    kill "${pid[$s]}" 2>/dev/null || true
    wait "${pid[$s]}" 2>/dev/null || true
  done
}

compact() { # side: drop the keys and rewrite the log, so that the disk does not fill up
  local p=${port[$1]}
  "$cli" -p "$p" FLUSHALL >/dev/null
  "$cli" -p "$p" BGREWRITEAOF >/dev/null 2>&1 || true
  for _ in $(seq 600); do
    "$cli" -p "$p" INFO persistence | grep -Eq '^(aof_rewrite_in_progress|aof_rewrite_scheduled|rdb_bgsave_in_progress):1' || return 0
    sleep 0.1
  done
}

run() { # side pipe n row → "ticks rps p50 p99"
  local s=$1 pipe=$2 n=$3 row=$4 name items key setup cmd plain t0 t1 res
  IFS='|' read -r name items key setup cmd plain <<<"${rows[$row]}"
  [ -n "$mod" ] || [ "$s" != RB ] || { cmd=$plain; setup=''; } # plain Redis stands in for RedisBloom
  if [ -n "$setup" ]; then
    setup=${setup//CAP100/$((n * 100 + 1000))}
    setup=${setup//CAP10/$((n * 10 + 1000))}
    setup=${setup//CAP1/$((n + 1000))}
    setup=${setup//CAP2/$((2 * n + 1000))}
    "$cli" -p "${port[$s]}" DEL "$key" >/dev/null
    # shellcheck disable=SC2086
    r=$("$cli" -p "${port[$s]}" $setup)
    [ "$r" = OK ] || { say "$s: $setup: $r"; exit 1; }
  elif [ -z "$mod" ] && [ "$s" = RB ] && [[ $cmd == SET* || $cmd == MSET* ]]; then
    "$cli" -p "${port[$s]}" FLUSHALL >/dev/null
  fi
  t0=$(ticks "${pid[$s]}")
  # shellcheck disable=SC2086
  res=$("$rbm" -p "${port[$s]}" -n "$n" -c 50 -P "$pipe" -r 100000000 --csv $cmd |
    awk -F, 'NR == 2 { gsub(/"/, ""); print $2, $5, $7 }')
  t1=$(ticks "${pid[$s]}")
  [ -n "$res" ] || { say "$s: no result from redis-benchmark for $cmd"; exit 1; }
  echo "$((t1 - t0)) $res"
}

check() { # side row: the command works (an error reply would be timed as fast as an answer)
  local s=$1 name items key setup cmd plain r
  IFS='|' read -r name items key setup cmd plain <<<"${rows[$2]}"
  [ -n "$mod" ] || [ "$s" != RB ] || cmd=$plain
  # shellcheck disable=SC2086
  r=$("$cli" -p "${port[$s]}" ${cmd//__rand_int__/000000000001} 2>&1 | head -1)
  case $r in ERR* | *rror* | *nknown*) say "$s answers $name with: $r"; exit 1 ;; esac
}

size() { # pilot requests, lowest pilot ticks → the requests of a measurement
  local n=$(($1 * 200 / ($2 > 0 ? $2 : 1)))
  [ "$n" -ge "$1" ] || n=$1
  [ "$n" -le "$n_max" ] || n=$n_max
  echo "$n"
}

results=$tmp/results
: >"$results"
modes=(everysec always)
[ "$quick" = 1 ] && modes=(everysec)
started=$(date -u '+%Y-%m-%d %H:%M UTC')
for mode in "${modes[@]}"; do
  start "$mode"
  for pipe in 16 1; do
    for w in "${!rows[@]}"; do
      IFS='|' read -r wname witems _ setup _ <<<"${rows[$w]}"
      [ -n "$setup" ] || continue # a query row: run with its write row
      q=''                        # the query row that reads what w wrote
      if [ $((w + 1)) -lt ${#rows[@]} ]; then
        IFS='|' read -r qname qitems _ qsetup _ <<<"${rows[$((w + 1))]}"
        [ -n "$qsetup" ] || q=$((w + 1))
      fi
      say "appendfsync $mode, -P $pipe: $wname${q:+, $qname}"
      if [ "$quick" = 1 ]; then
        nw=$((n_max / witems)); [ "$nw" -ge 100 ] || nw=100
        nq=$nw
      else # a pilot on every side sizes the measurements
        npw=$((n_max / 20 / witems)); [ "$npw" -ge 500 ] || npw=500
        npq=$npw lw='' lq=''
        for s in "${sides[@]}"; do
          read -r t _ <<<"$(run "$s" "$pipe" "$npw" "$w")"
          [ -n "$lw" ] && [ "$lw" -le "$t" ] || lw=$t
          if [ -n "$q" ]; then
            read -r t _ <<<"$(run "$s" "$pipe" "$npq" "$q")"
            [ -n "$lq" ] && [ "$lq" -le "$t" ] || lq=$t
          fi
        done
        nw=$(size "$npw" "$lw")
        nq=$nw
        [ -z "$q" ] || nq=$(size "$npq" "$lq")
      fi
      for r in $(seq "$rounds"); do
        for s in "${sides[@]}"; do
          read -r t rps p50 p99 <<<"$(run "$s" "$pipe" "$nw" "$w")"
          echo "$mode $pipe $w $s $r $t $nw $rps $p50 $p99" >>"$results"
          [ "$r" -gt 1 ] || check "$s" "$w"
          if [ -n "$q" ]; then
            read -r t rps p50 p99 <<<"$(run "$s" "$pipe" "$nq" "$q")"
            echo "$mode $pipe $q $s $r $t $nq $rps $p50 $p99" >>"$results"
            [ "$r" -gt 1 ] || check "$s" "$q"
          fi
        done
      done
      for s in "${sides[@]}"; do compact "$s"; done
    done
  done
  stop
done

# The report.
names=$tmp/names
for i in "${!rows[@]}"; do
  IFS='|' read -r name _ _ _ cmd plain <<<"${rows[$i]}"
  if [ -n "$mod" ]; then echo "$i|$name"; else echo "$i|$name (as ${plain%% *})"; fi
done >"$names"
report() {
  local modver=none
  [ -z "$mod" ] || modver="RedisBloom $rbver ($mod)"
  echo "# bench/redisbloom.sh $cmdline"
  echo "# $started; $(nproc) CPUs ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)), Linux $(uname -r)"
  echo "# $("$rsrv" --version | awk '{ print $1, $2, $3 }'), $("$rbm" --version | awk '{ print $1, $2 }'), module: $modver"
  echo "# bloomlab $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?') ($bl), $(go version 2>/dev/null | awk '{ print $3 }')"
  echo "# redis-benchmark -c 50 -r 100000000 -P 16 and -P 1; every server with an append-only log, no compaction, no snapshots"
  if [ -z "$mod" ]; then
    echo "# NO MODULE: the RB column is plain Redis, every write as SET, every query as GET (MSET/MGET of 10 or 100 keys): not RedisBloom"
  fi
  awk -v clk="$clk" -v rounds="$rounds" -v plain="$([ -n "$mod" ] || echo 1)" -v quick="$quick" '
    FILENAME == ARGV[1] { split($0, a, "|"); name[a[1]] = a[2]; next }
    {
      k = $1 SUBSEP $2 SUBSEP $3
      if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
      c = $4 SUBSEP $5
      cpu[k, c] = $6 * 1e6 / clk / $7; rps[k, c] = $8; p50[k, c] = $9; p99[k, c] = $10
      if ($6 < 100) low[k] = 1
      if (mint == "" || $6 < mint) mint = $6
      if ($1 != lastmode) { modes[++nm] = $1; lastmode = $1 }
    }
    function cell(v, n, fmt,   i, j, t, s) { # the rounds values: lo–hi for 2, the median for more
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
      for (i = 1; i <= n; i++) if (v[i] == "n/a") return "n/a"
      if (n == 1) return sprintf(fmt, v[1])
      if (n == 2) { s = sprintf(fmt, v[1]); t = sprintf(fmt, v[2]); return s == t ? s : s "–" t }
      return sprintf(fmt, n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2)
    }
    function ratio(a, b) { return b > 0 ? a / b : "n/a" }
    function med(v, n,   i, j, t) {
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
      return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    END {
      rb = plain ? "Redis SET/GET" : "RedisBloom"
      for (m = 1; m <= nm; m++) {
        printf "\n### appendfsync %s\n\n", modes[m]
        printf "| command | -P | %s µs CPU/op | serve(1) ÷ %s, CPU/op | serve(2) ÷ %s, CPU/op | serve(1) ÷ %s, ops/s | serve(2) ÷ %s, ops/s | %s ops/s | p50 ms %s / serve(1) / serve(2) | p99 ms %s / serve(1) / serve(2) |\n", rb, rb, rb, rb, rb, rb, rb, rb
        print "|---|---|---|---|---|---|---|---|---|---|"
        for (o = 1; o <= nk; o++) {
          split(order[o], kk, SUBSEP)
          if (kk[1] != modes[m]) continue
          k = order[o]
          line = sprintf("| %s%s | %s", name[kk[3]], low[k] ? " *" : "", kk[2])
          delete v; for (r = 1; r <= rounds; r++) v[r] = cpu[k, "RB" SUBSEP r]
          line = line " | " cell(v, rounds, "%.2f")
          for (x = 1; x <= 2; x++) { delete v; for (r = 1; r <= rounds; r++) v[r] = ratio(cpu[k, "serve" x SUBSEP r], cpu[k, "RB" SUBSEP r]); line = line " | " cell(v, rounds, "%.2f") }
          for (x = 1; x <= 2; x++) { delete v; for (r = 1; r <= rounds; r++) v[r] = ratio(rps[k, "serve" x SUBSEP r], rps[k, "RB" SUBSEP r]); line = line " | " cell(v, rounds, "%.2f") }
          delete v; for (r = 1; r <= rounds; r++) v[r] = rps[k, "RB" SUBSEP r]
          line = line " | " cell(v, rounds, "%.0f")
          split("RB serve1 serve2", sd, " ")
          t = ""; for (x = 1; x <= 3; x++) { delete v; for (r = 1; r <= rounds; r++) v[r] = p50[k, sd[x] SUBSEP r]; t = t (x > 1 ? " / " : "") sprintf("%.3f", med(v, rounds)) }
          line = line " | " t
          t = ""; for (x = 1; x <= 3; x++) { delete v; for (r = 1; r <= rounds; r++) v[r] = p99[k, sd[x] SUBSEP r]; t = t (x > 1 ? " / " : "") sprintf("%.3f", med(v, rounds)) }
          print line " | " t " |"
        }
      }
      printf "\nCPU/op: the server process'"'"'s utime + stime (/proc/PID/stat, all threads, in ticks of 1/%d s) over the run ÷ its requests; ", clk
      printf "%s.\n", quick ? "-quick: no pilot, so measurements of under 100 ticks (marked *) are coarse" : "each run sized by a pilot for about 200 ticks of the cheapest side (marked * where one had under 100)"
      printf "Fewest ticks in one measurement: %d. ", mint
      printf "Cells: %s; ratios within each round; latencies: the median over the rounds.\n", rounds == 1 ? "one round" : rounds == 2 ? "the two interleaved rounds, lo–hi" : "the median of " rounds " interleaved rounds"
      printf "serve(1), serve(2): bloomlab serve at GOMAXPROCS=1 and 2.\n"
    }' "$names" "$results"
}
if [ -n "$out" ]; then report | tee "$out"; else report; fi
