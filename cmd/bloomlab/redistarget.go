package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/bloomlab/bloomlab"
	"github.com/bloomlab/bloomlab/blocked"
	"github.com/bloomlab/bloomlab/internal/bitvec"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/redisblocked"
	"github.com/bloomlab/bloomlab/theory"
	"github.com/redis/go-redis/v9"
)

func init() { registerTarget(openRedisTarget, "redis", "rediss", "redis+cluster", "rediss+cluster") }

// redisTarget is a blocked filter in Redis (package redisblocked):
//
//	redis://[USER:PASSWORD@]HOST:PORT[/DB]?key=NAME
//	rediss://…                                    (TLS)
//	redis+cluster://[USER:PASSWORD@]HOST:PORT[,HOST:PORT…]?key=NAME
//	rediss+cluster://…                            (TLS)
//
// The standalone forms take go-redis's URL options as well
// (dial_timeout, read_timeout, …).
type redisTarget struct {
	display string // the URL without its password
	key     string
	c       redis.UniversalClient
}

// batchKeys is the number of keys add and query send per batch.
const batchKeys = 1000

func openRedisTarget(name string) (target, error) {
	return parseRedisTarget(name)
}

func parseRedisTarget(name string) (*redisTarget, error) {
	scheme, rest, _ := strings.Cut(name, "://")
	scheme = strings.ToLower(scheme)
	rest, query, _ := strings.Cut(rest, "?")
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, usagef("%s: %v", redact(name), err)
	}
	keys := q["key"]
	if len(keys) != 1 || keys[0] == "" {
		return nil, usagef("%s: a Redis target needs ?key=NAME (the filter's name)", redact(name))
	}
	key := keys[0]
	delete(q, "key")
	t := &redisTarget{display: redact(name), key: key}
	switch scheme {
	case "redis", "rediss":
		u := scheme + "://" + rest
		if len(q) > 0 {
			u += "?" + q.Encode()
		}
		opt, err := redis.ParseURL(u)
		if err != nil {
			return nil, usagef("%s: %v", t.display, urlError(rest, err))
		}
		opt.DisableIdentity = true
		opt.DialerRetries = dialerRetries
		t.c = redis.NewClient(opt)
	default: // redis+cluster, rediss+cluster
		if len(q) > 0 {
			return nil, usagef("%s: a cluster target takes only ?key=NAME", t.display)
		}
		opt := &redis.ClusterOptions{DisableIdentity: true, DialerRetries: dialerRetries}
		if at := strings.LastIndexByte(rest, '@'); at >= 0 {
			ui, err := url.Parse("x://" + rest[:at+1] + "h")
			if err != nil {
				return nil, usagef("%s: %v", t.display, urlError(rest, err))
			}
			opt.Username = ui.User.Username()
			opt.Password, _ = ui.User.Password()
			rest = rest[at+1:]
		}
		hosts, path, _ := strings.Cut(rest, "/")
		if path != "" && path != "0" {
			return nil, usagef("%s: a cluster has database 0 only", t.display)
		}
		for _, h := range strings.Split(hosts, ",") {
			host, port, err := net.SplitHostPort(h)
			if err != nil || host == "" || port == "" {
				return nil, usagef("%s: %q is not HOST:PORT", t.display, h)
			}
			opt.Addrs = append(opt.Addrs, h)
		}
		if scheme == "rediss+cluster" {
			host, _, _ := net.SplitHostPort(opt.Addrs[0])
			opt.TLSConfig = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
		}
		t.c = redis.NewClusterClient(opt)
	}
	return t, nil
}

// redact returns a URL with its password replaced by "xxxxx". The user
// information ends at the last "@" before the query, so that a password
// someone forgot to percent-encode (holding "@", ":" or "/") is hidden
// whole, not cut at its first "/" and printed in part.
func redact(name string) string {
	scheme, rest, ok := strings.Cut(name, "://")
	if !ok {
		return name
	}
	auth, _, _ := strings.Cut(rest, "?")
	at := strings.LastIndexByte(auth, '@')
	if at < 0 {
		return name
	}
	user, _, hasPass := strings.Cut(rest[:at], ":")
	if !hasPass {
		return name
	}
	return scheme + "://" + user + ":xxxxx" + rest[at:]
}

// urlError returns err, an error parsing the part of a target URL after
// "://" (rest), without the URL: net/url's errors quote the whole URL, or
// a piece of it ("invalid port \":w\" after host"), which would print the
// password. When rest has user information, only a generic message is
// given.
func urlError(rest string, err error) error {
	auth, _, _ := strings.Cut(rest, "?")
	if strings.Contains(auth, "@") {
		return errors.New("not a valid URL (percent-encode \"@\", \":\", \"/\", \"?\" and \"#\" in a user name or password: %40 %3A %2F %3F %23)")
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("not a valid URL: %w", ue.Err)
	}
	return err
}

func (t *redisTarget) String() string { return t.display }

func (t *redisTarget) ctx() context.Context { return context.Background() }

// errorf wraps a library error for the command's messages.
func (t *redisTarget) errorf(err error) error {
	return fmt.Errorf("%s: %s", t.display, strings.TrimPrefix(err.Error(), "redisblocked: "))
}

func (t *redisTarget) open() (*redisblocked.Filter, error) {
	f, err := redisblocked.Open(t.ctx(), t.c, t.key, nil)
	if err != nil {
		return nil, t.errorf(err)
	}
	return f, nil
}

func (t *redisTarget) checkBuild(e *env, kindName string, force bool, _ []string) error {
	if kindName != "blocked" {
		return usagef("%s: Redis targets hold blocked filters (-kind blocked), not %s", t.display, kindName)
	}
	_, err := redisblocked.Open(t.ctx(), t.c, t.key, nil)
	switch {
	case errors.Is(err, redisblocked.ErrNotFound):
		return nil
	case err != nil:
		return t.errorf(err)
	case !force:
		return fmt.Errorf("%s: a filter exists; -force replaces it", t.display)
	}
	return nil
}

func (t *redisTarget) write(e *env, f bloomlab.Filter, force bool) error {
	b, ok := f.(*blocked.Filter)
	if !ok {
		return fmt.Errorf("%s: Redis targets hold blocked filters, not %s", t.display, f.Kind())
	}
	pr, pw := io.Pipe()
	go func() {
		_, err := b.WriteTo(pw)
		pw.CloseWithError(err)
	}()
	err := t.upload(e, pr, force)
	pr.CloseWithError(errors.New("upload ended"))
	if err != nil {
		return err
	}
	e.warnState("build", t.display, f)
	return nil
}

// upload streams a bloomlab file to the target: an interruption (Ctrl-C)
// deletes what it wrote and leaves the filter as it was.
func (t *redisTarget) upload(e *env, r io.Reader, force bool) error {
	ctx, cancel := context.WithCancel(t.ctx())
	defer cancel()
	finished := make(chan struct{})
	release := onInterrupt(func() {
		cancel()
		select {
		case <-finished:
		case <-time.After(10 * time.Second):
		}
	})
	f, err := redisblocked.Upload(ctx, t.c, t.key, r, &redisblocked.Config{Replace: force})
	close(finished)
	release()
	if errors.Is(err, redisblocked.ErrExists) {
		return fmt.Errorf("%s: a filter exists; -force replaces it", t.display)
	}
	if err != nil {
		return t.errorf(err)
	}
	p := f.Plan()
	fmt.Fprintf(e.stderr, "bloomlab: %s: %d blocks, %s of at most %s, generation %016x\n",
		t.display, p.Blocks, plural(p.Shards, "shard"), humanBytes(float64(p.ShardBytes)), f.Generation())
	return nil
}

// batches reads the keys of files and calls fn with batches of batchKeys
// keys, and the file and line of each batch's last key.
func (t *redisTarget) batches(e *env, files []string, fn func(keys [][]byte, file string, line int) error) error {
	var b keyBatch
	var lastFile string
	var lastLine int
	err := e.forEachKey(files, func(key []byte, file string, line int) error {
		b.add(key)
		lastFile, lastLine = file, line
		if b.len() < batchKeys {
			return nil
		}
		err := fn(b.batch(), lastFile, lastLine)
		b.reset()
		return err
	})
	if err == nil && b.len() > 0 {
		err = fn(b.batch(), lastFile, lastLine)
	}
	return err
}

func (t *redisTarget) add(e *env, files []string) error {
	f, err := t.open()
	if err != nil {
		return err
	}
	ctx := t.ctx()
	err = t.batches(e, files, func(keys [][]byte, file string, line int) error {
		if err := f.AddBatch(ctx, keys); err != nil {
			var be *redisblocked.BatchError
			n := len(keys)
			if errors.As(err, &be) {
				n = len(be.Failed)
			}
			return fmt.Errorf("add: %s: %d keys of the batch ending at %s:%d failed (%v); the keys before them were added",
				t.display, n, sourceName(file), line, strings.TrimPrefix(errors.Unwrap(err).Error(), "redisblocked: "))
		}
		return nil
	})
	if err != nil {
		return err
	}
	n, err := f.N(ctx)
	if err == nil && f.Capacity() > 0 && n > f.Capacity() {
		in, ierr := f.Info(ctx)
		rate := "above its target"
		if ierr == nil {
			rate = formatValue(in.EstimatedFPR())
		}
		fmt.Fprintf(e.stderr, "bloomlab: add: warning: %s holds %d keys, more than the %d it was sized for; its false-positive rate is now %s (bloomlab info %s)\n",
			t.display, n, f.Capacity(), rate, t.display)
	}
	return nil
}

func (t *redisTarget) query(e *env, files []string, fn func(key []byte, present bool) error) error {
	f, err := t.open()
	if err != nil {
		return err
	}
	ctx := t.ctx()
	out := make([]bool, 0, batchKeys)
	return t.batches(e, files, func(keys [][]byte, file string, line int) error {
		out, err = f.ContainsBatch(ctx, keys, out)
		if err != nil {
			return fmt.Errorf("query: %s: the batch ending at %s:%d: %s", t.display, sourceName(file), line, strings.TrimPrefix(err.Error(), "redisblocked: "))
		}
		for i, k := range keys {
			if err := fn(k, out[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

func (t *redisTarget) info(e *env) (infoReport, error) {
	f, err := t.open()
	if err != nil {
		return infoReport{}, err
	}
	in, err := f.Info(t.ctx())
	if err != nil {
		return infoReport{}, t.errorf(err)
	}
	r := infoReport{
		File: t.display, Kind: "blocked", Seed: in.Seed, Bits: in.M(), Keys: in.N, Capacity: in.Capacity,
		FPR:       fptr(in.EstimatedFPR()),
		FPRMethod: "formula (theory.FPBlocked) at the distinct keys estimated from the fill the servers count (BITCOUNT)",
	}
	if r.Keys > 0 {
		r.BitsPerKey = fptr(float64(r.Bits) / float64(r.Keys))
	}
	dn, dnote := bitvec.DesignN(in.M(), in.K, in.Capacity)
	rate := func(n uint64) float64 {
		return theory.FPBlocked(float64(n), float64(in.Blocks), blocked.BlockBits, in.K)
	}
	p := f.Plan()
	nodes := map[string]int{}
	for _, s := range in.Shards {
		nodes[s.Node]++
	}
	r.Fields = []kind.Field{
		{Name: "blocks", Value: in.Blocks, Note: "of 512 bits"},
		{Name: "k", Value: in.K},
		{Name: "fill ratio", Value: in.FillRatio(), Note: "bits set, counted by the servers"},
		{Name: "approx count", Value: in.ApproxCount(), Note: "distinct keys, from the fill"},
		{Name: "fpr at keys added", Value: rate(in.N), Note: "formula (theory.FPBlocked), n = keys added"},
		{Name: "design n", Value: dn, Note: dnote},
		{Name: "fpr at design n", Value: rate(dn), Note: "formula (theory.FPBlocked)"},
		{Name: "layout", Value: fmt.Sprintf("redisblocked version %d", in.FormatVersion)},
		{Name: "metadata key", Value: t.key},
		{Name: "generation", Value: fmt.Sprintf("%016x", in.Generation)},
		{Name: "shards", Value: p.Shards, Note: fmt.Sprintf("%d blocks each (the last the rest), strings of at most %s", p.ShardBlocks, humanBytes(float64(p.ShardBytes)))},
		{Name: "shard keys", Value: shardKeys(in)},
	}
	if len(nodes) > 1 || (len(nodes) == 1 && in.Shards[0].Node != "") {
		var names []string
		for n := range nodes {
			names = append(names, n)
		}
		sort.Strings(names)
		var parts []string
		for _, n := range names {
			parts = append(parts, fmt.Sprintf("%s %d", n, nodes[n]))
		}
		r.Fields = append(r.Fields, kind.Field{Name: "shards per node", Value: strings.Join(parts, ", ")})
	}
	if r.Capacity > 0 && r.Keys > r.Capacity {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d keys added, more than the %d the filter was sized for: its rate is above the target it was built for", r.Keys, r.Capacity))
	}
	if math.IsInf(in.ApproxCount(), 1) {
		r.Warnings = append(r.Warnings, "every bit is set: the filter answers present for every key")
	}
	return r, nil
}

// pushTarget uploads the blocked filter in the file path to a target
// (bloomlab redis push FILE TARGET).
func pushTarget(e *env, path, name string, force bool) error {
	t, err := parseRedisTarget(name)
	if err != nil {
		return err
	}
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	return t.upload(e, fh, force)
}

// pullTarget downloads a target's filter to a bloomlab file (atomically;
// "-": standard output), streaming it.
func pullTarget(e *env, name, out string) error {
	t, err := parseRedisTarget(name)
	if err != nil {
		return err
	}
	f, err := t.open()
	if err != nil {
		return err
	}
	write := func(w io.Writer) error {
		_, err := f.WriteTo(t.ctx(), w)
		if err != nil {
			return t.errorf(err)
		}
		return nil
	}
	if out == "-" {
		if isTerminal(e.stdout) {
			return usagef("-o - writes a binary filter to standard output, which is a terminal; redirect it or give a file")
		}
		return write(e.stdout)
	}
	l, err := lockPath(out, false)
	if err != nil {
		return err
	}
	defer l.unlock()
	return writeFileAtomic(out, write)
}

// isRedisURL reports whether s names a Redis target.
func isRedisURL(s string) bool {
	_, ok := targetSchemes[targetScheme(s)]
	return ok && strings.HasPrefix(targetScheme(s), "redis")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func shardKeys(in *redisblocked.Info) string {
	if len(in.Shards) == 1 {
		return in.Shards[0].Key
	}
	return in.Shards[0].Key + " … " + in.Shards[len(in.Shards)-1].Key
}
