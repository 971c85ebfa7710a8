package counting

import "math/bits"

// tally counts the saturated counters and sums all counters of a payload
// as the decoder reads it (format.Decoder.WordsFunc), chunk by chunk while
// the chunk is in cache: what countSaturated and the counter by counter
// sum give (TestTallyAgrees), without a second pass over memory and a word
// at a time (one function per counter width, whose masks and shifts are
// constants).
type tally struct {
	lay layout
	sat uint64 // saturated counters
	sum uint64 // the sum of the counters, mod 2^64
}

// each is the format.Decoder.WordsFunc callback.
func (t *tally) each(w []uint64, from int) {
	var sat, sum uint64
	switch t.lay.w {
	case 2:
		sat, sum = tally2(w[from:])
	case 4:
		sat, sum = tally4(w[from:])
	case 8:
		sat, sum = tally8(w[from:])
	case 16:
		sat, sum = tally16(w[from:])
	case 32:
		sat, sum = tally32(w[from:])
	}
	t.sat += sat
	t.sum += sum
}

// Lanes: the even fields of 2^i bits (fields 0, 2, 4, … from bit 0).
const (
	even1 = 0x5555555555555555
	even2 = 0x3333333333333333
	even3 = 0x0f0f0f0f0f0f0f0f
	even4 = 0x00ff00ff00ff00ff
	even5 = 0x0000ffff0000ffff
	even6 = 0x00000000ffffffff
)

// Each tallyW sums the counters of a word by adding pairs of neighbouring
// fields into lanes twice as wide (x&even + x>>w&even), which an
// accumulator adds up over as many words as its lanes hold without
// overflow, then sums across (sum8, sum16); it finds the saturated counters
// as the fields whose w bits are all set (x & x>>1 & … , as layout.full).

func tally2(w []uint64) (sat, sum uint64) {
	for len(w) > 0 {
		c := min(len(w), 21) // byte lanes gain at most 4·3 per word
		var acc uint64
		for _, x := range w[:c] {
			y := x&even2 + x>>2&even2
			acc += y&even3 + y>>4&even3
			sat += uint64(bits.OnesCount64(x & (x >> 1) & even1))
		}
		sum += sum8(acc)
		w = w[c:]
	}
	return sat, sum
}

func tally4(w []uint64) (sat, sum uint64) {
	// Masks from variables, not constants, so that the compiler keeps
	// them in registers instead of rebuilding them for every word.
	m, low3, one := masks4[0], masks4[1], masks4[2]
	// Blocks of 8 words, written out. The byte lanes of a block's pairs
	// hold at most 8·2·15 = 240; acc16, their 16-bit widening, adds up
	// 136 blocks before a lane could overflow. Saturated counters are
	// rare: the sum across lanes is skipped for a block that has none.
	var acc16 uint64
	nb := 0
	i := 0
	for ; i+8 <= len(w); i += 8 {
		b := (*[8]uint64)(w[i : i+8])
		a0, f0 := word4(b[0], m, low3, one)
		a1, f1 := word4(b[1], m, low3, one)
		a2, f2 := word4(b[2], m, low3, one)
		a3, f3 := word4(b[3], m, low3, one)
		a4, f4 := word4(b[4], m, low3, one)
		a5, f5 := word4(b[5], m, low3, one)
		a6, f6 := word4(b[6], m, low3, one)
		a7, f7 := word4(b[7], m, low3, one)
		acc := a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7
		acc16 += acc&even4 + acc>>8&even4
		if full := f0 + f1 + f2 + f3 + f4 + f5 + f6 + f7; full != 0 {
			sat += sum8(full&m + full>>4&m) // fields of at most 8
		}
		if nb++; nb == 136 {
			sum += sum16(acc16)
			acc16, nb = 0, 0
		}
	}
	for _, x := range w[i:] {
		a, f := word4(x, m, low3, one)
		sum += sum8(a)
		sat += uint64(bits.OnesCount64(f))
	}
	return sat, sum + sum16(acc16)
}

// word4 returns the 4-bit fields of x added in pairs (byte lanes) and its
// saturated fields (1 at bit 0 of each): (x & low3) + 1 carries into bit
// 3 of a field iff its low 3 bits are set; with bit 3 set, the field is 15.
func word4(x, m, low3, one uint64) (pairs, full uint64) {
	return x&m + x>>4&m, ((x&low3 + one) & x) >> 3 & one
}

// masks4 are tally4's masks: even fields, the low 3 bits of every field, 1
// in every field.
var masks4 = [3]uint64{even3, 0x7777777777777777, 0x1111111111111111}

func tally8(w []uint64) (sat, sum uint64) {
	for len(w) > 0 {
		c := min(len(w), 128) // 16-bit lanes gain at most 2·255 per word
		var acc uint64
		for _, x := range w[:c] {
			acc += x&even4 + x>>8&even4
			y := x & (x >> 1)
			y &= y >> 2
			sat += uint64(bits.OnesCount64(y & (y >> 4) & 0x0101010101010101))
		}
		sum += sum16(acc)
		w = w[c:]
	}
	return sat, sum
}

func tally16(w []uint64) (sat, sum uint64) {
	for len(w) > 0 {
		c := min(len(w), 1<<15) // 32-bit lanes gain at most 2·65535 per word
		var acc uint64
		for _, x := range w[:c] {
			acc += x&even5 + x>>16&even5
			y := x & (x >> 1)
			y &= y >> 2
			y &= y >> 4
			sat += uint64(bits.OnesCount64(y & (y >> 8) & 0x0001000100010001))
		}
		sum += acc&even6 + acc>>32
		w = w[c:]
	}
	return sat, sum
}

func tally32(w []uint64) (sat, sum uint64) {
	for _, x := range w {
		sum += x&even6 + x>>32 // mod 2^64, as the sum is defined
		// A field of 2^32 − 1, plus 1, carries into bit 32.
		sat += (x&even6+1)>>32 + (x>>32+1)>>32
	}
	return sat, sum
}

// sum8 returns the sum of the byte lanes of x.
func sum8(x uint64) uint64 { return sum16(x&even4 + x>>8&even4) }

// sum16 returns the sum of the 16-bit lanes of x.
func sum16(x uint64) uint64 {
	x = x&even5 + x>>16&even5
	return x&even6 + x>>32
}
