// Command bloomlab builds, queries and inspects Bloom filters from the
// shell, plans their parameters, and re-runs the papers' experiments.
//
// Usage:
//
//	bloomlab build -kind KIND [-n N] (-fpr P | -bits-per-key B | -m M -k K) [kind options] [-seed S] [-force] -o FILE|TARGET [KEYFILE…]
//	bloomlab add FILE|TARGET [KEYFILE…]
//	bloomlab remove [-ignore-missing] FILE [KEYFILE…]
//	bloomlab query [-v] [-c] FILE|TARGET [KEYFILE…]
//	bloomlab info [-json] FILE|TARGET
//	bloomlab merge -o OUT A B…
//	bloomlab export -format F -o OUT FILE
//	bloomlab import -format F [-kind K] [-hash H] -o FILE IN
//	bloomlab import -format rdb -key KEY [-db N] [-skip-unsupported] -o FILE DUMP.rdb
//	bloomlab plan -n N (-fpr P | -bits-per-key B) [-json]
//	bloomlab serve [-addr HOST:PORT] [-dir DIR] [-appendfsync always|everysec|no] [-load NAME=FILE.blf …] [flags]
//	bloomlab redis push [-force] FILE.blf TARGET | pull TARGET -o FILE.blf
//	bloomlab redis pull|push -addr HOST:PORT [-password P] -key KEY …
//	bloomlab rdb info [-db N|-all-dbs] [-json] DUMP.rdb
//	bloomlab rdb write [-dialect 8|2.4] [-rdb-version 10|11|12] [-skip-unsupported] [-no-compress] -dir DIR -o DUMP.rdb
//	bloomlab experiments
//	bloomlab reproduce NAME|all [-trials T] [-quick] [-seed S] [-format text|csv|json] [-plot DIR]
//	bloomlab simulate KIND [parameters] [-trials T] [-seed S] [-format text|csv|json]
//
// The commands that take a kind (build, plan, info, merge, export, import)
// read what they need from the table of kinds (internal/kind): a kind's
// sizing, options, description and formats come with its package.
//
// build -o, add, query and info take a TARGET where they take a FILE: a
// URL whose scheme is registered in the table of targets (target.go), a
// file otherwise. Redis targets (redistarget.go, package redisblocked)
// hold blocked filters: redis://[USER:PASSWORD@]HOST:PORT[/DB]?key=NAME,
// rediss://… (TLS), redis+cluster://HOST:PORT[,HOST:PORT…]?key=NAME and
// rediss+cluster://…; docs/REDIS.md.
//
// Keys are read one per line from the KEYFILEs, or from standard input when
// there is none or the name is "-". A trailing "\r" is stripped, a UTF-8
// byte-order mark at the start of a file is stripped, and empty lines are
// skipped; any other bytes, binary included, form the key. Lines may be up
// to 1 MiB long.
//
// Files are written atomically (a temporary file in the same directory,
// synced, renamed over the target, directory synced), and commands that
// rewrite a file (add, remove, merge -o onto an existing file, build -o
// onto one) hold an advisory lock on it from the read to the rename, so
// concurrent writers of one file run one after the other and none loses
// another's keys. An interrupted write leaves no temporary file behind;
// one left by a killed process is removed by the next writer.
//
// Exit status: 0 on success, 1 on a runtime error ("bloomlab: …" on
// stderr), 2 on a usage error (a one-line hint on stderr). query exits 0 if
// it selected any key, 1 if none, 2 on any error.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/redis/go-redis/v9/logging"
)

func main() {
	// go-redis logs what it then returns (a failed dial, for one) on
	// standard error; the command reports the error once, in its words.
	logging.Disable()
	stop := func() {}
	if len(os.Args) < 2 || lookup(os.Args[1]) == nil || !lookup(os.Args[1]).ownSignals {
		stop = cleanupOnSignal()
	}
	code := exitCode(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	stop()
	os.Exit(code)
}

// usageError is a mistake on the command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// exitError carries an explicit exit status; a nil err prints nothing (for
// query's "nothing matched").
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// exitCode maps run's error to the process exit status.
func exitCode(err error) int {
	var ee *exitError
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		return 2
	}
	return 1
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	usage   string
	run     func(env *env, args []string) error
	// ownSignals: the command handles SIGINT and SIGTERM itself (serve
	// shuts down gracefully) instead of the default cleanup and exit.
	ownSignals bool
}

// env is what a subcommand sees of the process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	cmd            *command
}

var commands []*command

func register(c *command) { commands = append(commands, c) }

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// run is the whole command: it prints errors itself ("bloomlab: …" for
// runtime errors, a usage hint for usage errors) and returns the error for
// exitCode.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (err error) {
	sort.Slice(commands, func(i, j int) bool { return order(commands[i].name) < order(commands[j].name) })
	if len(args) == 0 {
		fmt.Fprintln(stderr, "bloomlab: no command (run 'bloomlab help' for the list)")
		return &usageError{msg: "no command"}
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "-help" || name == "--help" {
		if len(args) > 1 {
			if lookup(args[1]) == nil {
				err = usagef("no command %q", args[1])
				fmt.Fprintf(stderr, "bloomlab: %v (run 'bloomlab help' for the list)\n", err)
				return err
			}
			// "help X" is "X -h".
			return run([]string{args[1], "-h"}, stdin, stdout, stderr)
		}
		printUsage(stdout)
		return nil
	}
	c := lookup(name)
	if c == nil {
		err = usagef("unknown command %q", name)
		fmt.Fprintf(stderr, "bloomlab: %v (run 'bloomlab help' for the list)\n", err)
		return err
	}
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, cmd: c}
	err = flagWords(c.run(e, args[1:]))
	var ue *usageError
	var ee *exitError
	var he *helpRequest
	switch {
	case err == nil:
	case errors.As(err, &he):
		// -h: the command's usage, summary and flags on stdout, exit 0.
		fmt.Fprintf(stdout, "usage: %s\n\n%s\n", c.usage, wrap(c.summary, 78))
		he.print(stdout)
		return nil
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "bloomlab %s: %s (see 'bloomlab help %s')\n", c.name, ue.msg, c.name)
	case errors.As(err, &ee):
		if ee.err != nil {
			fmt.Fprintf(stderr, "bloomlab: %v\n", flagText(ee.err))
		}
	default:
		fmt.Fprintf(stderr, "bloomlab: %v\n", err)
	}
	return err
}

var commandOrder = []string{"build", "add", "remove", "query", "info", "merge", "export", "import", "plan", "serve", "redis", "rdb", "experiments", "reproduce", "simulate"}

func order(name string) int {
	for i, n := range commandOrder {
		if n == name {
			return i
		}
	}
	return len(commandOrder)
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "bloomlab: Bloom filters from the shell, and the papers' experiments")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "usage:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %s\n", c.usage)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Keys are read one per line from KEYFILEs or standard input (\"-\"): a trailing CR and a leading UTF-8")
	fmt.Fprintln(w, "byte-order mark are stripped, empty lines skipped, lines up to 1 MiB; any other bytes form the key.")
	fmt.Fprintln(w, "Exit status: 0 ok, 1 runtime error, 2 usage error (query: 0 matched, 1 nothing matched, 2 error).")
	fmt.Fprintln(w, "Run 'bloomlab help COMMAND' (or 'bloomlab COMMAND -h') for one command and its flags.")
}

// helpRequest is returned by parseFlags for -h: run prints the command's
// help and exits 0.
type helpRequest struct {
	fs    *flag.FlagSet
	extra func(w io.Writer) // more help after the flags (build: each kind's options)
}

func (h *helpRequest) Error() string { return "help requested" }

func (h *helpRequest) print(w io.Writer) {
	if hasFlags(h.fs) {
		fmt.Fprintln(w, "\nflags:")
		h.fs.SetOutput(w)
		h.fs.PrintDefaults()
	}
	if h.extra != nil {
		h.extra(w)
	}
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// wrap breaks s into lines of at most width bytes at spaces.
func wrap(s string, width int) string {
	var b strings.Builder
	line := 0
	for i, word := range strings.Fields(s) {
		if i > 0 {
			if line+1+len(word) > width {
				b.WriteByte('\n')
				line = 0
			} else {
				b.WriteByte(' ')
				line++
			}
		}
		b.WriteString(word)
		line += len(word)
	}
	return b.String()
}

// parseFlags parses args with fs, allowing flags and positional arguments
// in any order; everything after a "--" is positional. It returns the
// positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var tail []string
	for i, a := range args {
		if a == "--" {
			args, tail = args[:i], args[i+1:]
			break
		}
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, &helpRequest{fs: fs}
			}
			return nil, usagef("%s", strings.TrimSpace(err.Error()))
		}
		args = fs.Args()
		if len(args) == 0 {
			return append(pos, tail...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// flagSet returns a new flag set for a subcommand.
func flagSet(name string) *flag.FlagSet {
	return flag.NewFlagSet("bloomlab "+name, flag.ContinueOnError)
}

// isSet reports whether the flag name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}
