package main

// The cuckoo run (-cuckoo, issue 15): bloomlab's cuckoo filter against
// seiflotfy/cuckoofilter and bits-and-blooms: add, present, absent and
// delete times, bits per key and measured FPR; the load factor at the
// first failed insert (buckets of 4, 500 relocations); and whether any
// added key ends up absent after failed inserts and after deletes.

import (
	"fmt"
	"io"
	"runtime"
	"testing"

	bcuckoo "github.com/bloomlab/bloomlab/cuckoo"
	seif "github.com/seiflotfy/cuckoofilter"
)

// cuckooOps are the operations of the cuckoo run.
var cuckooOps = []string{"add", "present", "absent", "delete"}

func runCuckoo(w, stderr io.Writer, n int, fpr float64, count int) error {
	fmt.Fprintf(w, "goos: %s\ngoarch: %s\npkg: github.com/bloomlab/bloomlab/bench\n", runtime.GOOS, runtime.GOARCH)
	if cpu := cpuName(); cpu != "" {
		fmt.Fprintf(w, "cpu: %s\n", cpu)
	}
	fmt.Fprintf(w, "go: %s\nkeys: %d\nkeylen: %d\ncount: %d\nrun: -cuckoo, fpr %g\n", runtime.Version(), n, KeyLen, count, fpr)
	e := newEnv(n)
	libByName := map[string]lib{}
	for _, l := range Libs {
		libByName[l.name] = l
	}
	items := []runItem{
		{libByName[libCuckooF8], 0}, {libByName[libCuckooSemi9], 0}, {libByName[libCuckoo], 0},
		{libByName[libCuckooFPR], fpr}, {libByName[libCuckooSemi], fpr}, {libByName[libBnB], fpr},
	}
	best := map[string]float64{}
	built := map[string]*built{}
	for round := 1; round <= count; round++ {
		for _, it := range items {
			bt, err := e.build(it.lib, it.fpr)
			if err != nil {
				return err
			}
			built[it.lib.name] = bt
			for _, op := range cuckooOps {
				if op == "delete" && bt.f.del == nil {
					continue
				}
				name := benchName(it.lib, it.fpr, op)
				fmt.Fprintf(stderr, "round %d/%d: %s ...\n", round, count, name)
				r := testing.Benchmark(func(b *testing.B) { e.bench(b, it.lib, it.fpr, op) })
				if r.N == 0 {
					return fmt.Errorf("benchmark %s failed", name)
				}
				v := float64(r.T.Nanoseconds()) / float64(r.N)
				if c, ok := r.Extra["cpu-ns/op"]; ok {
					v = c
				}
				if old, ok := best[name]; !ok || v < old {
					best[name] = v
				}
				fmt.Fprintf(w, "BenchmarkCuckoo/%s\t%d\t%.1f ns/op\t%.1f cpu-ns/op\t%d allocs/op\n", name, r.N, float64(r.T.Nanoseconds())/float64(r.N), v, r.AllocsPerOp())
			}
		}
	}
	fmt.Fprintf(w, "\n%d keys of 16 bytes; cpu-ns/op, the fastest of %d rounds; every time includes hashing the key.\n", n, count)
	fmt.Fprintf(w, "%-26s %8s %8s %8s %8s %9s %9s %8s %8s\n", "lib", "add", "present", "absent", "delete", "bits/key", "fpr", "insfail", "fnr")
	for _, it := range items {
		bt := built[it.lib.name]
		var cells [4]string
		for i, op := range cuckooOps {
			cells[i] = "-"
			if v, ok := best[benchName(it.lib, it.fpr, op)]; ok {
				cells[i] = fmtNs(v)
			}
		}
		label := it.lib.name
		if !it.lib.fixedFPR {
			label += fmt.Sprintf(" (%g)", fpr)
		}
		fmt.Fprintf(w, "%-26s %8s %8s %8s %8s %9.2f %9.5f %8.2g %8.2g\n", label, cells[0], cells[1], cells[2], cells[3], bt.bitsKey, bt.fpr, bt.insFailed, bt.fnr)
	}
	ratio := func(a, b lib, op string) string {
		x, ok1 := best[benchName(a, 0, op)]
		y, ok2 := best[benchName(b, 0, op)]
		if !ok1 || !ok2 {
			return "-"
		}
		return fmt.Sprintf("%.2f", x/y)
	}
	f8, sf := libByName[libCuckooF8], libByName[libCuckoo]
	fmt.Fprintf(w, "\n%s ÷ %s (same buckets of 4 × 8 bits): add %s, present %s, absent %s, delete %s (goal: queries ≤ 0.80)\n",
		libCuckooF8, libCuckoo, ratio(f8, sf, "add"), ratio(f8, sf, "present"), ratio(f8, sf, "absent"), ratio(f8, sf, "delete"))

	fmt.Fprintf(w, "\nLoad factor at the first failed insert (buckets of 4, 500 relocations, %d buckets; 3 key sets):\n", seiflotfyBuckets(uint64(n)))
	for _, c := range cuckooContenders(uint64(n)) {
		var loads []string
		for s := uint64(0); s < 3; s++ {
			keys := makeKeys(2*n, 100+s)
			t := c.new()
			i := 0
			for i < len(keys) && t.insert(keys[i]) {
				i++
			}
			loads = append(loads, fmt.Sprintf("%.4f", float64(i)/float64(t.slots)))
		}
		fmt.Fprintf(w, "  %-26s %v\n", c.name, loads)
	}

	fmt.Fprintf(w, "\nKeys lost: fill to the first failed insert, offer %d more keys, then delete every other key whose insert succeeded:\n", n/50)
	for _, c := range cuckooContenders(uint64(n)) {
		keys := makeKeys(2*n, 200)
		t := c.new()
		var ok, refused [][]byte
		first := -1
		for i := 0; i < len(keys) && (first < 0 || i < first+n/50); i++ {
			if t.insert(keys[i]) {
				ok = append(ok, keys[i])
			} else {
				refused = append(refused, keys[i])
				if first < 0 {
					first = i
				}
			}
		}
		lostOK := 0
		for _, k := range ok {
			if !t.contains(k) {
				lostOK++
			}
		}
		refusedIn := 0
		for _, k := range refused {
			if t.contains(k) {
				refusedIn++
			}
		}
		// Delete every other accepted key; then count the kept keys that
		// were present before the deletes and are absent after them.
		var kept [][]byte
		for i, k := range ok {
			if i%2 == 1 && t.contains(k) {
				kept = append(kept, k)
			}
		}
		for i, k := range ok {
			if i%2 == 0 {
				t.delete(k)
			}
		}
		lostDel := 0
		for _, k := range kept {
			if !t.contains(k) {
				lostDel++
			}
		}
		fmt.Fprintf(w, "  %-26s %d accepted, %d refused (%d of those present anyway); accepted keys absent after the failed inserts: %d; kept keys present before the deletes and absent after: %d of %d\n",
			c.name, len(ok), len(refused), refusedIn, lostOK, lostDel, len(kept))
	}
	return nil
}

// cuckooTable is a cuckoo filter under the load and loss checks.
type cuckooTable struct {
	insert, contains, delete func([]byte) bool
	slots                    uint64
}

type cuckooContender struct {
	name string
	new  func() *cuckooTable
}

// cuckooContenders: seiflotfy's NewFilter(n) and bloomlab's filter with
// the same buckets (4 × 8 bits, 500 relocations), plain and semi-sorted.
func cuckooContenders(n uint64) []cuckooContender {
	ours := func(c bcuckoo.Config) func() *cuckooTable {
		return func() *cuckooTable {
			f, err := bcuckoo.New(c)
			if err != nil {
				panic(err)
			}
			return &cuckooTable{
				insert:   func(k []byte) bool { return f.Add(k) == nil },
				contains: f.Contains, delete: f.Delete, slots: f.Info().Slots,
			}
		}
	}
	m := seiflotfyBuckets(n)
	return []cuckooContender{
		{libCuckooF8, ours(bcuckoo.Config{Buckets: m, FingerprintBits: 8})},
		{libCuckooSemi9, ours(bcuckoo.Config{Buckets: m, FingerprintBits: 9, Semisort: true})},
		{libCuckoo, func() *cuckooTable {
			f := seif.NewFilter(uint(n))
			return &cuckooTable{insert: f.Insert, contains: f.Lookup, delete: f.Delete, slots: uint64(len(f.Encode()))}
		}},
	}
}
