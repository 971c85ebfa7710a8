package blrd

import "io"

// Session is a kind's Loader: a Core over the kind's Body, which it holds
// by value (B) and passes by pointer (PB). A kind's Loader embeds it,
// which gives it every method of the Loader contract, and adds Filter
// (with Finish and LoadAll below). The zero Session is ready.
type Session[B any, PB interface {
	*B
	Body
}] struct {
	core Core
	body B
}

// LoadChunk takes one chunk: the header first (iterator 1), then the data
// chunks in SCANDUMP's order; the final (0, empty) reply of SCANDUMP may
// be fed and is ignored. The header is validated before anything is
// allocated, and a segment is allocated only as its bytes arrive (whole
// after AllocateWhole). After an error the Session is spent and returns
// it again.
func (s *Session[B, PB]) LoadChunk(iter int64, data []byte) error {
	return s.core.LoadChunk(PB(&s.body), iter, data)
}

// ReadChunk is LoadChunk for a data chunk of n bytes read from r: the
// bytes go into the segment as they are read (through a buffer of at most
// 64 KiB), so that a caller reading chunks from a file does not hold each
// twice. The chunk is checked (Check) before anything is allocated or
// read; the segment's room for it is allocated once. Fewer than n bytes
// in r is an error wrapping io.ErrUnexpectedEOF. The header comes through
// LoadChunk.
func (s *Session[B, PB]) ReadChunk(iter int64, n int, r io.Reader) error {
	return s.core.ReadChunk(PB(&s.body), iter, n, r)
}

// Check reports, without taking it, whether a data chunk of n bytes with
// iterator iter is the next one and lies within one segment; a refusal is
// a *ChunkError (its Reason says whether the chunk is out of order or
// crosses the end of a segment), wrapping format.ErrFormat.
func (s *Session[B, PB]) Check(iter int64, n int) error {
	return s.core.Check(PB(&s.body), iter, n)
}

// AllocateWhole makes the Session allocate each segment at its full size
// when its first bytes arrive, for a caller that has accounted for the
// total Progress reports; a header whose total exceeds the memory this
// process may use is still loaded as its bytes arrive (Core.AllocateWhole).
func (s *Session[B, PB]) AllocateWhole() { s.core.AllocateWhole() }

// Progress returns the bytes received so far and the total the header
// announces (0, 0 before a valid header). The total is known, and
// checked, before any segment is allocated: a caller bounding memory reads
// it after the header chunk.
func (s *Session[B, PB]) Progress() (received, total uint64) { return s.core.Progress() }

// WalkReceived calls fn for each chunk that Received returns, in order,
// without copying them: the write function writes the chunk's bytes from
// the segment itself.
func (s *Session[B, PB]) WalkReceived(fn WalkFunc) error {
	return s.core.WalkReceived(PB(&s.body), fn)
}

// Received returns the chunks that bring a new Session to this one's
// state: the header, then the bytes received so far, at most one chunk per
// segment (copies). It is how a load in progress is persisted. It returns
// nil before a valid header, after an error, and once the load finished.
func (s *Session[B, PB]) Received() []Chunk { return s.core.Received(PB(&s.body)) }

// Finish checks that every byte the header announces has arrived and runs
// the Body's last checks; it returns the Body, whose filter the kind's
// Filter method returns.
func Finish[B any, PB interface {
	*B
	Body
}](s *Session[B, PB]) (PB, error) {
	if err := s.core.Finish(PB(&s.body)); err != nil {
		return nil, err
	}
	return &s.body, nil
}

// LoadAll loads a whole dump (Core.LoadAll: the chunks are checked to
// hold exactly the bytes the header announces before any segment is
// allocated) and returns the finished Body.
func LoadAll[B any, PB interface {
	*B
	Body
}](s *Session[B, PB], chunks []Chunk) (PB, error) {
	if err := s.core.LoadAll(PB(&s.body), chunks); err != nil {
		return nil, err
	}
	return &s.body, nil
}

// BodyOf returns the Session's Body: the kind's filter under construction.
func BodyOf[B any, PB interface {
	*B
	Body
}](s *Session[B, PB]) PB {
	return &s.body
}
