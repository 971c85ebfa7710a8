package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/stats"
)

// A growing filter built from a pipe with no -n (issue 11): the RedisBloom
// profile exports BF.SCANDUMP chunks that import back to the same file,
// bit for bit, and the filter answers every added key present.
func TestScalableExportImport(t *testing.T) {
	t.Chdir(t.TempDir())
	var keys strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&keys, "user-%d\n", i)
	}
	_, e, code := invoke([]string{"build", "-kind", "scalable", "-profile", "redisbloom", "-fpr", "0.01", "-o", "s.blf"}, keys.String())
	if code != 0 || !strings.Contains(e, "no -n") {
		t.Fatalf("build from a pipe: exit %d: %s", code, e)
	}
	if out, e, code := invoke([]string{"query", "-v", "-c", "s.blf"}, keys.String()); out != "0\n" || code != 1 {
		t.Fatalf("query: %q exit %d %s: false negatives", out, code, e)
	}
	if _, e, code := invoke([]string{"export", "-format", "redisbloom", "-o", "s.dump", "s.blf"}, ""); code != 0 {
		t.Fatalf("export: %d %s", code, e)
	}
	if _, e, code := invoke([]string{"import", "-format", "redisbloom", "-o", "t.blf", "s.dump"}, ""); code != 0 {
		t.Fatalf("import: %d %s", code, e)
	}
	a, _ := os.ReadFile("s.blf")
	b, _ := os.ReadFile("t.blf")
	if !bytes.Equal(a, b) {
		t.Error("export then import changed the filter")
	}
	out, _, _ := invoke([]string{"info", "t.blf"}, "")
	for _, want := range []string{"kind:", "scalable", "profile:", "redisbloom", "links:"} {
		if !strings.Contains(out, want) {
			t.Errorf("info lacks %q:\n%s", want, out)
		}
	}
	// The bloomlab profile has no RedisBloom dump: a clear error.
	invoke([]string{"build", "-kind", "scalable", "-fpr", "0.01", "-o", "b.blf"}, keys.String())
	if _, e, code := invoke([]string{"export", "-format", "redisbloom", "-o", "b.dump", "b.blf"}, ""); code != 1 || !strings.Contains(e, "-profile redisbloom") {
		t.Errorf("export of a bloomlab-profile chain: exit %d: %s", code, e)
	}
	// A corrupt dump is an error, never a filter with holes.
	d, _ := os.ReadFile("s.dump")
	d[len(d)/2] ^= 1
	os.WriteFile("bad.dump", d, 0o644)
	if _, e, code := invoke([]string{"import", "-format", "redisbloom", "-o", "u.blf", "bad.dump"}, ""); code != 1 || e == "" {
		t.Errorf("import of a corrupt dump: exit %d: %s", code, e)
	}
	if _, err := os.Stat("u.blf"); err == nil {
		t.Error("a failed import wrote its output")
	}
}

// A scalable chain's growth is bounded: an expansion beyond RedisBloom 8's
// 32768 is a usage error, and a file recording one (a crafted file with
// growth 2,566,914,049 made add allocate 10 GB; -expansion 4294967295 asked
// for a second link of 2^48 bits and ended in a fatal out-of-memory) loads,
// answers, and refuses to grow (exit 1, the file unchanged). -ratio and
// -fpr given out of range are usage errors (-ratio 0 used to mean 0.5, and
// -fpr 0 the default 1%).
func TestScalableGrowthBounded(t *testing.T) {
	t.Chdir(t.TempDir())
	var keys strings.Builder
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&keys, "k%d\n", i)
	}
	os.WriteFile("k.txt", []byte(keys.String()), 0o644)
	for _, args := range [][]string{
		{"-n", "100", "-expansion", "4294967295"}, {"-n", "100", "-expansion", "32769"}, {"-ratio", "0"}, {"-ratio", "1"},
		{"-ratio", "-0"}, {"-ratio", "-0.5"}, {"-fpr", "0"}, {"-fpr", "-0"}, {"-fpr", "1"}, {"-ratio", "0", "-fpr", "0"},
		{"-profile", "redisbloom", "-ratio", "0.25"}, {"-expansion", "0"},
	} {
		_, e, code := invoke(append(append([]string{"build", "-kind", "scalable"}, args...), "-o", "s.blf", "k.txt"), "")
		if code != 2 || !strings.Contains(e, "-"+strings.TrimPrefix(args[len(args)-2], "-")) {
			t.Errorf("build %v: exit %d: %s", args, code, e)
		}
	}
	if _, e, code := invoke([]string{"build", "-kind", "scalable", "-n", "100", "-expansion", "32768", "-o", "s.blf", "k.txt"}, ""); code != 0 {
		t.Fatalf("build: exit %d: %s", code, e)
	}
	// The file with the first link full and a hostile expansion.
	b, _ := os.ReadFile("s.blf")
	b = bytes.Clone(b[:len(b)-4])
	binary.LittleEndian.PutUint32(b[format.HeaderSize:], 2566914049)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
	os.WriteFile("s.blf", b, 0o644)
	if out, e, code := invoke([]string{"query", "-c", "s.blf", "k.txt"}, ""); code != 0 || out != "100\n" {
		t.Fatalf("query of the crafted file: %q exit %d: %s", out, code, e)
	}
	var more strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&more, "more%d\n", i)
	}
	os.WriteFile("more.txt", []byte(more.String()), 0o644)
	_, e, code := invoke([]string{"add", "s.blf", "more.txt"}, "")
	if code != 1 || !strings.Contains(e, "filter is full") || !strings.Contains(e, "unchanged") {
		t.Errorf("add past the first link: exit %d: %s", code, e)
	}
	if c, _ := os.ReadFile("s.blf"); !bytes.Equal(c, b) {
		t.Error("a refused add changed the file")
	}
	if out, _, _ := invoke([]string{"info", "s.blf"}, ""); !strings.Contains(out, "cannot grow") {
		t.Errorf("info does not say the chain cannot grow:\n%s", out)
	}
}

// build and add give a growing chain a memory budget, the memory the
// process may use (memoryLimit, sysmem.Limit): a growth beyond it is an
// error (exit 1) naming the budget, with nothing written or the file
// unchanged and every key added before still present, never a fatal
// out-of-memory. A RedisBloom-profile file may record any expansion (as a
// dump from Redis may): one of 4·10^9 asked for a second link of about
// 4.5·10^12 bits (560 GB).
func TestScalableMemoryBudget(t *testing.T) {
	t.Chdir(t.TempDir())
	defer func(f func() uint64) { memoryLimit = f }(memoryLimit)
	var keys strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&keys, "k%d\n", i)
	}
	os.WriteFile("k.txt", []byte(keys.String()), 0o644)
	os.WriteFile("first.txt", []byte(strings.Join(strings.SplitAfter(keys.String(), "\n")[:300], "")), 0o644)

	memoryLimit = func() uint64 { return 2048 } // bytes: 16,384 bits
	_, e, code := invoke([]string{"build", "-kind", "scalable", "-n", "100", "-o", "s.blf", "k.txt"}, "")
	if code != 1 || !strings.Contains(e, "memory budget") || !strings.Contains(e, "nothing written") {
		t.Errorf("build past the budget: exit %d: %s", code, e)
	}
	if _, err := os.Stat("s.blf"); err == nil {
		t.Error("a refused build wrote its output")
	}

	memoryLimit = func() uint64 { return 0 } // unknown: no budget
	if _, e, code := invoke([]string{"build", "-kind", "scalable", "-n", "100", "-o", "s.blf", "first.txt"}, ""); code != 0 {
		t.Fatalf("build: exit %d: %s", code, e)
	}
	before, _ := os.ReadFile("s.blf")
	memoryLimit = func() uint64 { return 2048 }
	_, e, code = invoke([]string{"add", "s.blf", "k.txt"}, "")
	if code != 1 || !strings.Contains(e, "memory budget") || !strings.Contains(e, "unchanged") {
		t.Errorf("add past the budget: exit %d: %s", code, e)
	}
	if after, _ := os.ReadFile("s.blf"); !bytes.Equal(after, before) {
		t.Error("a refused add changed the file")
	}
	if out, _, code := invoke([]string{"query", "-c", "s.blf", "first.txt"}, ""); code != 0 || out != "300\n" {
		t.Errorf("keys of the file after the refused add: %q, exit %d", out, code)
	}

	// The RedisBloom profile's recorded expansion, under a 1 GiB budget.
	memoryLimit = func() uint64 { return 1 << 30 }
	if _, e, code := invoke([]string{"build", "-kind", "scalable", "-profile", "redisbloom", "-n", "300", "-o", "r.blf", "first.txt"}, ""); code != 0 {
		t.Fatalf("build redisbloom: exit %d: %s", code, e)
	}
	b, _ := os.ReadFile("r.blf")
	b = bytes.Clone(b[:len(b)-4])
	binary.LittleEndian.PutUint32(b[format.HeaderSize:], 4_000_000_000)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
	os.WriteFile("r.blf", b, 0o644)
	_, e, code = invoke([]string{"add", "r.blf", "k.txt"}, "")
	if code != 1 || !strings.Contains(e, "memory budget") {
		t.Errorf("add to a chain of expansion 4·10^9: exit %d: %s", code, e)
	}
	if after, _ := os.ReadFile("r.blf"); !bytes.Equal(after, b) {
		t.Error("a refused add changed the file")
	}
}

// A growing chain from a tiny -n meets its target and info's rate is the
// measured one: -n 1 -fpr 0.001 with 10^4 keys answered 260 of 10^5 absent
// keys (0.26%) while info said 4.9e-5, its small links sized without the
// pair floor of double hashing; now about 0.09%, info 0.098%.
func TestScalableTinyNRate(t *testing.T) {
	t.Chdir(t.TempDir())
	var keys, absent strings.Builder
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&keys, "key%d\n", i)
	}
	const probes = 100000
	for i := 0; i < probes; i++ {
		fmt.Fprintf(&absent, "absent-%d\n", i)
	}
	os.WriteFile("k.txt", []byte(keys.String()), 0o644)
	os.WriteFile("a.txt", []byte(absent.String()), 0o644)
	if _, e, code := invoke([]string{"build", "-kind", "scalable", "-n", "1", "-fpr", "0.001", "-o", "s.blf", "k.txt"}, ""); code != 0 {
		t.Fatalf("build: exit %d: %s", code, e)
	}
	out, e, code := invoke([]string{"query", "-c", "s.blf", "a.txt"}, "")
	hits, err := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
	if err != nil || code > 1 {
		t.Fatalf("query: %q exit %d: %s", out, code, e)
	}
	js, _, _ := invoke([]string{"info", "-json", "s.blf"}, "")
	var info struct{ FPR float64 }
	if err := json.Unmarshal([]byte(js), &info); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d false positives in %d; info fpr %.4g", hits, probes, info.FPR)
	if _, hi := stats.BinomialQuantileBounds(probes, 0.001, 1e-6); hits > hi {
		t.Errorf("%d false positives in %d, above %d, the region of the target 0.001", hits, probes, hi)
	}
	if lo, hi := stats.BinomialQuantileBounds(probes, info.FPR, 1e-6); hits < lo || hits > hi {
		t.Errorf("%d false positives in %d, outside [%d, %d], the region of info's fpr %.4g", hits, probes, lo, hi, info.FPR)
	}
}
