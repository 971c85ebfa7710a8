// Command loadgen drives a server that speaks Redis's protocol (bloomlab
// serve, redis-server) from its own process, as redis-benchmark does, but
// with each client on a key of its own when asked: redis-benchmark's
// __rand_int__ draws keys and items from one range, so it cannot give 50
// clients 50 keys while the items stay random (bench/scaling.sh uses both).
//
// -clients connections each send -n/-clients requests (rounded up to whole
// pipelines) in pipelines of -pipeline: write a pipeline, read its replies,
// repeat. The command is -cmd with {key} replaced by the client's key
// (-keys distinct: PREFIX0, PREFIX1, …, one per client; shared: PREFIX for
// all) and each {item} by a fresh random 12-digit decimal below -r, as
// redis-benchmark writes __rand_int__. An error reply stops the run
// (exit 1): an error is answered as fast as a result, so a run with errors
// measures nothing.
//
// It prints one line: requests, seconds, ops/s and the p50 and p99 latency
// in ms of a pipeline (from its write to its last reply; every request in
// it waited that long, as redis-benchmark counts it).
//
// Usage (from bench/): go run ./loadgen -addr 127.0.0.1:PORT [-clients 50] [-pipeline 16] [-n 1000000]
//
//	[-keys distinct|shared] [-prefix k] [-cmd 'BF.ADD {key} {item}'] [-r 100000000] [-seed 1]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6380", "server address")
	clients := flag.Int("clients", 50, "connections, each in its own goroutine")
	pipeline := flag.Int("pipeline", 16, "requests written before reading their replies")
	n := flag.Int("n", 1_000_000, "requests in all (spread over the clients, rounded up to whole pipelines)")
	keys := flag.String("keys", "distinct", "distinct (client i uses PREFIXi) or shared (every client uses PREFIX)")
	prefix := flag.String("prefix", "k", "key name, or its prefix")
	cmd := flag.String("cmd", "BF.ADD {key} {item}", "the command; {key} is the client's key, each {item} a random 12-digit number below -r")
	r := flag.Uint64("r", 100_000_000, "items are drawn from [0, r)")
	seed := flag.Uint64("seed", 1, "random seed (client i uses seed, i)")
	flag.Parse()
	if *clients < 1 || *pipeline < 1 || *n < 1 || *r < 1 || (*keys != "distinct" && *keys != "shared") || strings.TrimSpace(*cmd) == "" {
		fmt.Fprintln(os.Stderr, "loadgen: -clients, -pipeline, -n and -r must be ≥ 1, -keys distinct or shared, -cmd not empty")
		os.Exit(2)
	}
	if *r > 1e12 {
		fmt.Fprintln(os.Stderr, "loadgen: -r at most 10^12 (items have 12 digits)")
		os.Exit(2)
	}
	batches := (*n + *clients**pipeline - 1) / (*clients * *pipeline)
	lat := make([][]time.Duration, *clients)
	errs := make([]error, *clients)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range *clients {
		key := *prefix
		if *keys == "distinct" {
			key += strconv.Itoa(i)
		}
		c, err := newClient(*addr, *cmd, key, *r, rand.NewPCG(*seed, uint64(i)))
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadgen:", err)
			os.Exit(1)
		}
		defer c.conn.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			lat[i], errs[i] = c.run(batches, *pipeline)
		}()
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	secs := time.Since(t0).Seconds()
	for _, err := range errs {
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadgen:", err)
			os.Exit(1)
		}
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	q := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))]) / 1e6 }
	total := batches * *clients * *pipeline
	fmt.Printf("requests=%d seconds=%.3f ops/s=%.0f p50_ms=%.3f p99_ms=%.3f\n", total, secs, float64(total)/secs, q(0.50), q(0.99))
}

type client struct {
	conn  net.Conn
	w     *bufio.Writer
	rd    *bufio.Reader
	parts []string // the command's words; "{key}" already replaced
	items []bool   // parts[i] is an {item}
	r     uint64
	rng   *rand.Rand
	buf   []byte
}

func newClient(addr, cmd, key string, r uint64, src rand.Source) (*client, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	c := &client{conn: conn, w: bufio.NewWriterSize(conn, 64<<10), rd: bufio.NewReaderSize(conn, 64<<10), r: r, rng: rand.New(src)}
	for _, f := range strings.Fields(cmd) {
		c.items = append(c.items, f == "{item}")
		c.parts = append(c.parts, strings.ReplaceAll(f, "{key}", key))
	}
	return c, nil
}

func (c *client) run(batches, pipeline int) ([]time.Duration, error) {
	lat := make([]time.Duration, 0, batches)
	for range batches {
		for range pipeline {
			c.write()
		}
		t := time.Now()
		if err := c.w.Flush(); err != nil {
			return nil, err
		}
		for range pipeline {
			if err := reply(c.rd); err != nil {
				return nil, err
			}
		}
		lat = append(lat, time.Since(t))
	}
	return lat, nil
}

func (c *client) write() {
	b := c.buf[:0]
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(c.parts)), 10)
	b = append(b, "\r\n"...)
	for i, p := range c.parts {
		if c.items[i] {
			b = append(b, "$12\r\n"...)
			v := c.rng.Uint64N(c.r)
			var d [12]byte
			for j := 11; j >= 0; j-- {
				d[j] = byte('0' + v%10)
				v /= 10
			}
			b = append(b, d[:]...)
		} else {
			b = append(b, '$')
			b = strconv.AppendInt(b, int64(len(p)), 10)
			b = append(b, "\r\n"...)
			b = append(b, p...)
		}
		b = append(b, "\r\n"...)
	}
	c.buf = b
	c.w.Write(b)
}

// reply reads one RESP2 or RESP3 reply; an error reply is an error.
func reply(r *bufio.Reader) error {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return err
	}
	if len(line) < 3 {
		return fmt.Errorf("short reply %q", line)
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+', ':', ',', '#', '_', '(':
		return nil
	case '-', '!':
		return fmt.Errorf("error reply: %s", body)
	case '$', '=':
		n, err := strconv.Atoi(string(body))
		if err != nil {
			return fmt.Errorf("bad bulk length %q", body)
		}
		if n < 0 {
			return nil
		}
		_, err = r.Discard(n + 2)
		return err
	case '*', '~', '>', '%':
		n, err := strconv.Atoi(string(body))
		if err != nil {
			return fmt.Errorf("bad aggregate length %q", body)
		}
		if line[0] == '%' {
			n *= 2
		}
		for range n {
			if err := reply(r); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown reply type %q", line)
}
