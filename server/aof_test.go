package server

import (
	"os"
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
