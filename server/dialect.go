package server

import (
	"fmt"
	"strings"

	"github.com/bloomlab/bloomlab/server/internal/resp"
)

// Dialect is the RedisBloom release (and the Redis core around it) whose
// replies the server gives: reply shapes under RESP3, error texts, ranges
// and the defaults of new keys. It changes no stored structure: a -dir
// written under one dialect is served under the other with every key as
// it was (the log records what each write made, never a default that
// depends on the dialect).
type Dialect uint8

const (
	// Dialect8 answers as RedisBloom 8.6.2, the RedisBloom of Redis 8.6
	// (built into Redis Open Source 8): under RESP3, booleans for the
	// adds and existence checks of BF and CF, maps for every *.INFO; its
	// ranges and error texts. The default.
	Dialect8 Dialect = iota
	// Dialect24 answers as RedisBloom 2.4.23 on Redis 7.0.15: the same
	// shapes under RESP2 and RESP3.
	Dialect24
)

// ParseDialect reads a dialect's name: "8" (or "8.6", "8.6.2") or "2.4"
// (or "2.4.23").
func ParseDialect(s string) (Dialect, error) {
	switch strings.TrimSpace(s) {
	case "8", "8.6", "8.6.2":
		return Dialect8, nil
	case "2.4", "2.4.23":
		return Dialect24, nil
	}
	return 0, fmt.Errorf("unknown dialect %q: 8 (RedisBloom 8.6.2, Redis 8) or 2.4 (RedisBloom 2.4.23, Redis 7.0)", s)
}

// String is the dialect's name as ParseDialect reads it.
func (d Dialect) String() string {
	if d == Dialect24 {
		return "2.4"
	}
	return "8"
}

// redisVersion is the Redis version the dialect's replies follow (INFO's
// redis_version, HELLO's version).
func (d Dialect) redisVersion() string {
	if d == Dialect24 {
		return "7.0.15"
	}
	return "8.6.0"
}

// rdbVersion is the newest RDB version the dialect's Redis reads (and
// writes): 10 for Redis 7.0, 12 for Redis 8.
func (d Dialect) rdbVersion() int {
	if d == Dialect24 {
		return 10
	}
	return 12
}

// moduleVersion is the RedisBloom module version reported (HELLO, INFO).
func (d Dialect) moduleVersion() int64 {
	if d == Dialect24 {
		return 20423
	}
	return 80602
}

// redis8 reports whether the client is answered in Redis 8's RESP3
// shapes (booleans, maps), that is under Dialect8 after HELLO 3.
func (c *client) redis8() bool { return c.w.Proto >= 3 && c.s.cfg.Dialect == Dialect8 }

// boolReply writes b as Redis 8's modules do: a boolean under RESP3 in
// Dialect8, the integer 1 or 0 otherwise.
func (c *client) boolReply(b bool) {
	if c.redis8() {
		c.w.Bool(b)
		return
	}
	c.w.Int(int64(b2i(b)))
}

// mapReply starts a reply of n field/value pairs: a map under RESP3 in
// Dialect8, an array of 2n elements otherwise.
func (c *client) mapReply(n int) {
	if c.redis8() {
		c.w.Map(n)
		return
	}
	c.w.Array(2 * n)
}

// formatDouble8 is f as Redis 8 prints a double (resp.AppendDouble's
// shortest form): 0.01, 0.25, 1e-7.
func formatDouble8(f float64) string { return string(resp.AppendDouble(nil, f, true)) }
