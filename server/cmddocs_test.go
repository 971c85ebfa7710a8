package server

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestCommandDocs8 replays COMMAND DOCS and COMMAND INFO of every
// RedisBloom command the server serves under Dialect8 and RESP3, byte for
// byte against RedisBloom 8.6.2's replies (testdata, recorded from the
// real module): group module, module bf, complexity, history, the
// arguments' names, types, tokens, flags and key spec indexes; the arity
// RedisBloom registers, its flags and key spec.
func TestCommandDocs8(t *testing.T) {
	b, err := os.ReadFile("testdata/redisbloom-8.6.2-command-docs.json")
	if err != nil {
		t.Fatal(err)
	}
	var rec struct{ Docs, Info map[string]string }
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	s := start(t, Config{})
	c := dial(t, s)
	c.do("HELLO", "3")
	n := 0
	for name, want := range rec.Docs {
		if commandTable[name] == nil {
			continue
		}
		n++
		c.send("COMMAND", "DOCS", strings.ToUpper(name))
		if _, got := c.read(); string(got) != want {
			t.Errorf("COMMAND DOCS %s:\n got %q\nwant %q", name, got, want)
		}
		c.send("COMMAND", "INFO", name)
		if _, got := c.read(); string(got) != rec.Info[name] {
			t.Errorf("COMMAND INFO %s:\n got %q\nwant %q", name, got, rec.Info[name])
		}
	}
	if n < 27 { // BF, CF, CMS
		t.Fatalf("only %d of RedisBloom's commands served", n)
	}
	for name := range commandTable {
		if _, ok := rec.Docs[name]; !ok && strings.Contains(name, ".") && !strings.HasPrefix(name, "test.") {
			t.Errorf("%s: served but not in RedisBloom 8.6.2's COMMAND DOCS", name)
		}
	}
}

// TestCommandDocs24: under Dialect24 COMMAND DOCS keeps Redis 7.0's
// answer for a module command as the server gave it (summary, since, the
// family as the group).
func TestCommandDocs24(t *testing.T) {
	s := start(t, Config{Dialect: Dialect24})
	c := dial(t, s)
	want := `*[$"bf.card", *[$"summary", $"Returns the cardinality of a Bloom filter", $"since", $"1.0.0", $"group", $"bf"]]`
	if got := c.do("COMMAND", "DOCS", "bf.card"); got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

// TestModuleList: MODULE LIST answers as Redis with RedisBloom loaded
// (name bf, the dialect's module version, path "bloomlab"),
// and nothing can be loaded or unloaded.
func TestModuleList(t *testing.T) {
	for _, tc := range []struct {
		d   Dialect
		ver string
	}{{Dialect8, "80602"}, {Dialect24, "20423"}} {
		s := start(t, Config{Dialect: tc.d})
		c := dial(t, s)
		c.do("HELLO", "3")
		want := `*[%[$"name", $"bf", $"ver", :` + tc.ver + `, $"path", $"bloomlab", $"args", *[]]]`
		if got := c.do("MODULE", "LIST"); got != want {
			t.Errorf("dialect %v: got %s, want %s", tc.d, got, want)
		}
		if got := c.do("MODULE", "UNLOAD", "bf"); !strings.HasPrefix(got, "-ERR modules cannot be loaded or unloaded here") {
			t.Errorf("MODULE UNLOAD: %s", got)
		}
		if got, want := c.do("MODULE", "FOO"), "-ERR unknown subcommand 'FOO'. Try MODULE HELP."; got != want {
			t.Errorf("MODULE FOO: %s", got)
		}
	}
}

// TestCommandListFilter: COMMAND LIST FILTERBY as Redis with RedisBloom
// 8.6.2 answers it (checked on the real module): module bf is every
// RedisBloom command, module names and patterns ignore case, RedisBloom's
// commands have no ACL category under Dialect8, anything else is a
// syntax error.
func TestCommandListFilter(t *testing.T) {
	s := start(t, Config{})
	c := dial(t, s)
	var bf []string
	for _, cmd := range sortedCommands() {
		if strings.Contains(cmd.name, ".") && !strings.HasPrefix(cmd.name, "test.") {
			bf = append(bf, `$"`+cmd.name+`"`)
		}
	}
	for _, tc := range []struct {
		want string
		args []string
	}{
		{"*[" + strings.Join(bf, ", ") + "]", []string{"FILTERBY", "MODULE", "BF"}},
		{"*[]", []string{"FILTERBY", "MODULE", "nosuch"}},
		{`*[$"cms.incrby", $"cms.info", $"cms.initbydim", $"cms.initbyprob"]`, []string{"FILTERBY", "PATTERN", "CMS.I*"}},
		{"*[]", []string{"FILTERBY", "ACLCAT", "bf"}},
		{"-ERR syntax error", []string{"FILTERBY", "FOO", "x"}},
		{"-ERR syntax error", []string{"FILTERBY", "MODULE"}},
		{"-ERR syntax error", []string{"x", "y"}},
	} {
		if got := c.do(append([]string{"COMMAND", "LIST"}, tc.args...)...); got != tc.want {
			t.Errorf("COMMAND LIST %q: got %s, want %s", tc.args, got, tc.want)
		}
	}
	if len(bf) < 29 {
		t.Fatalf("%d RedisBloom commands", len(bf))
	}
}

// TestCommandInfoAll: COMMAND INFO without names answers every command,
// as COMMAND does (Redis 7.0 and later; checked on redis-server 7.0.15),
// where it answered an empty array.
func TestCommandInfoAll(t *testing.T) {
	for _, d := range []Dialect{Dialect8, Dialect24} {
		c := dial(t, start(t, Config{Dialect: d}))
		all := c.do("COMMAND")
		if got := c.do("COMMAND", "INFO"); got != all || !strings.Contains(got, `"bf.add"`) {
			t.Errorf("dialect %v: COMMAND INFO %.100s…, COMMAND %.100s…", d, got, all)
		}
	}
}

// TestInfoModules: INFO's Modules section (in INFO, INFO modules and INFO
// everything, between Stats and Keyspace) lists module bf as Redis with
// RedisBloom loaded does (checked with 8.6.2 and 2.4.23 on redis-server
// 7.0.15); it was missing, so a client that looks for RedisBloom there
// did not find it.
func TestInfoModules(t *testing.T) {
	for _, tc := range []struct {
		d   Dialect
		ver string
	}{{Dialect8, "80602"}, {Dialect24, "20423"}} {
		c := dial(t, start(t, Config{Dialect: tc.d}))
		line := "module:name=bf,ver=" + tc.ver + ",api=1,filters=0,usedby=[],using=[],options=[handle-io-errors]"
		for _, args := range [][]string{{"INFO"}, {"INFO", "modules"}, {"INFO", "everything"}} {
			c.send(args...)
			v, _ := c.read()
			got := string(v.Str)
			i := strings.Index(got, "# Modules\r\n"+line+"\r\n")
			if i < 0 || len(args) == 1 && !(strings.Index(got, "# Stats") < i && i < strings.Index(got, "# Keyspace")) {
				t.Errorf("dialect %v, %v:\n%s", tc.d, args, got)
			}
		}
		c.send("INFO", "server")
		if v, _ := c.read(); strings.Contains(string(v.Str), "# Modules") {
			t.Errorf("INFO server has the Modules section")
		}
	}
}
