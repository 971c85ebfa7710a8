package main

import (
	"errors"
	"flag"
	"fmt"
	"github.com/bloomlab/bloomlab/internal/sysmem"
	"io"
	"math"
	"os"
	"runtime/debug"
	"strings"

	"github.com/bloomlab/bloomlab"
	"github.com/bloomlab/bloomlab/cuckoo"
	"github.com/bloomlab/bloomlab/internal/flagx"
	"github.com/bloomlab/bloomlab/internal/kind"
)

func init() {
	register(&command{
		name: "build",
		summary: "Build a filter of the given kind from keys (one per line) and write it to FILE (\"-\": standard output). " +
			"Size it for -n keys at a false-positive rate (-fpr) or with a number of bits per key (-bits-per-key), " +
			"or give the size (-m with -k). Without -n the key files are counted in a first pass (keys from standard input then need -n), " +
			"except for kinds that grow and static kinds. A static kind (fuse, ribbon: docs/STATIC.md) holds 8 bytes of hash per key until " +
			"the filter is built, and building takes more at its peak (plan's \"build memory\": about 36 bytes per key for fuse, " +
			"18 for ribbon; for 10^9 keys at -fpr 0.001, 35.9 GB for fuse and 19.3 GB for ribbon); build checks that peak against what the process may use " +
			"before it reads a key (with -n or after counting), and stops with an error when keys from a pipe outgrow it. Each kind takes its own options, listed below. " +
			"FILE is written atomically; an existing FILE is replaced, and FILE may not be one of the key files. " +
			"-o may also name a filter in Redis (blocked kind only): redis://[USER:PASSWORD@]HOST:PORT[/DB]?key=NAME, rediss://… (TLS) or " +
			"redis+cluster://HOST:PORT[,HOST:PORT…]?key=NAME; the filter is built here and uploaded, visible only once complete, and an " +
			"existing one is replaced only with -force (docs/REDIS.md). " + keyRules,
		usage: "bloomlab build -kind KIND [-n N] (-fpr P | -bits-per-key B | -m M -k K) [kind options] [-seed S] [-force] -o FILE|TARGET [KEYFILE…]",
		run:   runBuild,
	})
}

// sizeFlags are the sizing flags every kind takes.
type sizeFlags struct {
	n    *flagx.Count
	fpr  *float64
	bpk  *float64
	m    *flagx.Count
	k    *int
	seed *uint64
}

func addSizeFlags(fs *flag.FlagSet) sizeFlags {
	return sizeFlags{
		n:    flagx.NewCount(fs, "n", 0, 0, "number of keys to size for (default: count the keys; 1e9 notation accepted)"),
		fpr:  fs.Float64("fpr", 0, "target false-positive rate, in (0, 1)"),
		bpk:  fs.Float64("bits-per-key", 0, "bits of memory per key"),
		m:    flagx.NewCount(fs, "m", 0, 0, "size in the kind's units (bits, counters, …); with -k"),
		k:    fs.Int("k", 0, "number of hash functions (probes per key); with -m"),
		seed: fs.Uint64("seed", 0, "seed of the base hash"),
	}
}

func (s sizeFlags) target() kind.Target {
	return kind.Target{N: s.n.V, FPR: *s.fpr, BitsPerKey: *s.bpk, M: s.m.V, K: *s.k, Seed: *s.seed}
}

// kindArg returns the value of -kind in args, if any (before the flags are
// parsed: the kind decides which options the flag set has).
func kindArg(args []string) (string, bool) {
	for i, a := range args {
		if a == "--" {
			break
		}
		for _, p := range []string{"-kind", "--kind"} {
			if a == p && i+1 < len(args) {
				return args[i+1], true
			}
			if v, ok := strings.CutPrefix(a, p+"="); ok {
				return v, true
			}
		}
	}
	return "", false
}

// kindOptionsHelp lists every kind with its summary and options, for the
// help of the commands that take -kind.
func kindOptionsHelp(w io.Writer) {
	fmt.Fprintln(w, "\nkinds and their options:")
	for _, s := range kind.All() {
		fmt.Fprintf(w, "\n  -kind %s: %s\n", s.Name, s.Summary)
		fs := flag.NewFlagSet(s.Name, flag.ContinueOnError)
		flagx.BindOptions(fs, s)
		if hasFlags(fs) {
			fs.SetOutput(w)
			fs.PrintDefaults()
		}
	}
}

// lookupKind returns the spec of -kind name, or a usage error listing the
// kinds.
func lookupKind(name string) (*kind.Spec, error) {
	if name == "" {
		return nil, usagef("-kind is required (one of %s)", strings.Join(kind.Names(), ", "))
	}
	s, ok := kind.Lookup(name)
	if !ok {
		return nil, usagef("unknown -kind %q (want one of %s)", name, strings.Join(kind.Names(), ", "))
	}
	return s, nil
}

// paramError turns a kind's parameter error into a usage error (exit 2)
// and leaves other errors alone.
func paramError(err error) error {
	if errors.Is(err, kind.ErrParam) {
		return usagef("%s", strings.TrimSuffix(flagText(err), ": "+kind.ErrParam.Error()))
	}
	return err
}

// flagText is err's text with the parameters a library's kind.ParamError
// names written as the command's flags ("fpr" → "-fpr").
func flagText(err error) string {
	var pe *kind.ParamError
	if !errors.As(err, &pe) {
		return err.Error()
	}
	plain := pe.Message(func(p string) string { return p })
	return strings.Replace(err.Error(), plain, pe.Message(flagx.FlagName), 1)
}

// flagWorded is an error whose text flagText rewrote.
type flagWorded struct {
	err error
	msg string
}

func (e *flagWorded) Error() string { return e.msg }
func (e *flagWorded) Unwrap() error { return e.err }

// flagWords returns err with its text as flagText words it.
func flagWords(err error) error {
	var pe *kind.ParamError
	if err == nil || !errors.As(err, &pe) {
		return err
	}
	return &flagWorded{err: err, msg: flagText(err)}
}

func runBuild(e *env, args []string) error {
	fs := flagSet("build")
	fs.String("kind", "", "filter kind: "+strings.Join(kind.Names(), ", "))
	sf := addSizeFlags(fs)
	out := fs.String("o", "", "output: a file (\"-\": standard output) or a URL target (redis://…?key=NAME)")
	force := fs.Bool("force", false, "replace an existing filter at a URL target (a file is always replaced)")
	name, _ := kindArg(args)
	var spec *kind.Spec
	var planner kind.Planner
	if s, ok := kind.Lookup(name); ok {
		spec, planner = s, flagx.BindOptions(fs, s)
	}
	files, err := parseFlags(fs, args)
	if err != nil {
		var he *helpRequest
		if errors.As(err, &he) {
			he.extra = kindOptionsHelp
		} else if spec == nil && name != "" {
			_, err = lookupKind(name) // an unknown kind explains an unknown option
		}
		return err
	}
	if spec == nil {
		_, err := lookupKind(name)
		return err
	}
	if *out == "" {
		return usagef("-o FILE is required")
	}
	files = keyFiles(files)
	if err := checkKeyFiles(files); err != nil {
		return err
	}
	tgt, err := openTarget(*out)
	if err != nil {
		return err
	}
	if err := tgt.checkBuild(e, spec.Name, *force, files); err != nil {
		return err
	}
	t := sf.target()
	if sf.n.Given && t.N == 0 {
		return usagef("-n must be at least 1")
	}
	// A rate or budget given as 0 is not "no rate": refuse it here, where
	// "given" is known (a kind sees only the target).
	if isSet(fs, "fpr") && !(*sf.fpr > 0 && *sf.fpr < 1) {
		return usagef("-fpr %v out of range (0, 1)", *sf.fpr)
	}
	if isSet(fs, "bits-per-key") && !(*sf.bpk > 0) {
		return usagef("-bits-per-key %v must be positive", *sf.bpk)
	}
	// A kind that needs n and was not given -n is sized by counting the
	// keys first; the planner says whether it needs n (ErrNeedN), after
	// checking every other option, so a mistake is reported before the
	// keys are read.
	_, err = planner(t)
	// A static kind plans a rate without n (its array follows its keys),
	// but its build memory is checked before a key is read, so its key
	// files are counted too when they can be read twice.
	counted := (errors.Is(err, kind.ErrNeedN) || (err == nil && spec.Static && t.N == 0)) && !sf.n.Given
	if err != nil && !counted {
		return paramError(err)
	}
	// A static kind (fuse, ribbon) is sized by the keys its builder holds
	// when Finish builds it, so keys from a pipe need no -n: it is planned
	// for one key (its options checked, its builder made) and its memory
	// budget (setMemoryBudget) stops it, with an error, before the held
	// hashes outgrow the memory the process may use.
	streamed := false
	if counted && spec.Static && !allRereadable(files) {
		counted, streamed, t.N = false, true, 1
	}
	if streamed {
		// A planner that sizes a static kind without n (its builder
		// sized by the keys in Finish) is taken at its word.
		t0 := t
		t0.N = 0
		if _, err := planner(t0); err == nil {
			t.N = 0
		}
	}
	if counted {
		for _, name := range files {
			if err := rereadable(name); err != nil {
				return err
			}
		}
		if t.N, err = e.countKeys(files); err != nil {
			return err
		}
		if t.N == 0 {
			return fmt.Errorf("build: no keys in %v to size the filter for; give -n", files)
		}
	}
	p, err := planner(t)
	if err != nil {
		return paramError(err)
	}
	for _, n := range p.Notices {
		fmt.Fprintf(e.stderr, "bloomlab: build: note: %s\n", n)
	}
	if spec.Static {
		if t.FPR > 0 && p.FPR < 0.9*t.FPR {
			fmt.Fprintf(e.stderr, "bloomlab: build: note: a %s filter's rates come in steps: -fpr %g gives %s, the largest it offers below it\n", spec.Name, t.FPR, formatValue(p.FPR))
		}
		if !streamed {
			if err := checkStaticMemory(spec.Name, t.N, p.Bits, p.BuildBytes); err != nil {
				return err
			}
		}
	} else if err := checkMemory("build", p.Bits); err != nil {
		return err
	}
	if spec.Static {
		gcWithinMemory()
	}
	b, err := p.New()
	if err != nil {
		return paramError(err)
	}
	setMemoryBudget(b)
	var added uint64
	err = e.forEachKey(files, func(key []byte, file string, line int) error {
		if err := b.Add(key); err != nil {
			hint := fullHint(b, key, err)
			if spec.Static {
				hint = "a static filter's build holds 8 bytes of hash per key and more at its peak (plan's \"build memory\"): build it where more memory is free, or split the keys into several filters"
			}
			return fmt.Errorf("build: key %s (%s:%d): %w; nothing written (%s)", quoteKey(key), sourceName(file), line, err, hint)
		}
		added++
		return nil
	})
	if err != nil {
		return err
	}
	f, err := b.Finish()
	if err != nil {
		return fmt.Errorf("build: %w; nothing written", err)
	}
	if counted && added != t.N {
		// The files changed between the counting pass and this one; a
		// filter missing keys would be a false negative waiting to happen.
		return fmt.Errorf("build: the key files held %d keys when counted and %d when read again; nothing written", t.N, added)
	}
	return tgt.write(e, f, *force)
}

// fullHint says what to do about a key the filter being built refused
// (err): size for more keys, except when the key is a cuckoo filter's
// repeated key, whose copies take a slot each in its two buckets
// whatever the size.
func fullHint(b kind.Builder, key []byte, err error) string {
	if errors.Is(err, cuckoo.ErrFull) {
		// A cuckoo filter is its own builder: Finish returns it as it
		// stands, and the refused add changed nothing.
		if f, ferr := b.Finish(); ferr == nil {
			if c, ok := f.(*cuckoo.Filter); ok && c.Count(key) >= 2 {
				return "the key files repeat this key, and a cuckoo filter keeps every copy: remove the repeats (sort -u)"
			}
		}
	}
	return "size for more keys with -n"
}

// checkMemory refuses a structure larger than the memory the process may
// use: the allocation would end the process with a fatal out-of-memory
// error instead of a message.
func checkMemory(cmd string, bits uint64) error {
	need := float64(bits) / 8
	if have := memoryLimit(); have > 0 && need > float64(have) {
		return fmt.Errorf("%s: the filter needs %s of memory, more than the %s this process may use", cmd, humanBytes(need), humanBytes(float64(have)))
	}
	return nil
}

// staticHashBytes is what a static kind's builder holds per key until
// Finish: the key's 64-bit hash (kind.Spec.Static).
const staticHashBytes = 8

// checkStaticMemory refuses, before any key is read, a static filter of
// n keys whose build cannot be held: the plan's BuildBytes (the hashes
// held until Finish, its working arrays and the filter), or where the
// plan has none 8 bytes of hash per key and the filter of bits.
func checkStaticMemory(name string, n, bits, buildBytes uint64) error {
	held := float64(n) * staticHashBytes
	need := held + float64(bits)/8
	if buildBytes > 0 {
		need = float64(buildBytes)
	}
	if have := memoryLimit(); have > 0 && need > float64(have) {
		return fmt.Errorf("build: a %s filter of %d keys needs, at the peak of its build, 8 bytes of hash per key (%s), the construction's working arrays and the filter (%s): %s of memory, more than the %s this process may use",
			name, n, humanBytes(held), humanBytes(float64(bits)/8), humanBytes(need), humanBytes(float64(have)))
	}
	return nil
}

// gcWithinMemory makes the garbage collector keep the heap within the
// memory the process may use (a soft limit, debug.SetMemoryLimit, at 90%
// of it) unless GOMEMLIMIT sets one: a static kind's build holds its
// hashes and Finish's arrays at once (plan.BuildBytes, checked against
// that memory), and without a limit the collector lets the heap grow to
// twice what is live (GOGC 100), the arrays the growing hash slice left
// behind included.
func gcWithinMemory() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	if have := memoryLimit(); have > 0 && have < math.MaxInt64/2 {
		debug.SetMemoryLimit(int64(have / 10 * 9))
	}
}

// allRereadable reports whether every key file can be read twice (a
// regular file, not standard input or a pipe).
func allRereadable(files []string) bool {
	for _, f := range files {
		if rereadable(f) != nil {
			return false
		}
	}
	return true
}

// memoryLimit is the memory, in bytes, this process may use
// (sysmem.HeapLimit: RAM, the cgroup's limit, and under RLIMIT_AS the
// address space left less the runtime's headroom; 0 if unknown);
// replaceable by tests.
var memoryLimit = sysmem.HeapLimit

// setMemoryBudget bounds, to the memory this process may use, the growth
// of a structure that allocates as keys come (kind.MemoryBudgeter: a
// scalable chain's next link), so that an add that would outgrow it fails
// with an error, the key refused and the structure unchanged, instead of
// ending the process with a fatal out-of-memory. A smaller budget the
// structure already has (a growing cuckoo filter's default, which stops
// copies of one key from doubling its tables up to all of memory) is
// kept. Unknown limit: no budget beyond the structure's own.
func setMemoryBudget(x any) {
	mb, ok := x.(kind.MemoryBudgeter)
	if !ok {
		return
	}
	have := memoryLimit()
	if have == 0 {
		return
	}
	budget := satMul8(have)
	if cur, ok := x.(interface{ MaxBits() uint64 }); ok {
		if b := cur.MaxBits(); b != 0 && b < budget {
			return
		}
	}
	mb.SetMaxBits(budget)
}

// satMul8 is 8·b, saturated at 2^64 − 1.
func satMul8(b uint64) uint64 {
	if b > math.MaxUint64/8 {
		return math.MaxUint64
	}
	return 8 * b
}

// warnState tells the user, on stderr, what a build or an add left that
// needs attention: more keys than the filter was sized for (its rate is
// then above the target), and whatever the kind's description marks as a
// warning (a d-left filter's stash, say).
func (e *env) warnState(cmd, path string, f bloomlab.Filter) {
	// A static filter's rate does not grow with its keys: it is built for
	// exactly the keys it holds.
	static := false
	if s, ok := kind.Lookup(f.Kind()); ok {
		static = s.Static
	}
	if c := f.Capacity(); c > 0 && f.N() > c && !static {
		fmt.Fprintf(e.stderr, "bloomlab: %s: warning: %s holds %d keys, more than the %d it was sized for; its false-positive rate is now %s (bloomlab info %s)\n",
			cmd, path, f.N(), c, formatValue(f.EstimatedFPR()), path)
	}
	if s, ok := kind.Lookup(f.Kind()); ok {
		for _, fd := range s.Describe(f) {
			if fd.Warn {
				fmt.Fprintf(e.stderr, "bloomlab: %s: warning: %s: %s = %s%s\n", cmd, path, fd.Name, formatValue(fd.Value), noteSuffix(fd.Note))
			}
		}
	}
}

func noteSuffix(note string) string {
	if note == "" {
		return ""
	}
	return " (" + note + ")"
}
