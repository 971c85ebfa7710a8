// Command rdbsizes lists the keys of a Redis RDB file with each value's
// bytes in the file and its largest LZF-compressed string: what a reader
// that streams plain strings but decompresses an LZF string from a whole
// buffer must hold at most (bench/rdbload.sh's goal counts it). It reads
// what RedisBloom's datasets hold: AUX fields, SELECTDB, RESIZEDB, expiry,
// idle and frequency opcodes, module AUX data, string values and module
// values (type 7); any other value type stops it with an error. It checks
// nothing a loader checks (the CRC-64 trailer is not verified): it is a
// measuring tool, not a reader; internal/rdb is the reader.
//
// Output, one line per key, then the totals:
//
//	key KEY TYPE FILE_BYTES LARGEST_LZF_COMPRESSED_BYTES
//	keys N
//	largest-value BYTES KEY
//	largest-lzf BYTES KEY
//
// Usage (from bench/): go run ./rdbsizes dump.rdb
package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

type scanner struct {
	r   *bufio.Reader
	off int64
	lzf int64 // the largest compressed string of the value being read
}

func (s *scanner) byte() (byte, error) {
	b, err := s.r.ReadByte()
	if err == nil {
		s.off++
	}
	return b, noEOF(err)
}

func (s *scanner) skip(n int64) error {
	k, err := s.r.Discard(int(n))
	s.off += int64(k)
	return noEOF(err)
}

func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// length reads a length; enc reports a special string encoding (its
// number in n).
func (s *scanner) length() (n uint64, enc bool, err error) {
	b, err := s.byte()
	if err != nil {
		return 0, false, err
	}
	switch b >> 6 {
	case 0:
		return uint64(b & 0x3f), false, nil
	case 1:
		c, err := s.byte()
		return uint64(b&0x3f)<<8 | uint64(c), false, err
	case 3:
		return uint64(b & 0x3f), true, nil
	}
	var p [8]byte
	switch b {
	case 0x80:
		if _, err := io.ReadFull(s.r, p[:4]); err != nil {
			return 0, false, noEOF(err)
		}
		s.off += 4
		return uint64(binary.BigEndian.Uint32(p[:4])), false, nil
	case 0x81:
		if _, err := io.ReadFull(s.r, p[:]); err != nil {
			return 0, false, noEOF(err)
		}
		s.off += 8
		return binary.BigEndian.Uint64(p[:]), false, nil
	}
	return 0, false, fmt.Errorf("at byte %d: invalid length encoding 0x%02x", s.off-1, b)
}

func (s *scanner) plainLength() (uint64, error) {
	n, enc, err := s.length()
	if err == nil && enc {
		err = fmt.Errorf("at byte %d: an encoded string where a length belongs", s.off)
	}
	return n, err
}

// str passes over a string, keeping it when keep (keys: short).
func (s *scanner) str(keep bool) ([]byte, error) {
	n, enc, err := s.length()
	if err != nil {
		return nil, err
	}
	if enc {
		switch n {
		case 0, 1, 2:
			return nil, s.skip(1 << n)
		case 3:
			c, err := s.plainLength()
			if err != nil {
				return nil, err
			}
			if _, err := s.plainLength(); err != nil {
				return nil, err
			}
			s.lzf = max(s.lzf, int64(c))
			return nil, s.skip(int64(c))
		}
		return nil, fmt.Errorf("at byte %d: unknown string encoding %d", s.off, n)
	}
	if keep && n <= 1<<20 {
		p := make([]byte, n)
		_, err := io.ReadFull(s.r, p)
		s.off += int64(n)
		return p, noEOF(err)
	}
	return nil, s.skip(int64(n))
}

// moduleFields passes over a module value's opcode-tagged fields through
// its EOF opcode.
func (s *scanner) moduleFields() error {
	for {
		op, err := s.plainLength()
		if err != nil {
			return err
		}
		switch op {
		case 0: // EOF
			return nil
		case 1, 2: // signed, unsigned
			_, err = s.plainLength()
		case 3: // float
			err = s.skip(4)
		case 4: // double
			err = s.skip(8)
		case 5: // string
			_, err = s.str(false)
		default:
			err = fmt.Errorf("at byte %d: unknown module opcode %d", s.off, op)
		}
		if err != nil {
			return err
		}
	}
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: rdbsizes dump.rdb")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "rdbsizes:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	s := &scanner{r: bufio.NewReaderSize(f, 1<<20)}
	var hdr [9]byte
	if _, err := io.ReadFull(s.r, hdr[:]); err != nil || string(hdr[:5]) != "REDIS" {
		return fmt.Errorf("%s: not an RDB file", path)
	}
	s.off = 9
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	var keys, bigVal, bigLZF int64
	var bigValKey, bigLZFKey string
	for {
		op, err := s.byte()
		if err != nil {
			return err
		}
		switch op {
		case 0xFF: // EOF
			fmt.Fprintf(w, "keys %d\nlargest-value %d %q\nlargest-lzf %d %q\n", keys, bigVal, bigValKey, bigLZF, bigLZFKey)
			return nil
		case 0xFA: // AUX
			if _, err = s.str(false); err == nil {
				_, err = s.str(false)
			}
		case 0xFB: // RESIZEDB
			if _, err = s.plainLength(); err == nil {
				_, err = s.plainLength()
			}
		case 0xFE: // SELECTDB
			_, err = s.plainLength()
		case 0xFC: // EXPIRETIME_MS
			err = s.skip(8)
		case 0xFD: // EXPIRETIME
			err = s.skip(4)
		case 0xF8: // IDLE
			_, err = s.plainLength()
		case 0xF9: // FREQ
			err = s.skip(1)
		case 0xF7: // MODULE_AUX: module id, when opcode, when, fields
			if _, err = s.plainLength(); err == nil {
				if _, err = s.plainLength(); err == nil {
					if _, err = s.plainLength(); err == nil {
						err = s.moduleFields()
					}
				}
			}
			s.lzf = 0
		case 0, 7: // a string or a module value
			var key []byte
			if key, err = s.str(true); err != nil {
				return err
			}
			start := s.off
			s.lzf = 0
			typ := "string"
			if op == 0 {
				_, err = s.str(false)
			} else {
				var id uint64
				if id, err = s.plainLength(); err == nil {
					typ = moduleName(id)
					err = s.moduleFields()
				}
			}
			if err != nil {
				return err
			}
			size := s.off - start
			keys++
			fmt.Fprintf(w, "key %q %s %d %d\n", key, typ, size, s.lzf)
			if size > bigVal {
				bigVal, bigValKey = size, string(key)
			}
			if s.lzf > bigLZF {
				bigLZF, bigLZFKey = s.lzf, string(key)
			}
		default:
			return fmt.Errorf("at byte %d: opcode or value type %d, which rdbsizes does not read", s.off-1, op)
		}
		if err != nil {
			return err
		}
	}
}

// moduleName decodes a module id's 9-character type name and encoding
// version (Redis's moduleTypeNameByID).
func moduleName(id uint64) string {
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	var name [9]byte
	for i := range name {
		name[8-i] = chars[(id>>(10+6*i))&63]
	}
	return fmt.Sprintf("%s/%d", name[:], id&1023)
}
