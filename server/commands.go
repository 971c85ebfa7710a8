package server

import (
	"sort"
	"strings"
)

type cmdFlags uint16

const (
	fWrite    cmdFlags = 1 << iota // changes data: logged; refused when the log failed
	fDenyOOM                       // refused when memory exceeds MaxMemory
	fNoAuth                        // allowed before AUTH
	fNoQueue                       // runs at once inside MULTI
	fReadonly                      // for COMMAND INFO
	fFast
	fAdmin
	fNoMulti // refused inside MULTI, aborting it (Redis's no_multi: SAVE, SHUTDOWN)
)

// lockMode is how the dispatcher holds the keyspace lock for a command.
type lockMode uint8

const (
	lockNone  lockMode = iota // the command locks what it needs itself
	lockRead                  // shared: the command only reads
	lockWrite                 // shared: the command changes an existing key under the key's own lock; it returns true to run again exclusively (to create the key)
	lockExcl                  // exclusive
)

// command is one entry of the command table. A command returns true
// (only under lockWrite, and before writing any reply) to be run again
// with the keyspace held exclusively.
type command struct {
	name string // lower case; "client|setname" for subcommands
	// arity is what COMMAND INFO reports and exec checks before it runs
	// or queues the command, in Redis's convention (n exactly, -n at
	// least n): RedisBloom's commands register -1 (info8 has Redis 8's).
	arity int
	// args are the counts the command takes, checked at dispatch before
	// it runs (call); zero: the arity's.
	args              argc
	flags             cmdFlags
	lock              lockMode
	keys              []keySpec // where its keys are, and how it uses them
	first, last, step int       // key positions, for COMMAND INFO (keys[0]'s, unless set)
	group, since      string
	summary           string
	// acl is its ACL categories, space-separated, without @: Redis's for
	// its own commands, RedisBloom 8.6's declaration for the module's
	// (Redis 8 adds its family's category, family.category).
	acl   string
	doc   *cmdDoc      // RedisBloom's commands: COMMAND DOCS under Dialect8
	info8 *modInfo     // RedisBloom's commands: COMMAND INFO under Dialect8
	subs  []subcommand // a container's (CLIENT, COMMAND, CONFIG)
	run   func(c *client, args [][]byte) bool
	fam   *family
}

// subcommand is a container command's subcommand (CLIENT SETNAME) and its
// arity, counting the container's name. exec checks both before the
// command runs or is queued, as Redis does: inside MULTI an unknown
// subcommand or a wrong count aborts the transaction.
type subcommand struct {
	name  string
	arity int
	acl   string // Redis's ACL categories, as command.acl
}

// checkSub returns the error for args[1] if cmd has no such subcommand or
// the count is wrong for it, else "".
func (cmd *command) checkSub(args [][]byte) string {
	for _, sc := range cmd.subs {
		if eqFold(args[1], sc.name) {
			if sc.arity >= 0 && len(args) != sc.arity || sc.arity < 0 && len(args) < -sc.arity {
				return wrongArity(cmd.name + "|" + sc.name)
			}
			return ""
		}
	}
	return "ERR unknown subcommand '" + argText(args[1]) + "'. Try " + strings.ToUpper(cmd.name) + " HELP."
}

var commandTable = map[string]*command{}

// keyless returns a command that takes no key and no keyspace lock (the
// connection, server and transaction commands), with Redis's ACL
// categories acl.
func keyless(name string, arity int, flags cmdFlags, acl, summary string, run func(*client, [][]byte) bool) *command {
	return &command{name: name, arity: arity, flags: flags, lock: lockNone, acl: acl, since: "1.0.0", summary: summary, run: run}
}

func register(cmds ...*command) {
	for _, c := range cmds {
		if _, dup := commandTable[c.name]; dup {
			panic("server: command " + c.name + " registered twice")
		}
		commandTable[c.name] = c
	}
}

// lookupCommand finds a command by name, case-insensitively, without
// allocating.
func lookupCommand(name []byte, buf *[32]byte) *command {
	if len(name) > len(buf) {
		return nil
	}
	for i, ch := range name {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		buf[i] = ch
	}
	return commandTable[string(buf[:len(name)])]
}

// arityOK reports whether n arguments pass the registered arity, which
// Redis checks before a command runs or is queued. RedisBloom registers
// its commands with -1 and checks its counts as the command runs, in both
// releases (Redis 8's COMMAND INFO reports the arity of the module's
// command info, info8, but a wrong count inside MULTI is still queued:
// TestCommandCacheCase), see argsOK.
func (cmd *command) arityOK(n int) bool {
	arity := cmd.arity
	if arity >= 0 {
		return n == arity
	}
	return n >= -arity
}

// argsOK reports whether n arguments are counts cmd takes (cmd.args, or,
// for a log record, cmd.args.replay), checked as the command is about to
// run: a queued command's count is checked at EXEC, as RedisBloom checks
// its counts inside the command.
func (cmd *command) argsOK(n int, replaying bool) bool {
	return cmd.args.ok(n) || replaying && cmd.args.replay != nil && cmd.args.replay.ok(n)
}

func sortedCommands() []*command {
	out := make([]*command, 0, len(commandTable))
	for _, c := range commandTable {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// Logging. A write command logs itself (or a normalized form) after it
// changed the keyspace, while it still holds the lock that ordered the
// change, so that the log's order is the order of the changes.

func (c *client) log(args [][]byte) {
	s := c.s
	if c.replaying && !c.master {
		return
	}
	if s.persist != nil {
		s.persist.dirty.Add(1)
	}
	// A primary feeds its replicas what it logs; a replica feeds its own
	// the primary's stream as it arrives (replica.go), not its records.
	feed := s.repl.feeding() && !c.master && s.repl.replicaLink() == nil
	if s.aof == nil && !feed {
		return
	}
	if c.inTx {
		c.tx = append(c.tx, appendRecord(nil, args))
		return
	}
	if s.aof != nil {
		c.logPos = s.aof.appendRecord(args)
	}
	if feed {
		s.repl.feed(args)
	}
}

func (c *client) logArgs(args ...string) {
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	c.log(b)
}
