package server

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Redis's server commands (COMMAND DOCS group "server"): COMMAND, CONFIG,
// INFO, MODULE, SAVE, BGSAVE, BGREWRITEAOF, LASTSAVE, SHUTDOWN, and DEBUG
// RELOAD (DEBUG's one subcommand here).

func init() {
	cmdCmd := keyless("command", -1, 0, "slow connection", "Get array of Redis command details", cmdCommand)
	cmdCmd.subs = []subcommand{{"count", 2, "slow connection"}, {"info", -2, "slow connection"}, {"docs", -2, "slow connection"}, {"list", -2, "slow connection"}}
	config := keyless("config", -2, fAdmin, "slow", "A container for server configuration commands", cmdConfig)
	config.subs = []subcommand{{"get", -3, "admin slow dangerous"}, {"set", -4, "admin slow dangerous"}, {"resetstat", 2, "admin slow dangerous"}, {"rewrite", 2, "admin slow dangerous"}}
	module := keyless("module", -2, fAdmin, "slow", "A container for module commands", cmdModule)
	module.subs = []subcommand{{"list", 2, "admin slow dangerous"}, {"help", 2, "slow"}, {"load", -3, "admin slow dangerous"},
		{"loadex", -3, "admin slow dangerous"}, {"unload", 3, "admin slow dangerous"}}
	registerFamily(&family{name: "server", commands: []*command{
		cmdCmd, config,
		keyless("info", -1, 0, "slow dangerous", "Get information and statistics about the server", cmdInfo),
		keyless("save", 1, fAdmin|fNoMulti, "admin slow dangerous", "Synchronously save the dataset to disk", cmdSave),
		keyless("bgsave", -1, fAdmin, "admin slow dangerous", "Asynchronously save the dataset to disk", cmdBgsave),
		keyless("bgrewriteaof", 1, fAdmin, "admin slow dangerous", "Asynchronously rewrite the append-only file", cmdBgsave),
		keyless("lastsave", 1, fFast, "admin fast dangerous", "Get the UNIX time stamp of the last successful save to disk", cmdLastSave),
		module,
		keyless("debug", -2, fAdmin, "admin slow dangerous", "A container for debugging commands", cmdDebug),
		keyless("shutdown", -1, fAdmin|fNoMulti, "admin slow dangerous", "Synchronously save the dataset to disk and then shut down the server", cmdShutdown),
	}})
}

func cmdCommand(c *client, args [][]byte) bool {
	if len(args) == 1 || len(args) == 2 && eqFold(args[1], "info") { // COMMAND INFO without names: all of them
		cmds := sortedCommands()
		c.w.Array(len(cmds))
		for _, cmd := range cmds {
			c.commandInfo(cmd)
		}
		return false
	}
	switch strings.ToLower(string(args[1])) {
	case "count":
		c.w.Int(int64(len(commandTable)))
	case "info":
		start := c.pendingReplies()
		c.w.Array(len(args) - 2)
		for _, name := range args[2:] {
			if cmd := lookupCommand(name, &c.lower); cmd != nil {
				c.commandInfo(cmd)
			} else {
				c.w.NullArray()
			}
			if !c.replyGrows(start) {
				return false
			}
		}
	case "docs":
		var cmds []*command
		if len(args) == 2 {
			cmds = sortedCommands()
		} else {
			for _, name := range args[2:] {
				if cmd := lookupCommand(name, &c.lower); cmd != nil {
					cmds = append(cmds, cmd)
				}
			}
		}
		start := c.pendingReplies()
		c.w.Map(len(cmds))
		for _, cmd := range cmds {
			c.w.BulkString(cmd.name)
			c.commandDocs(cmd)
			if !c.replyGrows(start) {
				return false
			}
		}
	case "list":
		c.commandList(args[2:])
	default:
		c.err("ERR unknown subcommand '" + argText(args[1]) + "'. Try COMMAND HELP.")
	}
	return false
}

// commandList answers COMMAND LIST [FILTERBY MODULE name|ACLCAT cat|
// PATTERN glob] as Redis does: module bf holds RedisBloom's commands, an
// ACL category the commands COMMAND INFO lists it for, a pattern matches
// names case-insensitively.
func (c *client) commandList(filter [][]byte) {
	var match func(*command) bool
	switch {
	case len(filter) == 0:
		match = func(*command) bool { return true }
	case len(filter) != 3 || !eqFold(filter[0], "filterby"):
		c.err(errSyntax)
		return
	case eqFold(filter[1], "module"):
		bf := eqFold(filter[2], "bf")
		match = func(cmd *command) bool { return bf && cmd.isModule() }
	case eqFold(filter[1], "aclcat"):
		cat := strings.ToLower(string(filter[2]))
		match = func(cmd *command) bool {
			return cmd.group == cat && !(c.d.moduleCommands && cmd.isModule())
		}
	case eqFold(filter[1], "pattern"):
		pat := []byte(strings.ToLower(string(filter[2])))
		match = func(cmd *command) bool { return globMatch(pat, []byte(cmd.name)) }
	default:
		c.err(errSyntax)
		return
	}
	var names []string
	for _, cmd := range sortedCommands() {
		if match(cmd) {
			names = append(names, cmd.name)
		}
	}
	c.w.Array(len(names))
	for _, n := range names {
		c.w.BulkString(n)
	}
}

// commandInfo writes one COMMAND INFO entry in Redis 7's shape (for
// RedisBloom's commands under Dialect8, moduleCommandInfo's).
func (c *client) commandInfo(cmd *command) {
	if c.d.moduleCommands && c.moduleCommandInfo(cmd) {
		return
	}
	var flags []string
	for _, f := range []struct {
		f    cmdFlags
		name string
	}{{fWrite, "write"}, {fReadonly, "readonly"}, {fDenyOOM, "denyoom"}, {fAdmin, "admin"}, {fNoAuth, "no_auth"}, {fFast, "fast"}} {
		if cmd.flags&f.f != 0 {
			flags = append(flags, f.name)
		}
	}
	c.w.Array(10)
	c.w.BulkString(cmd.name)
	c.w.Int(int64(cmd.arity))
	c.w.Set(len(flags))
	for _, f := range flags {
		c.w.Simple(f)
	}
	c.w.Int(int64(cmd.first))
	c.w.Int(int64(cmd.last))
	c.w.Int(int64(cmd.step))
	c.w.Set(1)
	c.w.Simple("@" + cmd.group)
	c.w.Array(0)
	c.w.Array(0)
	c.w.Array(0)
}

// configParams are what CONFIG GET answers (read-only).
func (s *Server) configParams() [][2]string {
	save := ""
	if s.cfg.SaveInterval > 0 {
		save = strconv.Itoa(int(s.cfg.SaveInterval.Seconds())) + " 1"
	}
	appendonly := "no"
	if s.persist != nil {
		appendonly = "yes"
	}
	port := ""
	if a := s.Addr(); a != nil {
		if _, p, err := splitHostPort(a.String()); err == nil {
			port = p
		}
	}
	return [][2]string{
		{"appendfsync", s.cfg.AppendFsync.String()},
		{"appendonly", appendonly},
		{"databases", "1"},
		{"dir", s.cfg.Dir},
		{"maxclients", strconv.Itoa(s.cfg.MaxClients)},
		{"maxmemory", strconv.FormatInt(max(s.maxMem, 0), 10)},
		{"maxmemory-policy", "noeviction"},
		{"port", port},
		{"proto-max-bulk-len", strconv.FormatInt(s.lim.MaxBulk, 10)},
		{"save", save},
		{"timeout", strconv.Itoa(int(s.cfg.IdleTimeout.Seconds()))},
	}
}

func splitHostPort(a string) (string, string, error) {
	i := strings.LastIndexByte(a, ':')
	if i < 0 {
		return "", "", fmt.Errorf("no port")
	}
	return a[:i], a[i+1:], nil
}

func cmdConfig(c *client, args [][]byte) bool {
	sub := strings.ToLower(string(args[1]))
	switch sub {
	case "get":
		c.configGet(args[2:])
	case "set":
		c.configSet(args[2:])
	case "resetstat":
		c.w.Simple("OK")
	case "rewrite":
		// Sentinel's reconfiguration block sends it; without a file
		// (serve is configured by flags) it fails at EXEC, as Redis's.
		c.err("ERR The server is running without a config file")
	default:
		c.err("ERR unknown subcommand '" + argText(args[1]) + "'. Try CONFIG HELP.")
	}
	return false
}

// configGet answers CONFIG GET as Redis does: each parameter that a
// pattern matches (case-insensitively), once; a pattern without glob
// characters names one parameter and the reply repeats it as given.
// Under Dialect8 RedisBloom's module configs are parameters too, and in
// every dialect bloomlab's bloomlab-bf-layout.
func (c *client) configGet(pats [][]byte) {
	params := c.s.configParams()
	if c.d.moduleConfigs {
		params = append(params, c.s.modcfg.get()...)
	}
	params = append(params, c.s.modcfg.layoutParam())
	var out [][2]string
	seen := make([]bool, len(params))
	for _, pat := range pats {
		lower := []byte(strings.ToLower(string(pat)))
		glob := bytes.ContainsAny(pat, "[*?")
		for i, p := range params {
			if seen[i] {
				continue
			}
			if glob && globMatch(lower, []byte(p[0])) {
				seen[i] = true
				out = append(out, p)
			} else if !glob && string(lower) == p[0] {
				seen[i] = true
				out = append(out, [2]string{string(pat), p[1]})
			}
		}
	}
	c.w.Map(len(out))
	for _, p := range out {
		c.w.BulkString(p[0])
		c.w.BulkString(p[1])
	}
}

// configSet answers CONFIG SET of name/value pairs as Redis does: an
// unknown name or an odd count refuses them all; under Dialect8 the
// module configs (moduleConfig.set, all or none) are the parameters that
// can be set, with bloomlab-bf-layout in every dialect, with RedisBloom's refusals wrapped in Redis's "CONFIG SET
// failed" text. Server parameters are read-only here.
func (c *client) configSet(args [][]byte) {
	if len(args)%2 != 0 {
		c.err(errSyntax)
		return
	}
	pairs := make([]modSet, 0, len(args)/2)
	for i := 0; i < len(args); i += 2 {
		p := lookupModConfig(args[i], c.d.moduleConfigs)
		if p < 0 {
			c.err("ERR Unknown option or number of arguments for CONFIG SET - '" + argText(args[i]) + "'")
			return
		}
		for _, b := range pairs {
			if b.param == p { // Redis reports the first refused name
				c.err("ERR CONFIG SET failed (possibly related to argument '" + argText(args[i]) + "') - duplicate parameter")
				return
			}
		}
		pairs = append(pairs, modSet{p, args[i+1]})
	}
	if i, msg := c.s.modcfg.set(pairs); i >= 0 {
		c.err("ERR CONFIG SET failed (possibly related to argument '" + modName(pairs[i].param) + "') - " + msg)
		return
	}
	c.w.Simple("OK")
}

func cmdSave(c *client, args [][]byte) bool {
	s := c.s
	switch {
	case s.persist == nil:
		c.err("ERR this server keeps nothing on disk (started without a directory)")
	case c.excl:
		c.err("ERR SAVE inside MULTI is not supported here: use BGSAVE")
	case s.persist.saving.Load():
		c.err("ERR Background save already in progress")
	case s.save(false) != nil:
		c.err("ERR snapshot failed: see the server's log")
	default:
		c.w.Simple("OK")
	}
	return false
}

func cmdBgsave(c *client, args [][]byte) bool {
	s := c.s
	rewrite := eqFold(args[0], "bgrewriteaof")
	if len(args) > 2 || len(args) == 2 && !eqFold(args[1], "SCHEDULE") {
		c.err(errSyntax)
		return false
	}
	switch {
	case s.persist == nil:
		c.err("ERR this server keeps nothing on disk (started without a directory)")
	case !s.bgsave():
		if rewrite {
			c.w.Simple("Background append only file rewriting scheduled")
		} else if len(args) == 2 {
			c.w.Simple("Background saving scheduled")
		} else {
			c.err("ERR Background save already in progress")
		}
	case rewrite:
		c.w.Simple("Background append only file rewriting started")
	default:
		c.w.Simple("Background saving started")
	}
	return false
}

// cmdDebug answers DEBUG RELOAD [NOSAVE] and refuses DEBUG's other
// subcommands with Redis's text. Redis saves its RDB, empties the
// keyspace and loads the RDB back, so that every value goes through its
// persistence encoding; here, with a directory, it takes a snapshot as
// SAVE does (NOSAVE: none), then reloadValues round-trips every value
// through the snapshot's encoding and replaces the originals only when
// all of them decoded: the keyspace is the same after it by construction,
// nothing is logged. MERGE and NOFLUSH (which load a file over the
// keyspace) are refused; inside MULTI the reload runs at EXEC, except
// when it would save (a directory and no NOSAVE), which is refused.
func cmdDebug(c *client, args [][]byte) bool {
	if !eqFold(args[1], "reload") {
		c.err("ERR unknown subcommand or wrong number of arguments for '" + argText(args[1]) + "'. Try DEBUG HELP.")
		return false
	}
	save, load := true, false
	for _, a := range args[2:] {
		switch {
		case eqFold(a, "NOSAVE"):
			save = false
		case eqFold(a, "MERGE"), eqFold(a, "NOFLUSH"):
			load = true
		default:
			c.err("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")
			return false
		}
	}
	s := c.s
	switch {
	case load:
		c.err("ERR DEBUG RELOAD MERGE and NOFLUSH are not supported here (they load a file over the keyspace)")
		return false
	case c.excl && save && s.persist != nil:
		// EXEC holds the keyspace, which a snapshot locks to freeze it.
		c.err("ERR DEBUG RELOAD inside MULTI is not supported here with a directory (it would save): use DEBUG RELOAD NOSAVE")
		return false
	case save && s.persist != nil && s.save(false) != nil:
		c.err("ERR Error trying to save the DB")
		return false
	}
	var err error
	if c.excl {
		err = s.reloadValues(c) // inside EXEC: the keyspace is held already
	} else {
		s.db.mu.Lock()
		err = s.reloadValues(c)
		s.db.mu.Unlock()
	}
	switch {
	case err == errReloadOOM:
		c.err(errOOM)
	case err != nil:
		s.logf("bloomlab: DEBUG RELOAD: %v (nothing changed)", err)
		c.err("ERR Error trying to load the RDB dump, check server logs.")
	default:
		s.logf("bloomlab: DB reloaded by DEBUG RELOAD")
		c.w.Simple("OK")
	}
	return false
}

func cmdLastSave(c *client, args [][]byte) bool {
	t := c.s.started.Unix()
	if c.s.persist != nil && c.s.persist.lastSave.Load() != 0 {
		t = c.s.persist.lastSave.Load()
	}
	c.w.Int(t)
	return false
}

func cmdShutdown(c *client, args [][]byte) bool {
	save := saveIfChanged
	for _, a := range args[1:] {
		switch {
		case eqFold(a, "NOSAVE"):
			save = noSave
		case eqFold(a, "SAVE"):
			save = saveAlways
		case eqFold(a, "NOW"), eqFold(a, "FORCE"):
		case eqFold(a, "ABORT"):
			c.err("ERR No shutdown in progress.")
			return false
		default:
			c.err(errSyntax)
			return false
		}
	}
	s := c.s
	s.logf("bloomlab: SHUTDOWN from client %d", c.id)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s.shutdown(ctx, save)
	}()
	c.quit = true // Redis closes the connection without a reply
	return false
}

// cmdModule answers MODULE LIST as Redis does with RedisBloom loaded
// (moduleList) and MODULE HELP; nothing can be loaded or unloaded.
func cmdModule(c *client, args [][]byte) bool {
	switch {
	case eqFold(args[1], "list"):
		c.moduleList()
	case eqFold(args[1], "help"):
		lines := []string{"MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"LIST", "    Return a list of loaded modules.",
			"HELP", "    Prints this help.",
			"(RedisBloom's commands are built in: nothing can be loaded or unloaded.)"}
		c.w.Array(len(lines))
		for _, l := range lines {
			c.w.Simple(l)
		}
	default: // LOAD, LOADEX, UNLOAD
		c.err("ERR modules cannot be loaded or unloaded here: RedisBloom's commands (module bf) are built into bloomlab")
	}
	return false
}

// moduleList writes the list of modules of MODULE LIST and HELLO: one
// named bf, of the dialect's version (80602 or 20423), built into this
// server (path "bloomlab"), without arguments.
func (c *client) moduleList() {
	c.w.Array(1)
	c.w.Map(4)
	c.w.BulkString("name")
	c.w.BulkString("bf")
	c.w.BulkString("ver")
	c.w.Int(c.d.moduleVersion)
	c.w.BulkString("path")
	c.w.BulkString("bloomlab")
	c.w.BulkString("args")
	c.w.Array(0)
}

// INFO, with Redis's section and field names.
func cmdInfo(c *client, args [][]byte) bool {
	s := c.s
	// Redis 7.0's selection: no argument or "default" is every section
	// but Commandstats and Latencystats; "all" and "everything" are every
	// section (no module adds its own here); other arguments name
	// sections. Sections come in Redis's order whatever the arguments'.
	want := map[string]bool{}
	var deflt, all bool
	for _, a := range args[1:] {
		switch n := strings.ToLower(string(a)); n {
		case "default":
			deflt = true
		case "all", "everything":
			all = true
		default:
			want[n] = true
		}
	}
	deflt = deflt || len(args) == 1
	var b strings.Builder
	section := func(name string, fields ...any) {
		n := strings.ToLower(name)
		if !all && !want[n] && !(deflt && n != "commandstats" && n != "latencystats") {
			return
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString("# " + name + "\r\n")
		for i := 0; i+1 < len(fields); i += 2 {
			fmt.Fprintf(&b, "%s:%v\r\n", fields[i], fields[i+1])
		}
	}
	up := time.Since(s.started)
	port := ""
	if a := s.Addr(); a != nil {
		_, port, _ = splitHostPort(a.String())
	}
	section("Server", "redis_version", s.d.redisVersion, "bloomlab_version", "1", "server_name", "bloomlab",
		"redis_mode", "standalone", "run_id", s.runID, "os", runtime.GOOS+" "+runtime.GOARCH, "arch_bits", strconv.IntSize,
		"go_version", runtime.Version(), "process_id", os.Getpid(), "tcp_port", port,
		"uptime_in_seconds", int(up.Seconds()), "uptime_in_days", int(up.Hours()/24),
		"module_bf_version", s.d.moduleVersion)
	s.mu.Lock()
	nclients := len(s.clients)
	s.mu.Unlock()
	section("Clients", "connected_clients", nclients, "maxclients", s.cfg.MaxClients, "blocked_clients", 0)
	// Redis's fields: used_memory is the keys' accounted memory plus what
	// clients hold (mem_clients_normal, here the whole overhead), all of
	// it governed by -maxmemory (clientmem.go).
	clientMem := s.clientMem.Load()
	used := s.mem.Load()
	peak, rssNow := max(s.memPeak.Load(), used), rss()
	section("Memory", "used_memory", used, "used_memory_human", human(used),
		"used_memory_rss", rssNow, "used_memory_rss_human", human(rssNow),
		"used_memory_peak", peak, "used_memory_peak_human", human(peak),
		"used_memory_overhead", clientMem, "used_memory_dataset", used-clientMem,
		"maxmemory", max(s.maxMem, 0), "maxmemory_human", human(max(s.maxMem, 0)), "maxmemory_policy", "noeviction",
		"mem_not_counted_for_evict", 0, "mem_clients_slaves", 0, "mem_clients_normal", clientMem)
	if p := s.persist; p != nil {
		status := "ok"
		if !p.lastOK.Load() {
			status = "err"
		}
		aofStatus, aofSize := "ok", int64(0)
		if s.aof != nil {
			if s.aof.err() != nil {
				aofStatus = "err"
			}
			aofSize = s.aof.size()
		}
		section("Persistence", "loading", b2i(s.repl.loading.Load()), "rdb_changes_since_last_save", p.dirty.Load(),
			"rdb_bgsave_in_progress", b2i(p.saving.Load()), "rdb_last_save_time", p.lastSave.Load(),
			"rdb_last_bgsave_status", status, "rdb_last_bgsave_time_sec", p.lastDur.Load(),
			"rdb_last_cow_size", 0, "aof_enabled", 1, "aof_rewrite_in_progress", b2i(p.saving.Load()),
			"aof_last_bgrewrite_status", status, "aof_last_write_status", aofStatus,
			"aof_current_size", aofSize, "aof_base_size", p.lastSnapSize.Load(), "appendfsync", s.cfg.AppendFsync.String())
	} else {
		section("Persistence", "loading", b2i(s.repl.loading.Load()), "rdb_changes_since_last_save", 0, "rdb_bgsave_in_progress", 0,
			"rdb_last_save_time", s.started.Unix(), "rdb_last_bgsave_status", "ok", "aof_enabled", 0,
			"aof_rewrite_in_progress", 0, "aof_last_write_status", "ok")
	}
	pchans, ppats := s.pubsubCounts()
	section("Stats", "total_connections_received", s.totalConns.Load(), "total_commands_processed", s.totalCommands.Load(),
		"rejected_connections", s.rejectedConns.Load(), "sync_full", s.repl.fullSyncs.Load(),
		"sync_partial_ok", s.repl.partialOK.Load(), "sync_partial_err", s.repl.partialErr.Load(),
		"pubsub_channels", pchans, "pubsub_patterns", ppats)
	nkeys, nexp := c.keyCounts()
	if s.aof.lost() {
		nkeys = 0 // counts that hold writes the log lost are no answer
	} else {
		c.observe() // the counts wait for the log like any read
	}
	section("Replication", s.replInfo()...)
	usr, sys := cpuTimes()
	section("CPU", "used_cpu_sys", cpuSeconds(sys), "used_cpu_user", cpuSeconds(usr),
		"used_cpu_sys_children", "0.000000", "used_cpu_user_children", "0.000000")
	section("Modules", "module", fmt.Sprintf("name=bf,ver=%d,api=1,filters=0,usedby=[],using=[],options=[handle-io-errors]", s.d.moduleVersion))
	// Commands, errors and latencies are not counted per command here:
	// the sections are there, empty (as Redis's are before any call).
	section("Commandstats")
	section("Errorstats")
	section("Latencystats")
	section("Cluster", "cluster_enabled", 0)
	if nkeys > 0 {
		section("Keyspace", "db0", fmt.Sprintf("keys=%d,expires=%d,avg_ttl=0", nkeys, nexp))
	} else {
		section("Keyspace")
	}
	c.w.Verbatim(b.String())
	return false
}

// keyCounts returns the number of keys and of keys with a time to live.
func (c *client) keyCounts() (keys, expires int) {
	if !c.excl {
		c.s.db.mu.RLock()
		defer c.s.db.mu.RUnlock()
	}
	return len(c.s.db.m), len(c.s.db.expires)
}

// cpuSeconds formats a CPU time as Redis does: seconds with 6 decimals.
func cpuSeconds(d time.Duration) string {
	return fmt.Sprintf("%d.%06d", d/time.Second, d%time.Second/time.Microsecond)
}

func human(n int64) string {
	f := float64(n)
	for _, u := range []string{"B", "K", "M", "G", "T"} {
		if f < 1024 || u == "T" {
			if u == "B" {
				return strconv.FormatInt(n, 10) + "B"
			}
			return strconv.FormatFloat(f, 'f', 2, 64) + u
		}
		f /= 1024
	}
	return ""
}

// rss is the process's resident memory in bytes (Linux), 0 elsewhere.
func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}
