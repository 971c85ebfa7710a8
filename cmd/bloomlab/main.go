// Command bloomlab builds, queries and inspects Bloom filters from the
// shell, plans their parameters, and re-runs the papers' experiments.
//
// Usage:
//
//	bloomlab build -kind KIND [-n N] (-fpr P | -bits-per-key B | -m M -k K) [-scheme S] [-seed S] -o FILE [KEYFILE…]
//	bloomlab add FILE [KEYFILE…]
//	bloomlab remove [-ignore-missing] FILE [KEYFILE…]
//	bloomlab query [-v] [-c] FILE [KEYFILE…]
//	bloomlab info [-json] FILE
//	bloomlab merge -o OUT A B…
//	bloomlab plan -n N (-fpr P | -bits-per-key B) [-json]
//	bloomlab experiments
//	bloomlab reproduce NAME|all [-trials T] [-quick] [-seed S] [-format text|csv|json] [-plot DIR]
//	bloomlab simulate KIND [parameters] [-trials T] [-seed S] [-format text|csv|json]
//
// Keys are read one per line from the KEYFILEs, or from standard input when
// there is none or the name is "-". A trailing "\r" is stripped and empty
// lines are skipped; any other bytes, binary included, form the key. Lines
// may be up to 1 MiB long.
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
)

func main() {
	os.Exit(exitCode(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)))
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
			c := lookup(args[1])
			if c == nil {
				err = usagef("no command %q", args[1])
				fmt.Fprintf(stderr, "bloomlab: %v (run 'bloomlab help' for the list)\n", err)
				return err
			}
			_, err = fmt.Fprintf(stdout, "usage: %s\n\n%s\n", c.usage, c.summary)
			return err
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
	err = c.run(e, args[1:])
	var ue *usageError
	var ee *exitError
	switch {
	case err == nil:
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "bloomlab %s: %s (see 'bloomlab help %s')\n", c.name, ue.msg, c.name)
	case errors.As(err, &ee):
		if ee.err != nil {
			fmt.Fprintf(stderr, "bloomlab: %v\n", ee.err)
		}
	default:
		fmt.Fprintf(stderr, "bloomlab: %v\n", err)
	}
	return err
}

var commandOrder = []string{"build", "add", "remove", "query", "info", "merge", "plan", "experiments", "reproduce", "simulate"}

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
	fmt.Fprintln(w, "Keys are read one per line from KEYFILEs or standard input (\"-\"); empty lines are skipped.")
	fmt.Fprintln(w, "Exit status: 0 ok, 1 runtime error, 2 usage error (query: 0 matched, 1 nothing matched, 2 error).")
	fmt.Fprintln(w, "Run 'bloomlab help COMMAND' for one command.")
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
				return nil, usagef("help requested")
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
