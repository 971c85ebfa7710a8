package server

import (
	"fmt"
	"sync"
	"testing"
)

// TestModuleConfigs checks CONFIG GET and SET of RedisBloom's module
// configs under Dialect8 against RedisBloom 8.6.2 on Redis (replies
// recorded from the real module, with Redis 8's unprefixed names):
// defaults, the exact refusals, the ranges that follow the other cuckoo
// config, the texts kept as given, the error-rate cap, globs, several
// pairs at once and all-or-none.
func TestModuleConfigs(t *testing.T) {
	s := start(t, Config{})
	c := dial(t, s)
	failed := func(name, msg string) string {
		return "-ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + msg
	}
	rng := func(name, r string) string {
		return failed(name, "Value for `"+name+"` must be in the range "+r)
	}
	for _, tc := range []struct {
		want string
		args []string
	}{
		{`*[$"bf-error-rate", $"0.01"]`, []string{"CONFIG", "GET", "bf-error-rate"}},
		{`*[$"bf-error-rate", $"0.01", $"bf-initial-size", $"100", $"bf-expansion-factor", $"2"]`, []string{"CONFIG", "GET", "bf-*"}},
		{`*[$"cf-bucket-size", $"2", $"cf-initial-size", $"1024", $"cf-max-iterations", $"20", $"cf-expansion-factor", $"1", $"cf-max-expansions", $"32"]`, []string{"CONFIG", "GET", "CF-*"}},
		{`*[$"BF-Initial-Size", $"100"]`, []string{"CONFIG", "GET", "BF-Initial-Size", "bf-initial-size"}},
		{`*[$"cf-bucket-size", $"2"]`, []string{"CONFIG", "GET", "cf-?ucket-size"}},
		{rng("bf-error-rate", "(0.000000, 1.000000)"), []string{"CONFIG", "SET", "bf-error-rate", "1.5"}},
		{rng("bf-error-rate", "(0.000000, 1.000000)"), []string{"CONFIG", "SET", "bf-error-rate", "0"}},
		{rng("bf-error-rate", "(0.000000, 1.000000)"), []string{"CONFIG", "SET", "bf-error-rate", "1"}},
		{rng("bf-error-rate", "(0.000000, 1.000000)"), []string{"CONFIG", "SET", "bf-error-rate", "inf"}},
		{failed("bf-error-rate", "Invalid value for `bf-error-rate`"), []string{"CONFIG", "SET", "bf-error-rate", "abc"}},
		{failed("bf-error-rate", "Invalid value for `bf-error-rate`"), []string{"CONFIG", "SET", "bf-error-rate", "1e-400"}},
		{failed("bf-error-rate", "Invalid value for `bf-error-rate`"), []string{"CONFIG", "SET", "bf-error-rate", " 0.1"}},
		{failed("bf-error-rate", "Invalid value for `bf-error-rate`"), []string{"CONFIG", "SET", "bf-error-rate", "nan"}},
		{"+OK", []string{"CONFIG", "SET", "bf-error-rate", "0.5"}},
		{`*[$"bf-error-rate", $"0.25"]`, []string{"CONFIG", "GET", "bf-error-rate"}},
		{"+OK", []string{"CONFIG", "SET", "bf-error-rate", "1e-5"}},
		{`*[$"bf-error-rate", $"1e-5"]`, []string{"CONFIG", "GET", "bf-error-rate"}},
		{"+OK", []string{"CONFIG", "SET", "bf-error-rate", "0.0100"}},
		{`*[$"bf-error-rate", $"0.0100"]`, []string{"CONFIG", "GET", "bf-error-rate"}},
		{rng("bf-initial-size", "[1, 1073741824]"), []string{"CONFIG", "SET", "bf-initial-size", "0"}},
		{rng("bf-initial-size", "[1, 1073741824]"), []string{"CONFIG", "SET", "bf-initial-size", "4294967296"}},
		{failed("bf-initial-size", "Invalid value for `bf-initial-size`"), []string{"CONFIG", "SET", "bf-initial-size", "1.5"}},
		{failed("bf-initial-size", "Invalid value for `bf-initial-size`"), []string{"CONFIG", "SET", "bf-initial-size", "+5"}},
		{rng("bf-expansion-factor", "[0, 32768]"), []string{"CONFIG", "SET", "bf-expansion-factor", "-1"}},
		{rng("bf-expansion-factor", "[0, 32768]"), []string{"CONFIG", "SET", "bf-expansion-factor", "32769"}},
		{rng("cf-bucket-size", "[1, 255]"), []string{"CONFIG", "SET", "cf-bucket-size", "256"}},
		{rng("cf-initial-size", "[4, 1073741824]"), []string{"CONFIG", "SET", "cf-initial-size", "0"}},
		{rng("cf-max-iterations", "[1, 65535]"), []string{"CONFIG", "SET", "cf-max-iterations", "65536"}},
		{rng("cf-expansion-factor", "[0, 32768]"), []string{"CONFIG", "SET", "cf-expansion-factor", "32769"}},
		{rng("cf-max-expansions", "[1, 65536]"), []string{"CONFIG", "SET", "cf-max-expansions", "0"}},
		// cf-initial-size is at least two buckets; the bucket size at most
		// half the initial size, and the pairs apply in order.
		{"+OK", []string{"CONFIG", "SET", "cf-bucket-size", "3"}},
		{rng("cf-initial-size", "[6, 1073741824]"), []string{"CONFIG", "SET", "cf-initial-size", "5"}},
		{"+OK", []string{"CONFIG", "SET", "cf-initial-size", "100"}},
		{rng("cf-bucket-size", "[1, 50]"), []string{"CONFIG", "SET", "cf-bucket-size", "51"}},
		{"+OK", []string{"CONFIG", "SET", "cf-bucket-size", "2", "cf-initial-size", "4"}},
		{rng("cf-bucket-size", "[1, 2]"), []string{"CONFIG", "SET", "cf-bucket-size", "3", "cf-initial-size", "1024"}},
		{"+OK", []string{"CONFIG", "SET", "cf-initial-size", "1024", "cf-bucket-size", "2"}},
		// All or none: a refused pair leaves the ones before it unset.
		{rng("bf-error-rate", "(0.000000, 1.000000)"), []string{"CONFIG", "SET", "bf-initial-size", "200", "bf-error-rate", "7"}},
		{`*[$"bf-initial-size", $"100"]`, []string{"CONFIG", "GET", "bf-initial-size"}},
		{failed("bf-initial-size", "duplicate parameter"), []string{"CONFIG", "SET", "bf-initial-size", "200", "bf-initial-size", "300"}},
		{"-ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'", []string{"CONFIG", "SET", "bf-initial-size", "200", "nosuch", "1", "bf-initial-size", "3"}},
		{failed("BF-INITIAL-SIZE", "duplicate parameter"), []string{"CONFIG", "SET", "bf-initial-size", "200", "BF-INITIAL-SIZE", "3", "nosuch", "1"}},
		{"-ERR syntax error", []string{"CONFIG", "SET", "bf-error-rate", "0.1", "bf-initial-size"}},
		{"+OK", []string{"CONFIG", "SET", "BF-ERROR-RATE", "0.02", "bf-initial-size", "200", "bf-expansion-factor", "3"}},
		{`*[$"bf-error-rate", $"0.02", $"bf-initial-size", $"200", $"bf-expansion-factor", $"3"]`, []string{"CONFIG", "GET", "bf-*"}},
		{"-ERR Unknown option or number of arguments for CONFIG SET - 'maxmemory'", []string{"CONFIG", "SET", "maxmemory", "1"}},
	} {
		if got := c.do(tc.args...); got != tc.want {
			t.Errorf("%q: got %s, want %s", tc.args, got, tc.want)
		}
	}
	if e, n, x, _ := s.modcfg.bfDefaults(); e != 0.02 || n != 200 || x != 3 {
		t.Errorf("bfDefaults after CONFIG SET: %v %d %d", e, n, x)
	}
	if b, n, it, x, mx := s.modcfg.cfDefaults(); b != 2 || n != 1024 || it != 20 || x != 1 || mx != 32 {
		t.Errorf("cfDefaults: %d %d %d %d %d", b, n, it, x, mx)
	}
	// RESP3: a map, as Redis 8.
	c.do("HELLO", "3")
	if got, want := c.do("CONFIG", "GET", "cf-max-expansions"), `%[$"cf-max-expansions", $"32"]`; got != want {
		t.Errorf("RESP3 CONFIG GET: got %s, want %s", got, want)
	}
}

// TestModuleConfigsDialect24: RedisBloom 2.4.23 has no CONFIG parameters
// (its configs are module arguments), so under Dialect24 CONFIG GET and
// SET answer as before.
func TestModuleConfigsDialect24(t *testing.T) {
	s := start(t, Config{Dialect: Dialect24})
	c := dial(t, s)
	if got := c.do("CONFIG", "GET", "bf-*"); got != "*[]" {
		t.Errorf("CONFIG GET bf-*: %s", got)
	}
	if got, want := c.do("CONFIG", "SET", "bf-error-rate", "0.02"), "-ERR Unknown option or number of arguments for CONFIG SET - 'bf-error-rate'"; got != want {
		t.Errorf("CONFIG SET: got %s, want %s", got, want)
	}
}

// TestModuleConfigsAtomic: readers of the defaults (the commands that
// create keys) never see half of a CONFIG SET of several pairs, while
// clients set two consistent sets over and over.
func TestModuleConfigsAtomic(t *testing.T) {
	s := start(t, Config{})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := range 2 {
		c := dial(t, s)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				e, n := "0.02", "200"
				if (i+j)%2 == 0 {
					e, n = "0.01", "100"
				}
				if got := c.do("CONFIG", "SET", "bf-error-rate", e, "bf-initial-size", n); got != "+OK" {
					t.Errorf("CONFIG SET: %s", got)
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(stop) }()
	reads := 0
	for {
		select {
		case <-stop:
			if reads == 0 {
				t.Fatal("no reads")
			}
			return
		default:
		}
		e, n, _, _ := s.modcfg.bfDefaults()
		if got := fmt.Sprint(e, n); got != "0.01 100" && got != "0.02 200" {
			t.Fatalf("bfDefaults saw %s: half a CONFIG SET", got)
		}
		reads++
	}
}

// TestModuleConfigsAtStart: Config.ModuleConfigs sets the configs as one
// CONFIG SET at start, and New refuses a bad one with RedisBloom's text,
// an unknown name, a name given twice, and any under Dialect24.
func TestModuleConfigsAtStart(t *testing.T) {
	s := start(t, Config{ModuleConfigs: [][2]string{{"bf-error-rate", "0.001"}, {"CF-BUCKET-SIZE", "4"}}})
	c := dial(t, s)
	if got, want := c.do("CONFIG", "GET", "bf-error-rate", "cf-bucket-size"), `*[$"bf-error-rate", $"0.001", $"cf-bucket-size", $"4"]`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{ModuleConfigs: [][2]string{{"bf-error-rate", "2"}}}, "module config bf-error-rate=2: Value for `bf-error-rate` must be in the range (0.000000, 1.000000)"},
		{Config{ModuleConfigs: [][2]string{{"cf-bucket-size", "3"}, {"cf-initial-size", "5"}}}, "module config cf-initial-size=5: Value for `cf-initial-size` must be in the range [6, 1073741824]"},
		{Config{ModuleConfigs: [][2]string{{"error-rate", "0.1"}}}, `unknown module config "error-rate": want one of bf-error-rate, bf-initial-size, bf-expansion-factor, cf-bucket-size, cf-initial-size, cf-max-iterations, cf-expansion-factor, cf-max-expansions`},
		{Config{ModuleConfigs: [][2]string{{"bf-initial-size", "5"}, {"bf-initial-size", "6"}}}, "module config bf-initial-size given twice"},
		{Config{Dialect: Dialect24, ModuleConfigs: [][2]string{{"bf-initial-size", "5"}}}, "module configs (bf-initial-size) are RedisBloom 8's: they need dialect 8"},
	} {
		s, err := New(tc.cfg)
		if err == nil {
			s.Close()
			t.Errorf("%v: started", tc.cfg.ModuleConfigs)
		} else if err.Error() != tc.want {
			t.Errorf("%v:\n got %v\nwant %s", tc.cfg.ModuleConfigs, err, tc.want)
		}
	}
}
