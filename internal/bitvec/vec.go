// Package bitvec is the machinery the filters whose state is an array of
// bits share (bloom, blocked, choices), and the probe sequence every filter
// that indexes with double hashing walks (bloom, counting, choices):
//
//   - Vec, a bit array of 64-bit words with its housekeeping (Ones, OnesIn,
//     Or, And, Clear, Clone, Equal, Encode, TailClear). Every method that
//     reads uses atomic loads, so it may run beside SetAtomic in other
//     goroutines (the Concurrency paragraphs of bloom and blocked); on
//     amd64 and arm64 an atomic load is an ordinary load.
//   - Probe, the k positions of one key under a double-hashing scheme
//     (hashing.Double, Enhanced, ExtendedSquare, ExtendedCube), each one
//     computed independently as ModSmall(a + i·b + f(i), m): no division,
//     no branch and no interface call per probe.
//   - Vec.SetKey, SetKeyAtomic and HasKey: a standard filter's insert and
//     query, the hot loops of bloom.Filter and of each group of a
//     choices.Filter.
//
// Nothing here allocates except New and Clone. The helpers the hot loops
// rely on being inlined are pinned by TestInlining.
package bitvec

import (
	"math/bits"
	"sync/atomic"

	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/hugepage"
)

// Vec is an array of bits, bit i being bit i mod 64 of word i/64. A Vec of
// m bits has Words(m) words; bits past m are zero.
type Vec []uint64

// Words returns the number of words holding m bits: ⌈m/64⌉.
func Words(m uint64) uint64 { return (m + 63) / 64 }

// New returns a Vec of m bits, all zero. The caller bounds m.
func New(m uint64) Vec { return hugepage.Words(Words(m)) }

// Set sets bit p. It must not run concurrently with anything else.
func (v Vec) Set(p uint64) { v[p>>6] |= 1 << (p & 63) }

// SetAtomic sets bit p; it may run concurrently with SetAtomic and with
// every read method. A bit already set is not written again, so a filter
// that stops changing stops taking its cache lines exclusive.
func (v Vec) SetAtomic(p uint64) {
	w, bit := &v[p>>6], uint64(1)<<(p&63)
	if atomic.LoadUint64(w)&bit == 0 {
		atomic.OrUint64(w, bit)
	}
}

// Has reports whether bit p is set.
func (v Vec) Has(p uint64) bool { return atomic.LoadUint64(&v[p>>6])&(1<<(p&63)) != 0 }

// Load returns word i.
func (v Vec) Load(i uint64) uint64 { return atomic.LoadUint64(&v[i]) }

// Ones returns the number of bits set.
func (v Vec) Ones() uint64 {
	var c uint64
	for i := range v {
		c += uint64(bits.OnesCount64(atomic.LoadUint64(&v[i])))
	}
	return c
}

// OnesIn returns the number of bits set in [lo, hi).
func (v Vec) OnesIn(lo, hi uint64) uint64 {
	var c uint64
	for lo < hi {
		w := atomic.LoadUint64(&v[lo>>6]) >> (lo & 63)
		n := min(64-(lo&63), hi-lo)
		if n < 64 {
			w &= 1<<n - 1
		}
		c += uint64(bits.OnesCount64(w))
		lo += n
	}
	return c
}

// Or sets v to v | u, reading u atomically (u may be taking SetAtomic
// calls; v must not be). len(u) must be len(v).
func (v Vec) Or(u Vec) {
	u = u[:len(v)]
	for i := range v {
		v[i] |= atomic.LoadUint64(&u[i])
	}
}

// And sets v to v & u, reading u atomically. len(u) must be len(v).
func (v Vec) And(u Vec) {
	u = u[:len(v)]
	for i := range v {
		v[i] &= atomic.LoadUint64(&u[i])
	}
}

// Clear sets every bit to zero.
func (v Vec) Clear() { clear(v) }

// Clone returns a copy of v made of atomically loaded words: every bit set
// before Clone was called is set in the copy.
func (v Vec) Clone() Vec {
	if v == nil {
		return nil
	}
	c := make(Vec, len(v))
	for i := range v {
		c[i] = atomic.LoadUint64(&v[i])
	}
	return c
}

// Equal reports whether v and u hold the same words.
func (v Vec) Equal(u Vec) bool {
	if len(v) != len(u) {
		return false
	}
	for i := range v {
		if atomic.LoadUint64(&v[i]) != atomic.LoadUint64(&u[i]) {
			return false
		}
	}
	return true
}

// TailClear reports whether no bit at or past m is set (a decoder's check
// that a file's payload holds exactly m bits). len(v) must be Words(m).
func (v Vec) TailClear(m uint64) bool {
	tail := m & 63
	return tail == 0 || len(v) == 0 || v[len(v)-1]>>tail == 0
}

// encodeChunk is the number of words Encode loads before it writes them.
const encodeChunk = 256

// Encode writes v as file payload through e, from atomically loaded words,
// so that it may run beside SetAtomic: every bit set before Encode was
// called is in the output. It allocates nothing beyond e's own buffer.
func (v Vec) Encode(e *format.Encoder) {
	var buf [encodeChunk]uint64
	for len(v) > 0 {
		n := min(len(v), encodeChunk)
		for i := range buf[:n] {
			buf[i] = atomic.LoadUint64(&v[i])
		}
		e.Words(buf[:n])
		v = v[n:]
	}
}
