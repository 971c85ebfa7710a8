// Package rdb reads and writes the framing of Redis's RDB files and of
// DUMP/RESTORE payloads, for moving datasets between Redis (with
// RedisBloom) and bloomlab. It knows the container, not what RedisBloom
// puts in it: a module value is handed to the caller as its module type
// name, encoding version and a sequence of typed fields.
//
// The format follows Redis's rdb.h and rdb.c (RDB versions 10 to 12,
// written by Redis 7.0, 7.2, and 7.4 to 8.x):
//
//   - A file starts with "REDIS" and a four-digit version, and ends with
//     an EOF opcode (0xFF) and the CRC-64 of every byte before the
//     checksum, little-endian; a zero checksum means none was computed.
//   - Between them come opcodes (AUX fields, SELECTDB, RESIZEDB, expiry in
//     milliseconds or seconds, LRU idle time, LFU frequency, function
//     libraries, module AUX data) and keys: a type byte, the key as a
//     string, then the value.
//   - Lengths take one, two, five or nine bytes: the first byte's top two
//     bits say which (6 bits; 14 bits; a 32- or 64-bit big-endian number
//     after a marker byte), or mark a special string encoding: an 8-, 16-
//     or 32-bit little-endian integer written as its decimal text, or an
//     LZF-compressed string (compressed length, original length, data).
//   - A module value (type 7) starts with a 64-bit module id: nine 6-bit
//     characters of the type name (alphabet A-Z a-z 0-9 - _, the first
//     character in the highest bits) and a 10-bit encoding version. Then
//     come fields, each an opcode (1 signed, 2 unsigned integer, 3 float,
//     4 double, 5 string) and its value, and an EOF opcode (0).
//   - A DUMP payload is one value (type byte and value, no key), the RDB
//     version in two bytes and the CRC-64 of both in eight, little-endian.
//
// The CRC is CRC-64/Jones as Redis computes it: reflected, polynomial
// 0xad93d23594c935a9, starting from 0, with no final inversion (the check
// value of "123456789" is 0xe9c6d914c4b8d9ca).
//
// The reader treats its input as hostile: every length is checked against
// Limits before anything is allocated, a string's memory grows only as its
// bytes arrive, an LZF string's announced length must be one its
// compressed bytes can produce, and every LZF back reference is checked
// before it is copied. Malformed input is a *FormatError with the byte
// offset, a value of a type the package does not decode is an
// *UnsupportedTypeError naming the key and type (Reader.Skip passes over
// it where its encoding says where it ends), and nothing panics. The
// package is fuzzed (FuzzReader, FuzzDumpPayload, FuzzLZF).
//
// The writer frames values as Redis does (integer-looking strings as
// integers, strings over 20 bytes LZF-compressed when that saves at least
// 4 bytes and compression is on), and its LZF compressor follows liblzf's
// algorithm as Redis builds it, so that a value is byte for byte what
// Redis writes, compressed strings included (LZFCompress says the one
// caveat). A string field written through ModuleWriter.StringFunc over
// 64 MiB (or over 64 KiB with compression off) goes to the file raw, as
// it is produced, never held whole; ModuleValue.ReadStringTo reads one
// back in pieces, whatever its size, for about a MiB.
package rdb
