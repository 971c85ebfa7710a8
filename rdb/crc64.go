package rdb

import (
	"hash/crc64"
	"math/bits"
)

// jonesPoly is the CRC-64/Jones polynomial in its usual (MSB-first)
// notation; Redis computes the reflected CRC with it, from 0, with no
// final inversion.
const jonesPoly = 0xad93d23594c935a9

// Go's hash/crc64 takes the polynomial bit-reversed and inverts the CRC on
// the way in and out; crcUpdate undoes both inversions, which gives Redis's
// CRC (init 0, no final xor) with the standard library's tables.
var jonesTable = crc64.MakeTable(bits.Reverse64(jonesPoly))

// CRC64 returns Redis's CRC-64 of p (crc64(0, p, len) in Redis's terms).
func CRC64(p []byte) uint64 { return crcUpdate(0, p) }

// crcUpdate continues a Redis CRC-64 over p.
func crcUpdate(crc uint64, p []byte) uint64 {
	return ^crc64.Update(^crc, jonesTable, p)
}
