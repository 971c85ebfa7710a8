package rdb

import "errors"

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
	lzfMaxLit = 32          // longest literal run
	lzfMaxOff = 1 << 13     // farthest back reference
	lzfMaxRef = 7 + 255 + 2 // longest back reference
	lzfHBits  = 14          // hash table of 3-byte prefixes
)

// LZFCompress compresses in with LZF and returns the result, or nil when
// the result would be longer than max bytes (as Redis, which stores a
// string raw unless compression saves something). Any output decodes with
// LZFDecompress to in; it is not byte-for-byte what Redis's liblzf writes.
func LZFCompress(in []byte, max int) []byte {
	if len(in) == 0 || max <= 0 {
		return nil
	}
	var table [1 << lzfHBits]int32 // position+1 of the last prefix seen
	out := make([]byte, 0, min(max, len(in)+len(in)/32+1))
	litStart := 0 // start of the pending literals
	flushLits := func(end int) bool {
		for litStart < end {
			run := min(end-litStart, lzfMaxLit)
			if len(out)+1+run > max {
				return false
			}
			out = append(out, byte(run-1))
			out = append(out, in[litStart:litStart+run]...)
			litStart += run
		}
		return true
	}
	ip := 0
	for ip+2 < len(in) {
		h := (uint32(in[ip])<<16 | uint32(in[ip+1])<<8 | uint32(in[ip+2])) * 2654435761 >> (32 - lzfHBits)
		cand := int(table[h]) - 1
		table[h] = int32(ip + 1)
		if cand >= 0 && ip-cand <= lzfMaxOff && in[cand] == in[ip] && in[cand+1] == in[ip+1] && in[cand+2] == in[ip+2] {
			length := 3
			for length < lzfMaxRef && ip+length < len(in) && in[cand+length] == in[ip+length] {
				length++
			}
			if !flushLits(ip) {
				return nil
			}
			back := ip - cand - 1
			l := length - 2
			if l < 7 {
				out = append(out, byte(l<<5|back>>8), byte(back))
			} else {
				out = append(out, byte(7<<5|back>>8), byte(l-7), byte(back))
			}
			if len(out) > max {
				return nil
			}
			ip += length
			litStart = ip
			continue
		}
		ip++
	}
	if !flushLits(len(in)) {
		return nil
	}
	return out
}
