package dlcbf

// The reference implementation of the hot paths: the code of Add, Remove,
// Contains and Count as first written (one full decode of every bucket the
// key probes, one encode of the bucket it changes), kept as the oracle of
// TestFastPathsAgree. It shares only the primitives that define the layout
// (locate, fingerprint, getBits, setBits, matches, mix) with the package.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
)

func refAdd(f *Filter, dg hashing.Digest) error {
	if f.words == nil {
		return errZero("Add")
	}
	b, rr, z := f.fingerprint(dg)
	var cur, least bucket
	var leastPos, leastRho uint64
	bestLoad, ties := f.h, 0
	for i := 0; i < f.d; i++ {
		pos, rho := f.locate(i, b, rr, z)
		refDecode(f, pos, &cur)
		sameMin := false
		for j := 0; j < cur.n; j++ {
			if matches(cur.rho[j], cur.ln[j], rho) && cur.cnt[j] < f.cmax {
				cur.cnt[j]++
				refStore(f, pos, &cur, j)
				f.n++
				return nil
			}
			sameMin = sameMin || matches(cur.rho[j], uint8(f.r), rho)
		}
		// A bucket already holding the key's minimal remainder takes it
		// (002 §III-A); otherwise the least loaded, leftmost on ties
		// (TieHash: the t-th tied bucket replaces the choice with
		// probability 1/t, drawn from the digest).
		take := cur.n < f.h && (sameMin && bestLoad >= 0 || cur.n < bestLoad)
		if cur.n < bestLoad {
			ties = 1
		} else if cur.n == bestLoad && cur.n < f.h && f.cfg.Ties == TieHash && !take {
			ties++
			take = hashing.Reduce(mix(dg.H1^dg.H2, uint64(ties)), uint64(ties)) == 0
		}
		if take {
			least, leastPos, leastRho = cur, pos, rho
			bestLoad = cur.n
			if sameMin {
				bestLoad = -1 // keep it
			}
		}
	}
	if bestLoad == f.h {
		return fmt.Errorf("dlcbf: all %d buckets of the key hold %d cells: %w", f.d, f.h, ErrFull)
	}
	if f.cfg.Variant == Static {
		j := least.n
		least.rho[j], least.cnt[j], least.slot[j] = leastRho&lowMask(f.r), 1, int8(least.free)
		refStore(f, leastPos, &least, j)
	} else {
		refInsert(f, &least, leastRho)
		refEncode(f, leastPos, &least)
	}
	f.n++
	return nil
}

func refRemove(f *Filter, dg hashing.Digest) error {
	if f.words == nil {
		return errZero("Remove")
	}
	b, rr, z := f.fingerprint(dg)
	var cur, best bucket
	bestJ, bestLn := -1, -1
	var bestPos uint64
	for i := 0; i < f.d; i++ {
		pos, rho := f.locate(i, b, rr, z)
		if !refScan(f, pos, rho, nil) {
			continue
		}
		refDecode(f, pos, &cur)
		found := false
		for j := 0; j < cur.n; j++ {
			if int(cur.ln[j]) > bestLn && matches(cur.rho[j], cur.ln[j], rho) {
				bestJ, bestLn, bestPos, found = j, int(cur.ln[j]), pos, true
			}
		}
		if found {
			best = cur
		}
	}
	if bestJ < 0 {
		return ErrNotPresent
	}
	bk := &best
	if bk.cnt[bestJ] > 1 || f.cfg.Variant == Static {
		bk.cnt[bestJ]-- // Static: counter 0 frees the cell
		if f.cfg.Variant == Static && bk.cnt[bestJ] == 0 {
			bk.rho[bestJ] = 0
		}
		refStore(f, bestPos, bk, bestJ)
		f.n--
		return nil
	}
	copy(bk.rho[bestJ:bk.n], bk.rho[bestJ+1:bk.n])
	copy(bk.ln[bestJ:bk.n], bk.ln[bestJ+1:bk.n])
	copy(bk.cnt[bestJ:bk.n], bk.cnt[bestJ+1:bk.n])
	bk.n--
	refEncode(f, bestPos, bk)
	f.n--
	return nil
}

func refContains(f *Filter, dg hashing.Digest) bool {
	b, rr, z := f.fingerprint(dg)
	for i := 0; i < f.d; i++ {
		pos, rho := f.locate(i, b, rr, z)
		if refScan(f, pos, rho, nil) {
			return true
		}
	}
	return false
}

func refCount(f *Filter, dg hashing.Digest) uint64 {
	b, rr, z := f.fingerprint(dg)
	var sum uint64
	for i := 0; i < f.d; i++ {
		pos, rho := f.locate(i, b, rr, z)
		refScan(f, pos, rho, &sum)
	}
	return sum
}

func refScan(f *Filter, pos, x uint64, sum *uint64) bool {
	w, c := f.words, f.c
	found := false
	switch f.cfg.Variant {
	case Static:
		cw := f.r + c
		want := (x & lowMask(f.r)) << c
		cm := lowMask(c)
		for j := 0; j < f.h; j++ {
			v := getBits(w, pos, cw)
			if v&^cm == want && v&cm != 0 {
				if sum == nil {
					return true
				}
				*sum += v & cm
				found = true
			}
			pos += uint64(cw)
		}
	case Dynamic:
		hd := getBits(w, pos, dynHeader)
		load, m, z := int(hd&15), int(hd>>4&15), int(hd>>8&15)
		if load == 0 {
			return false
		}
		cw := uint(f.width[m])
		lo, hi := 0, z
		if x&1 != 0 {
			lo, hi = z, load
		}
		want := ((x >> 1) & lowMask(cw-c)) << c
		cm := lowMask(c)
		p := pos + dynHeader + uint64(lo)*uint64(cw)
		for j := lo; j < hi; j++ {
			v := getBits(w, p, cw)
			if v&^cm == want {
				if sum == nil {
					return true
				}
				*sum += v&cm + 1
				found = true
			}
			p += uint64(cw)
		}
	case TwoSizes:
		hd := getBits(w, pos, twoHeader)
		a, b, s, t := int(hd&15), int(hd>>4&15), uint(hd>>8&127), uint(hd>>15&127)
		cm := lowMask(c)
		p := pos + twoHeader
		cw := s
		for j := 0; j < a+b; j++ {
			if j == a {
				cw = t
			}
			v := getBits(w, p, cw)
			if v&^cm == (x&lowMask(cw-c))<<c {
				if sum == nil {
					return true
				}
				*sum += v&cm + 1
				found = true
			}
			p += uint64(cw)
		}
	}
	return found
}

func refDecode(f *Filter, pos uint64, bk *bucket) {
	w, c := f.words, f.c
	bk.n = 0
	switch f.cfg.Variant {
	case Static:
		cw := f.r + c
		bk.free = -1
		for j := 0; j < f.h; j++ {
			x := getBits(w, pos+uint64(j)*uint64(cw), cw)
			if x&lowMask(c) != 0 {
				bk.rho[bk.n], bk.ln[bk.n], bk.cnt[bk.n], bk.slot[bk.n] = x>>c, uint8(f.r), x&lowMask(c), int8(j)
				bk.n++
			} else if bk.free < 0 {
				bk.free = j
			}
		}
	case Dynamic:
		hd := getBits(w, pos, dynHeader)
		load, m, z := int(hd&15), int(hd>>4&15), int(hd>>8&15)
		bk.maxLoad = m
		if load == 0 {
			return
		}
		cw := uint(f.width[m])
		p := pos + dynHeader
		for j := 0; j < load; j++ {
			x := getBits(w, p, cw)
			var b0 uint64
			if j >= z {
				b0 = 1
			}
			bk.rho[j], bk.ln[j], bk.cnt[j] = (x>>c)<<1|b0, uint8(cw-c+1), x&lowMask(c)+1
			p += uint64(cw)
		}
		bk.n = load
	case TwoSizes:
		hd := getBits(w, pos, twoHeader)
		a, b, s, t := int(hd&15), int(hd>>4&15), uint(hd>>8&127), uint(hd>>15&127)
		p := pos + twoHeader
		for j := 0; j < a+b; j++ {
			cw := t
			if j < a {
				cw = s
			}
			x := getBits(w, p, cw)
			bk.rho[j], bk.ln[j], bk.cnt[j] = x>>c, uint8(cw-c), x&lowMask(c)+1
			p += uint64(cw)
		}
		bk.n = a + b
	}
}

func refEncode(f *Filter, pos uint64, bk *bucket) {
	w, c := f.words, f.c
	switch f.cfg.Variant {
	case Static:
		cw := f.r + c
		for j := 0; j < f.h; j++ {
			var x uint64
			if j < bk.n {
				x = bk.rho[j]<<c | bk.cnt[j]
			}
			setBits(w, pos+uint64(j)*uint64(cw), cw, x)
		}
	case Dynamic:
		m := bk.maxLoad
		z := 0
		p := pos + dynHeader
		cw := uint(0)
		if m > 0 {
			cw = uint(f.width[m])
		}
		// Semi-sort: remainders whose first bit is 0, then the others.
		for pass := uint64(0); pass < 2; pass++ {
			for j := 0; j < bk.n; j++ {
				if bk.rho[j]&1 != pass {
					continue
				}
				if pass == 0 {
					z++
				}
				setBits(w, p, cw, (bk.rho[j]>>1)<<c|(bk.cnt[j]-1))
				p += uint64(cw)
			}
		}
		refClearBits(w, p, pos+f.bbits)
		setBits(w, pos, dynHeader, uint64(bk.n)|uint64(m)<<4|uint64(z)<<8)
	case TwoSizes:
		a, s, t := 0, uint(0), uint(0)
		for j := 0; j < bk.n; j++ {
			cw := uint(bk.ln[j]) + c
			if j == 0 || cw == s {
				a++
				s = cw
			} else {
				t = cw
			}
		}
		if t == 0 { // one size: it is the long one
			a, s, t = 0, 0, s
		}
		p := pos + twoHeader
		for j := 0; j < bk.n; j++ {
			cw := uint(bk.ln[j]) + c
			setBits(w, p, cw, (bk.rho[j]&lowMask(uint(bk.ln[j])))<<c|(bk.cnt[j]-1))
			p += uint64(cw)
		}
		refClearBits(w, p, pos+f.bbits)
		setBits(w, pos, twoHeader, uint64(a)|uint64(bk.n-a)<<4|uint64(s)<<8|uint64(t)<<15)
	}
}

func refStore(f *Filter, pos uint64, bk *bucket, j int) {
	if f.cfg.Variant != Static {
		refEncode(f, pos, bk)
		return
	}
	cw := f.r + f.c
	setBits(f.words, pos+uint64(bk.slot[j])*uint64(cw), cw, bk.rho[j]<<f.c|bk.cnt[j])
}

func refInsert(f *Filter, bk *bucket, x uint64) {
	j := bk.n
	bk.n++
	bk.rho[j], bk.cnt[j] = x, 1
	switch f.cfg.Variant {
	case Static:
		bk.ln[j] = uint8(f.r)
	case Dynamic:
		if bk.n > bk.maxLoad {
			bk.maxLoad = bk.n
		}
		ln := f.width[bk.maxLoad] - uint8(f.c) + 1
		for i := 0; i < bk.n; i++ {
			bk.ln[i] = ln
			bk.rho[i] &= lowMask(uint(ln))
		}
	case TwoSizes:
		refInsertTwo(f, bk)
	}
}

func refInsertTwo(f *Filter, bk *bucket) {
	c := int(f.c)
	R := int(f.area)
	n := bk.n
	// Old cells: widths s (a cells) < t (b cells), ordered short first;
	// with one width, a = 0.
	a, b, s, t := 0, 0, 0, 0
	for j := 0; j < n-1; j++ {
		w := int(bk.ln[j]) + c
		switch {
		case t == 0 || w == t:
			t = w
			b++
		case w > t: // the cells so far were the short ones
			a, s, t, b = a+b, t, w, 1
		default:
			s = w
			a++
		}
	}
	used := a*s + b*t
	free := R - used
	fair := R / n // what a new cell is owed
	var nw int
	switch {
	case a == 0 && free >= t: // one width: the new cell may be longer
		nw = min(free, maxWidth)
	case a > 0 && free >= t: // two widths: join the long cells
		nw = t
	default:
		// Not enough room for a long cell: shrink the long cells (never
		// below the short ones) so that they and the new one share the
		// bits left by the short cells.
		tt := (R - a*s) / (b + 1)
		if a > 0 && tt >= s {
			for j := a; j < n-1; j++ {
				refTruncate(f, bk, j, tt-c)
			}
			nw = tt
			break
		}
		// Collapse: every old cell to ⌊R/n⌋, the new one takes the rest.
		for j := 0; j < n-1; j++ {
			if int(bk.ln[j])+c > fair {
				refTruncate(f, bk, j, fair-c)
			}
		}
		used = 0
		for j := 0; j < n-1; j++ {
			used += int(bk.ln[j]) + c
		}
		nw = min(R-used, maxWidth)
	}
	bk.ln[n-1] = uint8(nw - c)
	bk.rho[n-1] &= lowMask(uint(nw - c))
	refSortTwo(bk)
}

func refTruncate(f *Filter, bk *bucket, j, ln int) {
	bk.ln[j] = uint8(ln)
	bk.rho[j] &= lowMask(uint(ln))
}

func refSortTwo(bk *bucket) {
	for i := 1; i < bk.n; i++ {
		for j := i; j > 0 && bk.ln[j] < bk.ln[j-1]; j-- {
			bk.rho[j], bk.rho[j-1] = bk.rho[j-1], bk.rho[j]
			bk.ln[j], bk.ln[j-1] = bk.ln[j-1], bk.ln[j]
			bk.cnt[j], bk.cnt[j-1] = bk.cnt[j-1], bk.cnt[j]
		}
	}
}

func refClearBits(w []uint64, from, to uint64) {
	for from < to {
		n := min(to-from, 64)
		setBits(w, from, uint(n), 0)
		from += n
	}
}

// agreeConfigs are the configurations TestFastPathsAgree runs: the 002
// §III-C design point of each variant with both tie rules, and random small
// ones (few buckets, so that buckets fill and overflow, and counters,
// remainders and dynamic widths of every size, 1 to 64 bits).
func agreeConfigs(rng *rand.Rand, random int) []Config {
	var cs []Config
	for _, v := range variants {
		for _, tie := range []Tie{TieLeft, TieHash} {
			c := paperConfig(v)
			c.Ties = tie
			cs = append(cs, c)
		}
	}
	for len(cs) < 6+random {
		v := variants[rng.IntN(3)]
		c := Config{Variant: v, Subtables: 1 + rng.IntN(MaxSubtables), Buckets: uint64(1 + rng.IntN(12)),
			Cells: 1 + rng.IntN(MaxCells), RemainderBits: 1 + rng.IntN(MaxRemainder), CounterBits: rng.IntN(MaxCounter + 1),
			Ties: Tie(rng.IntN(2)), Seed: rng.Uint64()}
		if v != Static && rng.IntN(4) == 0 {
			c.CounterBits = NoCounter
		}
		if v != Static && rng.IntN(2) == 0 {
			c.BucketBits = c.Cells * (c.RemainderBits + max(c.CounterBits, 0)) * (1 + rng.IntN(8)) / (1 + rng.IntN(4))
		}
		if _, err := New(c); err == nil {
			cs = append(cs, c)
		}
	}
	return cs
}

// TestFastPathsAgree runs random sequences of Add, Remove, Contains and
// Count on a filter and on a twin driven by the reference implementation
// (refAdd, …): every call must return the same and leave the same bits.
// Keys are drawn so that many share a true fingerprint (and prefixes of the
// extra bits), which exercises counters, the minimal-remainder rule and
// the longest-match rule of Remove.
func TestFastPathsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	random, steps := 300, 3000
	if testing.Short() {
		random, steps = 60, 1500
	}
	for ci, cfg := range agreeConfigs(rng, random) {
		f, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		g, _ := New(cfg)
		var keys []hashing.Digest // added keys (with repeats), some removed since
		key := func() hashing.Digest {
			switch k := rng.IntN(8); {
			case k < 3 && len(keys) > 0: // a key added before
				return keys[rng.IntN(len(keys))]
			case k < 6 && len(keys) > 0: // same true fingerprint, other extra bits
				dg := keys[rng.IntN(len(keys))]
				sh := uint(rng.IntN(64))
				dg.H2 ^= (rng.Uint64() << sh) &^ (1<<f.r - 1)
				return dg
			}
			return hashing.Digest{H1: rng.Uint64(), H2: rng.Uint64()}
		}
		n := steps
		if cfg.Buckets > 100 {
			n = 4 * steps
		}
		for s := 0; s < n; s++ {
			var op string
			var a, b any
			switch k := rng.IntN(10); {
			case k < 5:
				dg := key()
				op, a, b = "Add", f.AddHash(dg), refAdd(g, dg)
				if a == nil {
					keys = append(keys, dg)
				}
			case k < 8:
				dg := key()
				if len(keys) > 0 && rng.IntN(4) > 0 {
					i := rng.IntN(len(keys))
					dg = keys[i]
					keys[i] = keys[len(keys)-1]
					keys = keys[:len(keys)-1]
				}
				op, a, b = "Remove", f.RemoveHash(dg), refRemove(g, dg)
			case k < 9:
				dg := key()
				op, a, b = "Contains", f.ContainsHash(dg), refContains(g, dg)
			default:
				dg := key()
				op, a, b = "Count", f.CountHash(dg), refCount(g, dg)
			}
			if ea, ok := a.(error); ok {
				eb, _ := b.(error)
				if eb == nil || ea.Error() != eb.Error() {
					t.Fatalf("config %d %+v step %d: %s returned %v, reference %v", ci, cfg, s, op, a, b)
				}
			} else if a != b {
				t.Fatalf("config %d %+v step %d: %s returned %v, reference %v", ci, cfg, s, op, a, b)
			}
			if f.n != g.n || !slices.Equal(f.words, g.words) {
				t.Fatalf("config %d %+v step %d: %s left different bits", ci, cfg, s, op)
			}
		}
		if err := f.validate(); err != nil {
			t.Fatalf("config %d %+v: %v", ci, cfg, err)
		}
	}
}
