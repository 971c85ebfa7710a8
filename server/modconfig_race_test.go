package server

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestModuleConfigsRaceCreators: while one client flips the BF module
// configs between two sets (one non-scaling), others create filters with
// defaults (BF.ADD, BF.MADD, BF.INSERT). Every filter made, and every
// item acknowledged, is there as it was after a restart from the log:
// each creation was logged with the parameters it read, never the ones
// current when the log is replayed.
func TestModuleConfigsRaceCreators(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, AppendFsync: No}
	s := start(t, cfg)
	sets := [2][]string{
		{"CONFIG", "SET", "bf-error-rate", "0.5", "bf-initial-size", "3", "bf-expansion-factor", "0"},
		{"CONFIG", "SET", "bf-error-rate", "0.001", "bf-initial-size", "1000", "bf-expansion-factor", "5"},
	}
	const keys = 40
	var wg sync.WaitGroup
	stop := make(chan struct{})
	cc := dial(t, s)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if got := cc.do(sets[i%2]...); got != "+OK" {
				t.Errorf("CONFIG SET: %s", got)
				return
			}
		}
	}()
	var cw sync.WaitGroup
	for w := range 3 {
		c := dial(t, s)
		cw.Add(1)
		go func() {
			defer cw.Done()
			for k := range keys {
				key := fmt.Sprintf("k%d-%d", w, k)
				var got string
				switch k % 3 {
				case 0:
					got = c.do("BF.ADD", key, "a")
				case 1:
					got = c.do("BF.MADD", key, "a", "b")
				default:
					got = c.do("BF.INSERT", key, "ITEMS", "a", "b", "c", "d")
				}
				if !strings.Contains(got, "true") && !strings.Contains(got, ":1") {
					t.Errorf("%s: %s", key, got)
				}
			}
		}()
	}
	cw.Wait()
	close(stop)
	wg.Wait()
	// The race may leave one set unseen (the creators can all run between
	// two flips on a loaded machine): one filter made under each set, so
	// that the restart below always checks both.
	for i, set := range sets {
		if got := cc.do(set...); got != "+OK" {
			t.Fatalf("CONFIG SET: %s", got)
		}
		if got := cc.do("BF.ADD", fmt.Sprintf("k3-%d", i), "a"); !strings.Contains(got, "true") && !strings.Contains(got, ":1") {
			t.Fatalf("BF.ADD k3-%d: %s", i, got)
		}
	}
	state := func(c *rawConn) string {
		var b strings.Builder
		for w := range 4 {
			for k := range keys {
				key := fmt.Sprintf("k%d-%d", w, k)
				if w == 3 && k >= len(sets) {
					break
				}
				fmt.Fprintf(&b, "%s %s %s\n", key, c.do("BF.DEBUG", key), c.do("BF.MEXISTS", key, "a", "b", "c", "d"))
			}
		}
		return b.String()
	}
	want := state(dial(t, s))
	if !strings.Contains(want, "capacity:3 ") || !strings.Contains(want, "capacity:1000 ") {
		t.Fatalf("the filters were not made under both sets of configs:\n%s", want)
	}
	s = restart(t, s, cfg)
	if got := state(dial(t, s)); got != want {
		t.Fatalf("after the restart:\n%s\nbefore:\n%s", got, want)
	}
}
