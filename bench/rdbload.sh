#!/usr/bin/env bash
# Loading a Redis RDB file of a gigabyte or more (issue 25 §3): the time
# and the peak memory of `bloomlab serve -load-rdb FILE -dir EMPTYDIR`
# against Debian's redis-server with the RedisBloom module loading the
# same file at start. The goal: serve's peak RSS ≤ 1.1 × the dataset + the
# largest compressed value + 32 MiB.
#
# Usage (from anywhere in the repository):
#   bench/rdbload.sh [-rounds R] [-cap N] [-fill N] [-cases 'filled empty'] [-data DIR]
#                    [-servers 'serve redis'] [-rdb FILE] [-bloomlab BINARY] [-o FILE] REDIS_SERVER MODULE.so
#
# The datasets (made in DIR, kept there and reused by later runs with the
# same -cap and -fill; default a temporary directory, removed at the end):
#   filled  (DIR/filled.rdb) key big: a NONSCALING BF of capacity CAP
#     (default 10^9: a bit array of 1.2 GB in RedisBloom's layout) at 1%,
#     holding FILL keys (default CAP/2: 31% of its bits set, which LZF
#     cannot shrink, so Redis stores it raw and the file is as large as
#     the dataset); bf:1 to bf:3, NONSCALING BFs of CAP/100 keys holding
#     CAP/200 each; and one key of each other RedisBloom type: cf
#     (CF.RESERVE 1000000, 100000 items), cms (CMS.INITBYDIM 100000 7,
#     100000 items), topk (TOPK.RESERVE 100 2000 7 0.925, 100000 items), td
#     (TDIGEST.CREATE COMPRESSION 100, 100000 values). The BFs are built
#     offline (seq | bloomlab build -kind scalable -profile redisbloom
#     -nonscaling -fpr 0.01 -n …, as bench/bigfilter.sh does) and pushed
#     into REDIS_SERVER + MODULE.so with `bloomlab redis push`
#     (BF.LOADCHUNK); the others are made by commands; then SAVE
#     (rdbcompression yes, Redis's default).
#   empty   (DIR/empty.rdb) key big only, `BF.RESERVE big 0.01 CAP
#     NONSCALING` and nothing added, saved with rdbcompression yes: a small
#     file of LZF-compressed zeros that is 1.2 GB in memory (the LZF path).
# -rdb FILE measures that file instead (case "given"); -cases picks the
# made ones; -servers the servers measured (both by default).
#
# Each round starts, on an empty directory (fresh for every start):
#   serve  bloomlab serve -addr 127.0.0.1:PORT -dir DIR -load-rdb FILE -save 0
#          -aof-rewrite-size 0 (it loads the file, writes its first snapshot,
#          then listens)
#   redis  REDIS_SERVER --port PORT --dir DIR --dbfilename dump.rdb (a link to
#          FILE) --save '' --appendonly no --loadmodule MODULE.so
# and measures:
#   ready    seconds from the process's start until it answers PING with PONG
#            (Redis answers LOADING while it loads)
#   load     serve: its log's load line; Redis: "DB loaded from disk: X seconds"
#   snap     serve: its log's "snapshot of N keys written (D)"
#   peak     VmHWM (/proc/PID/status, the peak resident set) once it
#            answers PING; for serve also after the snapshot (the same:
#            serve answers after it)
#   dataset  serve: INFO used_memory_dataset (the keys' accounted memory:
#            what -maxmemory counts); Redis: the sum of MEMORY USAGE over the
#            keys (the module's own count) and INFO used_memory_dataset
# The servers are interleaved (serve, redis, serve, redis, …; -rounds R,
# default 3), one at a time, each stopped before the next starts; cells are
# the median and the range. The file is read once (cat > /dev/null) before
# the first round, so every round reads it from the page cache.
#
# The largest compressed value: the largest LZF-compressed string of any
# value in the file (its compressed bytes), from `go run ./rdbsizes FILE`
# in bench/ (a listing of each key's bytes in the file and its largest
# LZF-compressed string).
#
# Resources at the default 10^9: the builds read FILL + CAP/200 keys from
# seq (12 minutes on a busy 2-core VM; the rounds then take a minute), 1.3 GB in Redis while the
# dataset is made, the files (1.25 GB and a few MB) in DIR, 1.3 GB of memory
# and a snapshot of as much on disk per start. Try -cap 1e7 first.
set -euo pipefail
usage() {
  sed -n '/^# Usage/,/^#  *\[-rdb/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
cmdline=$*
rounds=3 cap=1000000000 fill='' cases='filled empty' data='' servers='serve redis' given='' bl='' out=''
while [ $# -gt 0 ]; do
  case $1 in
  -rounds) rounds=$2; shift 2 ;;
  -cap) cap=$2; shift 2 ;;
  -fill) fill=$2; shift 2 ;;
  -cases) cases=$2; shift 2 ;;
  -data) data=$2; shift 2 ;;
  -servers) servers=$2; shift 2 ;;
  -rdb) given=$2; shift 2 ;;
  -bloomlab) bl=$2; shift 2 ;;
  -o) out=$2; shift 2 ;;
  -h | -help | --help) usage ;;
  -*) echo "bench/rdbload.sh: unknown flag $1" >&2; usage ;;
  *) break ;;
  esac
done
[ $# -eq 2 ] || usage
for s in $servers; do case $s in serve | redis) ;; *) echo "bench/rdbload.sh: unknown server $s (serve, redis)" >&2; exit 2 ;; esac; done
rsrv=$1 mod=$2
cap=$(awk -v x="$cap" 'BEGIN { printf "%.0f", x }') # 1e9 notation
[ -n "$fill" ] || fill=$((cap / 2))
fill=$(awk -v x="$fill" 'BEGIN { printf "%.0f", x }')
case $rounds$cap$fill in *[!0-9]*) echo "bench/rdbload.sh: -rounds, -cap and -fill take positive numbers" >&2; exit 2 ;; esac
[ "$fill" -le "$cap" ] || { echo "bench/rdbload.sh: -fill is over -cap" >&2; exit 2; }
cli=$(dirname "$rsrv")/redis-cli
[ -x "$cli" ] || cli=$(command -v redis-cli || true)
for tool in "$rsrv" "$cli"; do
  [ -n "$tool" ] && command -v "$tool" >/dev/null || { echo "bench/rdbload.sh: ${tool:-redis-cli} is missing (apt-get install redis-server redis-tools)" >&2; exit 1; }
done
[ -r "$mod" ] || { echo "bench/rdbload.sh: no module at $mod" >&2; exit 1; }
[ -z "$given" ] || [ -r "$given" ] || { echo "bench/rdbload.sh: no file $given" >&2; exit 1; }
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
keepdata=1
[ -n "$data" ] || { data=$tmp/data; keepdata=0; }
mkdir -p "$data"
data=$(cd "$data" && pwd)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
  [ "$keepdata" = 1 ] || rm -rf "$data"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
say() { echo "bench/rdbload.sh: $(date -u +%T) $*" >&2; }
if [ -z "$bl" ]; then
  (cd "$root" && go build -o "$tmp/bloomlab" ./cmd/bloomlab)
  bl=$tmp/bloomlab
fi
(cd "$root/bench" && go build -o "$tmp/rdbsizes" ./rdbsizes)
. "$root/bench/ports.sh"
redis-cli() { "$cli" "$@"; } # ports.sh's freeport uses the given redis-cli
now() { date +%s.%N; }
hwm_kib() { awk '/^VmHWM/ { print $2 }' "/proc/$1/status"; }
info_field() { # port field → INFO's value
  "$cli" -p "$1" INFO memory | tr -d '\r' | awk -F: -v f="$2" '$1 == f { print $2 }'
}
stop() { # pid: TERM, then wait
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
  local p keep=()
  for p in "${pids[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
  pids=("${keep[@]}")
}
waitpong() { # port pid log → until PONG (1 hour at most); fails if the process ends
  local i r
  for i in $(seq 180000); do
    r=$("$cli" -p "$1" ping 2>/dev/null || true)
    [ "$r" = PONG ] && return 0
    kill -0 "$2" 2>/dev/null || { say "the server exited; its log:"; tail -5 "$3" >&2; exit 1; }
    sleep 0.02
  done
  say "no PONG on $1 after an hour"
  exit 1
}
startredis() { # dir [file]: redis-server with the module on dir (dump.rdb a link to file); sets rport rpid
  rport=$(freeport)
  [ -z "${2:-}" ] || ln -sf "$2" "$1/dump.rdb"
  "$rsrv" --port "$rport" --bind 127.0.0.1 --dir "$1" --dbfilename dump.rdb --save '' --appendonly no \
    --daemonize no --loadmodule "$mod" >"$1.log" 2>&1 &
  rpid=$!
  pids+=("$rpid")
}
started=$(date -u '+%Y-%m-%d %H:%M UTC')
echo '?' >"$tmp/rbver"
rbver() { "$cli" -p "$1" MODULE LIST | awk 'prev == "ver" { print; exit } { prev = $0 }' >"$tmp/rbver"; }

# The datasets.
rbargs=(-kind scalable -profile redisbloom -nonscaling -fpr 0.01)
build() { # keys prefix capacity out: a BF in RedisBloom's layout from seq
  seq -f "$2%012.0f" 0 $(($1 - 1)) | "$bl" build "${rbargs[@]}" -n "$3" -o "$4" - 2>"$4.log" ||
    { cat "$4.log" >&2; exit 1; }
}
push() { # port file key
  # `bloomlab redis push` checks BF.INFO afterwards; go-redis reads a
  # NONSCALING filter's BF.INFO (Expansion rate nil) as zeros, so the
  # check can fail on a good load (see bigfilter.sh): check BF.CARD here.
  "$bl" redis push -addr "127.0.0.1:$1" -key "$3" "$2" >"$tmp/push.log" 2>&1 ||
    grep -q 'after the load, BF.INFO' "$tmp/push.log" || { cat "$tmp/push.log" >&2; exit 1; }
  local want got
  want=$("$bl" info "$2" | awk '/^keys added:/ { print $3 }')
  got=$("$cli" -p "$1" BF.CARD "$3")
  [ "$want" = "$got" ] || { say "$3 holds $got keys, the file $want"; exit 1; }
}
items() { # command key prefix count per: lines of COMMAND key item item …
  awk -v c="$1" -v k="$2" -v p="$3" -v n="$4" -v per="$5" 'BEGIN {
    srand(1)
    for (i = 0; i < n; i += per) {
      line = c " " k
      for (j = i; j < i + per && j < n; j++) {
        if (p == "#") line = line " " sprintf("%.3f", -log(rand()) * 100)
        else if (p == "cms") line = line " " sprintf("%s%d 1", p, int(rand() * rand() * 100000))
        else line = line " " sprintf("%s%d", p, int(rand() * rand() * 100000))
      }
      print line
    }
  }'
}
makedata() { # case: DIR/case.rdb and DIR/case.params
  local c=$1 w=$tmp/make.$1 p small
  [ "$(cat "$data/$c.params" 2>/dev/null)" = "$cap $fill" ] && [ -s "$data/$c.rdb" ] && { say "$c: reusing $data/$c.rdb"; return; }
  rm -f "$data/$c.rdb" "$data/$c.params"
  mkdir -p "$w/redis"
  if [ "$c" = filled ]; then
    small=$((cap / 100))
    say "filled: building big ($fill keys, capacity $cap) and bf:N ($((small / 2)) keys, capacity $small)"
    build "$fill" k: "$cap" "$w/big.blf"
    build $((small / 2)) s: "$small" "$w/small.blf"
  fi
  startredis "$w/redis"
  waitpong "$rport" "$rpid" "$w/redis.log"
  p=$rport
  rbver "$p"
  if [ "$c" = filled ]; then
    say "filled: pushing into redis-server"
    push "$p" "$w/big.blf" big
    rm -f "$w/big.blf"
    for i in 1 2 3; do push "$p" "$w/small.blf" "bf:$i"; done
    "$cli" -p "$p" CF.RESERVE cf 1000000 >/dev/null
    items CF.INSERT "cf ITEMS" c: 100000 1000 | "$cli" -p "$p" >/dev/null
    "$cli" -p "$p" CMS.INITBYDIM cms 100000 7 >/dev/null
    items CMS.INCRBY cms cms 100000 1000 | "$cli" -p "$p" >/dev/null
    "$cli" -p "$p" TOPK.RESERVE topk 100 2000 7 0.925 >/dev/null
    items TOPK.ADD topk t: 100000 1000 | "$cli" -p "$p" >/dev/null
    "$cli" -p "$p" TDIGEST.CREATE td COMPRESSION 100 >/dev/null
    items TDIGEST.ADD td '#' 100000 1000 | "$cli" -p "$p" >/dev/null
  else
    "$cli" -p "$p" BF.RESERVE big 0.01 "$cap" NONSCALING >/dev/null
  fi
  "$cli" -p "$p" CONFIG SET rdbcompression yes >/dev/null
  say "$c: SAVE"
  [ "$("$cli" -p "$p" SAVE)" = OK ] || { say "$c: SAVE failed"; exit 1; }
  "$cli" -p "$p" --scan | sort >"$w/keys"
  stop "$rpid"
  mv "$w/redis/dump.rdb" "$data/$c.rdb"
  echo "$cap $fill" >"$data/$c.params"
  rm -rf "$w"
}

# One round of one server on one file; appends a line to $tmp/results:
#   case server round ready load snap hwm_kib dataset_bytes [module_sum]
runserve() { # case file round
  local d=$tmp/run/serve p pid t0 t1 hwm ds ld sn
  rm -rf "$tmp/run"; mkdir -p "$d"
  p=$(freeport)
  t0=$(now)
  "$bl" serve -addr "127.0.0.1:$p" -dir "$d" -load-rdb "$2" -save 0 -aof-rewrite-size 0 2>"$d.log" &
  pid=$!
  pids+=("$pid")
  waitpong "$p" "$pid" "$d.log"
  t1=$(now)
  hwm=$(hwm_kib "$pid")
  ds=$(info_field "$p" used_memory_dataset)
  # "-load-rdb FILE: N keys loaded, … in 1.234s" and "snapshot of N keys
  # written (1.234s)": Go durations.
  ld=$(sed -n 's/.*-load-rdb .* keys loaded, .* in \([0-9.hmµns]*\)$/\1/p' "$d.log" | tail -1)
  sn=$(grep 'snapshot of .* written' "$d.log" | head -1 | grep -o '([0-9.]*[mµn]*s)' | tr -d '()')
  "$cli" -p "$p" --scan | sort >"$tmp/keys.serve"
  stop "$pid"
  cp "$d.log" "$tmp/serve.$1.$3.log"
  echo "$1 serve $3 $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') $(secs "$ld") $(secs "$sn") $hwm $ds" >>"$tmp/results"
  rm -rf "$tmp/run"
}
secs() { # a Go duration (1.5s, 250ms, 1m2.5s) → seconds, or - when empty
  [ -n "$1" ] || { echo -; return; }
  awk -v d="$1" 'BEGIN {
    s = 0
    if (match(d, /[0-9.]+m[^s]/)) { s += substr(d, RSTART, RLENGTH - 2) * 60; d = substr(d, RSTART + RLENGTH - 1) }
    if (d ~ /ms$/) s += d / 1000; else if (d ~ /µs$/) s += d / 1e6; else if (d ~ /ns$/) s += d / 1e9; else s += d + 0
    printf "%.3f", s
  }'
}
runredis() { # case file round
  local d=$tmp/run/redis t0 t1 hwm ds ld sum k
  rm -rf "$tmp/run"; mkdir -p "$d"
  t0=$(now)
  startredis "$d" "$2"
  waitpong "$rport" "$rpid" "$d.log"
  t1=$(now)
  hwm=$(hwm_kib "$rpid")
  rbver "$rport"
  ds=$(info_field "$rport" used_memory_dataset)
  ld=$(grep -o 'DB loaded from disk: [0-9.]* seconds' "$d.log" | awk '{ print $5 }')
  sum=0
  "$cli" -p "$rport" --scan | sort >"$tmp/keys.redis"
  while read -r k; do sum=$((sum + $("$cli" -p "$rport" MEMORY USAGE "$k"))); done <"$tmp/keys.redis"
  stop "$rpid"
  cp "$d.log" "$tmp/redis.$1.$3.log"
  echo "$1 redis $3 $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') ${ld:--} - $hwm $ds $sum" >>"$tmp/results"
  rm -rf "$tmp/run"
}

: >"$tmp/results"
: >"$tmp/files"
files=()
if [ -n "$given" ]; then
  files+=("given=$given")
else
  for c in $cases; do
    case $c in filled | empty) ;; *) echo "bench/rdbload.sh: unknown case $c (filled, empty)" >&2; exit 2 ;; esac
    makedata "$c"
    files+=("$c=$data/$c.rdb")
  done
fi
t_made=$(date -u +%T)
for cf in "${files[@]}"; do
  c=${cf%%=*} f=${cf#*=}
  "$tmp/rdbsizes" "$f" >"$tmp/sizes.$c" || { say "$c: rdbsizes failed"; exit 1; }
  echo "$c $(stat -L -c %s "$f") $(awk '$1 == "largest-lzf" { print $2 }' "$tmp/sizes.$c")" >>"$tmp/files"
  cat "$f" >/dev/null # the page cache holds it for every round
  for r in $(seq "$rounds"); do
    for s in $servers; do
      say "$c, round $r: $s"
      "run$s" "$c" "$f" "$r"
      # Both must hold the keys of the file.
      [ "$(cat "$tmp/keys.$s")" = "$(awk '$1 == "key" { print substr($2, 2, length($2) - 2) }' "$tmp/sizes.$c" | sort)" ] ||
        { say "$c: $s holds other keys than the file"; exit 1; }
    done
  done
done

report() {
  echo "# bench/rdbload.sh $cmdline"
  echo "# $started; $(nproc) CPUs ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)), Linux $(uname -r), $(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
  echo "# $("$rsrv" --version | awk '{ print $1, $2, $3 }'), RedisBloom $(cat "$tmp/rbver") ($mod)"
  echo "# bloomlab $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?') ($bl), $(go version | awk '{ print $3 }')"
  echo "# datasets ready at $t_made UTC; -cap $cap -fill $fill; $rounds interleaved rounds, the file read once before them (page cache warm)"
  for cf in "${files[@]}"; do
    c=${cf%%=*}
    echo "#"
    echo "# $c: ${cf#*=}"
    sed 's/^/#   /' "$tmp/sizes.$c"
  done
  echo
  echo "| case | server | file MB | dataset MiB | largest LZF value MiB | ready s | load s | snapshot s | peak RSS MiB | goal MiB: 1.1 × dataset + LZF + 32 (every round) | peak ÷ dataset |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  awk '
    FILENAME == ARGV[1] { size[$1] = $2; lzf[$1] = $3; next }
    function sort(v, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t } }
    function med(v, n) { sort(v, n); return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
    function cell(v, n, fmt,   i, lo, hi, m) { # median (lo–hi)
      for (i = 1; i <= n; i++) if (v[i] == "-") return "–"
      m = sprintf(fmt, med(v, n))
      if (n == 1) return m
      lo = sprintf(fmt, v[1]); hi = sprintf(fmt, v[n])
      return m (lo == hi ? "" : " (" lo "–" hi ")")
    }
    { k = $1 SUBSEP $2; n[k]++; i = n[k]
      ready[k, i] = $4; load[k, i] = $5; snap[k, i] = $6; hwm[k, i] = $7 / 1024; ds[k, i] = $8 / 1048576
      if ($2 == "redis") msum[k, i] = $9 / 1048576
      if (!(k in seen)) { seen[k] = 1; order[++no] = k } }
    END {
      # The dataset of the goal: the smaller of serve'"'"'s accounted memory and
      # RedisBloom'"'"'s MEMORY USAGE sum (medians), whichever were measured.
      for (o = 1; o <= no; o++) {
        k = order[o]; split(k, kk, SUBSEP); c = kk[1]; m = n[k]
        delete v; for (i = 1; i <= m; i++) v[i] = kk[2] == "serve" ? ds[k, i] : msum[k, i]
        d = med(v, m); if (!(c in D) || d < D[c]) D[c] = d
      }
      for (o = 1; o <= no; o++) {
        k = order[o]; split(k, kk, SUBSEP); c = kk[1]; m = n[k]
        delete v; for (i = 1; i <= m; i++) v[i] = ds[k, i]; d = cell(v, m, "%.1f")
        if (kk[2] == "redis") { delete v; for (i = 1; i <= m; i++) v[i] = msum[k, i]; d = d " (MEMORY USAGE sum " cell(v, m, "%.1f") ")" }
        line = "| " c " | " kk[2] " | " sprintf("%.1f", size[c] / 1e6) " | " d " | " sprintf("%.2f", lzf[c] / 1048576)
        delete v; for (i = 1; i <= m; i++) v[i] = ready[k, i]; line = line " | " cell(v, m, "%.2f")
        delete v; for (i = 1; i <= m; i++) v[i] = load[k, i]; line = line " | " cell(v, m, "%.2f")
        delete v; for (i = 1; i <= m; i++) v[i] = snap[k, i]; line = line " | " cell(v, m, "%.2f")
        delete v; worst = ""; for (i = 1; i <= m; i++) { v[i] = hwm[k, i]; if (worst == "" || v[i] > worst) worst = v[i] }
        line = line " | " cell(v, m, "%.0f")
        g = 1.1 * D[c] + lzf[c] / 1048576 + 32
        line = line " | " sprintf("%.0f", g) (worst <= g ? ": met" : sprintf(": missed by %.0f", worst - g))
        delete v; for (i = 1; i <= m; i++) v[i] = hwm[k, i] / D[c]; line = line " | " cell(v, m, "%.3f")
        print line " |"
      }
    }' "$tmp/files" "$tmp/results"
  echo
  echo "ready: process start to the first PONG (serve loads, writes its first snapshot, then listens; Redis answers LOADING until loaded)."
  echo "load: serve's log line for -load-rdb; Redis's \"DB loaded from disk\". snapshot: serve's \"snapshot of N keys written\"."
  echo "peak RSS: VmHWM of /proc/PID/status at the first PONG. dataset: INFO used_memory_dataset (serve: its keys' accounted memory,"
  echo "what -maxmemory counts); for Redis also the sum of MEMORY USAGE over the keys (RedisBloom's count). The goal's dataset: the"
  echo "smaller of serve's used_memory_dataset and RedisBloom's MEMORY USAGE sum (medians); met: every round's peak is under it."
  echo "largest LZF value: the compressed bytes of the largest LZF-compressed string in the file (bench/rdbsizes)."
  echo "Cells: the median (and range) of the rounds."
  echo
  echo "Raw (case server round ready_s load_s snapshot_s VmHWM_KiB used_memory_dataset [MEMORY_USAGE_sum]):"
  sed 's/^/  /' "$tmp/results"
}
if [ -n "$out" ]; then report | tee "$out"; else report; fi
