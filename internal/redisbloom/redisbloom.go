// Package redisbloom holds RedisBloom's constants that the structures
// emulating it (cuckoo, scalable) share with the server and the command:
// its commands' defaults and limits and its RDB module types. They are
// RedisBloom's, not the structures' API: a Go user of cuckoo or scalable
// gets RedisBloom's defaults from a Config left at its zero values.
package redisbloom

// CF.* (the cuckoo filter, RedisBloom's cuckoo.c and rm_cuckoo.c).
const (
	// CFDefaultBucketSize, CFDefaultMaxIterations, CFDefaultExpansion
	// and CFDefaultCapacity are CF.RESERVE's and CF.ADD's defaults.
	CFDefaultBucketSize    = 2
	CFDefaultMaxIterations = 20
	CFDefaultExpansion     = 1
	CFDefaultCapacity      = 1024
	// CFMaxBucketSize is CF_MAX_BUCKET_SIZE.
	CFMaxBucketSize = 255
	// CFMaxIterations is CF_MAX_ITERATIONS, which bounds the relocation
	// budget of both of cuckoo's profiles.
	CFMaxIterations = 65535
	// CFMaxNumFilters is CF_MAX_NUM_FILTERS, which bounds the sub-filters
	// of a growing cuckoo filter.
	CFMaxNumFilters = 65535
	// CFMaxExpansion is CF_MAX_EXPANSION.
	CFMaxExpansion = 32768
	// CFMaxExpansions is CFMaxExpansions: CF.ADD and CF.INSERT reply
	// "Maximum expansions reached" to a filter of this many sub-filters
	// (a check of the command, not of the filter).
	CFMaxExpansions = 32
	// CFTypeName and CFEncVer are the cuckoo filter's RDB module type
	// name and the encoding version written.
	CFTypeName = "MBbloomCF"
	CFEncVer   = 4
)
