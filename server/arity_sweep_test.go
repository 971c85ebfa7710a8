package server

import (
	"strings"
	"testing"
)

// TestAritySweep sends every RedisBloom command with 1..12 arguments under
// both dialects, plain and inside MULTI, and checks the server answers every
// one (no panic, connection alive).
func TestAritySweep(t *testing.T) {
	for _, d := range []Dialect{Dialect8, Dialect24} {
		cfg := Config{Dialect: d}
		s := start(t, cfg)
		c := dial(t, s)
		for _, cmd := range sortedCommands() {
			p := strings.SplitN(cmd.name, ".", 2)[0]
			switch p {
			case "bf", "cf", "cms", "topk", "tdigest":
			default:
				continue
			}
			for n := 1; n <= 12; n++ {
				args := []string{cmd.name}
				for i := 1; i < n; i++ {
					args = append(args, "1")
				}
				c.do(args...)
				c.do("MULTI")
				c.do(args...)
				c.do("EXEC")
				if got := c.do("PING"); !strings.Contains(got, "PONG") {
					t.Fatalf("%v: then PING got %q", args, got)
				}
			}
		}
	}
}
