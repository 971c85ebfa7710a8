package scalable

import (
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// The transcripts in testdata/redisbloom-2.4.23.json.gz (a gzip of
// shared/vectors/redisbloom-2.4.23.json, sha256 edd653e1…7983335) were
// recorded from a real RedisBloom 2.4.23: each is a sequence of commands
// with the exact replies. TestRedisBloomTranscripts replays every BF.*
// command (and the SET, TYPE and error cases that involve Bloom keys) on
// a small emulation of the BF.* commands built on this package, and
// compares every reply: each key's answer to MADD, ADD, INSERT, EXISTS and
// MEXISTS, every BF.INFO field, BF.CARD, and every BF.SCANDUMP chunk byte
// for byte. Then it loads each dump back with LoadChunks (as
// BF.LOADCHUNK would) and checks the copy is equal.

type vector struct {
	Name     string `json:"name"`
	Commands []struct {
		Args  []string `json:"args"`
		Reply any      `json:"reply"`
	} `json:"commands"`
}

func loadVectors(t testing.TB) []vector {
	fh, err := os.Open("testdata/redisbloom-2.4.23.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	var vs []vector
	if err := json.NewDecoder(zr).Decode(&vs); err != nil {
		t.Fatal(err)
	}
	return vs
}

// Replies in the recorded JSON's shape (vectors/README.md), normalised:
// integers as int64, bulk strings as bulk (hex), simple strings and
// errors as themselves, nil as nil, arrays as []any.
type (
	simple string
	rerr   string
	bulk   string // hex
)

func normalize(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case float64:
		return int64(x)
	case string:
		return bulk(hex.EncodeToString([]byte(x)))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case map[string]any:
		if s, ok := x["simple"].(string); ok {
			return simple(s)
		}
		if s, ok := x["error"].(string); ok {
			return rerr(s)
		}
		if s, ok := x["hex"].(string); ok {
			return bulk(s)
		}
	}
	panic(fmt.Sprintf("unexpected reply %#v", v))
}

func bulkOf(b []byte) bulk { return bulk(hex.EncodeToString(b)) }

// server emulates the BF.* commands of RedisBloom 2.4 on this package.
type server struct {
	bf      map[string]*Filter
	strings map[string]bool
	foreign map[string]bool // keys of other modules' types (CMS.*)
}

var errSkip = errors.New("not a Bloom command")

func (s *server) lookup(key string) (*Filter, any) {
	if s.strings[key] {
		return nil, rerr("WRONGTYPE Operation against a key holding the wrong kind of value")
	}
	return s.bf[key], nil
}

func wrongArity(cmd string) rerr {
	return rerr(fmt.Sprintf("ERR wrong number of arguments for '%s' command", strings.ToLower(cmd)))
}

func argIndex(args []string, name string) int {
	for i, a := range args {
		if strings.EqualFold(a, name) {
			return i
		}
	}
	return -1
}

// add replies to one item of an add, and reports whether to go on.
func addReply(f *Filter, item string) (any, bool) {
	present, err := f.Add([]byte(item))
	switch {
	case errors.Is(err, ErrFull):
		return rerr("ERR non scaling filter is full"), false
	case err != nil:
		return rerr(err.Error()), false
	case present:
		return int64(0), true
	}
	return int64(1), true
}

func (s *server) do(args []string) (any, error) {
	cmd := strings.ToUpper(args[0])
	if strings.HasPrefix(cmd, "CMS.") {
		if strings.HasPrefix(cmd, "CMS.INIT") {
			s.foreign[args[1]] = true
		}
		return nil, errSkip
	}
	switch cmd {
	case "SET":
		s.strings[args[1]] = true
		return simple("OK"), nil
	case "TYPE":
		switch {
		case s.bf[args[1]] != nil:
			return simple("MBbloom--"), nil
		case s.strings[args[1]]:
			return simple("string"), nil
		case s.foreign[args[1]]:
			return nil, errSkip
		}
		return simple("none"), nil
	case "BF.RESERVE":
		if len(args) < 4 || len(args) > 7 {
			return wrongArity(cmd), nil
		}
		eps, err := strconv.ParseFloat(args[2], 64)
		if err != nil {
			return rerr("ERR bad error rate"), nil
		}
		if eps >= 1 || eps <= 0 {
			return rerr("ERR (0 < error rate range < 1) "), nil
		}
		capacity, err := strconv.ParseInt(args[3], 10, 64)
		if err != nil {
			return rerr("ERR bad capacity"), nil
		}
		if capacity <= 0 {
			return rerr("ERR (capacity should be larger than 0)"), nil
		}
		nonScaling := argIndex(args, "NONSCALING") >= 0
		expansion := int64(2)
		if i := argIndex(args, "EXPANSION"); i >= 0 {
			if i+1 == len(args) {
				return rerr("ERR no expansion"), nil
			}
			if nonScaling {
				return rerr("Nonscaling filters cannot expand"), nil
			}
			if expansion, err = strconv.ParseInt(args[i+1], 10, 64); err != nil {
				return rerr("ERR bad expansion"), nil
			}
		}
		if f, r := s.lookup(args[1]); r != nil || f != nil {
			if r != nil {
				return r, nil
			}
			return rerr("ERR item exists"), nil
		}
		f, err := NewRedisBloom(eps, uint64(capacity), uint32(expansion), nonScaling)
		if err != nil {
			return nil, err
		}
		s.bf[args[1]] = f
		return simple("OK"), nil
	case "BF.ADD", "BF.MADD":
		if cmd == "BF.ADD" && len(args) != 3 || len(args) < 3 {
			return wrongArity(cmd), nil
		}
		f, r := s.lookup(args[1])
		if r != nil {
			return r, nil
		}
		if f == nil {
			var err error
			if f, err = NewRedisBloom(defaultFPR, defaultCapacity, defaultExpansion, false); err != nil {
				return nil, err
			}
			s.bf[args[1]] = f
		}
		if cmd == "BF.ADD" {
			rep, _ := addReply(f, args[2])
			return rep, nil
		}
		var out []any
		for _, item := range args[2:] {
			rep, more := addReply(f, item)
			out = append(out, rep)
			if !more {
				break
			}
		}
		return out, nil
	case "BF.INSERT":
		return s.insert(args)
	case "BF.EXISTS", "BF.MEXISTS":
		if cmd == "BF.EXISTS" && len(args) != 3 || len(args) < 3 {
			return wrongArity(cmd), nil
		}
		f, _ := s.lookup(args[1])
		var out []any
		for _, item := range args[2:] {
			v := int64(0)
			if f != nil && f.Contains([]byte(item)) {
				v = 1
			}
			out = append(out, v)
		}
		if cmd == "BF.EXISTS" {
			return out[0], nil
		}
		return out, nil
	case "BF.CARD":
		f, r := s.lookup(args[1])
		if r != nil {
			return r, nil
		}
		if f == nil {
			return int64(0), nil
		}
		return int64(f.N()), nil
	case "BF.INFO":
		f, r := s.lookup(args[1])
		if r != nil {
			return r, nil
		}
		if f == nil {
			return rerr("ERR not found"), nil
		}
		info := f.RedisInfo()
		var exp any = int64(info.Expansion)
		if info.Expansion == 0 {
			exp = nil
		}
		fields := []struct {
			name, short string
			v           any
		}{
			{"Capacity", "capacity", int64(info.Capacity)},
			{"Size", "size", int64(info.Size)},
			{"Number of filters", "filters", int64(info.Filters)},
			{"Number of items inserted", "items", int64(info.Items)},
			{"Expansion rate", "expansion", exp},
		}
		if len(args) == 3 {
			for _, fd := range fields {
				if strings.EqualFold(args[2], fd.short) {
					return []any{fd.v}, nil
				}
			}
			return rerr("Invalid information value"), nil
		}
		var out []any
		for _, fd := range fields {
			out = append(out, simple(fd.name), fd.v)
		}
		return out, nil
	case "BF.SCANDUMP":
		f, r := s.lookup(args[1])
		if r != nil || f == nil {
			return rerr("ERR not found"), nil
		}
		it, err := strconv.ParseInt(args[2], 10, 64)
		if err != nil {
			return rerr("Second argument must be numeric"), nil
		}
		next, data, err := f.ScanDump(nil, it, 0)
		if err != nil {
			return nil, err
		}
		return []any{next, bulkOf(data)}, nil
	}
	return nil, errSkip
}

func (s *server) insert(args []string) (any, error) {
	if len(args) < 4 {
		return wrongArity(args[0]), nil
	}
	capacity, eps, expansion, create, nonScaling := int64(defaultCapacity), defaultFPR, int64(defaultExpansion), true, false
	items := -1
	for pos := 2; pos < len(args) && items < 0; {
		a := strings.ToLower(args[pos])
		var err error
		switch {
		case strings.HasPrefix(a, "i"):
			pos++
			items = pos
		case strings.HasPrefix(a, "er"):
			if eps, err = strconv.ParseFloat(args[pos+1], 64); err != nil {
				return rerr("Bad error rate"), nil
			}
			pos += 2
		case strings.HasPrefix(a, "e"):
			if expansion, err = strconv.ParseInt(args[pos+1], 10, 64); err != nil {
				return rerr("Bad expansion"), nil
			}
			pos += 2
		case strings.HasPrefix(a, "c"):
			if capacity, err = strconv.ParseInt(args[pos+1], 10, 64); err != nil {
				return rerr("Bad capacity"), nil
			}
			pos += 2
		case strings.HasPrefix(a, "noc"):
			create = false
			pos++
		case strings.HasPrefix(a, "n"):
			nonScaling = true
			pos++
		default:
			return rerr("Unknown argument received"), nil
		}
	}
	if items < 0 || items == len(args) {
		return wrongArity(args[0]), nil
	}
	if eps <= 0 || eps >= 1 || capacity < 1 || expansion < 1 {
		return rerr("Bad argument received"), nil
	}
	f, r := s.lookup(args[1])
	if r != nil {
		return r, nil
	}
	if f == nil {
		if !create {
			return rerr("ERR not found"), nil
		}
		var err error
		if f, err = NewRedisBloom(eps, uint64(capacity), uint32(expansion), nonScaling); err != nil {
			return nil, err
		}
		s.bf[args[1]] = f
	}
	var out []any
	for _, item := range args[items:] {
		rep, more := addReply(f, item)
		out = append(out, rep)
		if !more {
			break
		}
	}
	return out, nil
}

func TestRedisBloomTranscripts(t *testing.T) {
	vs := loadVectors(t)
	s := &server{bf: map[string]*Filter{}, strings: map[string]bool{}, foreign: map[string]bool{}}
	replayed, skipped, dumped := 0, 0, 0
	for _, v := range vs {
		for i, c := range v.Commands {
			got, err := s.do(c.Args)
			if errors.Is(err, errSkip) {
				if !strings.HasPrefix(c.Args[0], "CMS.") && c.Args[0] != "TYPE" {
					t.Errorf("%s #%d: command %s not replayed", v.Name, i, c.Args[0])
				}
				skipped++
				continue
			}
			if err != nil {
				t.Fatalf("%s #%d %v: %v", v.Name, i, c.Args[:min(len(c.Args), 4)], err)
			}
			want := normalize(c.Reply)
			if !reflect.DeepEqual(normalize(toJSON(got)), want) {
				t.Errorf("%s #%d %v:\n got %s\nwant %s", v.Name, i, c.Args[:min(len(c.Args), 4)], short(got), short(want))
			}
			replayed++
		}
	}
	// Every filter of the transcripts loads back from its own dump.
	for key, f := range s.bf {
		chunks, err := f.Dump(0)
		if err != nil {
			t.Fatal(err)
		}
		g, err := LoadChunks(chunks)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if !g.Equal(f) || !reflect.DeepEqual(g.RedisInfo(), f.RedisInfo()) {
			t.Errorf("%s: reloaded filter differs", key)
		}
		dumped++
	}
	// 66 commands (the other 15 are CMS.* and TYPE of a Count-Min key)
	// and the 5 Bloom filters they create.
	if replayed != 66 || skipped != 15 || dumped != 5 {
		t.Errorf("replayed %d commands, skipped %d, reloaded %d dumps: want 66, 15, 5", replayed, skipped, dumped)
	}
	t.Logf("%d commands replayed (%d skipped), %d filters dumped and reloaded", replayed, skipped, dumped)
}

// toJSON turns an emulated reply into the recorded JSON shape.
func toJSON(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case int64:
		return float64(x)
	case simple:
		return map[string]any{"simple": string(x)}
	case rerr:
		return map[string]any{"error": string(x)}
	case bulk:
		b, _ := hex.DecodeString(string(x))
		if utf8.Valid(b) {
			return string(b)
		}
		return map[string]any{"hex": string(x)}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toJSON(e)
		}
		return out
	}
	panic(fmt.Sprintf("unexpected emulated reply %#v", v))
}

func short(v any) string {
	s := fmt.Sprint(v)
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
