package heldhash

// ChunkLen is the number of hashes in one of a Store's chunks (512 KiB).
const ChunkLen = 1 << 16

// Store holds a builder's hashes in chunks of ChunkLen, allocated one at
// a time and never copied: a growing slice leaves its old arrays behind
// at every growth, and under an address-space limit (ulimit -v) the Go
// heap does not give their address space back, so the held hashes took
// up to several times their size (a fatal out-of-memory error, not a
// budget's). The zero Store is empty.
type Store struct {
	chunks [][]uint64 // each of ChunkLen; the last holds n % ChunkLen (or ChunkLen)
	n      uint64
}

// StoreOf returns a Store whose chunks are h's (not copied).
func StoreOf(h []uint64) Store {
	s := Store{n: uint64(len(h))}
	for len(h) > ChunkLen {
		s.chunks = append(s.chunks, h[:ChunkLen:ChunkLen])
		h = h[ChunkLen:]
	}
	if len(h) > 0 {
		s.chunks = append(s.chunks, h)
	}
	return s
}

// Len is the number of hashes held.
func (s *Store) Len() uint64 { return s.n }

// Append adds h.
func (s *Store) Append(h uint64) {
	if s.n%ChunkLen == 0 {
		s.chunks = append(s.chunks, make([]uint64, 0, ChunkLen))
	}
	c := &s.chunks[s.n/ChunkLen]
	*c = append(*c, h)
	s.n++
}

// Chunks returns the held hashes in order, a chunk at a time (the
// Store's own memory).
func (s *Store) Chunks() [][]uint64 { return s.chunks }

// At returns the i-th hash.
func (s *Store) At(i uint64) uint64 { return s.chunks[i/ChunkLen][i%ChunkLen] }

// Set sets the i-th hash.
func (s *Store) Set(i, h uint64) { s.chunks[i/ChunkLen][i%ChunkLen] = h }

// CopyTo copies the held hashes to dst (at least Len long).
func (s *Store) CopyTo(dst []uint64) {
	for _, c := range s.Chunks() {
		dst = dst[copy(dst, c):]
	}
}

// CopyFrom sets the first len(src) hashes (at most Len) from src.
func (s *Store) CopyFrom(src []uint64) {
	for _, c := range s.chunks {
		if len(src) == 0 {
			return
		}
		src = src[copy(c, src):]
	}
}

// Truncate keeps the first n hashes (n ≤ Len) and frees the chunks past
// them.
func (s *Store) Truncate(n uint64) {
	s.n = n
	keep := (n + ChunkLen - 1) / ChunkLen
	clear(s.chunks[keep:])
	s.chunks = s.chunks[:keep]
	if keep > 0 {
		last := &s.chunks[keep-1]
		*last = (*last)[:n-(keep-1)*ChunkLen]
	}
}

// Range returns hashes i to j (i ≤ j ≤ Len): the Store's own memory when
// they lie in one chunk, or else a copy in *scratch (grown as needed).
func (s *Store) Range(i, j uint64, scratch *[]uint64) []uint64 {
	if i == j {
		return nil
	}
	if i/ChunkLen == (j-1)/ChunkLen {
		return s.chunks[i/ChunkLen][i%ChunkLen : (j-1)%ChunkLen+1]
	}
	if uint64(cap(*scratch)) < j-i {
		*scratch = make([]uint64, j-i)
	}
	r := (*scratch)[:j-i]
	for k := range r {
		r[k] = s.At(i + uint64(k))
	}
	return r
}
