package server

import (
	"bytes"
	"math"
	"sort"
	"strconv"
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
	// (its family's category is added: aclCategories).
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
	if c.replaying {
		return
	}
	if s.persist != nil {
		s.persist.dirty.Add(1)
	}
	if s.aof == nil {
		return
	}
	if c.inTx {
		c.tx = append(c.tx, appendRecord(nil, args))
		return
	}
	c.logPos = s.aof.appendRecord(args)
}

func (c *client) logArgs(args ...string) {
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	c.log(b)
}

// Argument parsing as Redis does it.

// parseInt reads a decimal int64 as Redis's string2ll: an optional minus
// sign, no plus sign, no spaces, no leading zeros.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	p := b
	if neg {
		p = p[1:]
	}
	if len(p) == 0 || p[0] < '1' || p[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, ch := range p {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		d := uint64(ch - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// parseFloat reads a double as Redis reads one (getDoubleFromObject,
// RedisModule_StringToDouble): C's strtod over the whole argument, with
// no leading space, no NaN, and no overflow or underflow to zero. "inf"
// reads, as does C's hexadecimal form ("0x0.04", no exponent needed);
// Go's digit separators ("0.0_1") do not.
func parseFloat(b []byte) (float64, bool) {
	if len(b) == 0 || len(b) > 256 || isSpace(b[0]) || bytes.IndexByte(b, '_') >= 0 {
		return 0, false
	}
	s := string(b)
	t := strings.TrimLeft(s, "+-")
	if len(t) > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') && !strings.ContainsAny(t, "pP") {
		s += "p0" // strtod's hexadecimal form needs no exponent; Go's does
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || f == 0 && underflows(t) {
		return 0, false
	}
	return f, true
}

// parseDouble is parseFloat for a command's argument, but a log record
// also reads as Go's syntax, as this server read doubles before
// parseFloat followed strtod: logs of then hold the client's text
// ("0.0_1", Go's 0.01) of keys that were acknowledged.
func (c *client) parseDouble(b []byte) (float64, bool) {
	f, ok := parseFloat(b)
	if !ok && c.replaying && len(b) <= 256 {
		var err error
		f, err = strconv.ParseFloat(string(b), 64)
		ok = err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return f, ok
}

// underflows reports whether the unsigned number t that ParseFloat read
// as zero has a non-zero digit before its exponent (strtod's ERANGE).
func underflows(t string) bool {
	hex := len(t) > 1 && (t[1] == 'x' || t[1] == 'X')
	if hex {
		t = t[2:]
	}
	for i := 0; i < len(t); i++ {
		switch ch := t[i]; {
		case !hex && (ch == 'e' || ch == 'E'), hex && (ch == 'p' || ch == 'P'):
			return false
		case ch >= '1' && ch <= '9', hex && (ch >= 'a' && ch <= 'f' || ch >= 'A' && ch <= 'F'):
			return true
		}
	}
	return false
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

// eqFold reports whether b equals the ASCII name s, ignoring case.
func eqFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// argText is an argument as an error reply quotes it: at most 128 bytes
// (Redis's "%.128s"), CR and LF as spaces. An option longer than that is
// no option any command takes, and the reply stays one short line
// whatever the client sent.
func argText(b []byte) string { return oneLine(string(b[:min(len(b), 128)])) }

const errNotInt = "ERR value is not an integer or out of range"
const errSyntax = "ERR syntax error"
