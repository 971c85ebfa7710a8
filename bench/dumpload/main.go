// Command dumpload times a whole SCANDUMP of a RedisBloom key and a whole
// LOADCHUNK of its chunks into another key, on any server that speaks
// RedisBloom's BF or CF commands (bench/bigdump.sh runs it against Redis
// with the RedisBloom module and against bloomlab serve, side by side).
//
// Usage:
//
//	go run ./dumpload -addr HOST:PORT -family BF|CF -key KEY -to KEY2 [-pid PID]
//
// It reads KEY with family.SCANDUMP from iterator 0 until the reply's
// iterator is 0, holding every chunk in memory; then it writes the chunks,
// in order, with family.LOADCHUNK to KEY2 (which must not exist), and
// checks that family.INFO of KEY2 equals KEY's. It prints one line:
//
//	scan SECONDS load SECONDS scancpu SECONDS loadcpu SECONDS chunks N bytes B
//
// with the wall time of each phase, measured by this client around the
// commands (one command in flight at a time, as RedisBloom's flow tests and
// redis-py's scandump helpers send them), and with -pid the server
// process's CPU time (utime + stime of /proc/PID/stat, all its threads)
// over each phase (0 without -pid).
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "dumpload:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:6379", "server")
	fam := flag.String("family", "BF", "BF or CF")
	key := flag.String("key", "big", "key to SCANDUMP")
	to := flag.String("to", "big2", "key to LOADCHUNK into (must not exist)")
	pid := flag.Int("pid", 0, "the server's process ID, for its CPU time (Linux)")
	flag.Parse()
	cpu := func() float64 {
		if *pid == 0 {
			return 0
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", *pid))
		if err != nil {
			return 0
		}
		// The fields after the command's closing parenthesis: state is
		// field 3, utime 14, stime 15.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		u, _ := strconv.ParseFloat(f[11], 64)
		s, _ := strconv.ParseFloat(f[12], 64)
		return (u + s) / 100 // USER_HZ
	}
	if *fam != "BF" && *fam != "CF" {
		return fmt.Errorf("-family %q: want BF or CF", *fam)
	}
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: *addr, Protocol: 2, ReadTimeout: 10 * time.Minute, WriteTimeout: 10 * time.Minute})
	defer rdb.Close()
	if n, err := rdb.Exists(ctx, *to).Result(); err != nil || n != 0 {
		return fmt.Errorf("-to %s: exists %d, %v", *to, n, err)
	}
	type chunk struct {
		it   int64
		data string
	}
	var chunks []chunk
	var total int64
	c0 := cpu()
	t0 := time.Now()
	for it := int64(0); ; {
		r, err := rdb.Do(ctx, *fam+".SCANDUMP", *key, it).Slice()
		if err != nil {
			return fmt.Errorf("%s.SCANDUMP %s %d: %w", *fam, *key, it, err)
		}
		if len(r) != 2 {
			return fmt.Errorf("%s.SCANDUMP: %d elements", *fam, len(r))
		}
		next, _ := r[0].(int64)
		if next == 0 {
			break
		}
		data, _ := r[1].(string)
		chunks = append(chunks, chunk{next, data})
		total += int64(len(data))
		it = next
	}
	scan := time.Since(t0)
	c1 := cpu()
	t1 := time.Now()
	for _, c := range chunks {
		if err := rdb.Do(ctx, *fam+".LOADCHUNK", *to, c.it, c.data).Err(); err != nil {
			return fmt.Errorf("%s.LOADCHUNK %s %d: %w", *fam, *to, c.it, err)
		}
	}
	load := time.Since(t1)
	c2 := cpu()
	a, err := rdb.Do(ctx, *fam+".INFO", *key).Slice()
	if err != nil {
		return err
	}
	b, err := rdb.Do(ctx, *fam+".INFO", *to).Slice()
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(a, b) {
		return fmt.Errorf("%s.INFO %s = %v, of the copy %v", *fam, *key, a, b)
	}
	fmt.Printf("scan %.3f load %.3f scancpu %.2f loadcpu %.2f chunks %d bytes %d\n", scan.Seconds(), load.Seconds(), c1-c0, c2-c1, len(chunks), total)
	return nil
}
