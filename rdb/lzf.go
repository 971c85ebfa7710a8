package rdb

import (
	"errors"
	"math"
	"sync"
)

// ErrLZF is returned for compressed data that does not decode to exactly
// the announced length: a back reference before the start of the output,
// a run past its end, input that ends inside an instruction, or output
// shorter than announced.
var ErrLZF = errors.New("rdb: invalid LZF data")

// lzfMaxRatio bounds how many output bytes one input byte can give: a
// 3-byte back reference expands to at most 264 bytes.
const lzfMaxRatio = 88

// LZFDecompress decodes LZF data (the format of Redis's compressed
// strings) into a new slice of exactly n bytes. Every literal run and back
// reference is checked against the input and the output before it is
// copied; anything else is ErrLZF. n is refused (ErrLZF) when the input
// could not expand to it, before anything is allocated.
func LZFDecompress(in []byte, n int) ([]byte, error) {
	if n < 0 || int64(n) > int64(len(in))*lzfMaxRatio {
		return nil, ErrLZF
	}
	out := make([]byte, n)
	if err := lzfDecode(in, out); err != nil {
		return nil, err
	}
	return out, nil
}

// lzfDecode fills out, which must come out exactly full, from in.
func lzfDecode(in, out []byte) error {
	ip, op := 0, 0
	for ip < len(in) {
		ctrl := int(in[ip])
		ip++
		if ctrl < 32 { // literal run of ctrl+1 bytes
			run := ctrl + 1
			if run > len(in)-ip || run > len(out)-op {
				return ErrLZF
			}
			copy(out[op:op+run], in[ip:ip+run])
			ip += run
			op += run
			continue
		}
		length := ctrl >> 5
		if length == 7 {
			if ip >= len(in) {
				return ErrLZF
			}
			length += int(in[ip])
			ip++
		}
		if ip >= len(in) {
			return ErrLZF
		}
		back := (ctrl&0x1f)<<8 | int(in[ip])
		ip++
		length += 2
		ref := op - back - 1
		if ref < 0 || length > len(out)-op {
			return ErrLZF
		}
		// The reference may overlap the bytes being written (a repeated
		// pattern): copy forward one byte at a time when it does.
		if op-ref >= length {
			copy(out[op:op+length], out[ref:ref+length])
		} else {
			for i := 0; i < length; i++ {
				out[op+i] = out[ref+i]
			}
		}
		op += length
	}
	if op != len(out) {
		return ErrLZF
	}
	return nil
}

const (
	lzfMaxLit = 1 << 5        // longest literal run
	lzfMaxOff = 1 << 13       // farthest back reference (offset+1)
	lzfMaxRef = 1<<8 + 1<<3   // longest back reference
	lzfHLog   = 16            // liblzf's HLOG as Redis builds it
	lzfHSize  = 1 << lzfHLog  // hash table slots
	lzfHist   = lzfMaxOff     // the output a back reference can reach
	lzfMaxIns = 1 + lzfMaxLit // longest instruction in the input
	lzfMaxOut = lzfMaxRef     // most output of one instruction
)

// lzfTable is the compressor's hash table: each slot holds base+pos+1 of
// the last position whose 3 bytes hashed there, so that entries of an
// earlier call (at most base) read as empty without clearing the table.
type lzfTable struct {
	slot [lzfHSize]int64
	base int64
}

var lzfTables = sync.Pool{New: func() any { return new(lzfTable) }}

// LZFCompress compresses in with LZF and returns the result, or nil when
// it would not fit in max bytes (Redis stores a string raw unless it
// compresses to at most its length less 4: it passes that bound).
//
// It follows the algorithm of liblzf 3.6's lzf_compress as Redis builds it
// (HLOG 16, VERY_FAST, not ULTRA_FAST, the same hash of 3 bytes, the same
// rule for taking a match and for giving up when the output would pass
// max), so that it returns, byte for byte, what Redis writes for the same
// string: TestLZFRedisBytes checks this against every compressed string of
// the files and DUMP payloads recorded from Redis 7.0.15. One caveat: Redis
// builds liblzf with INIT_HTAB 0, so its hash table starts as whatever its
// stack held, and a stale entry that happens to point a little before the
// current position inside the input would be taken as a candidate (and
// used, if its bytes match), where this compressor's table starts empty.
// Redis's own output could thus in principle vary between runs; it never
// has in the recorded files. Any output decodes with LZFDecompress to in,
// and any input compresses within a max of len(in)+len(in)/32+4 (liblzf
// checks the bound conservatively: it may give up with a few bytes to
// spare).
func LZFCompress(in []byte, max int) []byte {
	n := len(in)
	if n == 0 || max <= 0 {
		return nil
	}
	t := lzfTables.Get().(*lzfTable)
	defer lzfTables.Put(t)
	base := t.base
	if base > math.MaxInt64/2 {
		clear(t.slot[:])
		base = 0
	}
	t.base = base + int64(n) + 1
	// The output never passes n + n/32 + 1 bytes (a literal byte costs one
	// and every 32 a header, a match of m bytes at most m), nor max.
	out := make([]byte, min(max, n+n/32+2))
	outEnd := max

	ip, op := 0, 1 // op: after the header of the literal run being built
	lit := 0
	var hval uint32
	if n >= 2 {
		hval = uint32(in[0])<<8 | uint32(in[1])
	}
	for ip < n-2 {
		hval = hval<<8 | uint32(in[ip+2])
		slot := &t.slot[lzfIdx(hval)]
		prev := *slot - base - 1 // < 0: empty, or from an earlier call
		*slot = base + int64(ip) + 1
		// liblzf takes a candidate after the input's first byte (ref >
		// in_data) and less than 8 KiB back whose 3 bytes match.
		if prev > 0 && int64(ip)-prev-1 < lzfMaxOff &&
			in[prev+2] == in[ip+2] && in[prev] == in[ip] && in[prev+1] == in[ip+1] {
			ref := int(prev)
			off := ip - ref - 1
			length := 2
			maxlen := min(n-ip-length, lzfMaxRef)
			if op+3+1 >= outEnd && op-b2i(lit == 0)+3+1 >= outEnd {
				return nil
			}
			out[op-lit-1] = byte(lit - 1) // stop the literal run
			op -= b2i(lit == 0)           // undo it if empty
			if maxlen > 16 {
				// liblzf compares the next 16 bytes without checking
				// maxlen, which may take the match to the input's end.
				for length < 18 {
					length++
					if in[ref+length] != in[ip+length] {
						goto matched
					}
				}
			}
			for {
				length++
				if length >= maxlen || in[ref+length] != in[ip+length] {
					break
				}
			}
		matched:
			length -= 2 // the match is length+2 bytes
			ip++
			if length < 7 {
				out[op] = byte(off>>8 + length<<5)
				op++
			} else {
				out[op] = byte(off>>8 + 7<<5)
				out[op+1] = byte(length - 7)
				op += 2
			}
			out[op] = byte(off)
			op++
			lit = 0
			op++ // start a run
			ip += length + 1
			if ip >= n-2 {
				break
			}
			// VERY_FAST: hash the last two positions of the match.
			ip -= 2
			hval = uint32(in[ip])<<8 | uint32(in[ip+1])
			hval = hval<<8 | uint32(in[ip+2])
			t.slot[lzfIdx(hval)] = base + int64(ip) + 1
			ip++
			hval = hval<<8 | uint32(in[ip+2])
			t.slot[lzfIdx(hval)] = base + int64(ip) + 1
			ip++
			continue
		}
		if op >= outEnd {
			return nil
		}
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	if op+3 > outEnd {
		return nil
	}
	for ip < n {
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	out[op-lit-1] = byte(lit - 1)
	op -= b2i(lit == 0)
	return out[:op:op]
}

// lzfIdx is liblzf's hash of the 3 bytes in h's low 24 bits (VERY_FAST's
// IDX), a slot of the table.
func lzfIdx(h uint32) uint32 { return ((h >> (3*8 - lzfHLog)) - h*5) & (lzfHSize - 1) }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
