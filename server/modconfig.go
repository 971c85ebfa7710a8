package server

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// moduleConfig holds RedisBloom's module configs, the defaults of new
// keys, under Redis 8's unprefixed names (bf-error-rate,
// bf-initial-size, bf-expansion-factor, cf-bucket-size, cf-initial-size,
// cf-max-iterations, cf-expansion-factor, cf-max-expansions; RedisBloom
// 8.6.2's src/config.c), read and changed with CONFIG GET and CONFIG SET
// under Dialect8. Commands read them when they create a key with
// defaults, and must log what they made with explicit parameters, so
// that a replay does not depend on the configs of the replaying server.
//
// The configs live in memory only, as Redis's CONFIG SET does without
// CONFIG REWRITE: a restarted server starts from RedisBloom's defaults.
//
// Readers see one consistent set of values (one atomic pointer to an
// immutable modValues); CONFIG SET of several pairs replaces them all at
// once or, when one pair is refused, not at all.
type moduleConfig struct {
	mu sync.Mutex // serialises set
	v  atomic.Pointer[modValues]
}

// The module configs, in RedisBloom's order (CONFIG GET's order).
const (
	mcBFErrorRate = iota
	mcBFInitialSize
	mcBFExpansion
	mcCFBucketSize
	mcCFInitialSize
	mcCFMaxIterations
	mcCFExpansion
	mcCFMaxExpansions
	numModConfigs
	// mcBFLayout is bloomlab's own config, bloomlab-bf-layout: the
	// layout of new BF keys. It is no RedisBloom config (no RedisBloom
	// name starts with "bloomlab-"), and exists in every dialect.
	mcBFLayout = numModConfigs
)

// bfLayoutName is the name of bloomlab's config mcBFLayout.
const bfLayoutName = "bloomlab-bf-layout"

// modName returns the name of config p (a module config or mcBFLayout).
func modName(p int) string {
	if p == mcBFLayout {
		return bfLayoutName
	}
	return modParams[p].name
}

// modParam is one module config: its name and its range. bf-error-rate,
// the only double, lies in the open interval (0, 1); the integers in the
// closed interval [min, max], where cf-initial-size's minimum and
// cf-bucket-size's maximum follow the other's current value as in
// RedisBloom (a filter's capacity is at least two buckets).
type modParam struct {
	name     string
	min, max int64
	def      string
}

var modParams = [numModConfigs]modParam{
	mcBFErrorRate:     {"bf-error-rate", 0, 1, "0.01"},
	mcBFInitialSize:   {"bf-initial-size", 1, 1 << 30, "100"},
	mcBFExpansion:     {"bf-expansion-factor", 0, 32768, "2"},
	mcCFBucketSize:    {"cf-bucket-size", 1, 255, "2"},
	mcCFInitialSize:   {"cf-initial-size", 4, 1 << 30, "1024"},
	mcCFMaxIterations: {"cf-max-iterations", 1, 65535, "20"},
	mcCFExpansion:     {"cf-expansion-factor", 0, 32768, "1"},
	mcCFMaxExpansions: {"cf-max-expansions", 1, 65536, "32"},
}

// bfErrorRateCap is the largest error rate RedisBloom 8 gives a filter:
// a larger one (in BF.RESERVE or bf-error-rate) is taken as this.
const bfErrorRateCap = 0.25

// modValues is one immutable set of the configs: the error rate, the
// integers (index mcBFErrorRate unused), and each config's text as
// CONFIG GET answers it (what CONFIG SET was given, as RedisBloom keeps
// it, or the capped error rate).
type modValues struct {
	errRate float64
	n       [numModConfigs]int64
	text    [numModConfigs]string
	layout  bfLayout // bloomlab-bf-layout
}

// init sets RedisBloom's defaults.
func (m *moduleConfig) init() {
	v := &modValues{}
	for i, p := range modParams {
		v.text[i] = p.def
		if i == mcBFErrorRate {
			v.errRate, _ = strconv.ParseFloat(p.def, 64)
		} else {
			v.n[i], _ = strconv.ParseInt(p.def, 10, 64)
		}
	}
	m.v.Store(v)
}

// bfDefaults are the error rate, capacity, expansion and layout of a
// filter that BF.ADD, BF.MADD or BF.INSERT creates without them (the
// layout also BF.RESERVE's).
func (m *moduleConfig) bfDefaults() (errRate float64, capacity, expansion int64, layout bfLayout) {
	v := m.v.Load()
	return v.errRate, v.n[mcBFInitialSize], v.n[mcBFExpansion], v.layout
}

// layoutParam is bloomlab-bf-layout as CONFIG GET answers it.
func (m *moduleConfig) layoutParam() [2]string {
	return [2]string{bfLayoutName, m.v.Load().layout.String()}
}

// cfDefaults are the bucket size, capacity, max iterations and expansion
// of a cuckoo filter that CF.ADD or CF.INSERT creates without them, and
// the most sub-filters one may have.
func (m *moduleConfig) cfDefaults() (bucketSize, capacity, maxIter, expansion, maxExpansions int64) {
	v := m.v.Load()
	return v.n[mcCFBucketSize], v.n[mcCFInitialSize], v.n[mcCFMaxIterations], v.n[mcCFExpansion], v.n[mcCFMaxExpansions]
}

// setModuleConfigs applies Config.ModuleConfigs as one CONFIG SET.
func (s *Server) setModuleConfigs() error {
	if len(s.cfg.ModuleConfigs) == 0 {
		return nil
	}
	if !s.d.moduleConfigs {
		return fmt.Errorf("module configs (%s) are RedisBloom 8's: they need dialect 8", s.cfg.ModuleConfigs[0][0])
	}
	pairs := make([]modSet, 0, len(s.cfg.ModuleConfigs))
	for _, kv := range s.cfg.ModuleConfigs {
		p := lookupModConfig([]byte(kv[0]), true)
		if p < 0 {
			return fmt.Errorf("unknown module config %q: want one of %s", kv[0], modConfigNames())
		}
		for _, q := range pairs {
			if q.param == p {
				return fmt.Errorf("module config %s given twice", modName(p))
			}
		}
		pairs = append(pairs, modSet{p, []byte(kv[1])})
	}
	if i, msg := s.modcfg.set(pairs); i >= 0 {
		return fmt.Errorf("module config %s=%s: %s", modName(pairs[i].param), pairs[i].value, msg)
	}
	return nil
}

// modConfigNames lists the module configs' names.
func modConfigNames() string {
	names := make([]string, len(modParams))
	for i, p := range modParams {
		names[i] = p.name
	}
	return strings.Join(names, ", ")
}

// lookupModConfig returns the index of the config named name
// (case-insensitively): one of RedisBloom's module configs if modules
// (Dialect8), or bloomlab-bf-layout; -1 for another name.
func lookupModConfig(name []byte, modules bool) int {
	if eqFold(name, bfLayoutName) {
		return mcBFLayout
	}
	if !modules {
		return -1
	}
	for i, p := range modParams {
		if eqFold(name, p.name) {
			return i
		}
	}
	return -1
}

// get returns each config's name and text, in RedisBloom's order.
func (m *moduleConfig) get() [][2]string {
	v := m.v.Load()
	out := make([][2]string, numModConfigs)
	for i, p := range modParams {
		out[i] = [2]string{p.name, v.text[i]}
	}
	return out
}

// modSet is one pair of a CONFIG SET: the config's index and its value.
type modSet struct {
	param int
	value []byte
}

// set applies the pairs in order, each checked against the values the
// pairs before it made (as Redis applies them), and stores the result
// only if every pair is valid. It returns the refused pair's index and
// RedisBloom's text for it, or -1 and "".
func (m *moduleConfig) set(pairs []modSet) (int, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v := *m.v.Load()
	for i, ps := range pairs {
		if ps.param == mcBFLayout {
			l, ok := parseLayout(ps.value)
			if !ok {
				return i, "Invalid value for `" + bfLayoutName + "` (want redisbloom or blocked)"
			}
			v.layout = l
			continue
		}
		p := modParams[ps.param]
		if ps.param == mcBFErrorRate {
			f, ok := parseFloat(ps.value)
			if !ok {
				return i, "Invalid value for `" + p.name + "`"
			}
			if !(f > 0 && f < 1) {
				return i, "Value for `" + p.name + "` must be in the range (0.000000, 1.000000)"
			}
			v.text[ps.param] = string(ps.value)
			if f > bfErrorRateCap {
				f = bfErrorRateCap
				v.text[ps.param] = formatDouble8(f)
			}
			v.errRate = f
			continue
		}
		n, ok := parseInt(ps.value)
		if !ok {
			return i, "Invalid value for `" + p.name + "`"
		}
		lo, hi := p.min, p.max
		switch ps.param {
		case mcCFInitialSize:
			lo = 2 * v.n[mcCFBucketSize]
		case mcCFBucketSize:
			hi = min(v.n[mcCFInitialSize]/2, 255)
		}
		if n < lo || n > hi {
			return i, "Value for `" + p.name + "` must be in the range [" + strconv.FormatInt(lo, 10) + ", " + strconv.FormatInt(hi, 10) + "]"
		}
		v.n[ps.param] = n
		v.text[ps.param] = string(ps.value)
	}
	m.v.Store(&v)
	return -1, ""
}
