package countmin

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/bloomlab/bloomlab/rdb"
)

// RDBTypeName and RDBEncVer are the module type name and the encoding
// version of the value in a Redis RDB file or DUMP payload: RedisBloom's
// CMS (rm_cms.c CMSRdbSave/CMSRdbLoad, the same in RedisBloom 2.4 and
// 8.6): width, depth and the count N as unsigned integers, then the
// counter array as one string of width·depth·4 bytes, RedisBloom's
// uint32_t array (row i at counters i·width …, little-endian), which is
// the redisbloom profile's own layout.
const (
	RDBTypeName = "CMSk-TYPE"
	RDBEncVer   = 0
)

// ReadRedisBloomRDB reads one CMSk-TYPE module value (m's fields, through
// its EOF opcode) as a redisbloom-profile sketch, which answers every
// query as RedisBloom does after loading the value (its capacity is 0,
// unknown). alloc, when not nil, is called once, with the bytes the
// counters will hold (Bits()/8), before they are allocated, and its error
// stops the read; without it nothing but the reader's
// rdb.Limits.MaxString bounds that allocation.
//
// It refuses, with an error wrapping ErrParam, what RedisBloom's load
// refuses (an encoding version above RDBEncVer, a width or depth of 0, a
// counter array of another length than width·depth·4 bytes) and what
// NewRedisBloom cannot hold (a depth above RedisMaxDepth, width·depth
// above MaxCells), before it allocates anything. The counters are read in
// pieces (rdb.ModuleValue.ReadStringTo) straight into the sketch, so that
// a sketch of gigabytes is held once.
func ReadRedisBloomRDB(m *rdb.ModuleValue, alloc func(bytes int64) error) (*Sketch, error) {
	bad := func(msg string, args ...any) error {
		return fmt.Errorf("countmin: RDB value of "+RDBTypeName+": "+msg+": %w", append(args, ErrParam)...)
	}
	switch {
	case m.Name != RDBTypeName:
		return nil, bad("the value is a %s", m.Name)
	case m.EncVer > RDBEncVer:
		return nil, bad("encoding version %d is newer than the %d RedisBloom 2.4 to 8.6 write", m.EncVer, RDBEncVer)
	}
	var f [3]uint64 // width, depth, count
	for i := range f {
		v, err := m.ReadUnsigned()
		if err != nil {
			return nil, fmt.Errorf("countmin: RDB value of %s: %w", RDBTypeName, err)
		}
		f[i] = v
	}
	w, d, total := f[0], f[1], f[2]
	if w == 0 || d == 0 || w > MaxCells || d > MaxCells || w*d > MaxCells || d > RedisMaxDepth {
		return nil, bad("width %d, depth %d: want both at least 1, width·depth at most 2^36", w, d)
	}
	cfg, err := normalize(Config{Profile: RedisBloom, Width: w, Depth: int(d)})
	if err != nil {
		return nil, bad("%v", err)
	}
	n := w * d // counters
	var cells []uint64
	var off uint64 // bytes of the array filled
	err = m.ReadStringTo(func(size int64) error {
		if uint64(size) != 4*n {
			return bad("counter array of %d bytes, width·depth = %d counters need %d", size, n, 4*n)
		}
		words := redisWords(n)
		if alloc != nil {
			if err := alloc(int64(8 * words)); err != nil {
				return err
			}
		}
		cells = make([]uint64, words)
		return nil
	}, func(p []byte) error {
		if uint64(len(p)) > 4*n-off {
			return bad("counter array longer than the %d bytes announced", 4*n)
		}
		off = fillWords(cells, off, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("countmin: RDB value of %s: counters: %w", RDBTypeName, err)
	}
	if off != 4*n {
		return nil, bad("counter array of %d bytes, %d announced", off, 4*n)
	}
	if err := m.End(); err != nil {
		return nil, fmt.Errorf("countmin: RDB value of %s: %w", RDBTypeName, err)
	}
	s, err := build(cfg, cells)
	if err != nil {
		return nil, bad("%v", err)
	}
	s.total = total
	return s, nil
}

// fillWords stores the bytes p at byte offset off of the little-endian
// words c (zero where not filled yet) and returns the offset after them.
func fillWords(c []uint64, off uint64, p []byte) uint64 {
	for len(p) > 0 && off%8 != 0 {
		c[off/8] |= uint64(p[0]) << (8 * (off % 8))
		p, off = p[1:], off+1
	}
	for len(p) >= 8 {
		c[off/8] = binary.LittleEndian.Uint64(p)
		p, off = p[8:], off+8
	}
	for _, b := range p {
		c[off/8] |= uint64(b) << (8 * (off % 8))
		off++
	}
	return off
}

// WriteRedisBloomRDB writes the sketch's fields as RedisBloom's CMSRdbSave
// does (width, depth, count, the counter array): byte for byte what
// RedisBloom writes for the same sketch. The caller writes the value's EOF
// opcode (rdb.ModuleWriter.End). Only a redisbloom-profile sketch is
// RedisBloom's CMS: any other, and the zero Sketch, is refused with an
// error wrapping ErrParam. The counters are written in pieces
// (rdb.ModuleWriter.StringFunc), without a copy of the array.
func (s *Sketch) WriteRedisBloomRDB(m *rdb.ModuleWriter) error {
	switch {
	case s.zero():
		return errZero("WriteRedisBloomRDB")
	case s.cfg.Profile != RedisBloom:
		return fmt.Errorf("countmin: only a redisbloom-profile sketch is RedisBloom's %s; this one is %v: %w", RDBTypeName, s.cfg.Profile, ErrParam)
	}
	n := s.cfg.Width * uint64(s.cfg.Depth)
	m.Unsigned(s.cfg.Width)
	m.Unsigned(uint64(s.cfg.Depth))
	m.Unsigned(s.total)
	return m.StringFunc(int64(4*n), func(w io.Writer) error {
		const chunk = 64 << 10 // bytes
		buf := make([]byte, 0, chunk)
		left := 4 * n
		for _, x := range s.cells {
			if left < 8 { // the last counter of an odd count
				buf = binary.LittleEndian.AppendUint32(buf, uint32(x))
				break
			}
			buf = binary.LittleEndian.AppendUint64(buf, x)
			left -= 8
			if len(buf) == chunk {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
		_, err := w.Write(buf)
		return err
	})
}
