package redisblocked

import (
	"context"
	"testing"

	"github.com/bloomlab/bloomlab/internal/redistest"
)

// Benchmarks of the client side against a real server (bench/redis
// measures throughput, latency and the server's CPU).
func BenchmarkBatch(b *testing.B) {
	s := redistest.Start(b, redistest.Options{})
	c := s.Client("")
	ctx := context.Background()
	f, err := UploadFilter(ctx, c, "bench", local(b, 1_000_000), &Config{Shards: 8})
	if err != nil {
		b.Fatal(err)
	}
	batch := keys("b", 1000)
	out := make([]bool, len(batch))
	b.Run("AddBatch1000", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := f.AddBatch(ctx, batch); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ContainsBatch1000", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := f.ContainsBatch(ctx, batch, out); err != nil {
				b.Fatal(err)
			}
		}
	})
}
