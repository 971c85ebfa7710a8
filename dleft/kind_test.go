package dleft

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/kind"
)

func plannerWith(t *testing.T, args ...string) kind.Planner {
	t.Helper()
	spec, ok := kind.Lookup("dleft")
	if !ok {
		t.Fatal("dleft not registered")
	}
	v := spec.Defaults()
	if err := v.ParseArgs(args); err != nil {
		t.Fatal(err)
	}
	return spec.Planner(v)
}

// build plans t with the options args, adds n keys and finishes.
func buildKind(t *testing.T, tg kind.Target, n int, args ...string) (*Filter, kind.Plan) {
	t.Helper()
	p, err := plannerWith(t, args...)(tg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.New()
	if err != nil {
		t.Fatal(err)
	}
	for j := 0; j < n; j++ {
		if err := b.Add([]byte(fmt.Sprint("key", j%(n-n/10)))); err != nil { // 10% repeats
			t.Fatal(err)
		}
	}
	g, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return g.(*Filter), p
}

func TestKind(t *testing.T) {
	spec, _ := kind.Lookup("dleft")
	if spec.Format != format.KindDleft || spec.Decode == nil || spec.Combine != nil {
		t.Fatal("dleft registered wrongly")
	}
	def := plannerWith(t)
	for _, bad := range []kind.Target{
		{N: 100, M: 1000, K: 3},
		{N: 100},
		{FPR: 0.001},
		{N: 100, FPR: 0.001, BitsPerKey: 16},
		{N: 100, BitsPerKey: 4},
	} {
		if _, err := def(bad); !errors.Is(err, kind.ErrParam) {
			t.Errorf("%+v: %v, want ErrParam", bad, err)
		}
	}
	if _, err := def(kind.Target{N: 100, M: 1000, K: 3}); err == nil || !strings.Contains(err.Error(), "bits per key") {
		t.Errorf("an explicit size should say which sizings dleft takes: %v", err)
	}
	for _, args := range [][]string{{"-bucket-bits", "96"}, {"-stash-limit", "-1"}, {"-rounds", "1001"}} {
		if _, err := plannerWith(t, args...)(kind.Target{N: 100, FPR: 0.001}); !errors.Is(err, kind.ErrParam) {
			t.Errorf("%v: %v", args, err)
		}
	}
	// The plan is the package's: PlanFPR, PlanBitsPerKey. Planning
	// allocates a fixed amount (the fluid limit on the search grid, under
	// 2 MiB), never the ~200 MB table of 10^8 keys.
	want, _ := PlanFPR(100_000_000, 0.001)
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	p, err := def(kind.Target{N: 100_000_000, FPR: 0.001})
	runtime.ReadMemStats(&ms1)
	if err != nil || p.Bits != want.Bits() || p.FPR != want.FPR || p.M != 3*want.Buckets || p.K != 3 || p.Capacity != 100_000_000 || p.Removes {
		t.Fatalf("plan %+v (%v), want %+v", p, err, want)
	}
	if a := ms1.TotalAlloc - ms0.TotalAlloc; a > 4<<20 {
		t.Fatalf("planning allocated %d bytes", a)
	}
	for _, bb := range []int{64, 128} {
		p, err := plannerWith(t, "-bucket-bits", fmt.Sprint(bb))(kind.Target{N: 1000, BitsPerKey: 20})
		if err != nil || !strings.Contains(p.Note, fmt.Sprintf("buckets of %d bits", bb)) {
			t.Fatalf("-bucket-bits %d: %+v, %v", bb, p, err)
		}
	}
}

// TestKindBuild: online and offline builders give filters holding every
// key, with the plan's memory and the design n recorded; offline placement
// lowers the rate.
func TestKindBuild(t *testing.T) {
	const n = 20000
	tg := kind.Target{N: n, BitsPerKey: 16, Seed: 3}
	online, p := buildKind(t, tg, n)
	offline, _ := buildKind(t, tg, n, "-rounds", "10")
	for _, f := range []*Filter{online, offline} {
		if f.Bits() != p.Bits || f.Capacity() != n || f.N() != n || f.Seed() != 3 {
			t.Fatalf("%d bits (plan %d), capacity %d, n %d", f.Bits(), p.Bits, f.Capacity(), f.N())
		}
		for j := 0; j < n; j++ {
			if !f.ContainsString(fmt.Sprint("key", j%(n-n/10))) {
				t.Fatalf("false negative for key %d", j)
			}
		}
	}
	// Online, a key reported present (a repeat or a false positive) is not
	// stored again; offline, every distinct key takes one slot.
	if offline.Stored() != n-n/10 || online.Stored() > n-n/10 || online.Stored() < n-n/10-10 {
		t.Fatalf("stored %d offline, %d online, want %d distinct keys", offline.Stored(), online.Stored(), n-n/10)
	}
	if offline.EstimatedFPR() >= online.EstimatedFPR() {
		t.Fatalf("offline %g, online %g", offline.EstimatedFPR(), online.EstimatedFPR())
	}
	// A stash limit is kept and refuses what overflows.
	f, _ := buildKind(t, kind.Target{N: 100, BitsPerKey: 16}, 100, "-stash-limit", "7")
	if f.Config().StashLimit != 7 {
		t.Fatalf("stash limit %d", f.Config().StashLimit)
	}
	p, _ = plannerWith(t, "-stash-limit", "1")(kind.Target{N: 10, BitsPerKey: 16})
	b, _ := p.New()
	var err error
	for j := 0; j < 10000 && err == nil; j++ {
		err = b.Add([]byte(fmt.Sprint(j)))
	}
	if !errors.Is(err, ErrFull) {
		t.Fatalf("overfull filter with a stash limit: %v", err)
	}
}

func TestDescribe(t *testing.T) {
	spec, _ := kind.Lookup("dleft")
	f, p := buildKind(t, kind.Target{N: 5000, FPR: 0.001}, 5000)
	fields := map[string]kind.Field{}
	for _, fd := range spec.Describe(f) {
		fields[fd.Name] = fd
	}
	for _, name := range []string{"d", "buckets per subtable", "bucket bits", "semi-sorting", "group", "min fingerprint bits", "keys stored", "stash", "loads", "fpr at design n"} {
		if _, ok := fields[name]; !ok {
			t.Errorf("Describe lacks %q", name)
		}
	}
	// The plan's rate is at the load it chose; the filter's buckets are
	// that rounded up, which lowers the load a little.
	if r := fields["fpr at design n"].Value.(float64); r > p.FPR || r < 0.99*p.FPR || fields["stash"].Warn {
		t.Errorf("design rate %v (plan %v), stash %+v", fields["fpr at design n"].Value, p.FPR, fields["stash"])
	}
	// A filter whose stash holds keys says so.
	g := must(New(Config{Buckets: 1}))
	for j := 0; j < 20; j++ {
		_ = g.AddHash(key(4, j))
	}
	for _, fd := range spec.Describe(g) {
		if fd.Name == "stash" && (!fd.Warn || fd.Value.(int) == 0) {
			t.Errorf("stash of an overfull filter: %+v", fd)
		}
	}
	// Bits counts the stash: 64 bits per stashed key, as the file holds them.
	if g.Bits() != 3*64+64*uint64(g.Overflows()) || g.Overflows() == 0 {
		t.Errorf("%d bits with %d stashed keys", g.Bits(), g.Overflows())
	}
}
