package server

import (
	"io"
	"math"
	"math/bits"

	"github.com/bloomlab/bloomlab/countmin"
)

// RedisBloom's CMS.* commands. The sketch is bloomlab's countmin (64-bit
// counters, rows h1 + i·h2 of one xxh3-128 hash) where RedisBloom has
// 32-bit counters and MurmurHash2 per row: estimates of colliding keys
// differ, the guarantee (an estimate is never below the true count) is
// the same. Counts are bounded so that every reply fits a signed 64-bit
// integer: an INCRBY or MERGE that would take the sketch's total count
// past 2^63 − 1 is refused whole ("CMS: INCRBY overflow", "CMS: MERGE
// overflow") and changes nothing; counters never wrap. Negative MERGE
// weights (RedisBloom accepts them when no counter goes negative) are
// refused: subtracting a sketch can make estimates fall below true
// counts.

// cmsType is CMS's value type.
var cmsType = registerType(&valueType{name: "CMSk-TYPE", tag: 2, decode: decodeCMS})

// cmsValue is a Count-Min sketch answering CMS.*.
type cmsValue struct{ s *countmin.Sketch }

func (v *cmsValue) typ() *valueType       { return cmsType }
func (v *cmsValue) memory() int64         { return int64(v.s.Bits()/8) + 96 }
func (v *cmsValue) clone() (value, error) { return &cmsValue{v.s.Clone()}, nil }

func (v *cmsValue) encode(w io.Writer) error {
	_, err := v.s.WriteTo(w)
	return err
}

func decodeCMS(r io.Reader, n int64) (value, error) {
	var s countmin.Sketch
	if _, err := s.ReadFrom(&payloadReader{r, n}); err != nil {
		return nil, err
	}
	return &cmsValue{&s}, nil
}

const (
	errCMSMissing = "CMS: key does not exist"
	errCMSExists  = "CMS: key already exists"
)

func init() {
	cms := func(name string, arity int, flags cmdFlags, lock lockMode, summary string, run func(*client, [][]byte) bool) *command {
		return &command{name: name, arity: arity, flags: flags, lock: lock, first: 1, last: 1, step: 1,
			group: "cms", since: "2.0.0", summary: summary, run: run}
	}
	w := fWrite | fDenyOOM
	register(
		cms("cms.initbydim", -1, w, lockExcl, "Initializes a Count-Min Sketch to dimensions specified by user", cmsInit),
		cms("cms.initbyprob", -1, w, lockExcl, "Initializes a Count-Min Sketch to accommodate requested tolerances.", cmsInit),
		cms("cms.incrby", -1, w, lockWrite, "Increases the count of one or more items by increment", cmsIncrBy),
		cms("cms.query", -1, fReadonly|fFast, lockRead, "Returns the count for one or more items in a sketch", cmsQuery),
		cms("cms.merge", -1, w, lockExcl, "Merges several sketches into one sketch", cmsMerge),
		cms("cms.info", -1, fReadonly|fFast, lockRead, "Returns information about a sketch", cmsInfo),
	)
}

// cmsDimFromProb is RedisBloom's CMS_DimFromProb: width ⌈2/error⌉, depth
// ⌈log10f(prob)/log10f(0.5)⌉ in single precision, as its C code computes it.
func cmsDimFromProb(errRate, prob float64) (width, depth float64) {
	width = math.Ceil(2 / errRate)
	l := float32(math.Log10(float64(float32(prob))))
	h := float32(math.Log10(float64(float32(0.5))))
	depth = math.Ceil(float64(l / h))
	return width, depth
}

func cmsInit(c *client, args [][]byte) bool {
	byDim := eqFold(args[0], "cms.initbydim")
	if len(args) != 4 {
		if byDim {
			c.err(wrongArity("cms.initbydim"))
		} else {
			c.err(wrongArity("cms.initbyprob"))
		}
		return false
	}
	s := c.s
	if s.getForCreate(c, args[1]) != nil {
		c.err(errCMSExists)
		return false
	}
	var width, depth float64
	if byDim {
		w, ok := parseInt(args[2])
		if !ok || w < 1 {
			c.err("CMS: invalid width")
			return false
		}
		d, ok := parseInt(args[3])
		if !ok || d < 1 {
			c.err("CMS: invalid depth")
			return false
		}
		width, depth = float64(w), float64(d)
	} else {
		e, ok := parseFloat(args[2])
		if !ok || e <= 0 || e >= 1 {
			c.err("CMS: invalid overestimation value")
			return false
		}
		p, ok := parseFloat(args[3])
		if !ok || p <= 0 || p >= 1 {
			c.err("CMS: invalid prob value")
			return false
		}
		width, depth = cmsDimFromProb(e, p)
	}
	if width < 1 || depth < 1 || width*depth > math.MaxInt64 {
		c.err("CMS: invalid init arguments")
		return false
	}
	if depth > countmin.MaxDepth || width*depth > countmin.MaxCells {
		c.err("CMS: invalid init arguments (at most 64 rows and 2^36 counters)")
		return false
	}
	need := int64(width*depth*8) + int64(len(args[1])) + 256
	if !c.reserve(need) {
		c.err(errOOM)
		return false
	}
	sk, err := countmin.New(countmin.Config{Width: uint64(width), Depth: int(depth)})
	if err != nil {
		s.mem.Add(-need)
		c.err("CMS: invalid init arguments")
		return false
	}
	s.add(string(args[1]), &cmsValue{sk}, need)
	c.log(args)
	c.w.Simple("OK")
	return false
}

// cmsOf returns key's entry, locked for reading or writing, and its
// sketch; or it writes the error reply and returns nil (nothing locked).
// Under the exclusive lock (MERGE) it locks nothing.
func (c *client) cmsOf(key []byte, write bool) (*entry, *cmsValue) {
	e := c.s.get(key)
	if e == nil {
		c.err(errCMSMissing)
		return nil, nil
	}
	switch {
	case c.excl:
	case write:
		e.mu.Lock()
	default:
		e.mu.RLock()
	}
	v, ok := e.v.(*cmsValue)
	if !ok {
		c.unlockEntry(e, write)
		c.err(errWrongType)
		return nil, nil
	}
	return e, v
}

// unlockWrittenEntry is unlockEntry(e, true) for a command that changed
// e: if it panicked, e stays locked (see unlockWritten).
func (c *client) unlockWrittenEntry(e *entry) {
	if r := recover(); r != nil {
		panic(r)
	}
	c.unlockEntry(e, true)
}

func (c *client) unlockEntry(e *entry, write bool) {
	switch {
	case c.excl:
	case write:
		e.mu.Unlock()
	default:
		e.mu.RUnlock()
	}
}

func cmsIncrBy(c *client, args [][]byte) bool {
	if len(args) < 4 || len(args)%2 == 1 {
		c.err(wrongArity("cms.incrby"))
		return false
	}
	e, v := c.cmsOf(args[1], true)
	if e == nil {
		return false
	}
	defer c.unlockWrittenEntry(e)
	total := v.s.N()
	for i := 2; i < len(args); i += 2 {
		n, ok := parseInt(args[i+1])
		if !ok {
			c.err("CMS: Cannot parse number")
			return false
		}
		if n < 0 {
			c.err("CMS: Number cannot be negative")
			return false
		}
		var carry uint64
		total, carry = bits.Add64(total, uint64(n), 0)
		if carry != 0 || total > math.MaxInt64 {
			c.err("CMS: INCRBY overflow")
			return false
		}
	}
	if err := c.s.writable(e); err != nil {
		c.err("ERR " + err.Error())
		return false
	}
	v = e.v.(*cmsValue)
	c.w.Array((len(args) - 2) / 2)
	for i := 2; i < len(args); i += 2 {
		n, _ := parseInt(args[i+1])
		v.s.Add(args[i], uint64(n))
		c.w.Int(int64(v.s.Estimate(args[i])))
	}
	c.s.touchKey(args[1])
	c.log(args)
	return false
}

func cmsQuery(c *client, args [][]byte) bool {
	if len(args) < 3 {
		c.err(wrongArity("cms.query"))
		return false
	}
	e, v := c.cmsOf(args[1], false)
	if e == nil {
		return false
	}
	defer c.unlockEntry(e, false)
	c.w.Array(len(args) - 2)
	for _, item := range args[2:] {
		c.w.Int(int64(v.s.Estimate(item)))
	}
	return false
}

func cmsInfo(c *client, args [][]byte) bool {
	if len(args) != 2 {
		c.err(wrongArity("cms.info"))
		return false
	}
	e, v := c.cmsOf(args[1], false)
	if e == nil {
		return false
	}
	defer c.unlockEntry(e, false)
	c.w.Array(6)
	c.w.Simple("width")
	c.w.Int(int64(v.s.Width()))
	c.w.Simple("depth")
	c.w.Int(int64(v.s.Depth()))
	c.w.Simple("count")
	c.w.Int(int64(v.s.N()))
	return false
}

// cmsMerge: CMS.MERGE dest numkeys src… [WEIGHTS w…] sets dest to the
// weighted sum of the sources (dest's own counts are replaced, as in
// RedisBloom, unless dest is one of the sources).
func cmsMerge(c *client, args [][]byte) bool {
	if len(args) < 4 {
		c.err(wrongArity("cms.merge"))
		return false
	}
	s := c.s
	de, dv := c.cmsOf(args[1], false)
	if de == nil {
		return false
	}
	numKeys, ok := parseInt(args[2])
	if !ok {
		c.err("CMS: invalid numkeys")
		return false
	}
	rest := args[3:]
	if numKeys <= 0 {
		c.err("CMS: Number of keys must be positive")
		return false
	}
	pos := argIndex(rest, 0, "WEIGHTS")
	if pos < 0 {
		if numKeys != int64(len(rest)) {
			c.err("CMS: wrong number of keys")
			return false
		}
	} else if int64(pos) != numKeys || int64(len(rest)) != 1+numKeys*2 {
		c.err("CMS: wrong number of keys/weights")
		return false
	}
	srcs := make([]*countmin.Sketch, numKeys)
	weights := make([]uint64, numKeys)
	var total uint64
	overflow := false
	for i := range srcs {
		weights[i] = 1
		if pos >= 0 {
			w, ok := parseInt(rest[int(numKeys)+1+i])
			if !ok || w < 0 {
				c.err("CMS: invalid weight value")
				return false
			}
			weights[i] = uint64(w)
		}
		_, sv := c.cmsOf(rest[i], false)
		if sv == nil {
			return false
		}
		if sv.s.Width() != dv.s.Width() || sv.s.Depth() != dv.s.Depth() || sv.s.Config() != dv.s.Config() {
			c.err("CMS: width/depth is not equal")
			return false
		}
		srcs[i] = sv.s
		hi, lo := bits.Mul64(sv.s.N(), weights[i])
		var carry uint64
		total, carry = bits.Add64(total, lo, 0)
		if hi != 0 || carry != 0 || total > math.MaxInt64 {
			overflow = true
		}
	}
	if overflow {
		c.err("CMS: MERGE overflow")
		return false
	}
	need := int64(dv.s.Bits() / 8)
	if !c.reserve(need) {
		c.err(errOOM)
		return false
	}
	out, err := countmin.New(dv.s.Config())
	if err == nil {
		for i, src := range srcs {
			if err = out.MergeScaled(src, weights[i]); err != nil {
				break
			}
		}
	}
	s.mem.Add(-need) // the new sketch replaces the old, which the key accounts for
	if err != nil {
		c.err("CMS: width/depth is not equal")
		return false
	}
	de.v = &cmsValue{out}
	de.frozen = 0
	s.resize(args[1], de)
	s.touch(string(args[1]))
	c.log(args)
	c.w.Simple("OK")
	return false
}
