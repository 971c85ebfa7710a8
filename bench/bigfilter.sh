#!/usr/bin/env bash
# What a big Bloom filter costs per key (issue 24 §2): a NONSCALING filter
# of CAP keys at 1% (default 10^9: 1.2 GB in RedisBloom's layout, k = 7,
# every probe a cache miss) against one of SMALL keys (default 10^5: 120 KB,
# in the caches), in three servers: Redis with the RedisBloom module,
# `bloomlab serve` with RedisBloom's layout, and serve with bloomlab's
# blocked layout (a key's probes in one 64-byte block: one miss). The
# difference of the CPU per key between the two sizes is the filter's own
# cost, the memory misses; the goal is blocked ÷ RedisBloom ≤ 0.4.
#
# Usage (from anywhere in the repository):
#   bench/bigfilter.sh [-cap N] [-small N] [-queries REQUESTS] [-madd REQUESTS] [-rounds R]
#                      [-blocked-build 'BUILD ARGS'] [-dir DIR] [-o FILE] REDIS_SERVER REDIS_BENCHMARK MODULE.so
#
# The filters are filled offline, from keys that are never written to disk:
# `seq -f 'k:%012.0f' 0 F-1 | bloomlab build … -n CAP` reads them from its
# standard input (one pass of seq feeds both builds through tee), so 10^9
# keys need no 14 GB key file. The keys are those redis-benchmark writes for
# k:__rand_int__ (12 digits), so that `-r F` queries only present keys.
#   RedisBloom's layout: build -kind scalable -profile redisbloom -nonscaling
#     -fpr 0.01 -n CAP; pushed into redis-server with `bloomlab redis push
#     -addr … -key …` (BF.LOADCHUNK), served by serve with -load.
#   blocked layout: build -kind scalable -profile blocked -nonscaling -fpr
#     0.01 -n CAP, what `BF.RESERVE key 0.01 CAP NONSCALING LAYOUT BLOCKED`
#     makes (or the arguments of -blocked-build, e.g. '-kind blocked -fpr
#     0.01' for package blocked's filter), served with -load.
# The big filter holds F = CAP − (all the keys the BF.MADD runs add) × 1.02
# keys, so that no add is refused. The small one (key q) holds the same
# fraction of SMALL. BF.MADD at SMALL goes to copies of a SMALL filter
# holding 0.3 × SMALL keys (keys r<round>:<12 digits>, one set per round,
# room for the ~50,000 keys each receives), the copy and the items drawn by
# redis-benchmark (key r1:__rand_int__, items n:__rand_int__:__rand_int__:
# __rand_int__ with -r COPIES: distinct enough); at CAP, the same items into
# the big filter.
#
# Each round, on each server in turn (RB, serve-rb, serve-blocked), with
# redis-benchmark -c 50 -P 16:
#   BF.MEXISTS of 100 present keys (-n QUERIES, default 200000 requests),
#   BF.MEXISTS of 100 absent keys (a:__rand_int__), BF.MADD of 100 new keys
#   (-n MADD, default min(100000, CAP/10^4) requests: ≤ 10^7 keys a round),
# at CAP and at SMALL. CPU per key = the server's utime + stime
# (/proc/PID/stat) over the run ÷ (requests × 100). A cell shows lo–hi of
# the two rounds (-rounds R: the median of R ≥ 3); the filter's own cost is
# taken within each round. All three servers keep their filters at once, and
# appendonly everysec (-save 0 for serve), as in bench/redisbloom.sh.
#
# Resources at the default 10^9: about 1.2 GB per filter in each of the
# three servers plus the two builds (about 6 GB of memory in all), a log and
# a snapshot of about as much on disk per server (DIR, kept; default a
# temporary directory, removed at the end), and on a 2-core VM about half an hour: the builds (one pass
# of seq feeding both) took 87 s at 10^8 on a loaded 2-core VM, so expect
# 15–25 minutes at 10^9, then the push of 1.2 GB, serve's snapshots of its
# -loads and the measurements. Try -cap 1e7 first (half a minute).
set -euo pipefail
usage() {
  sed -n '/^# Usage/,/^#  *\[-blocked-build/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
cmdline=$*
cap=1000000000 small=100000 queries=200000 madd='' rounds=2 bbuild='-kind scalable -profile blocked -nonscaling -fpr 0.01' dir='' out=''
while [ $# -gt 0 ]; do
  case $1 in
  -cap) cap=$2; shift 2 ;;
  -small) small=$2; shift 2 ;;
  -queries) queries=$2; shift 2 ;;
  -madd) madd=$2; shift 2 ;;
  -rounds) rounds=$2; shift 2 ;;
  -blocked-build) bbuild=$2; shift 2 ;;
  -dir) dir=$2; shift 2 ;;
  -o) out=$2; shift 2 ;;
  -h | -help | --help) usage ;;
  -*) echo "bench/bigfilter.sh: unknown flag $1" >&2; usage ;;
  *) break ;;
  esac
done
[ $# -eq 3 ] || usage
rsrv=$1 rbm=$2 mod=$3
cap=$(awk -v x="$cap" 'BEGIN { printf "%.0f", x }') # 1e9 notation
small=$(awk -v x="$small" 'BEGIN { printf "%.0f", x }')
if [ -z "$madd" ]; then madd=$((cap / 10000)); [ "$madd" -le 100000 ] || madd=100000; fi
fill=$((cap - rounds * madd * 102))
[ "$fill" -gt 0 ] || { echo "bench/bigfilter.sh: -madd too large for -cap" >&2; exit 2; }
qfill=$(awk -v s="$small" -v f="$fill" -v c="$cap" 'BEGIN { printf "%.0f", s * f / c }')
mfill=$((small * 3 / 10))
copies=$(((madd * 100 + small / 2 - 1) / (small / 2))) # ~SMALL/2 new keys per copy
[ "$copies" -ge 1 ] || copies=1
cli=$(dirname "$rbm")/redis-cli
[ -x "$cli" ] || cli=$(command -v redis-cli || true)
for tool in "$rsrv" "$rbm" "$cli"; do
  [ -n "$tool" ] && command -v "$tool" >/dev/null || { echo "bench/bigfilter.sh: ${tool:-redis-cli} is missing" >&2; exit 1; }
done
[ -r "$mod" ] || { echo "bench/bigfilter.sh: no module at $mod" >&2; exit 1; }
root=$(cd "$(dirname "$0")/.." && pwd)
keep=1
[ -n "$dir" ] || { dir=$(mktemp -d); keep=0; }
mkdir -p "$dir"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [ "$keep" = 1 ] || rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
say() { echo "bench/bigfilter.sh: $(date -u +%T) $*" >&2; }
(cd "$root" && go build -o "$dir/bloomlab" ./cmd/bloomlab)
bl=$dir/bloomlab
. "$root/bench/ports.sh"
redis-cli() { "$cli" "$@"; }
clk=$(getconf CLK_TCK)
ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }
rss_mib() { awk '/^VmRSS/ { printf "%.0f", $2 / 1024 }' "/proc/$1/status"; }
started=$(date -u '+%Y-%m-%d %H:%M UTC')
t_start=$SECONDS

# The filters: RedisBloom's layout (rb) and the blocked one, at CAP (big),
# SMALL filled like the big one (q) and SMALL at 0.3 (m, the copies).
rbargs=(-kind scalable -profile redisbloom -nonscaling -fpr 0.01)
read -r -a blargs <<<"$bbuild"
build2() { # name, keys, capacity: both layouts from one pass of seq
  say "building $1: $2 keys, capacity $3"
  seq -f 'k:%012.0f' 0 $(($2 - 1)) |
    tee >("$bl" build "${blargs[@]}" -n "$3" -o "$dir/blocked.$1.blf" - 2>"$dir/build.blocked.$1.log"; echo $? >"$dir/build.blocked.$1.rc") |
    "$bl" build "${rbargs[@]}" -n "$3" -o "$dir/rb.$1.blf" - 2>"$dir/build.rb.$1.log"
  for _ in $(seq 600); do [ -s "$dir/build.blocked.$1.rc" ] && break; sleep 1; done
  [ "$(cat "$dir/build.blocked.$1.rc" 2>/dev/null)" = 0 ] || { cat "$dir/build.blocked.$1.log" >&2; exit 1; }
}
build2 big "$fill" "$cap"
build2 q "$qfill" "$small"
build2 m "$mfill" "$small"
t_built=$SECONDS

sides=(RB serve-rb serve-blocked)
declare -A port pid rss
copyname() { printf 'r%d:%012d' "$1" "$2"; }
for s in "${sides[@]}"; do
  p=$(freeport)
  mkdir -p "$dir/$s"
  say "starting $s"
  case $s in
  RB)
    "$rsrv" --port "$p" --bind 127.0.0.1 --dir "$dir/$s" --appendonly yes --appendfsync everysec \
      --auto-aof-rewrite-percentage 0 --save '' --daemonize no --loadmodule "$mod" >"$dir/$s.log" 2>&1 &
    ;;
  serve-*)
    lay=${s#serve-}
    loads=(-load "big=$dir/$lay.big.blf" -load "q=$dir/$lay.q.blf")
    for r in $(seq "$rounds"); do
      for c in $(seq 0 $((copies - 1))); do loads+=(-load "$(copyname "$r" "$c")=$dir/$lay.m.blf"); done
    done
    "$bl" serve -addr "127.0.0.1:$p" -dir "$dir/$s" -appendfsync everysec -save 0 -aof-rewrite-size 0 \
      "${loads[@]}" 2>"$dir/$s.log" &
    ;;
  esac
  pid[$s]=$!
  pids+=($!)
  port[$s]=$p
  for _ in $(seq 3000); do # a big -load takes a while
    [ "$("$cli" -p "$p" ping 2>/dev/null)" = PONG ] && break
    kill -0 "${pid[$s]}" 2>/dev/null || { tail -5 "$dir/$s.log" >&2; exit 1; }
    sleep 0.2
  done
  if [ "$s" = RB ]; then # push: RedisBloom's layout through BF.LOADCHUNK
    push() { # file, key
      # `bloomlab redis push` checks BF.INFO afterwards; go-redis reads a
      # NONSCALING filter's BF.INFO (Expansion rate nil) as zeros, so the
      # check can fail on a good load: check it here instead.
      "$bl" redis push -addr "127.0.0.1:$p" -key "$2" "$1" >"$dir/push.log" 2>&1 ||
        grep -q 'after the load, BF.INFO' "$dir/push.log" || { cat "$dir/push.log" >&2; exit 1; }
      local want got
      want=$("$bl" info "$1" | awk '/^keys added:/ { print $3 }')
      got=$("$cli" -p "$p" BF.CARD "$2")
      [ "$want" = "$got" ] || { echo "bench/bigfilter.sh: RB $2 holds $got keys, the file $want" >&2; exit 1; }
    }
    say "pushing the filters into RB"
    push "$dir/rb.big.blf" big
    push "$dir/rb.q.blf" q
    for r in $(seq "$rounds"); do
      for c in $(seq 0 $((copies - 1))); do push "$dir/rb.m.blf" "$(copyname "$r" "$c")"; done
    done
  fi
  rss[$s]=$(rss_mib "${pid[$s]}")
  # Present keys must be present.
  for k in big q; do
    r=$("$cli" -p "$p" BF.MEXISTS "$k" k:000000000000 k:000000000001 | tr -d '\n')
    [ "$r" = 11 ] || { echo "bench/bigfilter.sh: $s: present keys of $k answered $r" >&2; exit 1; }
  done
done
t_loaded=$SECONDS

i100() { printf " $1%.0s" $(seq 100); }
results=$dir/results
: >"$results"
measure() { # side round size op r command… → one line of results
  local s=$1 r=$2 size=$3 op=$4 range=$5 n t0 t1 res
  shift 5
  n=$queries
  [ "$op" != madd ] || n=$madd
  t0=$(ticks "${pid[$s]}")
  # shellcheck disable=SC2046
  res=$("$rbm" -p "${port[$s]}" -n "$n" -c 50 -P 16 -r "$range" --csv "$@" | awk -F, 'NR == 2 { gsub(/"/, ""); print $2, $5, $7 }')
  t1=$(ticks "${pid[$s]}")
  echo "$s $r $size $op $((t1 - t0)) $n $res" >>"$results"
}
for r in $(seq "$rounds"); do
  for s in "${sides[@]}"; do
    say "round $r, $s"
    before=$("$cli" -p "${port[$s]}" BF.CARD big)
    # shellcheck disable=SC2046
    measure "$s" "$r" cap present "$fill" BF.MEXISTS big $(i100 k:__rand_int__)
    # shellcheck disable=SC2046
    measure "$s" "$r" cap absent "$fill" BF.MEXISTS big $(i100 a:__rand_int__)
    # shellcheck disable=SC2046
    measure "$s" "$r" cap madd 10000 BF.MADD big $(i100 n:__rand_int__:__rand_int__:__rand_int__)
    after=$("$cli" -p "${port[$s]}" BF.CARD big)
    echo "$s $r added $((after - before))" >>"$dir/added"
    # shellcheck disable=SC2046
    measure "$s" "$r" small present "$qfill" BF.MEXISTS q $(i100 k:__rand_int__)
    # shellcheck disable=SC2046
    measure "$s" "$r" small absent "$qfill" BF.MEXISTS q $(i100 a:__rand_int__)
    # shellcheck disable=SC2046
    measure "$s" "$r" small madd "$copies" BF.MADD "r$r:__rand_int__" $(i100 n:__rand_int__:__rand_int__:__rand_int__)
  done
done
# An add refused (filter full) would be answered as fast as an add: every
# BF.MADD must have added about its keys (RedisBloom's layout counts a key
# it finds present as not added).
while read -r s r _ added; do
  [ "$s" = serve-blocked ] && continue
  [ "$added" -ge $((madd * 95)) ] || { echo "bench/bigfilter.sh: $s round $r: BF.MADD added $added keys of $((madd * 100))" >&2; exit 1; }
done <"$dir/added"
for s in "${sides[@]}"; do
  for r in $(seq "$rounds"); do # no copy may have been filled up
    for c in 0 $((copies - 1)); do
      got=$("$cli" -p "${port[$s]}" BF.MADD "$(copyname "$r" "$c")" probe:1 | head -1)
      case $got in *rror* | *full*) echo "bench/bigfilter.sh: $s: $(copyname "$r" "$c") answers $got" >&2; exit 1 ;; esac
    done
  done
done
t_done=$SECONDS

report() {
  echo "# bench/bigfilter.sh $cmdline"
  echo "# $started; $(nproc) CPUs ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)), Linux $(uname -r), $(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
  echo "# $("$rsrv" --version | awk '{ print $1, $2, $3 }'), $("$rbm" --version | awk '{ print $1, $2 }'), RedisBloom $("$cli" -p "${port[RB]}" MODULE LIST | awk 'prev == "ver" { print; exit } { prev = $0 }') ($mod)"
  echo "# bloomlab $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?'), $(go version | awk '{ print $3 }'); blocked layout: bloomlab build ${blargs[*]} -n CAP"
  echo "# CAP $cap (filled with $fill keys), SMALL $small (q: $qfill keys; $copies copies a round of $mfill keys for BF.MADD); -queries $queries, -madd $madd requests of 100 keys; redis-benchmark -c 50 -P 16"
  echo "# time: builds $((t_built - t_start)) s, starts and loads $((t_loaded - t_built)) s, measurements $((t_done - t_loaded)) s"
  echo
  echo "| server | RSS MiB | size | BF.MEXISTS present µs CPU/key | BF.MEXISTS absent | BF.MADD new | keys/s present | keys/s absent | keys/s MADD |"
  echo "|---|---|---|---|---|---|---|---|---|"
  awk -v clk="$clk" -v rounds="$rounds" -v rss="RB=${rss[RB]} serve-rb=${rss[serve-rb]} serve-blocked=${rss[serve-blocked]}" -v cap="$cap" -v small="$small" '
    function cell(v, n, fmt,   i, j, t, s) {
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
      if (n == 1) return sprintf(fmt, v[1])
      if (n == 2) { s = sprintf(fmt, v[1]); t = sprintf(fmt, v[2]); return s == t ? s : s "–" t }
      return sprintf(fmt, n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2)
    }
    { c = $1 SUBSEP $3 SUBSEP $4; cpu[c, $2] = $5 * 1e6 / clk / ($6 * 100); kps[c, $2] = $7 * 100
      if (mint == "" || $5 < mint) mint = $5 }
    END {
      split(rss, rr, " "); for (i in rr) { split(rr[i], kv, "="); mem[kv[1]] = kv[2] }
      ns = split("RB serve-rb serve-blocked", sd, " "); split("present absent madd", ops, " ")
      for (x = 1; x <= ns; x++) for (z = 1; z <= 2; z++) {
        size = z == 1 ? "cap" : "small"
        line = "| " sd[x] " | " (z == 1 ? mem[sd[x]] : "") " | " (z == 1 ? cap : small)
        for (o = 1; o <= 3; o++) { delete v; for (r = 1; r <= rounds; r++) v[r] = cpu[sd[x] SUBSEP size SUBSEP ops[o], r]; line = line " | " cell(v, rounds, "%.4f") }
        for (o = 1; o <= 3; o++) { delete v; for (r = 1; r <= rounds; r++) v[r] = kps[sd[x] SUBSEP size SUBSEP ops[o], r]; line = line " | " cell(v, rounds, "%.3g") }
        print line " |"
      }
      printf "\nThe filter'"'"'s own cost, µs CPU/key at %s − at %s (within each round):\n\n", cap, small
      print "| op | RedisBloom | serve-rb | serve-blocked | serve-blocked ÷ RedisBloom (goal ≤ 0.4) | serve-rb ÷ RedisBloom |"
      print "|---|---|---|---|---|---|"
      for (o = 1; o <= 3; o++) {
        line = "| " (ops[o] == "madd" ? "BF.MADD new" : "BF.MEXISTS " ops[o])
        for (x = 1; x <= ns; x++) { delete v; for (r = 1; r <= rounds; r++) v[r] = cpu[sd[x] SUBSEP "cap" SUBSEP ops[o], r] - cpu[sd[x] SUBSEP "small" SUBSEP ops[o], r]; line = line " | " cell(v, rounds, "%.4f") }
        for (x = 3; x >= 2; x--) {
          delete v
          for (r = 1; r <= rounds; r++) {
            a = cpu[sd[x] SUBSEP "cap" SUBSEP ops[o], r] - cpu[sd[x] SUBSEP "small" SUBSEP ops[o], r]
            b = cpu["RB" SUBSEP "cap" SUBSEP ops[o], r] - cpu["RB" SUBSEP "small" SUBSEP ops[o], r]
            v[r] = b > 0 ? a / b : "n/a"
          }
          na = 0; for (r = 1; r <= rounds; r++) if (v[r] == "n/a") na = 1
          line = line " | " (na ? "n/a" : cell(v, rounds, "%.2f"))
        }
        print line " |"
      }
      printf "\nCPU per key: server utime + stime (/proc/PID/stat, ticks of 1/%d s) over the run ÷ keys; fewest ticks in one run: %d%s.\n", clk, mint, mint < 100 ? " (under 100: coarse; raise -queries / -madd)" : ""
      printf "Cells: %s.\n", rounds == 1 ? "one round" : rounds == 2 ? "two interleaved rounds, lo–hi" : "the median of " rounds " interleaved rounds"
    }' "$results"
}
if [ -n "$out" ]; then report | tee "$out"; else report; fi
