package rdb

import (
	"bytes"
	"encoding/hex"
	"io"
	"os"
	"testing"
)

// TestLZFRedisBytes: every LZF-compressed string of the recorded files
// (the RDB files and the DUMP payloads, written by Redis 7.0.15's liblzf)
// recompresses with LZFCompress, given Redis's bound (the length less 4),
// to exactly the bytes Redis wrote; and every string of the files that
// Redis stored raw although it was over 20 bytes is one LZFCompress
// refuses under the same bound.
func TestLZFRedisBytes(t *testing.T) {
	same, raw := 0, 0
	inFiles := 0
	check := func(where string, c, out []byte) {
		got := LZFCompress(out, len(out)-4)
		if !bytes.Equal(got, c) {
			t.Errorf("%s: a %d-byte string compressed by Redis to %d bytes, by LZFCompress to %d (first difference at %d)",
				where, len(out), len(c), len(got), firstDiff(got, c))
			return
		}
		same++
	}
	for _, name := range []string{"redisbloom-8.6.2", "redisbloom-2.4.23"} {
		raw0 := raw
		p, err := os.ReadFile("testdata/" + name + "-rdb.rdb")
		must(t, err)
		r, err := NewReader(bytes.NewReader(p), Limits{})
		must(t, err)
		r.in.lzfSeen = func(c, out []byte) { check(name+".rdb", c, out); inFiles++ }
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			must(t, err)
			if e.Module == nil {
				continue
			}
			for {
				op, err := e.Module.Next()
				must(t, err)
				if op == modEOF {
					must(t, e.Module.End())
					break
				}
				switch op {
				case modUint:
					_, err = e.Module.ReadUnsigned()
				case modSint:
					_, err = e.Module.ReadSigned()
				case modFloat:
					_, err = e.Module.ReadFloat()
				case modDouble:
					_, err = e.Module.ReadDouble()
				}
				must(t, err)
				if op != modString {
					continue
				}
				lzf := r.in.lzf
				s, err := e.Module.ReadString()
				must(t, err)
				if r.in.lzf == lzf && len(s) > 20 {
					if LZFCompress(s, len(s)-4) != nil {
						t.Errorf("%s: key %q: a %d-byte string Redis stored raw is compressed by LZFCompress", name, e.Key, len(s))
					}
					raw++
				}
			}
		}
		for _, k := range loadVectors(t, name).Keys {
			p, err := hex.DecodeString(k.Dump)
			must(t, err)
			v, err := ReadDump(p, Limits{})
			must(t, err)
			v.in.lzfSeen = func(c, out []byte) { check(name+" DUMP "+k.Key, c, out) }
			if v.Module != nil {
				readFields(t, v.Module)
			}
		}
		t.Logf("%s: %d raw strings over 20 bytes", name, raw-raw0)
	}
	t.Logf("%d LZF-compressed strings (%d in the RDB files, the rest in DUMP payloads) recompressed to Redis's bytes", same, inFiles)
	if inFiles < 20 || same < 40 || raw < 10 {
		t.Fatalf("only %d compressed strings compared (%d in the files), %d raw ones", same, inFiles, raw)
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
