package server

import "strings"

// COMMAND DOCS and COMMAND INFO of RedisBloom's commands as Redis 8
// answers them (Dialect8: the dialect's moduleCommands): group "module",
// module "bf" (RedisBloom registers every family under its one module
// name), the command's complexity, history and arguments, from each
// command's declaration (command.doc, command.info8, command.keys: its
// family's file), which is RedisBloom 8.6.2's own metadata (src/cmd_info),
// read from the real module with COMMAND DOCS and COMMAND INFO, its
// wording kept as it is (BF.INFO's "capcaity" included). Dialect24
// answers as Redis 7.0 with RedisBloom 2.4.23 answered before: summary,
// since and the family as the group. This file only writes what the
// declarations hold.

// cmdDoc is one RedisBloom command's documentation under Dialect8: its
// summary and since are the command's, unless given here.
type cmdDoc struct {
	bare                       bool // RedisBloom 8.6.2 documents nothing but the group and module (BF.DEBUG, CF.COMPACT, CF.DEBUG)
	summary, since, complexity string
	history                    [][2]string // version, change
	args                       []docArg
}

// The arguments, and the dumps' docs, that several of RedisBloom's
// commands document alike.
var (
	docKey       = docArg{name: "key", typ: "key", key: true}
	docKeyOnly   = []docArg{docKey}
	docKeyItem   = []docArg{docKey, {name: "item", typ: "string"}}
	docKeyItems  = []docArg{docKey, {name: "item", typ: "string", flags: "multiple"}}
	scanDumpDoc  = &cmdDoc{complexity: "O(n), where n is the capacity", args: []docArg{docKey, {name: "iterator", typ: "integer"}}}
	loadChunkDoc = &cmdDoc{complexity: "O(n), where n is the capacity", args: []docArg{docKey, {name: "iterator", typ: "integer"}, {name: "data", typ: "string"}}}
)

// docArg is one argument in COMMAND DOCS: its name and type, whether it
// is a key (and its key spec's index), its token, its flags
// (space-separated: optional, multiple) and its sub-arguments.
type docArg struct {
	name, typ, token, flags string
	key                     bool
	keySpec                 int
	args                    []docArg
}

// isModule reports whether cmd is one of RedisBloom's commands.
func (cmd *command) isModule() bool { return cmd.fam != nil && cmd.fam.module }

// commandDocs writes cmd's COMMAND DOCS entry (after its name).
func (c *client) commandDocs(cmd *command) {
	doc := cmd.doc
	if doc == nil || !c.d.moduleCommands {
		c.w.Map(3)
		c.w.BulkString("summary")
		c.w.BulkString(cmd.summary)
		c.w.BulkString("since")
		c.w.BulkString(cmd.since)
		c.w.BulkString("group")
		c.w.BulkString(cmd.group)
		return
	}
	summary, since := cmd.summary, cmd.since
	if doc.summary != "" {
		summary = doc.summary
	}
	if doc.since != "" {
		since = doc.since
	}
	n := 2
	if !doc.bare {
		n += 3 // summary, since, complexity
	}
	if doc.history != nil {
		n++
	}
	if doc.args != nil {
		n++
	}
	c.w.Map(n)
	if !doc.bare {
		c.w.BulkString("summary")
		c.w.BulkString(summary)
		c.w.BulkString("since")
		c.w.BulkString(since)
	}
	c.w.BulkString("group")
	c.w.BulkString("module")
	if !doc.bare {
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

// modInfo is a RedisBloom command's COMMAND INFO under Dialect8 (Redis
// with RedisBloom 8.6.2 loaded): the arity RedisBloom registers and its
// flags (module included); keys at 1, no ACL categories or tips (the
// module built for Redis 7.0 registers none), and its key specs (the
// command's keys that have flags).
type modInfo struct {
	arity int
	flags string // space-separated
}

// moduleCommandInfo writes cmd's COMMAND INFO entry as Redis with
// RedisBloom 8.6.2 does, if cmd is one of RedisBloom's, and reports
// whether it did.
func (c *client) moduleCommandInfo(cmd *command) bool {
	in := cmd.info8
	if in == nil {
		return false
	}
	flags := strings.Fields(in.flags)
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
	n := 0
	for _, k := range cmd.keys {
		if k.flags != "" {
			n++
		}
	}
	c.w.Set(n) // key specs
	for _, k := range cmd.keys {
		if k.flags == "" {
			continue
		}
		keyFlags := strings.Fields(k.flags)
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
		if k.numkeys > 0 {
			c.w.Int(int64(k.numkeys))
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
			continue
		}
		c.w.Int(int64(k.first))
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
	}
	c.w.Set(0) // subcommands
	return true
}
