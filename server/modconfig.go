package server

import (
	"math"
	"sync/atomic"
)

// moduleConfig holds RedisBloom's module configs, the defaults of new
// keys (Redis 8's unprefixed names: bf-error-rate, bf-initial-size,
// bf-expansion-factor, cf-bucket-size, cf-initial-size,
// cf-max-iterations, cf-expansion-factor, cf-max-expansions; RedisBloom
// 8.6.2's src/config.c). Commands read them when they create a key with
// defaults, and must log what they made with explicit parameters, so
// that a replay does not depend on the configs of the replaying server.
type moduleConfig struct {
	bfErrorRate  atomic.Uint64 // float64 bits
	bfInitial    atomic.Int64
	bfExpansion  atomic.Int64
	cfBucketSize atomic.Int64
	cfInitial    atomic.Int64
	cfMaxIter    atomic.Int64
	cfExpansion  atomic.Int64
	cfMaxExp     atomic.Int64
}

// init sets RedisBloom's defaults.
func (m *moduleConfig) init() {
	m.bfErrorRate.Store(math.Float64bits(0.01))
	m.bfInitial.Store(100)
	m.bfExpansion.Store(2)
	m.cfBucketSize.Store(2)
	m.cfInitial.Store(1024)
	m.cfMaxIter.Store(20)
	m.cfExpansion.Store(1)
	m.cfMaxExp.Store(32)
}

// bfDefaults are the error rate, capacity and expansion of a filter that
// BF.ADD, BF.MADD or BF.INSERT creates without them.
func (m *moduleConfig) bfDefaults() (errRate float64, capacity, expansion int64) {
	return math.Float64frombits(m.bfErrorRate.Load()), m.bfInitial.Load(), m.bfExpansion.Load()
}

// cfDefaults are the bucket size, capacity, max iterations and expansion
// of a cuckoo filter that CF.ADD or CF.INSERT creates without them, and
// the most sub-filters one may have.
func (m *moduleConfig) cfDefaults() (bucketSize, capacity, maxIter, expansion, maxExpansions int64) {
	return m.cfBucketSize.Load(), m.cfInitial.Load(), m.cfMaxIter.Load(), m.cfExpansion.Load(), m.cfMaxExp.Load()
}
