package scalable

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/kind"
)

func spec(t *testing.T) *kind.Spec {
	s, ok := kind.Lookup("scalable")
	if !ok {
		t.Fatal("kind scalable not registered")
	}
	return s
}

func planWith(t *testing.T, args []string, tg kind.Target) (kind.Plan, error) {
	v := spec(t).Defaults()
	if err := v.ParseArgs(args); err != nil {
		t.Fatal(err)
	}
	return spec(t).Planner(v)(tg)
}

// TestKindPlan: the planner sizes the first link from -n and -fpr,
// defaults both as RedisBloom does, refuses the other sizings, and
// reports the memory at 10× and 1000× n.
func TestKindPlan(t *testing.T) {
	s := spec(t)
	if !s.Growing || s.Format != format.KindScalable || s.Combine == nil || len(s.Exports) != 1 || s.Exports[0].Name != "redisbloom" {
		t.Fatalf("spec %+v", s)
	}
	p, err := planWith(t, nil, kind.Target{N: 1000, FPR: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if p.Capacity != 1000 || p.M != 11072 || p.K != 8 || p.Bits != p.M || p.FPR > 0.005 || len(p.Extra) != 2 || len(p.Notices) != 0 {
		t.Errorf("plan %+v", p)
	}
	for i, want := range []string{"4 links, 26.2 KiB, 2.24× a bloom filter sized for 10000 keys", "10 links, 2.75 MiB, 2.41× a bloom filter sized for 1000000 keys"} {
		if p.Extra[i].Value != want {
			t.Errorf("extra %d = %v, want %q", i, p.Extra[i].Value, want)
		}
	}
	p, err = planWith(t, []string{"-profile", "redisbloom", "-expansion", "4"}, kind.Target{})
	// Three notices: no -fpr, no -n, and RedisBloom's small links taking
	// the chain above 1% (about 1.07% by the formula) as it grows.
	if err != nil || p.Capacity != 100 || p.Scheme != "redisbloom" || p.Hashes != 2 || p.M != 1152 || len(p.Notices) != 3 ||
		!strings.Contains(p.Notices[2], "expected to reach about 0.0107") {
		t.Errorf("redisbloom default plan %+v, %v", p, err)
	}
	// Large first links stay near the target: no notice.
	if p, err := planWith(t, []string{"-profile", "redisbloom"}, kind.Target{N: 10000, FPR: 0.01}); err != nil || len(p.Notices) != 0 {
		t.Errorf("redisbloom -n 10000: %v, %v", p.Notices, err)
	}
	b, err := p.New()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		must(0, b.Add(key(i)))
	}
	g, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if f := g.(*Filter); f.profile != RedisBloom || f.growth != 4 || f.Links() != 3 || f.Config().FPR != 0.01 {
		t.Errorf("built %v links, expansion %d", f.Links(), f.growth)
	}
	p, err = planWith(t, []string{"-nonscaling"}, kind.Target{N: 10, FPR: 0.1})
	if err != nil || len(p.Extra) != 0 || !strings.Contains(p.Note, "non-scaling") {
		t.Errorf("non-scaling plan %+v, %v", p, err)
	}
	for _, c := range []struct {
		args []string
		t    kind.Target
	}{
		{nil, kind.Target{N: 100, BitsPerKey: 10}},
		{nil, kind.Target{N: 100, M: 1000, K: 3}},
		{nil, kind.Target{N: 100, FPR: 1.5}},
		{[]string{"-profile", "redis"}, kind.Target{N: 100, FPR: 0.01}},
		{[]string{"-expansion", "0"}, kind.Target{N: 100, FPR: 0.01}},
		{[]string{"-ratio", "1"}, kind.Target{N: 100, FPR: 0.01}},
		{[]string{"-profile", "redisbloom", "-ratio", "0.25"}, kind.Target{N: 100, FPR: 0.01}},
		{[]string{"-profile", "redisbloom"}, kind.Target{N: 100, FPR: 0.01, Seed: 3}},
	} {
		if _, err := planWith(t, c.args, c.t); !errors.Is(err, kind.ErrParam) {
			t.Errorf("%v %+v: %v", c.args, c.t, err)
		}
	}
	// A chain that cannot reach 1000× n says so instead of failing.
	p, err = planWith(t, []string{"-expansion", "1"}, kind.Target{N: 1e9, FPR: 0.01})
	if err != nil || !p.Extra[1].Warn {
		t.Errorf("1000× n with expansion 1: %+v, %v", p.Extra, err)
	}
}

// TestKindDescribeCombineExport: Describe warns when a non-scaling filter
// is full; Combine is the union; the redisbloom export round-trips and
// refuses a bloomlab chain; kind.Decode reads the file format.
func TestKindDescribeCombineExport(t *testing.T) {
	s := spec(t)
	ns := must(New(Config{Capacity: 5, NonScaling: true, Profile: RedisBloom}))
	for i := 0; !ns.full(); i++ {
		ns.Add(key(i))
	}
	warned := false
	for _, fd := range s.Describe(ns) {
		if fd.Warn && fd.Name == "full" {
			warned = true
		}
	}
	if !warned {
		t.Error("full non-scaling filter: no warning")
	}
	a, b := must(New(Config{})), must(New(Config{}))
	a.Add([]byte("a"))
	b.Add([]byte("b"))
	if err := s.Combine(a, b); err != nil || !a.Contains([]byte("b")) {
		t.Errorf("Combine: %v", err)
	}
	if err := s.Combine(a, ns); !errors.Is(err, kind.ErrIncompatible) {
		t.Errorf("Combine across profiles: %v", err)
	}
	var buf bytes.Buffer
	x := s.Exports[0]
	if err := x.Write(ns, &buf); err != nil {
		t.Fatal(err)
	}
	g, err := x.Read(&buf)
	if err != nil || !g.(*Filter).Equal(ns) {
		t.Errorf("export round trip: %v", err)
	}
	if err := x.Write(a, &buf); !errors.Is(err, kind.ErrParam) {
		t.Errorf("bloomlab chain exported: %v", err)
	}
	buf.Reset()
	must(a.WriteTo(&buf))
	h, err := kind.Decode(format.NewDecoder(&buf))
	if err != nil || !h.(*Filter).Equal(a) || h.Kind() != "scalable" {
		t.Errorf("kind.Decode: %v", err)
	}
	for _, fd := range s.Describe(a) {
		if fd.Warn {
			t.Errorf("healthy chain warns: %+v", fd)
		}
	}
}
