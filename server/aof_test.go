package server

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"
)

// TestLogRoundsCoverWaiters: a waiter whose record the sync in progress
// covers returns when that sync ends, not after the next one, which a
// later waiter leads (with Always, a reply waited for a whole second
// fsync behind a waiter queued before it on the file's lock).
func TestLogRoundsCoverWaiters(t *testing.T) {
	a, err := openLog(t.TempDir(), 1, Always, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { close(a.stop); <-a.done; a.f.Close() }()
	release := []chan struct{}{make(chan struct{}), make(chan struct{})}
	var syncs atomic.Int32
	hook := func(f *os.File) error {
		if n := syncs.Add(1); int(n) <= len(release) {
			<-release[n-1]
		}
		return f.Sync()
	}
	syncHook.Store(&hook)
	defer syncHook.Store(nil)
	defer close(release[1])

	first := a.appendRecord(argv("BF.ADD", "k", "1"))
	done1 := make(chan error, 1)
	go func() { done1 <- a.wait(first) }() // leads the first round
	for syncs.Load() < 1 {
		time.Sleep(time.Millisecond)
	}
	second := a.appendRecord(argv("BF.ADD", "k", "2")) // after the first round's write
	done2 := make(chan error, 1)
	go func() { done2 <- a.wait(second) }() // waits, then leads the second round
	time.Sleep(50 * time.Millisecond)
	done3 := make(chan error, 1)
	go func() { done3 <- a.wait(first) }() // covered by the first round
	time.Sleep(50 * time.Millisecond)
	close(release[0])
	for i, ch := range []chan error{done1, done3} {
		select {
		case err := <-ch:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("waiter %d, covered by the first sync, still waits (for the second)", i+1)
		}
	}
	select {
	case <-done2:
		t.Fatal("the second record's waiter returned before its sync")
	default:
	}
	if a.synced.Load() < first || a.synced.Load() >= second {
		t.Fatalf("synced %d, want in [%d, %d)", a.synced.Load(), first, second)
	}
}

// TestLogDirectRecords: records of directRecord bytes or more, written to
// the file from the arguments, and small ones, buffered, interleave in the
// order they were appended, byte for byte as if all had been buffered, and
// replay as appended; the log keeps no buffer of a big record's size.
func TestLogDirectRecords(t *testing.T) {
	dir := t.TempDir()
	a, err := openLog(dir, 1, EverySec, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	big := func(b byte, n int) []byte { return bytes.Repeat([]byte{b}, n) }
	recs := [][][]byte{
		argv("BF.ADD", "k", "1"),
		{[]byte("BF.LOADCHUNK"), []byte("k"), []byte("17"), big('a', directRecord)},
		argv("BF.ADD", "k", "2"),
		argv("BF.ADD", "k", "3"),
		{[]byte("BF.LOADCHUNK"), big('b', directRecord/16), []byte("x"), big('c', 3*directRecord)},
		{big('d', directRecord/16-1), big('e', directRecord-100)},
		argv("BF.ADD", "k", "4"),
	}
	var want []byte
	var end int64
	for _, r := range recs {
		end = a.appendRecord(r)
		want = appendRecord(want, r)
		if cap(a.buf) >= directRecord || cap(a.spare) >= directRecord {
			t.Fatalf("log buffers of %d and %d bytes after a record of %d", cap(a.buf), cap(a.spare), recordLen(r))
		}
	}
	if err := a.wait(end); err != nil {
		t.Fatal(err)
	}
	if err := a.close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, logName(1)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b[aofHeaderLen:], want) {
		t.Fatalf("the file's records (%d bytes) differ from the buffered encoding (%d)", len(b)-aofHeaderLen, len(want))
	}
	var got [][][]byte
	err = replayLog(filepath.Join(dir, logName(1)), 1, true, true, t.Logf, func(cmds [][][]byte, _ int64) error {
		for _, c := range cmds {
			cc := make([][]byte, len(c))
			for i := range c {
				cc[i] = bytes.Clone(c[i])
			}
			got = append(got, cc)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, recs) {
		t.Fatalf("replayed %d records, want the %d appended", len(got), len(recs))
	}
}
