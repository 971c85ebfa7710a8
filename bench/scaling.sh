#!/usr/bin/env bash
# Does `bloomlab serve` scale with cores (issue 24 §3)? The clients run in a
# process of their own (bench/loadgen: 50 connections, pipelines of 16,
# random items), on distinct keys (client i on key k<i>, each reserved for
# its items) and on one shared key, against serve at GOMAXPROCS 1 and 2 (or
# -procs LIST). For each command, key mode and GOMAXPROCS: ops/s, the
# server's CPU per op (utime + stime of the process from /proc/PID/stat over
# the run, all threads, ÷ requests), CPU/op ÷ that at the first GOMAXPROCS
# (issue 24's goal on distinct keys: ≤ 1.1 at 2 procs), and p50/p99 of a
# pipeline's round trip. serve runs with -pprof: the mutex and block
# profiles of every run are saved under DIR, and their top entries
# (`go tool pprof -top`) printed for the largest GOMAXPROCS, naming the
# locks that serialise it (the profiles cost a little CPU: -noprof measures
# without them).
#
# Usage (from anywhere in the repository):
#   bench/scaling.sh [-n REQUESTS] [-procs "1 2"] [-rounds R] [-cmds "BF.ADD BF.EXISTS"] [-o DIR] [-noprof]
#                    [-threads "4 8 16" -redis REDIS_SERVER -redis-benchmark REDIS_BENCHMARK [-module MODULE.so]]
#
# -n: requests per run (default 2000000: ~2 µs of server CPU each is 400
#   ticks of /proc's 10 ms; the output states the fewest ticks of any run).
# Each run has a fresh server; BF.EXISTS (and BF.MEXISTS) runs on the keys
# that the BF.ADD run before it filled, on the same server, and its
# profiles are the difference (pprof -base) from the ones taken after that
# BF.ADD. Commands are given by name (BF.ADD, BF.EXISTS, BF.MADD,
# BF.MEXISTS, CF.ADD, CF.EXISTS, CMS.INCRBY, CMS.QUERY; the multi-item ones
# with 10 items). -rounds R (default 2) interleaves the GOMAXPROCS settings
# R times; a cell shows lo–hi of two rounds, the median of more.
# -o DIR: keep the report (scaling.txt) and profiles there (default: a
# temporary directory, named at the end).
#
# -threads LIST (for a machine with 8 or more cores): also, for each N in
# LIST, redis-benchmark --threads N against redis-server --io-threads N
# --io-threads-do-reads yes (with MODULE.so: the same commands; without it
# SET and GET) and against serve at GOMAXPROCS=N, one shared key.
set -euo pipefail
usage() {
  sed -n '/^# Usage/,/^#  *\[-threads/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
cmdline=$*
n=2000000 procs='1 2' rounds=2 cmds='BF.ADD BF.EXISTS' outdir='' prof=1
threads='' rsrv='' rbm='' mod=''
while [ $# -gt 0 ]; do
  case $1 in
  -n) n=$2; shift 2 ;;
  -procs) procs=$2; shift 2 ;;
  -rounds) rounds=$2; shift 2 ;;
  -cmds) cmds=$2; shift 2 ;;
  -o) outdir=$2; shift 2 ;;
  -noprof) prof=0; shift ;;
  -threads) threads=$2; shift 2 ;;
  -redis) rsrv=$2; shift 2 ;;
  -redis-benchmark) rbm=$2; shift 2 ;;
  -module) mod=$2; shift 2 ;;
  *) usage ;;
  esac
done
if [ -n "$threads" ] && { [ -z "$rsrv" ] || [ -z "$rbm" ]; }; then
  echo "bench/scaling.sh: -threads needs -redis and -redis-benchmark" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
outdir=${outdir:-$(mktemp -d)}
mkdir -p "$outdir/profiles"
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
command -v redis-cli >/dev/null || { echo "bench/scaling.sh: redis-cli is missing (apt-get install redis-tools)" >&2; exit 1; }
(cd "$root" && go build -o "$tmp/bloomlab" ./cmd/bloomlab)
(cd "$root/bench" && go build -o "$tmp/loadgen" ./loadgen)
bl=$tmp/bloomlab
. "$root/bench/ports.sh"
clk=$(getconf CLK_TCK)
say() { echo "bench/scaling.sh: $*" >&2; }
ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }

spec() { # command → "template|items|reservation (CAP: capacity of one key)|write command it reads after"
  case $1 in
  BF.ADD) echo 'BF.ADD {key} {item}|1|BF.RESERVE KEY 0.01 CAP|' ;;
  BF.EXISTS) echo 'BF.EXISTS {key} {item}|1|BF.RESERVE KEY 0.01 CAP|BF.ADD' ;;
  BF.MADD) echo "BF.MADD {key}$(printf ' {item}%.0s' $(seq 10))|10|BF.RESERVE KEY 0.01 CAP|" ;;
  BF.MEXISTS) echo "BF.MEXISTS {key}$(printf ' {item}%.0s' $(seq 10))|10|BF.RESERVE KEY 0.01 CAP|BF.MADD" ;;
  CF.ADD) echo 'CF.ADD {key} {item}|1|CF.RESERVE KEY CAP2|' ;;
  CF.EXISTS) echo 'CF.EXISTS {key} {item}|1|CF.RESERVE KEY CAP2|CF.ADD' ;;
  CMS.INCRBY) echo 'CMS.INCRBY {key} {item} 1|1|CMS.INITBYPROB KEY 0.001 0.01|' ;;
  CMS.QUERY) echo 'CMS.QUERY {key} {item}|1|CMS.INITBYPROB KEY 0.001 0.01|CMS.INCRBY' ;;
  *) echo "bench/scaling.sh: unknown command $1" >&2; exit 2 ;;
  esac
}

fetch() { # pprof port, name: save the mutex and block profiles
  [ "$prof" = 1 ] || return 0
  curl -sf "http://127.0.0.1:$1/debug/pprof/mutex" -o "$outdir/profiles/$2.mutex.pprof"
  curl -sf "http://127.0.0.1:$1/debug/pprof/block" -o "$outdir/profiles/$2.block.pprof"
}

load() { # port, keys mode, requests, command → "ticks-independent loadgen line"
  local tmpl items
  IFS='|' read -r tmpl items _ <<<"$(spec "$4")"
  "$tmp/loadgen" -addr "127.0.0.1:$1" -clients 50 -pipeline 16 -n "$3" -keys "$2" -cmd "$tmpl"
}

reserve() { # port, keys mode, requests, command
  local tmpl items res cap k r
  IFS='|' read -r tmpl items res _ <<<"$(spec "$4")"
  if [ "$2" = distinct ]; then cap=$(($3 * items / 50 + 1000)); else cap=$(($3 * items + 1000)); fi
  res=${res//CAP2/$((2 * cap))}
  res=${res//CAP/$cap}
  for k in $(if [ "$2" = distinct ]; then seq -f 'k%.0f' 0 49; else echo k; fi); do
    # shellcheck disable=SC2086
    r=$(redis-cli -p "$1" ${res//KEY/$k})
    [ "$r" = OK ] || { say "${res//KEY/$k}: $r"; exit 1; }
  done
}

results=$tmp/results
: >"$results"
started=$(date -u '+%Y-%m-%d %H:%M UTC')
for c in $cmds; do
  IFS='|' read -r _ _ _ after <<<"$(spec "$c")"
  for keys in distinct shared; do
    for r in $(seq "$rounds"); do
      for p in $procs; do
        say "$c, $keys keys, GOMAXPROCS=$p, round $r"
        port=$(freeport)
        d=$tmp/srv
        rm -rf "$d"; mkdir -p "$d"
        pflag=()
        [ "$prof" = 0 ] || pflag=(-pprof 127.0.0.1:0)
        GOMAXPROCS=$p "$bl" serve -addr "127.0.0.1:$port" -dir "$d" -appendfsync everysec -save 0 -aof-rewrite-size 0 "${pflag[@]}" 2>"$tmp/serve.log" &
        pid=$!
        pids+=($pid)
        (waitport "$port") || { tail -5 "$tmp/serve.log" >&2; exit 1; }
        pp=$(sed -n 's|.*profiles on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$tmp/serve.log")
        [ "$prof" = 0 ] || [ -n "$pp" ] || { say "no -pprof address in the server's log"; exit 1; }
        name="$c.$keys.procs$p.round$r"
        reserve "$port" "$keys" "$n" "$c"
        if [ -n "$after" ]; then # fill the keys first, unmeasured
          load "$port" "$keys" "$n" "$after" >/dev/null
          fetch "$pp" "$name.before"
        fi
        t0=$(ticks "$pid")
        line=$(load "$port" "$keys" "$n" "$c")
        t1=$(ticks "$pid")
        fetch "$pp" "$name"
        kill "$pid"; wait "$pid" 2>/dev/null || true
        echo "$c $keys $p $r $((t1 - t0)) $line" >>"$results"
      done
    done
  done
done

big=$tmp/big
: >"$big"
if [ -n "$threads" ]; then
  for c in $cmds; do
    IFS='|' read -r _ items res after <<<"$(spec "$c")"
    for t in $threads; do
      for side in redis serve; do
        say "$c, --threads $t, $side"
        port=$(freeport)
        d=$tmp/big.$side
        rm -rf "$d"; mkdir -p "$d"
        if [ "$side" = redis ]; then
          "$rsrv" --port "$port" --bind 127.0.0.1 --dir "$d" --appendonly yes --appendfsync everysec --save '' \
            --auto-aof-rewrite-percentage 0 --io-threads "$t" --io-threads-do-reads yes ${mod:+--loadmodule "$mod"} >"$tmp/redis.log" 2>&1 &
        else
          GOMAXPROCS=$t "$bl" serve -addr "127.0.0.1:$port" -dir "$d" -appendfsync everysec -save 0 -aof-rewrite-size 0 2>"$tmp/serve.log" &
        fi
        pid=$!
        pids+=($pid)
        (waitport "$port") || exit 1
        tmpl=$(spec "$c" | cut -d'|' -f1)
        tmpl=${tmpl//\{key\}/k}
        tmpl=${tmpl//\{item\}/__rand_int__}
        if [ "$side" = redis ] && [ -z "$mod" ]; then # plain Redis: SET / GET
          case $c in *ADD | *INCRBY) tmpl='SET k:__rand_int__ v' ;; *) tmpl='GET k:__rand_int__' ;; esac
        else
          reserve "$port" shared "$n" "$c"
          if [ -n "$after" ]; then
            atmpl=$(spec "$after" | cut -d'|' -f1)
            atmpl=${atmpl//\{key\}/k}
            # shellcheck disable=SC2086
            "$rbm" -p "$port" -n "$n" -c 50 -P 16 -r 100000000 --threads "$t" ${atmpl//\{item\}/__rand_int__} >/dev/null
          fi
        fi
        t0=$(ticks "$pid")
        # shellcheck disable=SC2086
        line=$("$rbm" -p "$port" -n "$n" -c 50 -P 16 -r 100000000 --threads "$t" --csv $tmpl |
          awk -F, 'NR == 2 { gsub(/"/, ""); print $2, $5, $7 }')
        t1=$(ticks "$pid")
        kill "$pid"; wait "$pid" 2>/dev/null || true
        echo "$c $t $side $((t1 - t0)) $line" >>"$big"
      done
    done
  done
fi

report() {
  echo "# bench/scaling.sh $cmdline"
  echo "# $started; $(nproc) CPUs ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)), Linux $(uname -r)"
  echo "# bloomlab $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?'), $(go version | awk '{ print $3 }'); serve -appendfsync everysec, no compaction$([ "$prof" = 1 ] && echo ', -pprof (mutex fraction 1/100, block rate 10 µs)')"
  echo "# clients: bench/loadgen, another process on the same machine: 50 connections, pipelines of 16, $n requests a run, items random below 10^8"
  echo
  echo "| command | keys | GOMAXPROCS | ops/s | µs CPU/op | CPU/op ÷ at GOMAXPROCS=${procs%% *} | p50 ms | p99 ms |"
  echo "|---|---|---|---|---|---|---|---|"
  awk -v clk="$clk" -v rounds="$rounds" -v first="${procs%% *}" '
    function val(s, k,   a) { split(s, a, "="); return a[2] }
    function cell(v, n, fmt,   i, j, t, s) {
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
      if (n == 1) return sprintf(fmt, v[1])
      if (n == 2) { s = sprintf(fmt, v[1]); t = sprintf(fmt, v[2]); return s == t ? s : s "–" t }
      return sprintf(fmt, n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2)
    }
    {
      k = $1 SUBSEP $2 SUBSEP $3
      if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
      req = val($6); cpu[k, $4] = $5 * 1e6 / clk / req
      ops[k, $4] = val($8); p50[k, $4] = val($9); p99[k, $4] = val($10)
      if (mint == "" || $5 < mint) mint = $5
    }
    END {
      for (o = 1; o <= nk; o++) {
        k = order[o]; split(k, kk, SUBSEP); b = kk[1] SUBSEP kk[2] SUBSEP first
        line = "| " kk[1] " | " kk[2] " | " kk[3]
        delete v; for (r = 1; r <= rounds; r++) v[r] = ops[k, r]; line = line " | " cell(v, rounds, "%.0f")
        delete v; for (r = 1; r <= rounds; r++) v[r] = cpu[k, r]; line = line " | " cell(v, rounds, "%.2f")
        delete v; for (r = 1; r <= rounds; r++) v[r] = cpu[b, r] > 0 ? cpu[k, r] / cpu[b, r] : 0; line = line " | " cell(v, rounds, "%.2f")
        delete v; for (r = 1; r <= rounds; r++) v[r] = p50[k, r]; line = line " | " cell(v, rounds, "%.3f")
        delete v; for (r = 1; r <= rounds; r++) v[r] = p99[k, r]; line = line " | " cell(v, rounds, "%.3f")
        print line " |"
      }
      printf "\nCPU/op from /proc/PID/stat in ticks of 1/%d s; fewest ticks in one run: %d%s. ", clk, mint, mint < 100 ? " (under 100: coarse, raise -n)" : ""
      printf "Cells: %s; the ratio within each round.\n", rounds == 1 ? "one run" : rounds == 2 ? "two interleaved rounds, lo–hi" : "the median of " rounds " interleaved rounds"
    }' "$results"
  if [ -s "$big" ]; then
    echo
    echo "redis-benchmark --threads N -c 50 -P 16 -r 100000000 -n $n, one key: redis-server --io-threads N --io-threads-do-reads yes ($("$rsrv" --version | awk '{ print $3 }'), ${mod:-no module: SET for writes, GET for queries}) against serve at GOMAXPROCS=N"
    echo
    echo "| command | N | redis ops/s | serve ops/s | redis µs CPU/op | serve µs CPU/op | p50 ms redis / serve | p99 ms redis / serve |"
    echo "|---|---|---|---|---|---|---|---|"
    awk -v clk="$clk" -v n="$n" '
      { k = $1 SUBSEP $2; if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
        cpu[k, $3] = $4 * 1e6 / clk / n; ops[k, $3] = $5; p50[k, $3] = $6; p99[k, $3] = $7 }
      END { for (o = 1; o <= nk; o++) { k = order[o]; split(k, kk, SUBSEP)
        printf "| %s | %s | %.0f | %.0f | %.2f | %.2f | %s / %s | %s / %s |\n", kk[1], kk[2], ops[k, "redis"], ops[k, "serve"], cpu[k, "redis"], cpu[k, "serve"], p50[k, "redis"], p50[k, "serve"], p99[k, "redis"], p99[k, "serve"] } }' "$big"
  fi
  if [ "$prof" = 1 ]; then
    local maxp=${procs##* } f base
    echo
    echo "Profiles: $outdir/profiles (NAME.mutex.pprof, NAME.block.pprof; for a query run, NAME.before.* were taken after the fill)."
    for c in $cmds; do
      for keys in distinct shared; do
        for kind in mutex block; do
          f=$outdir/profiles/$c.$keys.procs$maxp.round1.$kind.pprof
          base=$outdir/profiles/$c.$keys.procs$maxp.round1.before.$kind.pprof
          echo
          echo "#### $kind profile: $c, $keys keys, GOMAXPROCS=$maxp (round 1)"
          echo
          echo '```'
          if [ -f "$base" ]; then
            go tool pprof -top -nodecount=12 -base "$base" "$bl" "$f" 2>/dev/null | sed -n '/^Showing\|^ *flat\|^ *[0-9]/p'
          else
            go tool pprof -top -nodecount=12 "$bl" "$f" 2>/dev/null | sed -n '/^Showing\|^ *flat\|^ *[0-9]/p'
          fi
          if [ "$kind" = mutex ]; then # who takes the contended locks
            echo
            if [ -f "$base" ]; then set -- -base "$base"; else set --; fi
            # (no sync lock in the profile: pprof finds nothing to peek at)
            go tool pprof -peek 'sync\.\(\*(RW)?Mutex\)\.' "$@" "$bl" "$f" 2>/dev/null | sed -n '/^ *flat\|^ *[0-9]/p' || true
          fi
          echo '```'
        done
      done
    done
  fi
}
report | tee "$outdir/scaling.txt"
say "report and profiles in $outdir"
