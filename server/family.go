package server

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/rdb"
)

// A family is one group of commands and the values they hold, declared in
// one literal beside its handlers (cmd_bf.go, cmd_cf.go, cmd_cms.go,
// cmd_topk.go, cmd_tdigest.go for RedisBloom's five; cmd_keys.go,
// cmd_strings.go… for Redis's own groups) and registered by
// registerFamily: its value types with their snapshot tags, how Redis's
// RDB files and DUMP payloads hold its values (or why they cannot), and
// its commands, each with its documentation, ACL categories, the arity
// COMMAND INFO reports and the counts dispatch enforces, its key
// positions with their access, and its subcommands. Nothing elsewhere in
// server/ names a family: rdbvalue.go, cmddocs.go and COMMAND look
// things up here, so that a new family is one new file.
// TestFamiliesDeclared fails when a family leaves a piece undeclared.
type family struct {
	name string // its name: RedisBloom's prefix ("bf", "cf"…), or Redis's group of core commands ("generic", "server"…)
	// group is the group COMMAND DOCS gives its commands (Dialect24 for
	// RedisBloom's): its name unless set.
	group string
	// category is the ACL category Redis 8 gives RedisBloom's family
	// ("bloom", "cuckoo", "cms", "topk", "tdigest": RedisBloom 8.6's
	// RegisterAclCategory), "" for Redis's own groups.
	category string
	module   bool         // RedisBloom's: COMMAND DOCS and INFO from the module's metadata under Dialect8
	types    []*valueType // the values its keys hold
	// rdb is how Redis's RDB files and DUMP payloads hold the family's
	// values; nil if they cannot, and noRDB says why.
	rdb   *rdbCodec
	noRDB string
	// files makes the family's value of a bloomlab file served with
	// -load, for the file kinds it names ("*": every kind no family names).
	files    []string
	fromFile func(f kind.Filter) value
	// settle, if set, brings a value to its serialised state (settler).
	settle   settler
	commands []*command
}

// rdbCodec is a family's values in Redis's RDB files and DUMP payloads:
// a RedisBloom module type (module, encver, read, write), or Redis's
// string type (module "": readString, writeString).
type rdbCodec struct {
	module string // RedisBloom's module type name (TYPE's answer); "" for Redis strings
	encver int    // the encoding version written (the same for 2.4.23 and 8.6.2)
	// read makes the value of a module value, calling alloc with the bytes
	// of each allocation before it; write writes v's module value.
	read  func(m *rdb.ModuleValue, alloc func(int64) error) (value, error)
	write func(v value, m *rdb.ModuleWriter) error
	// readString and writeString are a Redis string's.
	readString  func(b []byte) value
	writeString func(v value) []byte
	// unsupported names what v holds when Redis cannot load it (another
	// profile or layout than RedisBloom's, a load in progress), or "".
	unsupported func(v value) string
}

// A settler brings a value to the state RedisBloom serialises it in, in
// place (a t-digest's buffer merged: RedisBloom's rdb_save compresses
// the live sketch), and returns the log record that repeats the change on
// a replay, or nil when nothing changed. Every serialisation of the live
// keyspace settles its values first (settleKey): SAVE, BGSAVE, DEBUG
// RELOAD, DUMP, and replication's full sync, so that every path gives one
// state and a restart gives it too.
type settler func(key string, v value) (record []string, err error)

// argc is the argument counts a command takes (its name included),
// checked by dispatch before the command runs (after the checks its flags
// ask for, as RedisBloom checks its counts inside the command), answered
// with Redis's wrong-arity error: at least min, at most max (0: no most),
// and min plus a multiple of step (0 or 1: any). A log record may take
// other counts (replay), for the forms only replay reads.
type argc struct {
	min, max, step int
	replay         *argc
}

func (a *argc) ok(n int) bool {
	if n < a.min || a.max > 0 && n > a.max {
		return false
	}
	switch a.step {
	case 0, 1:
		return true
	case 2:
		return (n-a.min)&1 == 0
	}
	return (n-a.min)%a.step == 0
}

// exactly, atLeast and between are argc's common forms.
func exactly(n int) argc           { return argc{min: n, max: n} }
func atLeast(n int) argc           { return argc{min: n} }
func between(lo, hi int) argc      { return argc{min: lo, max: hi} }
func stepped(lo, step int) argc    { return argc{min: lo, step: step} }
func counts(lo, hi, step int) argc { return argc{min: lo, max: hi, step: step} }

// keySpec is where a command's keys are and how it uses them.
type keySpec struct {
	// first is the first key's index; last the last's (-1: the last
	// argument, -2 the one before…), step the distance between keys. With
	// numkeys > 0 the argument at numkeys counts the keys after it.
	first, last, step int
	numkeys           int
	read, write       bool // the command reads, or writes, these keys
	// flags are the key spec's flags in COMMAND INFO under Dialect8
	// (RedisBloom 8.6's: "RW", "RO", "RW access update").
	flags string
}

// RedisBloom 8.6's key-spec flags (COMMAND INFO under Dialect8).
const (
	ksRW       = "RW"
	ksRO       = "RO"
	ksRWUpdate = "RW access update" // BF.DEBUG, CF.COMPACT, CF.DEBUG
)

// Key specs of the commands of one key, at argument 1.
var (
	readKey1  = []keySpec{{first: 1, last: 1, step: 1, read: true}}
	writeKey1 = []keySpec{{first: 1, last: 1, step: 1, write: true}}
)

// key1 is the key spec of a RedisBloom command of one key at argument 1:
// its access ("r", "w", "rw") and its key spec's flags under Dialect8.
func key1(access, flags string) []keySpec {
	return []keySpec{{first: 1, last: 1, step: 1, read: strings.Contains(access, "r"), write: strings.Contains(access, "w"), flags: flags}}
}

// families are the registered families, in registration order.
var families []*family

// registerFamily registers f: its value types (whose tags no other type
// has) and its commands.
func registerFamily(f *family) *family {
	if f.group == "" {
		f.group = f.name
	}
	for _, t := range f.types {
		t.fam = f
		registerType(t)
	}
	for _, c := range f.commands {
		c.fam = f
		if c.group == "" {
			c.group = f.group
		}
		if c.first == 0 {
			// COMMAND INFO's legacy range: from the first range spec's
			// first key to the last consecutive range spec's last.
			for i, k := range c.keys {
				if k.numkeys > 0 {
					break
				}
				if i == 0 {
					c.first, c.step = k.first, k.step
				}
				c.last = k.last
			}
		}
		if c.args.min == 0 {
			// The count is the arity's.
			if c.arity >= 0 {
				c.args = exactly(c.arity)
			} else {
				c.args = atLeast(-c.arity)
			}
		}
		register(c)
	}
	families = append(families, f)
	return f
}

// settleKey settles e's value (its family's settle) before it is
// serialised: the value is made writable first (a snapshot in progress
// keeps its copy), the change logged and its memory accounted. The
// caller holds e for writing, or the keyspace exclusively.
func (c *client) settleKey(key string, e *entry) error {
	settle := e.v.typ().fam.settle
	if settle == nil {
		return nil
	}
	if err := c.s.writable(e); err != nil {
		return err
	}
	rec, err := settle(key, e.v)
	if rec != nil {
		c.logArgs(rec...)
		c.s.resize([]byte(key), e)
	}
	return err
}

// settleAll settles every value (settleKey) under the keyspace's
// exclusive lock, which the caller holds, logging each change as c's
// (inside EXEC, in its place in the block: DEBUG RELOAD queued after a
// write merges after it, on a replay too).
func (c *client) settleAll() error {
	for k, e := range c.s.db.m {
		if err := c.settleKey(k, e); err != nil {
			return fmt.Errorf("key %q: %w", k, err)
		}
	}
	return nil
}

// fileValue is the value that serves a bloomlab file of f's kind
// (-load): the family that names the kind makes it, else the one that
// takes every kind ("*").
func fileValue(f kind.Filter) value {
	var every *family
	for _, fam := range families {
		switch {
		case slices.Contains(fam.files, f.Kind()):
			return fam.fromFile(f)
		case slices.Contains(fam.files, "*"):
			every = fam
		}
	}
	return every.fromFile(f)
}

// checkFamily lists what f leaves undeclared.
func checkFamily(f *family) []string {
	var miss []string
	add := func(format string, a ...any) { miss = append(miss, f.name+": "+fmt.Sprintf(format, a...)) }
	if f.name == "" {
		add("no name")
	}
	if f.module && f.category == "" {
		add("a RedisBloom family without its ACL category")
	}
	if len(f.types) > 0 && f.rdb == nil && f.noRDB == "" {
		add("value types without an RDB codec or the reason they have none")
	}
	if r := f.rdb; r != nil {
		if r.module != "" && (r.read == nil || r.write == nil) {
			add("an RDB module codec without its read or write")
		}
		if r.module == "" && (r.readString == nil || r.writeString == nil) {
			add("an RDB string codec without readString or writeString")
		}
	}
	for _, t := range f.types {
		if t.name == "" || t.tag == 0 || t.decode == nil {
			add("value type %q without its name, tag or decoder", t.name)
		}
	}
	if len(f.commands) == 0 {
		add("no commands")
	}
	if (len(f.files) > 0) != (f.fromFile != nil) {
		add("file kinds without the value that serves them, or the reverse")
	}
	for _, c := range f.commands {
		switch {
		case c.name == "" || c.run == nil || c.summary == "" || c.since == "":
			add("%s: without its name, handler, summary or since", c.name)
		case c.arity == 0:
			add("%s: without its arity", c.name)
		case c.acl == "" && f.module:
			add("%s: without its ACL categories", c.name)
		case c.acl == "" && !f.module:
			add("%s: without Redis's ACL categories", c.name)
		case c.flags&fWrite != 0 && c.lock == lockNone:
			add("%s: a write that takes no lock", c.name)
		}
		if f.module && (c.doc == nil || c.info8 == nil) {
			add("%s: a RedisBloom command without its Redis 8 COMMAND DOCS or INFO", c.name)
		}
		if c.lock == lockWrite && len(c.keys) == 0 {
			add("%s: changes a key under its own lock but declares no key", c.name)
		}
		for _, k := range c.keys {
			if !k.read && !k.write {
				add("%s: a key neither read nor written", c.name)
			}
		}
		for _, sc := range c.subs {
			if sc.name == "" || sc.arity == 0 || sc.acl == "" {
				add("%s|%s: a subcommand without its name, arity or ACL categories", c.name, sc.name)
			}
		}
	}
	return miss
}
