package counting

import "math/bits"

// tally counts the saturated counters and sums all counters of a payload
// as the decoder reads it (format.Decoder.WordsFunc), chunk by chunk while
// the chunk is in cache: what countSaturated and the counter by counter
// sum give (TestTallyAgrees), without a second pass over memory and a word
// at a time (one function per counter width, whose masks and shifts are
// constants; the default width, 4, has the tightest loop: 16 instructions
// a word on amd64).
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
// as the fields whose w bits are all set (x & x>>1 & … , as layout.full),
// tally4 only in a chunk where some pair of fields sums to 15 or more.

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
	const (
		low3   = 0x7777777777777777 // the low 3 bits of every field
		one    = 0x1111111111111111 // 1 in every field
		eights = 0x8888888888888888 // the top bit of every field
	)
	sum, high := sum4(w, even3, 0x7171717171717171)
	if high&0x8080808080808080 != 0 {
		// Some pair of fields sums to 15 or more: count the fields of
		// 15, whose low 3 bits, plus 1, carry into their top bit.
		for _, x := range w {
			sat += uint64(bits.OnesCount64((x&low3 + one) & x & eights))
		}
	}
	return sat, sum
}

// sum4 returns the sum of the 4-bit fields of w and, ORed over w, the
// pairs of fields (byte lanes x&m + x>>4&m, at most 30) plus 0x71 in every
// byte, whose top bit is set iff a pair sums to 15 or more, as it must
// where a field is saturated. It is kept out of line so that its masks
// stay in registers (inlined, or with the masks as constants, the loop
// spills or rebuilds them).
//
//go:noinline
func sum4(w []uint64, m, c71 uint64) (sum, high uint64) {
	// Byte lanes gain at most 2·15 a word: acc holds 8 words; widened to
	// 16 bits, acc16 holds 128 such blocks.
	for len(w) >= 8 {
		var acc16 uint64
		for k := 0; k < 128 && len(w) >= 8; k++ {
			// Written out, word by word: a loop over the 8 words costs
			// a third more.
			b := (*[8]uint64)(w)
			p := b[0]&m + b[0]>>4&m
			acc := p
			high |= p + c71
			p = b[1]&m + b[1]>>4&m
			acc += p
			high |= p + c71
			p = b[2]&m + b[2]>>4&m
			acc += p
			high |= p + c71
			p = b[3]&m + b[3]>>4&m
			acc += p
			high |= p + c71
			p = b[4]&m + b[4]>>4&m
			acc += p
			high |= p + c71
			p = b[5]&m + b[5]>>4&m
			acc += p
			high |= p + c71
			p = b[6]&m + b[6]>>4&m
			acc += p
			high |= p + c71
			p = b[7]&m + b[7]>>4&m
			acc += p
			high |= p + c71
			acc16 += acc&even4 + acc>>8&even4
			w = w[8:]
		}
		sum += sum16(acc16)
	}
	var acc uint64
	for _, x := range w {
		p := pairs4(x, m)
		acc += p
		high |= p + c71
	}
	return sum + sum8(acc), high
}

// pairs4 returns the fields of x added in pairs: byte lanes x&m + x>>4&m.
func pairs4(x, m uint64) uint64 { return x&m + x>>4&m }

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
