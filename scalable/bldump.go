package scalable

import (
	"encoding/binary"
	"hash/crc32"
	"math"

	"github.com/bloomlab/bloomlab/hashing"
)

// bloomlab's own BF.SCANDUMP, for the chains of the bloomlab and blocked
// profiles, whose links RedisBloom cannot read: the same iterators and
// data chunks as RedisBloom's dump (each link's bits/8 bytes, oldest link
// first, bit j of a link in byte j/8 at bit j mod 8; iterator 1 + the
// byte offset), after a header chunk of its own, little-endian
// (56 + 48·L bytes):
//
//	offset size field
//	0      12   magic "BLOOMLAB-BF1"
//	12     1    hash scheme: 3 (bloomlab profile) or 1 (blocked profile)
//	13     3    zero
//	16     8    seed
//	24     4    expansion (≥ 1)
//	28     4    options: 0, or 8 (non-scaling)
//	32     8    ratio (float64, in (0, 1))
//	40     8    N: keys in the chain, the sum of the links' counts
//	48     4    L: links, 1 … 4096
//	52     48·L the links' records, oldest first: the six words of the
//	            file format's link record (encoding.go)
//	52+48·L 4   CRC-32C of the bytes before it
//
// The header carries everything the file format's does and is validated
// as strictly; its checksum makes a damaged header (a seed, a k, a size
// changed in transit) an error rather than a filter that answers "absent"
// for its keys. (The data chunks, as RedisBloom's, carry none.) RedisBloom's BF.LOADCHUNK refuses it ("received bad
// data"): it reads bytes 8–11, "-BF1", as its link count (826,426,925)
// and takes a header only if it is 20 + 53 times that many bytes long,
// about 43.8 GB, where this header has at most 196,664. So these bytes
// never become a RedisBloom filter by mistake, and a RedisBloom header
// (its first 12 bytes the chain's count and link count) is never taken
// for one of these: Loader tells them apart by the magic.

const (
	dumpMagic      = "BLOOMLAB-BF1"
	dumpHeaderBase = 52
	dumpHeaderLink = 8 * recordLen
	dumpHeaderCRC  = 4
)

// dumpHeaderLen is the length of bloomlab's dump header for nl links.
func dumpHeaderLen(nl uint64) uint64 { return dumpHeaderBase + dumpHeaderLink*nl + dumpHeaderCRC }

// appendDumpHeader appends the header of bloomlab's dump of the chain
// (its mutex held; not the RedisBloom profile).
func (f *Filter) appendDumpHeader(b []byte, ls []*link) []byte {
	b = append(b, dumpMagic...)
	b = append(b, uint8(f.profile.scheme()), 0, 0, 0)
	b = binary.LittleEndian.AppendUint64(b, f.seed)
	b = binary.LittleEndian.AppendUint32(b, f.growth)
	b = binary.LittleEndian.AppendUint32(b, f.options)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f.ratio))
	b = binary.LittleEndian.AppendUint64(b, f.card.Load())
	b = binary.LittleEndian.AppendUint32(b, uint32(len(ls)))
	start := len(b) - dumpHeaderBase
	for _, l := range ls {
		for _, w := range []uint64{l.bits, l.entries, l.size, math.Float64bits(l.errRate), math.Float64bits(l.bpe), uint64(l.k) | uint64(l.n2)<<32} {
			b = binary.LittleEndian.AppendUint64(b, w)
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoliTable))
}

var castagnoliTable = crc32.MakeTable(crc32.Castagnoli)

// isDumpHeader reports whether hdr begins as bloomlab's dump header.
func isDumpHeader(hdr []byte) bool {
	return len(hdr) >= len(dumpMagic) && string(hdr[:len(dumpMagic)]) == dumpMagic
}

// parseDumpHeader validates bloomlab's dump header and returns the chain
// it describes and its links without bits. Nothing is allocated before
// the header's length is known to match its link count but the links'
// descriptions.
func parseDumpHeader(b []byte) (*Filter, []*link, error) {
	if len(b) < dumpHeaderBase {
		return nil, nil, badDump("bloomlab dump header of %d bytes, want at least %d", len(b), dumpHeaderBase)
	}
	var p Profile
	switch hashing.Scheme(b[12]) {
	case hashing.Enhanced:
		p = Bloomlab
	case hashing.Independent:
		p = Blocked
	default:
		return nil, nil, badDump("bloomlab dump of hash scheme %d (want %d, bloomlab, or %d, blocked)", b[12], hashing.Enhanced, hashing.Independent)
	}
	if b[13] != 0 || b[14] != 0 || b[15] != 0 {
		return nil, nil, badDump("bloomlab dump header: reserved bytes set")
	}
	seed := binary.LittleEndian.Uint64(b[16:])
	growth := binary.LittleEndian.Uint32(b[24:])
	options := binary.LittleEndian.Uint32(b[28:])
	ratio := math.Float64frombits(binary.LittleEndian.Uint64(b[32:]))
	card := binary.LittleEndian.Uint64(b[40:])
	nl := binary.LittleEndian.Uint32(b[48:])
	if err := checkChain(p, growth, options, ratio); err != nil {
		return nil, nil, badDump("bloomlab dump header: %v", err)
	}
	switch {
	case nl < 1 || nl > maxLinks:
		return nil, nil, badDump("bloomlab dump header: %d links, want 1 … %d", nl, maxLinks)
	case uint64(len(b)) != dumpHeaderLen(uint64(nl)):
		return nil, nil, badDump("bloomlab dump header of %d bytes for %d links, want %d", len(b), nl, dumpHeaderLen(uint64(nl)))
	}
	body := b[:len(b)-dumpHeaderCRC]
	if got, want := crc32.Checksum(body, castagnoliTable), binary.LittleEndian.Uint32(b[len(body):]); got != want {
		return nil, nil, badDump("bloomlab dump header damaged: CRC-32C %#08x, its checksum says %#08x", got, want)
	}
	ls := make([]*link, nl)
	var rec [recordLen]uint64
	var sum uint64
	for i := range ls {
		for j := range rec {
			rec[j] = binary.LittleEndian.Uint64(b[dumpHeaderBase+dumpHeaderLink*i+8*j:])
		}
		if rec[5]>>32 > 0xff {
			return nil, nil, badDump("bloomlab dump header: link %d: reserved bits of word 5 set", i)
		}
		l, err := checkLink(p, rec[:])
		if err != nil {
			return nil, nil, badDump("bloomlab dump header: link %d: %v", i, err)
		}
		ls[i] = l
		var over bool
		if sum, over = addOverflow(sum, l.size); over {
			return nil, nil, badDump("bloomlab dump header: link counts overflow")
		}
	}
	if sum != card {
		return nil, nil, badDump("bloomlab dump header: N = %d, the links hold %d", card, sum)
	}
	f := &Filter{profile: p, seed: seed, growth: growth, ratio: ratio, options: options}
	f.card.Store(card)
	return f, ls, nil
}
