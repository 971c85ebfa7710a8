package resp

import (
	"runtime"
	"testing"
	"unsafe"
)

// TestBigBufShared: a big buffer put back on one goroutine is the one the
// next BigBuf takes, on any processor (a SCANDUMP's chunk buffer is the
// buffer LOADCHUNK's arguments are read into next), and the collector frees
// the buffers in the pool that nobody uses.
func TestBigBufShared(t *testing.T) {
	runtime.GC()
	for getBulkBuf() != nil {
	}
	b := BigBuf()
	if len(b) != 0 || cap(b) != BigBufSize {
		t.Fatalf("BigBuf: len %d cap %d", len(b), cap(b))
	}
	PutBigBuf(b)
	got := make(chan []byte)
	for range 2 * runtime.GOMAXPROCS(0) {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			c := BigBuf()
			got <- c
		}()
		c := <-got
		if unsafe.SliceData(c) != unsafe.SliceData(b) {
			t.Fatal("a second big buffer while the first was free")
		}
		PutBigBuf(c)
	}
	PutBigBuf(make([]byte, 0, BigBufSize-1)) // not a big buffer: dropped
	runtime.GC()
	if c := getBulkBuf(); c != nil {
		t.Fatal("the collector left a free big buffer in the pool")
	}
}
