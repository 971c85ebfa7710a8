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
//
// Every difference between the dialects is a field of their row in
// dialects: a handler reads c.d (its client's row), never the Dialect
// itself. A further RedisBloom release is one more constant and one more
// row.
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

// dialect is one row of dialects: what one RedisBloom release (and its
// Redis) answers where the releases differ.
type dialect struct {
	names []string // ParseDialect's spellings; names[0] is String's
	about string   // for ParseDialect's error: the release and its Redis

	// Versions.
	redisVersion  string // INFO's redis_version, HELLO's version, an RDB file's redis-ver
	rdbVersion    int    // the newest RDB version its Redis reads (RESTORE)
	moduleVersion int64  // RedisBloom's version (HELLO, INFO, MODULE LIST)

	// Reply shapes.
	resp3Types      bool // under RESP3, booleans for adds and checks, maps for *.INFO (Redis 8's modules)
	shortestDoubles bool // doubles printed shortest (Redis 8: 0.01), else with %.17g
	topkBulkItems   bool // TOPK items as bulk strings (8), else simple strings (2.4)
	moduleCommands  bool // COMMAND INFO and DOCS of RedisBloom's commands from the module's own metadata (8), else as core commands of group bf, cf…
	moduleConfigs   bool // RedisBloom 8's module configs (CONFIG GET/SET bf-error-rate…, serve's -module-config)

	// BF.
	bfRules8       bool    // BF's parameters read by RedisBloom 8's rules (ranges, EXPANSION 0 as 8 reads it, NONSCALING with EXPANSION)
	bfErrRateCap   float64 // a larger error rate makes a filter at this rate (0: no cap)
	bfFullContinue bool    // BF.MADD/INSERT: an item past a link that cannot be made is answered its error and the next items go on (8), else the command stops there

	// CF.
	cfBucketOfConfig bool   // CF.RESERVE's BUCKETSIZE at most half of cf-initial-size (8), else at most 255
	cfRangeText      string // an option out of its range: a format of the name, the low and the high end
	cfCapLowText     string // CF.RESERVE's capacity below twice the bucket size
	cfInsertCap24    bool   // CF.INSERT's CAPACITY at least twice 2.4's fixed bucket size of 2 (2.4), else twice cf-bucket-size, with 8's text
	cfAllocText      string // a sub-filter that cannot be allocated
	shortLoadRefusal bool   // a *.LOADCHUNK refusal answers the family's short text, the detail going to the log (8)

	// CMS, TDIGEST.
	cmsNegativeWeights bool // CMS.MERGE takes negative weights (8)
	tdMemoryOfPointer  bool // TDIGEST.INFO's Memory usage counts a pointer for the struct, as 2.4.23's TDigestMemUsage does
}

// dialects are the rows, by Dialect.
var dialects = [...]dialect{
	Dialect8: {
		names: []string{"8", "8.6", "8.6.2"}, about: "RedisBloom 8.6.2, Redis 8",
		redisVersion: "8.6.0", rdbVersion: 12, moduleVersion: 80602,
		resp3Types: true, shortestDoubles: true, topkBulkItems: true, moduleCommands: true, moduleConfigs: true,
		bfRules8: true, bfErrRateCap: 0.25, bfFullContinue: true,
		cfBucketOfConfig: true, cfRangeText: "%s: value must be in the range [%d, %d]", cfCapLowText: errCFCapRange,
		cfAllocText: "ERR Insufficient memory", shortLoadRefusal: true,
		cmsNegativeWeights: true,
	},
	Dialect24: {
		names: []string{"2.4", "2.4.23"}, about: "RedisBloom 2.4.23, Redis 7.0",
		redisVersion: "7.0.15", rdbVersion: 10, moduleVersion: 20423,
		cfRangeText: "%s: value must be an integer between %d and %d, inclusive.", cfCapLowText: errCFCapMin,
		cfInsertCap24: true, cfAllocText: "Memory allocation failure",
		tdMemoryOfPointer: true,
	},
}

// row is d's row of dialects (the default's for a value out of range).
func (d Dialect) row() *dialect {
	if int(d) < len(dialects) {
		return &dialects[d]
	}
	return &dialects[Dialect8]
}

// ParseDialect reads a dialect's name: "8" (or "8.6", "8.6.2") or "2.4"
// (or "2.4.23").
func ParseDialect(s string) (Dialect, error) {
	s = strings.TrimSpace(s)
	var known []string
	for i := range dialects {
		for _, n := range dialects[i].names {
			if s == n {
				return Dialect(i), nil
			}
		}
		known = append(known, dialects[i].names[0]+" ("+dialects[i].about+")")
	}
	return 0, fmt.Errorf("unknown dialect %q: %s", s, strings.Join(known, " or "))
}

// String is the dialect's name as ParseDialect reads it.
func (d Dialect) String() string { return d.row().names[0] }

// redis8 reports whether the client is answered in Redis 8's RESP3
// shapes (booleans, maps): its dialect's, after HELLO 3.
func (c *client) redis8() bool { return c.w.Proto >= 3 && c.d.resp3Types }

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
