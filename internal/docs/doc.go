// Package docs holds the test that runs every example of README.md and
// docs/*.md (go test ./internal/docs), so that the documentation cannot
// drift from the code. It has no code of its own; this comment is the
// convention doc writers follow.
//
// # Which blocks run
//
// Fenced code blocks are examples by their info string:
//
//   - sh, bash, shell, console: shell examples, run by bash.
//   - go: Go examples, compiled and run.
//   - text, json, python and the rest: not run (the test lists the python
//     blocks it leaves out). A block without an info string that looks
//     like a shell example (a line beginning with "$ ", "bloomlab ",
//     "redis-cli " or "go run") is an error: label it sh or console to run
//     it, text if it is a synopsis that cannot run (placeholders such as
//     HOST:PORT).
//
// Inline code spans are not run.
//
// # Shell examples
//
// Each page runs in its own new, empty directory, its shell blocks in page
// order, each command (a line; a trailing backslash continues it) in its
// own bash -c, so files carry over from one command to the next but shell
// variables and cd do not. A freshly built bloomlab is first on PATH;
// Debian's redis-server and redis-cli are used as installed (under CI=true a
// page that needs them fails without them). So an example must create the
// files it reads earlier on its own page, and every command must succeed.
// Standard input is a directory, so a command that reads standard input
// where the example does not give it any (a pipe, a redirection) fails at
// once instead of waiting.
//
// A block whose first line begins with "$ " is a transcript: "$ " lines are
// commands and the lines after one, up to the next, are its output
// (standard output and standard error together, as a terminal shows them).
// A command followed by no output lines is run and its output not checked.
// Output is compared line by line, trailing blanks ignored, with two
// placeholders for what varies from run to run (timings, dates, random
// generations):
//
//   - "…" inside a line matches any text within that line;
//   - a line that is only "…" matches any number of lines, none included.
//
// A last output line "[exit status N]" says the command exits with N
// (query exits 1 when nothing matched); otherwise it must exit 0. Any other
// block is a script: every line that is not blank or a "#" comment is a
// command, which must exit 0. Output is what a script sees, not a
// terminal: redis-cli prints replies raw (1, not "(integer) 1").
//
// A command ending in "&" runs in the background (a server): the test
// waits until the ports it names accept connections, and stops whatever
// is still running at the end of the page (SIGTERM; it must then exit 0).
// Stop a server in the example itself with redis-cli -p PORT SHUTDOWN.
//
// # Ports, root and other rules
//
// Examples never use port 6379, where a reader's own Redis listens: a
// server or client in the docs uses 6380 (6381 … 6389 for more at once),
// always spelled out (bloomlab serve -addr 127.0.0.1:6380, redis-server
// --port 6380, redis-cli -p 6380, redis://127.0.0.1:6380?key=…). The test
// replaces each of these ten numbers, wherever it appears on a page, by a
// free port of its own for that page, so that runs in parallel and a local
// Redis do not clash. A shell example uses no absolute path other than
// /dev/…: the docs run in a scratch directory, without root. Two pages
// must not leave different files under the same name: a reader who
// follows one page after the other in one directory would lose the first
// page's file (a page may rewrite its own files).
//
// # Scaling down
//
// An example too slow or too large for the test (a ≥ 1 GB filter, a full
// reproduction) is scaled down by a directive placed on the lines just
// before its block, invisible on the rendered page:
//
//	<!-- doctest: replace "-n 1e9" "-n 1e6" 1.8 GB filter; the test builds 1.8 MB -->
//
// Each OLD string must occur in the block; the text after the two quoted
// strings is the reason, which the test logs. Commands that cannot run at
// all (the test suite itself, benchmarks, servers elsewhere) are listed
// with their reason in the skip list of docs_test.go; an entry that no
// longer matches a command fails the test, so the list cannot go stale.
//
// # Go examples
//
// A Go block is either a whole file (it begins with "package main") or a
// fragment: optional import lines, then statements, which the test puts in
// func main. A fragment's imports may be left out for the standard
// packages fmt, log, os, errors, bytes, strings, context, time, io, the
// module's packages (bloom, cuckoo, scalable, server, …) and go-redis
// (redis): the test adds those it uses. Every block is compiled in a
// module that requires this one (replace directive: the tree under test)
// and run in a scratch directory; it must exit 0. A final "// Output:"
// comment, as in a Go Example, gives its expected standard output, with
// the placeholders above.
package docs
