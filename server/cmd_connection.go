package server

import (
	"crypto/subtle"
	"fmt"
	"strings"
	"time"
)

// Redis's connection commands (COMMAND DOCS group "connection"): PING,
// ECHO, HELLO, AUTH, SELECT, QUIT, RESET, CLIENT.

func init() {
	ping := keyless("ping", -1, fFast, "fast connection", "Ping the server", cmdPing)
	ping.args = between(1, 2)
	reset := keyless("reset", 1, fNoAuth|fNoQueue|fFast, "fast connection", "Reset the connection", cmdReset)
	reset.since = "6.2.0"
	client := keyless("client", -2, 0, "slow", "A container for client connection commands", cmdClient)
	// Redis 7.0's subcommands and arities (CLIENT SETINFO is 7.2's: go-redis sends it).
	client.subs = []subcommand{{"setname", 3, "slow connection"}, {"getname", 2, "slow connection"}, {"id", 2, "slow connection"},
		{"setinfo", 4, "slow connection"}, {"info", 2, "slow connection"}, {"list", -2, "admin slow dangerous connection"},
		{"kill", -3, "admin slow dangerous connection"}}
	registerFamily(&family{name: "connection", commands: []*command{
		ping,
		keyless("echo", 2, fFast, "fast connection", "Echo the given string", cmdEcho),
		keyless("hello", -1, fNoAuth|fFast, "fast connection", "Handshake with Redis", cmdHello),
		keyless("auth", -2, fNoAuth|fFast, "fast connection", "Authenticate to the server", cmdAuth),
		keyless("select", 2, fFast, "fast connection", "Change the selected database for the current connection", cmdSelect),
		keyless("quit", -1, fNoAuth|fNoQueue|fFast, "fast connection", "Close the connection", cmdQuit),
		reset,
		client,
	}})
}

func cmdPing(c *client, args [][]byte) bool {
	if c.subscribedResp2() {
		// Redis's PING in RESP2's subscribed mode.
		c.w.Array(2)
		c.w.BulkString("pong")
		if len(args) == 1 {
			c.w.BulkString("")
		} else {
			c.w.Bulk(args[1])
		}
		return false
	}
	if len(args) == 1 {
		c.w.Simple("PONG")
	} else {
		c.w.Bulk(args[1])
	}
	return false
}

func cmdEcho(c *client, args [][]byte) bool {
	c.w.Bulk(args[1])
	return false
}

func (c *client) checkPassword(user, pass []byte) bool {
	want := c.s.cfg.Password
	if user != nil && string(user) != "default" {
		return false
	}
	if want == "" {
		return true
	}
	return subtle.ConstantTimeCompare(pass, []byte(want)) == 1
}

func cmdHello(c *client, args [][]byte) bool {
	proto := c.w.Proto
	if len(args) >= 2 {
		v, ok := parseInt(args[1])
		if !ok {
			c.err("ERR Protocol version is not an integer or out of range")
			return false
		}
		if v != 2 && v != 3 {
			c.err("NOPROTO unsupported protocol version")
			return false
		}
		proto = int(v)
	}
	var name []byte
	authed := c.authed
	for i := 2; i < len(args); i++ {
		switch {
		case eqFold(args[i], "AUTH") && i+2 < len(args):
			if !c.checkPassword(args[i+1], args[i+2]) {
				c.err("WRONGPASS invalid username-password pair or user is disabled.")
				return false
			}
			authed = true
			i += 2
		case eqFold(args[i], "SETNAME") && i+1 < len(args):
			name = args[i+1]
			if !validName(name) {
				c.err("ERR Client names cannot contain spaces, newlines or special characters.")
				return false
			}
			i++
		default:
			c.err("ERR Syntax error in HELLO option '" + argText(args[i]) + "'")
			return false
		}
	}
	if !authed {
		c.err("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return false
	}
	c.authed = true
	if name != nil {
		c.name = string(name)
	}
	c.w.Proto = proto
	if c.ps != nil {
		c.ps.proto.Store(int32(proto)) // its messages' encoding
	}
	c.w.Map(7)
	c.w.BulkString("server")
	c.w.BulkString("bloomlab")
	c.w.BulkString("version")
	c.w.BulkString(c.d.redisVersion)
	c.w.BulkString("proto")
	c.w.Int(int64(proto))
	c.w.BulkString("id")
	c.w.Int(c.id)
	c.w.BulkString("mode")
	c.w.BulkString("standalone")
	c.w.BulkString("role")
	c.w.BulkString("master")
	c.w.BulkString("modules")
	c.moduleList()
	return false
}

func cmdAuth(c *client, args [][]byte) bool {
	if len(args) > 3 {
		c.err(errSyntax)
		return false
	}
	var user, pass []byte
	if len(args) == 3 {
		user, pass = args[1], args[2]
	} else {
		pass = args[1]
		if c.s.cfg.Password == "" {
			c.err("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
			return false
		}
	}
	if !c.checkPassword(user, pass) {
		c.err("WRONGPASS invalid username-password pair or user is disabled.")
		return false
	}
	c.authed = true
	c.w.Simple("OK")
	return false
}

func cmdSelect(c *client, args [][]byte) bool {
	db, ok := parseInt(args[1])
	switch {
	case !ok:
		c.err(errNotInt)
	case db != 0:
		c.err("ERR DB index is out of range")
	default:
		c.w.Simple("OK")
	}
	return false
}

func cmdQuit(c *client, args [][]byte) bool {
	c.w.Simple("OK")
	c.quit = true
	return false
}

// cmdReset is Redis 7.0's RESET: the transaction discarded, the keys
// unwatched, every subscription left (without confirmations), RESP2, no
// name, authentication as a new connection's; it runs at once inside
// MULTI and in RESP2's subscribed mode.
func cmdReset(c *client, args [][]byte) bool {
	if c.rep != nil || c.master {
		c.err("ERR can only reset normal client connections")
		return false
	}
	if c.multi {
		c.endTx()
	} else {
		c.s.unwatchAll(c)
	}
	if c.ps != nil {
		release := c.changing() // the messages queued until now go first
		for ch := range c.ps.channels {
			c.unsubscribe(ch)
		}
		for len(c.ps.patterns) > 0 {
			c.punsubscribe(c.ps.patterns[0])
		}
		release()
		c.ps.proto.Store(2)
	}
	c.w.Proto = 2
	c.name = ""
	c.authed = c.s.cfg.Password == ""
	c.w.Simple("RESET")
	return false
}

func validName(b []byte) bool {
	for _, ch := range b {
		if ch < '!' || ch > '~' {
			return false
		}
	}
	return true
}

func cmdClient(c *client, args [][]byte) bool {
	// exec checked the subcommand and its arity (command.subs).
	switch strings.ToLower(string(args[1])) {
	case "setname":
		if !validName(args[2]) {
			c.err("ERR Client names cannot contain spaces, newlines or special characters.")
			return false
		}
		c.name = string(args[2])
		c.w.Simple("OK")
	case "getname":
		if c.name == "" {
			c.w.Null()
		} else {
			c.w.BulkString(c.name)
		}
	case "id":
		c.w.Int(c.id)
	case "setinfo":
		if !validName(args[3]) {
			c.err("ERR lib-name or lib-ver cannot contain spaces, newlines or special characters.")
			return false
		}
		switch {
		case eqFold(args[2], "LIB-NAME"):
			c.libName = string(args[3])
		case eqFold(args[2], "LIB-VER"):
			c.libVer = string(args[3])
		default:
			c.err("ERR Unrecognized option '" + argText(args[2]) + "'")
			return false
		}
		c.w.Simple("OK")
	case "info":
		c.w.Verbatim(c.describe() + "\n")
	case "list":
		c.w.Verbatim(c.s.clientList())
	case "kill":
		c.clientKill(args[2:])
	}
	return false
}

// clientKill serves CLIENT KILL as Redis 7.0 does: the old form (one
// address: +OK, or "No such client") and the filters ID, TYPE (normal,
// master, replica/slave, pubsub), ADDR, LADDR, SKIPME (default yes),
// answered with the number of connections closed. Sentinel's
// reconfiguration block sends CLIENT KILL TYPE normal and TYPE pubsub.
func (c *client) clientKill(args [][]byte) {
	s := c.s
	var id int64
	var typ, addr, laddr string
	skipMe, old := true, len(args) == 1
	if old {
		addr = string(args[0])
	} else {
		if len(args)%2 != 0 {
			c.err("ERR syntax error")
			return
		}
		for i := 0; i < len(args); i += 2 {
			v := args[i+1]
			switch strings.ToLower(string(args[i])) {
			case "id":
				n, ok := parseInt(v)
				if !ok || n <= 0 {
					c.err("ERR client-id should be greater than 0")
					return
				}
				id = n
			case "type":
				typ = strings.ToLower(string(v))
				switch typ {
				case "normal", "master", "replica", "slave", "pubsub":
				default:
					c.err("ERR Unknown client type '" + argText(v) + "'")
					return
				}
				if typ == "slave" {
					typ = "replica"
				}
			case "addr":
				addr = string(v)
			case "laddr":
				laddr = string(v)
			case "skipme":
				switch strings.ToLower(string(v)) {
				case "yes":
					skipMe = true
				case "no":
					skipMe = false
				default:
					c.err("ERR syntax error")
					return
				}
			default:
				c.err("ERR syntax error")
				return
			}
		}
	}
	var victims []*client
	s.mu.Lock()
	for o := range s.clients {
		switch {
		case id != 0 && o.id != id,
			addr != "" && o.conn.RemoteAddr().String() != addr,
			laddr != "" && o.conn.LocalAddr().String() != laddr,
			typ != "" && o.clientType() != typ,
			o == c && skipMe && !old:
			continue
		}
		victims = append(victims, o)
	}
	s.mu.Unlock()
	killed := int64(len(victims))
	if l := s.repl.replicaLink(); l != nil && (typ == "master" || typ == "" && id == 0 && addr == "" && laddr == "" && !old) {
		l.mu.Lock()
		if l.conn != nil {
			l.conn.Close() // the link reconnects, as Redis's replica does
			killed++
		}
		l.mu.Unlock()
	}
	for _, o := range victims {
		if o == c {
			c.quit = true // closed after this reply
			continue
		}
		o.conn.Close()
	}
	if old {
		if killed == 0 {
			c.err("ERR No such client")
			return
		}
		c.w.Simple("OK")
		return
	}
	c.w.Int(killed)
}

// clientType is CLIENT KILL TYPE's and CLIENT LIST's kind of connection.
func (c *client) clientType() string {
	switch {
	case c.rep != nil:
		return "replica"
	case c.subscribed():
		return "pubsub"
	}
	return "normal"
}

// clientList is CLIENT LIST's text. (Every lock a command that only reads
// takes is released by a defer: a panic must not leave it held, see
// contain.)
func (s *Server) clientList() string {
	var b strings.Builder
	s.mu.Lock()
	defer s.mu.Unlock()
	for o := range s.clients {
		b.WriteString(o.describe())
		b.WriteByte('\n')
	}
	return b.String()
}

func (c *client) describe() string {
	addr := ""
	if c.conn != nil {
		addr = c.conn.RemoteAddr().String()
	}
	return fmt.Sprintf("id=%d addr=%s name=%s age=%d db=0 multi=%d resp=%d lib-name=%s lib-ver=%s",
		c.id, addr, c.name, int(time.Since(c.created).Seconds()), map[bool]int{true: len(c.queue), false: -1}[c.multi], c.w.Proto, c.libName, c.libVer)
}
