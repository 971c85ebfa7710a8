package cuckoo

import (
	"bytes"
	"sync"
	"testing"
)

// TestConcurrentReads: the read methods may run at once on one filter
// (package doc, Concurrency); under -race this checks that none of them
// writes (the relocation scratch, for one, belongs to Add only).
func TestConcurrentReads(t *testing.T) {
	for _, f := range []*Filter{must(NewWithEstimates(2000, 0.01, 1)), grown(t)} {
		for i := 0; i < 1500; i++ {
			_ = f.Add(key(i))
		}
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 200; i++ {
					if !f.Contains(key(i)) || f.Count(key(i)) == 0 {
						t.Error("false negative")
						return
					}
					switch i % 50 {
					case 0:
						_ = f.EstimatedFPR()
						_ = f.stats()
					case 1:
						var b bytes.Buffer
						if _, err := f.WriteTo(&b); err != nil {
							t.Error(err)
						}
					case 2:
						if f.Info().Profile == RedisBloom {
							_, _ = f.Dump(0)
							_, _, _ = f.ScanDump(nil, 1, 0)
						}
						_ = f.Clone().Equal(f)
						_ = cfInfo(f)
					}
				}
			}()
		}
		wg.Wait()
	}
}
