package clog

import "testing"

// BenchmarkLog: one correctly rounded log (0 allocations: TestLogAllocs).
func BenchmarkLog(b *testing.B) {
	x := 1.0
	for i := 0; i < b.N; i++ {
		x += 0.37
		_ = Log(x)
	}
}
