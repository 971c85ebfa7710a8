package scalable

import (
	"io"
	"sync"
	"sync/atomic"
	"testing"
)

// TestConcurrency runs adders (with overlapping keys, so that two of them
// often offer the same key at once), readers and snapshot takers at once
// on a chain that starts small and grows by many links meanwhile. Run
// with -race. It checks that
//
//   - a reader never misses a key whose Add returned before the read
//     began (no false negative while links are appended);
//   - exactly one Add of a key offered by several adders answers
//     "new", so N equals the number of "new" answers;
//   - WriteTo, ScanDump, Clone, Union, EstimatedFPR and the counters run
//     alongside without a race, and the final filter holds every key.
func TestConcurrency(t *testing.T) {
	const adders, readers = 4, 3
	per := 4000
	if testing.Short() {
		per = 1500
	}
	for _, p := range profiles {
		f := must(New(Config{Capacity: 100, Profile: p}))
		other := must(New(Config{Capacity: 100, Profile: p}))
		var progress [adders]atomic.Int64 // keys of adder a confirmed added
		var news atomic.Uint64
		stop := make(chan struct{})
		var wg, bg sync.WaitGroup
		kid := func(a, j int) int { return a*per/2 + j } // adder a overlaps adder a+1 by half
		for a := 0; a < adders; a++ {
			wg.Add(1)
			go func(a int) {
				defer wg.Done()
				for j := 0; j < per; j++ {
					present, err := f.Add(key(kid(a, j)))
					if err != nil {
						t.Error(err)
						return
					}
					if !present {
						news.Add(1)
					}
					progress[a].Store(int64(j + 1))
				}
			}(a)
		}
		for r := 0; r < readers; r++ {
			bg.Add(1)
			go func(r int) {
				defer bg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					a := (i + r) % adders
					done := int(progress[a].Load())
					if done == 0 {
						continue
					}
					j := (i * 7919) % done
					if !f.Contains(key(kid(a, j))) {
						t.Errorf("%v: false negative for key %d of adder %d during growth", p, j, a)
						return
					}
				}
			}(r)
		}
		bg.Add(1)
		go func() {
			defer bg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				_ = f.N() + f.Capacity() + f.Bits() + uint64(f.Links())
				f.EstimatedFPR()
				if _, err := f.WriteTo(io.Discard); err != nil {
					t.Error(err)
				}
				if p == RedisBloom {
					if _, _, err := f.ScanDump(nil, int64(i%50), 64); err != nil {
						t.Error(err)
					}
				}
				if c := f.Clone(); c.N() > f.N() {
					t.Error("clone ahead of the original")
				}
				if err := other.Union(f); err != nil {
					t.Error(err)
				}
			}
		}()
		wg.Wait()
		close(stop)
		bg.Wait()
		distinct := (adders + 1) * per / 2
		if f.N() != news.Load() || f.N() > uint64(distinct) {
			t.Errorf("%v: N = %d, %d answers \"new\", %d distinct keys", p, f.N(), news.Load(), distinct)
		}
		for i := 0; i < distinct; i++ {
			if !f.Contains(key(i)) {
				t.Fatalf("%v: key %d missing", p, i)
			}
		}
		if f.Links() < 4 {
			t.Errorf("%v: only %d links: the test did not exercise growth", p, f.Links())
		}
	}
}
