package server

import (
	"fmt"
	"io"
	"testing"

	"github.com/bloomlab/bloomlab/server/internal/resp"
)

// benchClient is a connection's command path without the network:
// commands go through exec (lookup, locks, the command, the log) and
// replies to a discarded buffer.
func benchClient(s *Server) *client {
	c := &client{s: s, d: s.d, authed: true}
	c.w = resp.NewWriter(io.Discard)
	return c
}

func argv(args ...string) [][]byte {
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	return b
}

// TestHotPathAllocs: the commands a Bloom or cuckoo filter service runs
// all day allocate nothing per command, in memory and with the log on
// (CF.DEL deletes a key each time).
func TestHotPathAllocs(t *testing.T) {
	for _, dir := range []string{"", t.TempDir()} {
		s := start(t, Config{Dir: dir})
		c := benchClient(s)
		c.exec(argv("BF.RESERVE", "f", "0.01", "1000000"))
		c.exec(argv("CMS.INITBYDIM", "c", "1000", "5"))
		c.exec(argv("TOPK.RESERVE", "tk", "10", "50", "4", "0.9"))
		c.exec(argv("BF.ADD", "f", "present"))
		c.exec(argv("BF.RESERVE", "fb", "0.01", "1000000", "LAYOUT", "BLOCKED"))
		c.exec(argv("BF.ADD", "fb", "present"))
		c.exec(argv("CF.RESERVE", "cf", "1000000"))
		c.exec(argv("CF.ADD", "cf", "present"))
		c.exec(argv("TDIGEST.CREATE", "td"))
		for i := range 700 { // the centroid arrays have grown to their capacity
			c.exec(argv("TDIGEST.ADD", "td", fmt.Sprint(i)))
		}
		keys := make([][][]byte, 1000)
		cfKeys := make([][][]byte, 1000)
		cfDels := make([][][]byte, 1000)
		for i := range keys {
			keys[i] = argv("BF.ADD", "f", fmt.Sprint("k", i))
			cfKeys[i] = argv("CF.ADD", "cf", fmt.Sprint("k", i))
			cfDels[i] = argv("CF.DEL", "cf", fmt.Sprint("d", i))
			c.exec(argv("CF.ADD", "cf", fmt.Sprint("d", i)))
		}
		i, cfi, deli := 0, 0, 0
		for _, tc := range []struct {
			name string
			args func() [][]byte
		}{
			{"BF.ADD new", func() [][]byte { i++; return keys[i%len(keys)] }},
			{"BF.ADD present", func() [][]byte { return argv("BF.ADD", "f", "present") }},
			{"BF.EXISTS", func() [][]byte { return argv("BF.EXISTS", "f", "present") }},
			{"BF.MEXISTS", func() [][]byte { return argv("BF.MEXISTS", "f", "present", "absent") }},
			{"BF.ADD new, blocked layout", func() [][]byte { i++; return argv("BF.ADD", "fb", string(keys[i%len(keys)][2])) }},
			{"BF.MEXISTS, blocked layout", func() [][]byte { return argv("BF.MEXISTS", "fb", "present", "absent") }},
			{"CMS.INCRBY", func() [][]byte { return argv("CMS.INCRBY", "c", "x", "1") }},
			{"CMS.QUERY", func() [][]byte { return argv("CMS.QUERY", "c", "x") }},
			{"TOPK.ADD", func() [][]byte { i++; return argv("TOPK.ADD", "tk", string(keys[i%len(keys)][2]), "hot") }},
			{"TOPK.QUERY", func() [][]byte { return argv("TOPK.QUERY", "tk", "hot", "absent") }},
			{"CF.ADD", func() [][]byte { cfi++; return cfKeys[cfi%len(cfKeys)] }},
			{"CF.ADDNX present", func() [][]byte { return argv("CF.ADDNX", "cf", "present") }},
			{"CF.EXISTS", func() [][]byte { return argv("CF.EXISTS", "cf", "present") }},
			{"CF.MEXISTS", func() [][]byte { return argv("CF.MEXISTS", "cf", "present", "absent") }},
			{"CF.COUNT", func() [][]byte { return argv("CF.COUNT", "cf", "present") }},
			{"CF.DEL", func() [][]byte { deli++; return cfDels[deli%len(cfDels)] }},
			{"TDIGEST.ADD", func() [][]byte { i++; return argv("TDIGEST.ADD", "td", fmt.Sprint(i), "-1.25e-3") }},
			{"PING", func() [][]byte { return argv("PING") }},
		} {
			args := make([][][]byte, 200)
			for j := range args {
				args[j] = tc.args()
			}
			j := 0
			if a := testing.AllocsPerRun(len(args)-1, func() { c.exec(args[j]); j++ }); a != 0 {
				t.Errorf("dir %q: %s: %v allocations per command", dir, tc.name, a)
			}
		}
	}
}

func BenchmarkDispatch(b *testing.B) {
	for _, dir := range []string{"", b.TempDir()} {
		s := start(b, Config{Dir: dir})
		c := benchClient(s)
		c.exec(argv("BF.RESERVE", "f", "0.01", "10000000"))
		keys := make([][][]byte, 1<<16)
		for i := range keys {
			keys[i] = argv("BF.ADD", "f", fmt.Sprint("key:", i))
		}
		name := "memory"
		if dir != "" {
			name = "log"
		}
		b.Run("BF.ADD/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				c.exec(keys[i&(len(keys)-1)])
				if i&1023 == 0 && s.aof != nil {
					s.aof.wait(c.logPos)
				}
			}
		})
		exists := argv("BF.EXISTS", "f", "key:1")
		b.Run("BF.EXISTS/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				c.exec(exists)
			}
		})
		c.exec(argv("CF.RESERVE", "cf", "1000000", "BUCKETSIZE", "4"))
		cfKeys := make([][][]byte, len(keys))
		for i := range cfKeys {
			cfKeys[i] = argv("CF.ADDNX", "cf", fmt.Sprint("key:", i))
		}
		b.Run("CF.ADDNX/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				c.exec(cfKeys[i&(len(cfKeys)-1)])
				if i&1023 == 0 && s.aof != nil {
					s.aof.wait(c.logPos)
				}
			}
		})
		cfExists := argv("CF.EXISTS", "cf", "key:1")
		b.Run("CF.EXISTS/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				c.exec(cfExists)
			}
		})
		c.exec(argv("CMS.INITBYDIM", "cms", "2000", "5"))
		cmsKeys := make([][][]byte, len(keys))
		for i := range cmsKeys {
			cmsKeys[i] = argv("CMS.INCRBY", "cms", fmt.Sprint("key:", i), "1")
		}
		b.Run("CMS.INCRBY/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				c.exec(cmsKeys[i&(len(cmsKeys)-1)])
				if i&1023 == 0 && s.aof != nil {
					s.aof.wait(c.logPos)
				}
			}
		})
		cmsQuery := argv("CMS.QUERY", "cms", "key:1")
		b.Run("CMS.QUERY/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				c.exec(cmsQuery)
			}
		})
	}
}
