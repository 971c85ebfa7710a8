package server

import "strings"

// COMMAND DOCS of RedisBloom's commands as Redis 8 answers them (Dialect8):
// group "module", module "bf" (RedisBloom registers every family under its
// one module name), the command's complexity, history and arguments.
// moduleDocs is RedisBloom 8.6.2's own metadata (src/cmd_info), read from
// the real module with COMMAND DOCS, its wording kept as it is (BF.INFO's
// "capcaity" included); a command that is not served has no entry in
// COMMAND DOCS whatever this table holds. Dialect24 answers as Redis 7.0
// with RedisBloom 2.4.23 answered before: summary, since and the family
// as the group.

// cmdDoc is one command's documentation.
type cmdDoc struct {
	summary, since, complexity string
	history                    [][2]string // version, change
	args                       []docArg
}

// docArg is one argument in COMMAND DOCS: its name and type, whether it
// is a key (and its key spec's index), its token, its flags
// (space-separated: optional, multiple) and its sub-arguments.
type docArg struct {
	name, typ, token, flags string
	key                     bool
	keySpec                 int
	args                    []docArg
}

// isModuleCommand reports whether name is one of RedisBloom's commands.
func isModuleCommand(name string) bool {
	_, ok := moduleDocs[name]
	return ok
}

// commandDocs writes cmd's COMMAND DOCS entry (after its name).
func (c *client) commandDocs(cmd *command) {
	doc, ok := moduleDocs[cmd.name]
	if !ok || !c.d.moduleCommands {
		c.w.Map(3)
		c.w.BulkString("summary")
		c.w.BulkString(cmd.summary)
		c.w.BulkString("since")
		c.w.BulkString(cmd.since)
		c.w.BulkString("group")
		c.w.BulkString(cmd.group)
		return
	}
	n := 2
	if doc.summary != "" {
		n += 3 // summary, since, complexity
	}
	if doc.history != nil {
		n++
	}
	if doc.args != nil {
		n++
	}
	c.w.Map(n)
	if doc.summary != "" {
		c.w.BulkString("summary")
		c.w.BulkString(doc.summary)
		c.w.BulkString("since")
		c.w.BulkString(doc.since)
	}
	c.w.BulkString("group")
	c.w.BulkString("module")
	if doc.summary != "" {
		c.w.BulkString("complexity")
		c.w.BulkString(doc.complexity)
	}
	c.w.BulkString("module")
	c.w.BulkString("bf")
	if doc.history != nil {
		c.w.BulkString("history")
		c.w.Set(len(doc.history))
		for _, h := range doc.history {
			c.w.Array(2)
			c.w.BulkString(h[0])
			c.w.BulkString(h[1])
		}
	}
	if doc.args != nil {
		c.w.BulkString("arguments")
		c.docArgs(doc.args)
	}
}

func (c *client) docArgs(args []docArg) {
	c.w.Array(len(args))
	for _, a := range args {
		n := 2
		if a.key {
			n++
		}
		if a.token != "" {
			n++
		}
		if a.flags != "" {
			n++
		}
		if a.args != nil {
			n++
		}
		c.w.Map(n)
		c.w.BulkString("name")
		c.w.BulkString(a.name)
		c.w.BulkString("type")
		c.w.BulkString(a.typ)
		if a.key {
			c.w.BulkString("key_spec_index")
			c.w.Int(int64(a.keySpec))
		}
		if a.token != "" {
			c.w.BulkString("token")
			c.w.BulkString(a.token)
		}
		if a.flags != "" {
			flags := strings.Fields(a.flags)
			c.w.BulkString("flags")
			c.w.Set(len(flags))
			for _, f := range flags {
				c.w.Simple(f)
			}
		}
		if a.args != nil {
			c.w.BulkString("arguments")
			c.docArgs(a.args)
		}
	}
}

// moduleDocs: RedisBloom 8.6.2's COMMAND DOCS, BF, CF, CMS, TOPK, TDIGEST.
var moduleDocs = map[string]cmdDoc{
	"bf.add": {summary: "Adds an item to a Bloom Filter", since: "1.0.0", complexity: "O(k), where k is the number of hash functions used by the last sub-filter", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "item", typ: "string"},
	}},
	"bf.card": {summary: "Returns the cardinality of a Bloom filter", since: "2.4.4", complexity: "O(1)", args: []docArg{
		{name: "key", typ: "key", key: true},
	}},
	"bf.debug": {},
	"bf.exists": {summary: "Checks whether an item exists in a Bloom Filter", since: "1.0.0", complexity: "O(k), where k is the number of hash functions used by the last sub-filter", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "item", typ: "string"},
	}},
	"bf.info": {summary: "Returns information about a Bloom Filter", since: "1.0.0", complexity: "O(1)", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "single_value", typ: "oneof", flags: "optional", args: []docArg{
			{name: "capcaity", typ: "pure-token", token: "CAPACITY"},
			{name: "SIZE", typ: "pure-token", token: "SIZE"},
			{name: "FILTERS", typ: "pure-token", token: "FILTERS"},
			{name: "ITEMS", typ: "pure-token", token: "ITEMS"},
			{name: "EXPANSION", typ: "pure-token", token: "EXPANSION"},
		}},
	}},
	"bf.insert": {summary: "Adds one or more items to a Bloom Filter. A filter will be created if it does not exist", since: "1.0.0", complexity: "O(k * n), where k is the number of hash functions and n is the number of items", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "capacity", typ: "block", token: "CAPACITY", flags: "optional", args: []docArg{
			{name: "capacity", typ: "integer"},
		}},
		{name: "error", typ: "block", token: "ERROR", flags: "optional", args: []docArg{
			{name: "error", typ: "double"},
		}},
		{name: "expansion", typ: "block", token: "EXPANSION", flags: "optional", args: []docArg{
			{name: "expansion", typ: "integer"},
		}},
		{name: "nocreate", typ: "pure-token", token: "NOCREATE", flags: "optional"},
		{name: "nonscaling", typ: "pure-token", token: "NONSCALING", flags: "optional"},
		{name: "items", typ: "pure-token", token: "ITEMS"},
		{name: "item", typ: "string", flags: "multiple"},
	}},
	"bf.loadchunk": {summary: "Restores a filter previously saved using SCANDUMP", since: "1.0.0", complexity: "O(n), where n is the capacity", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "iterator", typ: "integer"},
		{name: "data", typ: "string"},
	}},
	"bf.madd": {summary: "Adds one or more items to a Bloom Filter. A filter will be created if it does not exist", since: "1.0.0", complexity: "O(k * n), where k is the number of hash functions and n is the number of items", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "item", typ: "string", flags: "multiple"},
	}},
	"bf.mexists": {summary: "Checks whether one or more items exist in a Bloom Filter", since: "1.0.0", complexity: "O(k * n), where k is the number of hash functions and n is the number of items", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "item", typ: "string", flags: "multiple"},
	}},
	"bf.reserve": {summary: "Creates a new Bloom Filter", since: "1.0.0", complexity: "O(1)", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "error_rate", typ: "double"},
		{name: "capacity", typ: "integer"},
		{name: "expansion", typ: "block", token: "EXPANSION", flags: "optional", args: []docArg{
			{name: "expansion", typ: "integer"},
		}},
		{name: "nonscaling", typ: "pure-token", token: "NONSCALING", flags: "optional"},
	}},
	"bf.scandump": {summary: "Begins an incremental save of the bloom filter", since: "1.0.0", complexity: "O(n), where n is the capacity", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "iterator", typ: "integer"},
	}},
	"cf.add": {summary: "Adds an item to a Cuckoo Filter", since: "1.0.0", complexity: "O(k + i), where k is the number of sub-filters and i is maxIterations", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "item", typ: "string"},
	}},
	"cf.addnx": {summary: "Adds an item to a Cuckoo Filter if the item did not exist previously.", since: "1.0.0", complexity: "O(k + i), where k is the number of sub-filters and i is maxIterations", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "item", typ: "string"},
	}},
	"cf.compact": {},
	"cf.count": {summary: "Return the number of times an item might be in a Cuckoo Filter", since: "1.0.0", complexity: "O(k), where k is the number of sub-filters", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "item", typ: "string"},
	}},
	"cf.debug": {},
	"cf.del": {summary: "Deletes an item from a Cuckoo Filter", since: "1.0.0", complexity: "O(k), where k is the number of sub-filters", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "item", typ: "string"},
	}},
	"cf.exists": {summary: "Checks whether one or more items exist in a Cuckoo Filter", since: "1.0.0", complexity: "O(k), where k is the number of sub-filters", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "item", typ: "string"},
	}},
	"cf.info": {summary: "Returns information about a Cuckoo Filter", since: "1.0.0", complexity: "O(1)", args: []docArg{
		{name: "key", typ: "key", key: true},
	}},
	"cf.insert": {summary: "Adds one or more items to a Cuckoo Filter. A filter will be created if it does not exist", since: "1.0.0", complexity: "O(n * (k + i)), where n is the number of items, k is the number of sub-filters and i is maxIterations", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "capacity", typ: "block", flags: "optional", args: []docArg{
			{name: "capacity", typ: "pure-token", token: "CAPACITY"},
			{name: "capacity", typ: "integer"},
		}},
		{name: "nocreate", typ: "pure-token", token: "NOCREATE", flags: "optional"},
		{name: "items", typ: "pure-token", token: "ITEMS"},
		{name: "item", typ: "string", flags: "multiple"},
	}},
	"cf.insertnx": {summary: "Adds one or more items to a Cuckoo Filter if the items did not exist previously. A filter will be created if it does not exist", since: "1.0.0", complexity: "O(n * (k + i)), where n is the number of items, k is the number of sub-filters and i is maxIterations", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "capacity", typ: "block", flags: "optional", args: []docArg{
			{name: "capacity", typ: "pure-token", token: "CAPACITY"},
			{name: "capacity", typ: "integer"},
		}},
		{name: "nocreate", typ: "pure-token", token: "NOCREATE", flags: "optional"},
		{name: "items", typ: "pure-token", token: "ITEMS"},
		{name: "item", typ: "string", flags: "multiple"},
	}},
	"cf.loadchunk": {summary: "Restores a filter previously saved using SCANDUMP", since: "1.0.0", complexity: "O(n), where n is the capacity", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "iterator", typ: "integer"},
		{name: "data", typ: "string"},
	}},
	"cf.mexists": {summary: "Checks whether one or more items exist in a Cuckoo Filter", since: "1.0.0", complexity: "O(k * n), where k is the number of sub-filters and n is the number of items", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "item", typ: "string", flags: "multiple"},
	}},
	"cf.reserve": {summary: "Creates a new Cuckoo Filter", since: "1.0.0", complexity: "O(1)", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "capacity", typ: "integer"},
		{name: "bucketsize", typ: "block", token: "BUCKETSIZE", flags: "optional", args: []docArg{
			{name: "bucketsize", typ: "integer"},
		}},
		{name: "maxiterations", typ: "block", token: "MAXITERATIONS", flags: "optional", args: []docArg{
			{name: "maxiterations", typ: "integer"},
		}},
		{name: "expansion", typ: "block", token: "EXPANSION", flags: "optional", args: []docArg{
			{name: "expansion", typ: "integer"},
		}},
	}},
	"cf.scandump": {summary: "Begins an incremental save of the bloom filter", since: "1.0.0", complexity: "O(n), where n is the capacity", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "iterator", typ: "integer"},
	}},
	"cms.incrby": {summary: "Increases the count of one or more items by increment", since: "2.0.0", complexity: "O(n) where n is the number of items", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "items", typ: "block", flags: "multiple", args: []docArg{
			{name: "item", typ: "string"},
			{name: "increment", typ: "integer"},
		}},
	}},
	"cms.info": {summary: "Returns information about a sketch", since: "2.0.0", complexity: "O(1)", args: []docArg{
		{name: "key", typ: "key", key: true},
	}},
	"cms.initbydim": {summary: "Initializes a Count-Min Sketch to dimensions specified by user", since: "2.0.0", complexity: "O(1)", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "width", typ: "integer"},
		{name: "depth", typ: "integer"},
	}},
	"cms.initbyprob": {summary: "Initializes a Count-Min Sketch to accommodate requested tolerances.", since: "2.0.0", complexity: "O(1)", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "error", typ: "double"},
		{name: "probability", typ: "double"},
	}},
	"cms.merge": {summary: "Merges several sketches into one sketch", since: "2.0.0", complexity: "O(n) where n is the number of sketches", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "numKeys", typ: "integer"},
		{name: "source", typ: "key", key: true, flags: "multiple"},
		{name: "weights", typ: "block", flags: "optional", args: []docArg{
			{name: "weights", typ: "pure-token", token: "WEIGHTS"},
			{name: "weight", typ: "double", flags: "multiple"},
		}},
	}},
	"cms.query": {summary: "Returns the count for one or more items in a sketch", since: "2.0.0", complexity: "O(n) where n is the number of items", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "item", typ: "string", flags: "multiple"},
	}},
	"tdigest.add": {summary: "Adds one or more observations to a t-digest sketch", since: "2.4.0", complexity: "O(N), where N is the number of samples to add", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "value", typ: "double", flags: "multiple"},
	}},
	"tdigest.byrank": {summary: "Returns, for each input rank, an estimation of the value (floating-point) with that rank", since: "2.4.0", complexity: "O(N) where N is the number of ranks specified", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "rank", typ: "double", flags: "multiple"},
	}},
	"tdigest.byrevrank": {summary: "Returns, for each input reverse rank, an estimation of the value (floating-point) with that reverse rank", since: "2.4.0", complexity: "O(N) where N is the number of reverse ranks specified.", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "reverse_rank", typ: "double", flags: "multiple"},
	}},
	"tdigest.cdf": {summary: "Returns, for each input value, an estimation of the floating-point fraction of (observations smaller than the given value + half the observations equal to the given value). Multiple fractions can be retrieved in a single call.", since: "2.4.0", complexity: "O(N) where N is the number of values specified.", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "value", typ: "double", flags: "multiple"},
	}},
	"tdigest.create": {summary: "Allocates memory and initializes a new t-digest sketch", since: "2.4.0", complexity: "O(1)", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "compression_block", typ: "block", flags: "optional", args: []docArg{
			{name: "compression_token", typ: "pure-token", token: "COMPRESSION"},
			{name: "compression", typ: "integer"},
		}},
	}},
	"tdigest.info": {summary: "Returns information and statistics about a t-digest sketch", since: "2.4.0", complexity: "O(1)", args: []docArg{
		{name: "key", typ: "key", key: true},
	}},
	"tdigest.max": {summary: "Returns the maximum observation value from a t-digest sketch", since: "2.4.0", complexity: "O(1)", args: []docArg{
		{name: "key", typ: "key", key: true},
	}},
	"tdigest.merge": {summary: "Merges multiple t-digest sketches into a single sketch", since: "2.4.0", complexity: "O(N*K), where N is the number of centroids and K being the number of input sketches", args: []docArg{
		{name: "destination-key", typ: "key", key: true},
		{name: "numkeys", typ: "integer"},
		{name: "source-key", typ: "key", key: true, keySpec: 1, flags: "multiple"},
		{name: "compression_block", typ: "block", flags: "optional", args: []docArg{
			{name: "compression_token", typ: "pure-token", token: "COMPRESSION"},
			{name: "compression", typ: "integer"},
		}},
		{name: "override", typ: "pure-token", token: "OVERRIDE", flags: "optional"},
	}},
	"tdigest.min": {summary: "Returns the minimum observation value from a t-digest sketch", since: "2.4.0", complexity: "O(1)", args: []docArg{
		{name: "key", typ: "key", key: true},
	}},
	"tdigest.quantile": {summary: "Returns, for each input fraction, an estimation of the value (floating point) that is smaller than the given fraction of observations", since: "2.4.0", complexity: "O(N) where N is the number of quantiles specified.", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "quantile", typ: "double", flags: "multiple"},
	}},
	"tdigest.rank": {summary: "Returns, for each input value (floating-point), the estimated rank of the value (the number of observations in the sketch that are smaller than the value + half the number of observations that are equal to the value)", since: "2.4.0", complexity: "O(N) where N is the number of values specified.", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "value", typ: "double", flags: "multiple"},
	}},
	"tdigest.reset": {summary: "Resets a t-digest sketch: empty the sketch and re-initializes it.", since: "2.4.0", complexity: "O(1)", args: []docArg{
		{name: "key", typ: "key", key: true},
	}},
	"tdigest.revrank": {summary: "Returns, for each input value (floating-point), the estimated reverse rank of the value (the number of observations in the sketch that are larger than the value + half the number of observations that are equal to the value)", since: "2.4.0", complexity: "O(N) where N is the number of values specified.", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "value", typ: "double", flags: "multiple"},
	}},
	"tdigest.trimmed_mean": {summary: "Returns an estimation of the mean value from the sketch, excluding observation values outside the low and high cutoff quantiles", since: "2.4.0", complexity: "O(N) where N is the number of centroids", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "low_cut_quantile", typ: "double"},
		{name: "high_cut_quantile", typ: "double"},
	}},
	"topk.add": {summary: "Adds an item to a Top-k sketch. Multiple items can be added at the same time.", since: "2.0.0", complexity: "O(n * k) where n is the number of items and k is the depth", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "item", typ: "string", flags: "multiple"},
	}},
	"topk.count": {summary: "Return the count for one or more items are in a sketch", since: "2.0.0", complexity: "O(n) where n is the number of items", history: [][2]string{{"2.4.0", "As of Bloom version 2.4, this command is regarded as deprecated. The count value is not a representative of the number of appearances of an item"}}, args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "item", typ: "string", flags: "multiple"},
	}},
	"topk.incrby": {summary: "Increases the count of one or more items by increment", since: "2.0.0", complexity: "O(n * k * incr) where n is the number of items, k is the depth and incr is the increment", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "item_increment", typ: "block", flags: "multiple", args: []docArg{
			{name: "item", typ: "string"},
			{name: "increment", typ: "integer"},
		}},
	}},
	"topk.info": {summary: "Returns information about a sketch", since: "2.0.0", complexity: "O(1)", args: []docArg{
		{name: "key", typ: "key", key: true},
	}},
	"topk.list": {summary: "Return the full list of items in Top-K sketch.", since: "2.0.0", complexity: "O(k*log(k)) where k is the value of top-k", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "withcount", typ: "pure-token", token: "WITHCOUNT", flags: "optional"},
	}},
	"topk.query": {summary: "Checks whether one or more items are in a sketch", since: "2.0.0", complexity: "O(n) where n is the number of items", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "item", typ: "string", flags: "multiple"},
	}},
	"topk.reserve": {summary: "Initializes a Top-K sketch with specified parameters", since: "2.0.0", complexity: "O(1)", args: []docArg{
		{name: "key", typ: "key", key: true},
		{name: "topk", typ: "integer"},
		{name: "params", typ: "block", flags: "optional", args: []docArg{
			{name: "width", typ: "integer"},
			{name: "depth", typ: "integer"},
			{name: "decay", typ: "double"},
		}},
	}},
}

// COMMAND INFO of RedisBloom's commands as Redis answers them with
// RedisBloom 8.6.2 loaded (Dialect8): the arity RedisBloom registers, its
// flags (module included), keys at 1, no ACL categories or tips, and one
// key spec (its flags; the key at argument 1).
type modInfo struct {
	arity    int
	flags    string // space-separated
	keyFlags string // the key spec's, space-separated
}

// numkeysSpec: the commands with a second key spec, read-only keys
// counted by the argument after the first key (numkeys).
var numkeysSpec = map[string]bool{"tdigest.merge": true}

// moduleInfo: RedisBloom 8.6.2's COMMAND INFO, BF, CF, CMS, TDIGEST and TOPK, read from
// the real module.
var moduleInfo = map[string]modInfo{
	"bf.add":               {3, "write denyoom module", "RW"},
	"bf.card":              {2, "readonly module fast", "RO"},
	"bf.debug":             {-1, "readonly module fast", "RW access update"},
	"bf.exists":            {3, "readonly module fast", "RO"},
	"bf.info":              {-2, "readonly module fast", "RO"},
	"bf.insert":            {-4, "write denyoom module", "RW"},
	"bf.loadchunk":         {4, "write denyoom module", "RW"},
	"bf.madd":              {-3, "write denyoom module", "RW"},
	"bf.mexists":           {-3, "readonly module fast", "RO"},
	"bf.reserve":           {-4, "write denyoom module", "RW"},
	"bf.scandump":          {3, "readonly module fast", "RW"},
	"cf.add":               {3, "write denyoom module", "RW"},
	"cf.addnx":             {3, "write denyoom module", "RW"},
	"cf.compact":           {-1, "readonly module fast", "RW access update"},
	"cf.count":             {3, "readonly module fast", "RO"},
	"cf.debug":             {-1, "readonly module fast", "RW access update"},
	"cf.del":               {3, "write module fast", "RW"},
	"cf.exists":            {3, "readonly module fast", "RO"},
	"cf.info":              {2, "readonly module fast", "RO"},
	"cf.insert":            {-4, "write denyoom module", "RW"},
	"cf.insertnx":          {-4, "write denyoom module", "RW"},
	"cf.loadchunk":         {4, "write denyoom module", "RW"},
	"cf.mexists":           {-3, "readonly module fast", "RO"},
	"cf.reserve":           {-3, "write denyoom module", "RW"},
	"cf.scandump":          {3, "readonly module fast", "RW"},
	"cms.incrby":           {-4, "write denyoom module", "RW"},
	"cms.info":             {2, "readonly module", "RO"},
	"cms.initbydim":        {4, "write denyoom module", "RW"},
	"cms.initbyprob":       {4, "write denyoom module", "RW"},
	"cms.merge":            {-4, "write denyoom module", "RW"},
	"cms.query":            {-3, "readonly module", "RO"},
	"tdigest.add":          {-3, "write denyoom module", "RW"},
	"tdigest.byrank":       {-3, "readonly module", "RO"},
	"tdigest.byrevrank":    {-3, "readonly module", "RO"},
	"tdigest.cdf":          {-3, "readonly module", "RO"},
	"tdigest.create":       {-2, "write denyoom module", "RW"},
	"tdigest.info":         {2, "readonly module", "RO"},
	"tdigest.max":          {2, "readonly module", "RO"},
	"tdigest.merge":        {-4, "write denyoom module movablekeys", "RW"},
	"tdigest.min":          {2, "readonly module", "RO"},
	"tdigest.quantile":     {-3, "readonly module", "RO"},
	"tdigest.rank":         {-3, "readonly module", "RO"},
	"tdigest.reset":        {2, "write denyoom module", "RW"},
	"tdigest.revrank":      {-3, "readonly module", "RO"},
	"tdigest.trimmed_mean": {4, "readonly module", "RO"},
	"topk.add":             {-3, "write denyoom module", "RW"},
	"topk.count":           {-3, "readonly module", "RO"},
	"topk.incrby":          {-4, "write denyoom module", "RW"},
	"topk.info":            {2, "readonly module", "RO"},
	"topk.list":            {-2, "readonly module", "RO"},
	"topk.query":           {-3, "readonly module", "RO"},
	"topk.reserve":         {-3, "write denyoom module", "RW"},
}

// moduleCommandInfo writes cmd's COMMAND INFO entry as Redis with
// RedisBloom 8.6.2 does, if cmd is one of RedisBloom's, and reports
// whether it did.
func (c *client) moduleCommandInfo(cmd *command) bool {
	in, ok := moduleInfo[cmd.name]
	if !ok {
		return false
	}
	flags := strings.Fields(in.flags)
	keyFlags := strings.Fields(in.keyFlags)
	c.w.Array(10)
	c.w.BulkString(cmd.name)
	c.w.Int(int64(in.arity))
	c.w.Set(len(flags))
	for _, f := range flags {
		c.w.Simple(f)
	}
	c.w.Int(1)
	c.w.Int(1)
	c.w.Int(1)
	c.w.Set(0) // ACL categories
	c.w.Set(0) // tips
	if numkeysSpec[cmd.name] {
		c.w.Set(2) // key specs
	} else {
		c.w.Set(1)
	}
	c.w.Map(3)
	c.w.BulkString("flags")
	c.w.Set(len(keyFlags))
	for _, f := range keyFlags {
		c.w.Simple(f)
	}
	c.w.BulkString("begin_search")
	c.w.Map(2)
	c.w.BulkString("type")
	c.w.BulkString("index")
	c.w.BulkString("spec")
	c.w.Map(1)
	c.w.BulkString("index")
	c.w.Int(1)
	c.w.BulkString("find_keys")
	c.w.Map(2)
	c.w.BulkString("type")
	c.w.BulkString("range")
	c.w.BulkString("spec")
	c.w.Map(3)
	c.w.BulkString("lastkey")
	c.w.Int(0)
	c.w.BulkString("keystep")
	c.w.Int(1)
	c.w.BulkString("limit")
	c.w.Int(0)
	if numkeysSpec[cmd.name] {
		c.w.Map(3)
		c.w.BulkString("flags")
		c.w.Set(1)
		c.w.Simple("RO")
		c.w.BulkString("begin_search")
		c.w.Map(2)
		c.w.BulkString("type")
		c.w.BulkString("index")
		c.w.BulkString("spec")
		c.w.Map(1)
		c.w.BulkString("index")
		c.w.Int(2)
		c.w.BulkString("find_keys")
		c.w.Map(2)
		c.w.BulkString("type")
		c.w.BulkString("keynum")
		c.w.BulkString("spec")
		c.w.Map(3)
		c.w.BulkString("keynumidx")
		c.w.Int(0)
		c.w.BulkString("firstkey")
		c.w.Int(1)
		c.w.BulkString("keystep")
		c.w.Int(1)
	}
	c.w.Set(0) // subcommands
	return true
}
