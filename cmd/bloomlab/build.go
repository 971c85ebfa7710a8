package main

import (
	"flag"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/bloomlab/bloomlab/blocked"
	"github.com/bloomlab/bloomlab/bloom"
	"github.com/bloomlab/bloomlab/choices"
	"github.com/bloomlab/bloomlab/counting"
	"github.com/bloomlab/bloomlab/dlcbf"
	"github.com/bloomlab/bloomlab/dleft"
	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/theory"
)

func init() {
	register(&command{
		name:    "build",
		summary: "Build a filter from keys (one per line) and write it to FILE. Without -n the key files are counted in a first pass (standard input then needs -n). -m -k give the size directly; -fpr and -bits-per-key size it for n keys.",
		usage:   "bloomlab build -kind bloom|partitioned|counting|blocked|choices|dlcbf|dleft [-n N] (-fpr P | -bits-per-key B | -m M -k K) [-scheme S] [-seed S] [-counter-bits W] [-c C] [-rounds R] -o FILE [KEYFILE…]",
		run:     runBuild,
	})
}

// buildKinds are the kinds build can make.
var buildKinds = []string{"bloom", "partitioned", "counting", "blocked", "choices", "dlcbf", "dleft"}

func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

func runBuild(e *env, args []string) error {
	fs := flagSet("build")
	kind := fs.String("kind", "", "filter kind: bloom, partitioned, counting, blocked, choices, dlcbf (-fpr only) or dleft (-fpr or -bits-per-key)")
	n := fs.Uint64("n", 0, "number of keys to size for (default: count the keys)")
	fpr := fs.Float64("fpr", 0, "target false-positive rate")
	bpk := fs.Float64("bits-per-key", 0, "bits per key (m = ⌈B·n⌉, optimal k)")
	m := fs.Uint64("m", 0, "number of bits (counters)")
	k := fs.Int("k", 0, "number of hash functions")
	schemeName := fs.String("scheme", "", "index scheme (default enhanced; partition for -kind partitioned)")
	seed := fs.Uint64("seed", 0, "seed of the base hash")
	cbits := fs.Int("counter-bits", counting.DefaultCounterBits, "counter width for -kind counting: 2, 4, 8, 16 or 32")
	nc := fs.Int("c", 2, "groups of hash functions (choices) for -kind choices: 1 … 8")
	rounds := fs.Int("rounds", 0, "for -kind choices: 0 adds the keys online (000 §3.1); R ≥ 1 builds offline, each key inserted R times (000 §3.2; keys held in memory)")
	out := fs.String("o", "", "output file")
	files, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if !slices.Contains(buildKinds, *kind) {
		if *kind == "" {
			return usagef("-kind is required")
		}
		return usagef("unknown -kind %q (want one of %s)", *kind, strings.Join(buildKinds, ", "))
	}
	if *out == "" {
		return usagef("-o FILE is required")
	}
	modes := 0
	for _, name := range []string{"fpr", "bits-per-key"} {
		if isSet(fs, name) {
			modes++
		}
	}
	if isSet(fs, "m") || isSet(fs, "k") {
		if !isSet(fs, "m") || !isSet(fs, "k") {
			return usagef("-m and -k go together")
		}
		modes++
	}
	if modes != 1 {
		return usagef("give exactly one of -fpr, -bits-per-key, or -m with -k")
	}
	if isSet(fs, "fpr") && !(*fpr > 0 && *fpr < 1) {
		return usagef("-fpr %v out of range (0, 1)", *fpr)
	}
	if isSet(fs, "bits-per-key") && !(*bpk > 0 && *bpk <= 1<<20) {
		return usagef("-bits-per-key %v out of range (0, 2^20]", *bpk)
	}
	if isSet(fs, "m") && (*m < 1 || *m > hashing.MaxM || *k < 1 || *k > hashing.MaxK) {
		return usagef("-m %d -k %d out of range (1 ≤ m ≤ 2^48, 1 ≤ k ≤ %d)", *m, *k, hashing.MaxK)
	}
	if isSet(fs, "counter-bits") && *kind != "counting" {
		return usagef("-counter-bits is for -kind counting")
	}
	if (isSet(fs, "c") || isSet(fs, "rounds")) && *kind != "choices" {
		return usagef("-c and -rounds are for -kind choices")
	}
	if *kind == "choices" && (*nc < 1 || *nc > choices.MaxC || *rounds < 0 || *rounds > choices.MaxRounds) {
		return usagef("-c %d -rounds %d out of range (1 ≤ c ≤ %d, 0 ≤ rounds ≤ %d)", *nc, *rounds, choices.MaxC, choices.MaxRounds)
	}
	scheme := hashing.DefaultScheme
	if *kind == "partitioned" {
		scheme = hashing.Partition
	}
	if *schemeName != "" {
		if scheme, err = hashing.ParseScheme(*schemeName); err != nil {
			return usagef("unknown -scheme %q (want one of %s)", *schemeName, schemeNames())
		}
	}
	switch {
	case *kind == "bloom" && scheme.Partitioned():
		return usagef("-scheme %v is partitioned: use -kind partitioned", scheme)
	case *kind == "partitioned" && !scheme.Partitioned():
		return usagef("-kind partitioned needs a partitioned -scheme (partition, prime-partition, partition-independent)")
	}
	files = keyFiles(files)
	if *kind == "dlcbf" {
		if *schemeName != "" || !isSet(fs, "fpr") {
			return usagef("-kind dlcbf takes -fpr (and -n), no -scheme, -m, -k or -bits-per-key")
		}
		return buildRefusable(e, files, *n, *out, func(n uint64) (refusable, error) {
			return dlcbf.NewWithEstimates(n, *fpr, *seed)
		})
	}
	if *kind == "dleft" {
		if *schemeName != "" || isSet(fs, "m") {
			return usagef("-kind dleft takes -fpr or -bits-per-key (and -n), no -scheme, -m or -k")
		}
		return buildRefusable(e, files, *n, *out, func(n uint64) (refusable, error) {
			if *fpr > 0 {
				return dleft.NewWithEstimates(n, *fpr, *seed)
			}
			return dleft.NewWithBitsPerKey(n, *bpk, *seed)
		})
	}

	mm, kk := *m, *k
	var capacity uint64 // the design n, when the filter is sized for one
	counted := false    // capacity came from counting the key files
	if !isSet(fs, "m") {
		nn := *n
		if !isSet(fs, "n") {
			for _, name := range files {
				if err := rereadable(name); err != nil {
					return err
				}
			}
			if nn, err = e.countKeys(files); err != nil {
				return err
			}
			if nn == 0 {
				return fmt.Errorf("build: no keys in %v to size the filter for; give -n", files)
			}
			counted = true
		} else if nn == 0 {
			return usagef("-n must be at least 1")
		}
		size := sizeFor
		if *kind == "blocked" {
			size = sizeBlocked
		}
		if *kind == "choices" {
			size = func(_ hashing.Scheme, n uint64, fpr, bpk float64) (uint64, int, error) {
				return sizeChoices(*nc, n, fpr, bpk)
			}
		}
		if mm, kk, err = size(scheme, nn, *fpr, *bpk); err != nil {
			return fmt.Errorf("build: %w", err)
		}
		capacity = nn
	}
	if err := checkMemory(mm, *kind, *cbits); err != nil {
		return err
	}
	var f filter
	if *kind == "blocked" {
		if *schemeName != "" {
			return usagef("-kind blocked has one scheme (independent positions in a 512-bit block); drop -scheme")
		}
		f, err = blocked.New(mm, kk, blocked.WithSeed(*seed))
	} else if *kind == "choices" {
		f, err = choices.New(choices.Config{M: mm, K: kk, C: *nc, Scheme: scheme, Seed: *seed})
	} else if *kind == "counting" {
		f, err = counting.New(mm, kk, counting.WithScheme(scheme), counting.WithSeed(*seed), counting.WithCounterBits(*cbits))
	} else {
		f, err = bloom.New(mm, kk, bloom.WithScheme(scheme), bloom.WithSeed(*seed))
	}
	if err != nil {
		return usagef("%v", err)
	}
	if capacity == 0 && isSet(fs, "n") {
		capacity = *n
	}
	f.SetCapacity(capacity)
	var added uint64
	add := f.Add
	var digests []hashing.Digest // -kind choices -rounds R: the keys, for the offline build
	if cf, ok := f.(*choices.Filter); ok && *rounds > 0 {
		add = func(key []byte) { digests = append(digests, cf.Digest(key)) }
	}
	if err := e.forEachKey(files, func(key []byte, _ string, _ int) error { add(key); added++; return nil }); err != nil {
		return err
	}
	if cf, ok := f.(*choices.Filter); ok && *rounds > 0 {
		var b choices.Builder
		if err := b.Build(cf, digests, *rounds); err != nil {
			return fmt.Errorf("build: %w", err)
		}
	}
	if counted && added != capacity {
		// The files changed between the counting pass and this one; a
		// filter missing keys would be a false negative waiting to happen.
		return fmt.Errorf("build: the key files held %d keys when counted and %d when read again; nothing written", capacity, added)
	}
	return saveFilter(*out, f)
}

// sizeChoices returns m and k for a c-choice filter: theory.SizeChoices for
// a rate, or m = ⌈B·n⌉ and the k minimising theory.FPChoices (the online
// greedy prediction of 000 eq. 3.2; an offline build does better).
func sizeChoices(c int, n uint64, fpr, bpk float64) (uint64, int, error) {
	if fpr > 0 {
		return theory.SizeChoices(n, fpr, c, hashing.MaxK)
	}
	mf := math.Ceil(bpk * float64(n))
	if mf > float64(hashing.MaxM) {
		return 0, 0, fmt.Errorf("%v bits per key for %d keys exceeds 2^48 bits", bpk, n)
	}
	k, _ := theory.OptimalKChoices(mf/float64(n), c, hashing.MaxK)
	return uint64(mf), max(k, 1), nil
}

// checkMemory refuses a filter larger than the machine's memory: the
// allocation would end the process with a fatal out-of-memory error
// instead of a message.
func checkMemory(m uint64, kind string, counterBits int) error {
	bits := float64(m)
	if kind == "counting" {
		bits *= float64(counterBits)
	}
	need := bits / 8
	if have := physicalMemory(); have > 0 && need > float64(have) {
		return fmt.Errorf("build: the filter needs %s of memory, more than this machine's %s", humanBytes(need), humanBytes(float64(have)))
	}
	return nil
}

// roundDownPartition returns the largest size ≤ m that a partitioned
// scheme accepts with k subarrays (at least one position per subarray, a
// prime per subarray for PrimePartition), so that a bits-per-key budget is
// never exceeded; other schemes take m as it is.
func roundDownPartition(scheme hashing.Scheme, m uint64, k int) uint64 {
	kk := uint64(k)
	switch scheme {
	case hashing.Partition, hashing.PartitionIndependent:
		return max(m/kk, 1) * kk
	case hashing.PrimePartition:
		p := m / kk
		for p > 2 && !hashing.IsPrime(p) {
			p--
		}
		return max(p, 2) * kk
	}
	return m
}

// sizeBlocked returns m and k for a blocked filter: theory.SizeBlocked for
// a rate, or m = ⌈B·n⌉ rounded up to whole blocks and the k minimising
// theory.FPBlocked.
func sizeBlocked(_ hashing.Scheme, n uint64, fpr, bpk float64) (uint64, int, error) {
	if fpr > 0 {
		b, k, err := theory.SizeBlocked(n, fpr)
		return b * theory.BlockBits, k, err
	}
	// Whole blocks within the budget (at least one block).
	mf := math.Max(1, math.Floor(math.Ceil(bpk*float64(n))/theory.BlockBits)) * theory.BlockBits
	if mf > float64(hashing.MaxM) {
		return 0, 0, fmt.Errorf("%v bits per key for %d keys exceeds 2^48 bits", bpk, n)
	}
	return uint64(mf), max(1, theory.OptimalKBlocked(float64(n), mf/theory.BlockBits, theory.BlockBits)), nil
}

// sizeFor returns m and k for n keys at rate fpr (if fpr > 0) or with bpk
// bits per key, for a standard or partitioned layout.
func sizeFor(scheme hashing.Scheme, n uint64, fpr, bpk float64) (uint64, int, error) {
	var m uint64
	var k int
	if fpr > 0 {
		var err error
		size := theory.Size
		if scheme.Partitioned() {
			size = theory.SizePartitioned
		}
		if m, k, err = size(n, fpr); err != nil {
			return 0, 0, err
		}
	} else {
		mf := math.Ceil(bpk * float64(n))
		if mf > float64(hashing.MaxM) {
			return 0, 0, fmt.Errorf("%v bits per key for %d keys exceeds 2^48 bits", bpk, n)
		}
		m = uint64(mf)
		if scheme.Partitioned() {
			k = theory.OptimalKPartitioned(float64(m), float64(n))
		} else {
			k = theory.OptimalK(float64(m), float64(n))
		}
		// More than MaxK hash functions only lowers the rate further
		// below what MaxK achieves at these bits per key.
		k = min(max(k, 1), hashing.MaxK)
		m = roundDownPartition(scheme, m, k)
	}
	if k > hashing.MaxK {
		return 0, 0, fmt.Errorf("the rate needs k = %d hash functions, more than %d", k, hashing.MaxK)
	}
	return m, k, nil
}

func schemeNames() string {
	s := ""
	for i, sc := range hashing.Schemes() {
		if i > 0 {
			s += ", "
		}
		s += sc.String()
	}
	return s
}
