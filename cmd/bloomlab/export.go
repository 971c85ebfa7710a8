package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/bloomlab/bloomlab"
	"github.com/bloomlab/bloomlab/internal/kind"
)

func init() {
	register(&command{
		name: "export",
		summary: "Write the filter in FILE to OUT (\"-\": standard output) in a foreign format its kind offers " +
			"(see 'bloomlab help import' for the formats of every kind).",
		usage: "bloomlab export -format F -o OUT FILE",
		run:   runExport,
	})
	register(&command{
		name: "import",
		summary: "Read a filter in a foreign format from IN (\"-\": standard input) and write it to FILE in the bloomlab format. " +
			"-format rdb reads one key of a Redis RDB file (Redis 7.0 to 8.x): a BF key (MBbloom--) becomes a scalable file, a CF key " +
			"(MBbloomCF) a cuckoo file, a CMS key (CMSk-TYPE) a countmin file, each in its redisbloom profile; the other keys are passed " +
			"over, not decoded, and the file's checksum is verified before FILE is written. TOPK and TDIGEST keys are not filters: " +
			"bloomlab serve -load-rdb loads them. Keys of types bloomlab does not load (lists, hashes, sets, sorted sets, streams, other " +
			"modules' types) met in the database before KEY stop the import unless -skip-unsupported passes over them (docs/RDB.md).",
		usage: "bloomlab import -format F [-kind K] -o FILE IN | import -format rdb -key KEY [-db N] [-skip-unsupported] -o FILE DUMP.rdb | " +
			"import -format bitsandblooms [-endian little] [-base64 std] -o FILE IN | import -format blobloom -hash xxhash64 -o FILE IN",
		run: runImport,
	})
}

// formatsHelp lists the foreign formats of every kind.
func formatsHelp(w io.Writer) {
	fmt.Fprintln(w, "\nformats:")
	fmt.Fprintln(w, "  -format rdb (import only): one BF, CF or CMS key of a Redis RDB file, as a scalable, cuckoo or countmin file")
	for _, p := range peerImports {
		fmt.Fprintf(w, "  -kind %s -format %s: %s\n", p.kind, p.format, p.summary)
	}
	any := false
	for _, s := range kind.All() {
		for _, x := range s.Exports {
			fmt.Fprintf(w, "  -kind %s -format %s: %s\n", s.Name, x.Name, x.Summary)
			any = true
		}
	}
	if !any {
		fmt.Fprintln(w, "  (no kind of this build offers a foreign format)")
	}
}

func formatNames() []string {
	var names []string
	for _, p := range peerImports {
		names = append(names, p.kind+":"+p.format+" (import only)")
	}
	for _, s := range kind.All() {
		for _, x := range s.Exports {
			names = append(names, s.Name+":"+x.Name)
		}
	}
	if len(names) == 0 {
		return []string{"none in this build"}
	}
	return names
}

func runExport(e *env, args []string) error {
	fs := flagSet("export")
	format := fs.String("format", "", "foreign format")
	out := fs.String("o", "", "output file (\"-\": standard output)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		if he, ok := err.(*helpRequest); ok {
			he.extra = formatsHelp
		}
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one FILE")
	}
	if *format == "" || *out == "" {
		return usagef("-format F and -o OUT are required")
	}
	if err := e.checkNotInput(*out, pos); err != nil {
		return err
	}
	if p := findPeer(*format); p != nil {
		return usagef("-format %s is import only: bloomlab reads that library's filters but does not write them (a filter re-built from its keys in a native kind is faster and smaller: docs/API.md)", p.format)
	}
	f, err := loadFile(pos[0])
	if err != nil {
		return err
	}
	s, _ := kind.Lookup(f.Kind())
	var x *kind.Export
	for i := range s.Exports {
		if s.Exports[i].Name == *format {
			x = &s.Exports[i]
		}
	}
	if x == nil {
		return fmt.Errorf("export: %s holds a %s, which has no format %q (formats: %s)", pos[0], f.Kind(), *format, strings.Join(formatNames(), ", "))
	}
	write := func(w io.Writer) error { return x.Write(f, w) }
	if *out == "-" {
		bw := bufio.NewWriter(e.stdout)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	}
	l, err := lockPath(*out, false)
	if err != nil {
		return err
	}
	defer l.unlock()
	return writeFileAtomic(*out, write)
}

func runImport(e *env, args []string) error {
	fs := flagSet("import")
	format := fs.String("format", "", "foreign format")
	kindName := fs.String("kind", "", "the kind to import as, when several kinds offer the format")
	out := fs.String("o", "", "output file (\"-\": standard output)")
	ro := rdbImportFlags(fs)
	po := peerImportFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		if he, ok := err.(*helpRequest); ok {
			he.extra = formatsHelp
		}
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one IN (\"-\": standard input)")
	}
	if *format == "" || *out == "" {
		return usagef("-format F and -o FILE are required")
	}
	if err := e.checkNotInput(*out, pos); err != nil {
		return err
	}
	p := findPeer(*format)
	if err := checkPeerFlags(fs, p); err != nil {
		return err
	}
	if *format == "rdb" {
		return importRDB(e, pos[0], *out, *kindName, ro)
	}
	for _, f := range []string{"key", "db", "skip-unsupported"} {
		if isSet(fs, f) {
			return usagef("-%s goes with -format rdb", f)
		}
	}
	if p != nil {
		return importPeer(e, p, pos[0], *out, *kindName, po)
	}
	var found []*kind.Export
	var kinds []string
	for _, s := range kind.All() {
		if *kindName != "" && s.Name != *kindName {
			continue
		}
		for i := range s.Exports {
			if s.Exports[i].Name == *format {
				found = append(found, &s.Exports[i])
				kinds = append(kinds, s.Name)
			}
		}
	}
	if len(found) == 0 {
		return usagef("no kind offers format %q (formats: %s)", *format, strings.Join(formatNames(), ", "))
	}
	var in io.Reader = e.stdin
	if pos[0] != "-" {
		if st, err := os.Stat(pos[0]); err == nil && st.IsDir() {
			return usagef("%s is a directory (IN is a dump file)", pos[0])
		}
		fh, err := os.Open(pos[0])
		if err != nil {
			return err
		}
		defer fh.Close()
		in = fh
	}
	if len(found) > 1 {
		// Several kinds offer the format: the dump's first bytes decide.
		br := bufio.NewReaderSize(in, kind.DetectLen)
		prefix, _ := br.Peek(kind.DetectLen)
		var which []*kind.Export
		for _, x := range found {
			if x.Detect != nil && x.Detect(prefix) {
				which = append(which, x)
			}
		}
		if len(which) != 1 {
			return usagef("format %q is offered by kinds %s, and %s does not say which: give -kind", *format, strings.Join(kinds, ", "), sourceName(pos[0]))
		}
		found, in = which, br
	}
	f, err := found[0].Read(in)
	if err != nil {
		return &fileError{sourceName(pos[0]), err}
	}
	return e.writeOutput(*out, bloomlab.Filter(f))
}
