package cuckoo

import (
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"
)

// testdata/cfvectors.json.gz holds scenarios produced by RedisBloom 2.4's
// own cuckoo filter code (testdata/cfharness/README.md): inserts that
// grow the filter or are refused, deletes that trigger RedisBloom's
// compaction, CF.COMPACT, counts, checks, CF.INFO's fields and SCANDUMP
// chunks, for bucket sizes 1 … 255, max iterations 1 … 500 and
// expansions 0 … 8. TestRedisBloomC replays each on the RedisBloom
// profile and compares every reply and chunk.

type cScenario struct {
	Capacity uint64 `json:"capacity"`
	BS       int    `json:"bs"`
	MI       int    `json:"mi"`
	Exp      int    `json:"exp"`
	Steps    []struct {
		Op     string               `json:"op"`
		From   int                  `json:"from"`
		To     int                  `json:"to"`
		Stride int                  `json:"stride"`
		R      []int64              `json:"r"`
		Chunk  int                  `json:"chunk"`
		Chunks [][2]json.RawMessage `json:"chunks"`
	} `json:"steps"`
}

func TestRedisBloomC(t *testing.T) {
	fh, err := os.Open("testdata/cfvectors.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	var scs []cScenario
	if err := json.NewDecoder(zr).Decode(&scs); err != nil {
		t.Fatal(err)
	}
	replies, chunks := 0, 0
	for n, sc := range scs {
		name := fmt.Sprintf("scenario %d (capacity %d, bucket size %d, max iterations %d, expansion %d)", n, sc.Capacity, sc.BS, sc.MI, sc.Exp)
		f, err := NewRedisBloom(sc.Capacity, sc.BS, sc.MI, sc.Exp)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for si, st := range sc.Steps {
			switch st.Op {
			case "a", "x", "d", "c", "e":
				j := 0
				for i := st.From; i < st.To; i += st.Stride {
					key := []byte(fmt.Sprintf("k-%d", i))
					var got int64
					switch st.Op {
					case "a", "x":
						var err error
						added := true
						if st.Op == "x" {
							added, err = f.AddUnique(key)
						} else {
							err = f.Add(key)
						}
						switch {
						case errors.Is(err, ErrCannotGrow):
							got = -2
						case errors.Is(err, ErrFull):
							got = -1
						case err != nil:
							t.Fatal(err)
						case added:
							got = 1
						}
					case "d":
						if f.Delete(key) {
							got = 1
						}
					case "c":
						got = int64(f.Count(key))
					case "e":
						if f.Contains(key) {
							got = 1
						}
					}
					if got != st.R[j] {
						t.Fatalf("%s step %d %s k-%d: got %d, RedisBloom %d", name, si, st.Op, i, got, st.R[j])
					}
					j++
					replies++
				}
			case "i":
				in := f.Info()
				got := []int64{int64(in.Size), int64(in.Buckets), int64(in.SubFilters), int64(in.N), int64(in.Deletes),
					int64(in.BucketSize), int64(in.Expansion), int64(in.MaxKicks)}
				if fmt.Sprint(got) != fmt.Sprint(st.R) {
					t.Fatalf("%s step %d: info %v, RedisBloom %v", name, si, got, st.R)
				}
				replies++
			case "k":
				f.Compact()
			case "s":
				var want []Chunk
				for _, c := range st.Chunks {
					var it int64
					var hx string
					if json.Unmarshal(c[0], &it) != nil || json.Unmarshal(c[1], &hx) != nil {
						t.Fatal("bad chunk")
					}
					b, _ := hex.DecodeString(hx)
					want = append(want, Chunk{Iter: it, Data: b})
				}
				got, err := f.Dump(st.Chunk)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) {
					t.Fatalf("%s step %d: %d chunks, RedisBloom %d", name, si, len(got), len(want))
				}
				for i := range got {
					if got[i].Iter != want[i].Iter || hex.EncodeToString(got[i].Data) != hex.EncodeToString(want[i].Data) {
						t.Fatalf("%s step %d chunk %d: (%d, %x), RedisBloom (%d, %x)", name, si, i, got[i].Iter, got[i].Data, want[i].Iter, want[i].Data)
					}
					chunks++
				}
				g, err := loadChunks(want)
				if err != nil || !g.Equal(f) {
					t.Fatalf("%s step %d: RedisBloom's chunks load as a different filter (%v)", name, si, err)
				}
			default:
				t.Fatalf("unknown op %q", st.Op)
			}
		}
	}
	t.Logf("%d scenarios: %d replies and %d SCANDUMP chunks as RedisBloom's", len(scs), replies, chunks)
}
