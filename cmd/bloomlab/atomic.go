package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Temporary files in flight, removed if the process is interrupted, and
// the files whose replacement has been renamed into place (an interruption
// after that must not say "nothing written"). tmpMu is held from a write's
// rename to its record in written, so the signal handler sees either.
var (
	tmpMu    sync.Mutex
	tmpFiles = map[string]bool{}
	written  []string
	// undo holds what an interruption must undo besides temporary files:
	// an upload to Redis in progress deletes the generation it was
	// writing (invisible, but memory on the servers).
	undo   = map[int]func(){}
	undoID int
)

// onInterrupt registers fn to run if the process is interrupted, until
// the returned function is called.
func onInterrupt(fn func()) (done func()) {
	tmpMu.Lock()
	defer tmpMu.Unlock()
	undoID++
	id := undoID
	undo[id] = fn
	return func() {
		tmpMu.Lock()
		delete(undo, id)
		tmpMu.Unlock()
	}
}

func trackTemp(name string, on bool) {
	tmpMu.Lock()
	defer tmpMu.Unlock()
	if on {
		tmpFiles[name] = true
	} else {
		delete(tmpFiles, name)
	}
}

// interrupted removes every temporary file still in flight and says what
// the interruption left: the files already written, or that nothing was.
// It returns with tmpMu held, so no rename can start after it.
func interrupted() string {
	tmpMu.Lock()
	inFlight := len(tmpFiles) > 0 || len(undo) > 0
	for name := range tmpFiles {
		os.Remove(name)
		delete(tmpFiles, name)
	}
	for id, fn := range undo {
		fn()
		delete(undo, id)
	}
	switch {
	case len(written) > 0:
		return strings.Join(written, ", ") + " written before the interruption"
	case inFlight:
		return "nothing written"
	}
	return "nothing was being written"
}

// interruptNotice does what an interruption by sig must before the
// process ends: it erases the progress lines on the terminal (the message
// would otherwise continue one), removes the temporary files in flight
// (interrupted) and returns the message and the conventional exit status
// (128 + signal). Like interrupted, it returns with tmpMu held.
func interruptNotice(sig os.Signal) (msg string, code int) {
	eraseProgress()
	what := interrupted()
	code = 1
	if s, ok := sig.(syscall.Signal); ok {
		code = 128 + int(s)
	}
	return fmt.Sprintf("bloomlab: interrupted by %v; %s", sig, what), code
}

// cleanupOnSignal makes SIGINT, SIGTERM and SIGHUP remove the temporary
// files in flight before the process ends with the conventional status
// (128 + signal). The target files are untouched: a write is complete
// only at its rename. It returns a function that stops watching.
func cleanupOnSignal() (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			msg, code := interruptNotice(sig)
			fmt.Fprintln(os.Stderr, msg)
			os.Exit(code)
		case <-done:
		}
	}()
	return func() { signal.Stop(ch); close(done) }
}

// beforeRename, when set (by tests only), runs between the temporary
// file's sync and its rename: the window an interruption must not spoil.
var beforeRename func()

// staleAge is how old a temporary file of another process must be before
// a writer removes it; it is removed only if no process holds its lock.
const staleAge = time.Minute

// sweepStale removes the temporary files that writers of path killed
// before they could clean up (kill -9, power loss): files named
// ".BASE.tmp-*" in path's directory, older than staleAge, whose lock no
// live process holds (every writer locks its temporary file while it
// writes, so a lockable one has no writer).
func sweepStale(path string) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "."+globEscape(base)+".tmp-*"))
	for _, name := range matches {
		st, err := os.Lstat(name)
		if err != nil || !st.Mode().IsRegular() || time.Since(st.ModTime()) < staleAge {
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		if tryLock(f) {
			os.Remove(name)
		}
		f.Close()
	}
}

func globEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)
	return r.Replace(s)
}

// writeFileAtomic replaces path with what write produces, so that a crash
// at any moment leaves either the old file or the new one: it writes a
// temporary file in the same directory (locked while written, removed on
// error or interruption), syncs and closes it, renames it over path and
// syncs the directory. On error path is untouched and the error names
// path, not the temporary file. A new file gets mode 0666 less the umask,
// a replaced one keeps its mode.
func writeFileAtomic(path string, write func(w io.Writer) error) (err error) {
	path, err = writeTarget(path)
	if err != nil {
		return err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	mode := os.FileMode(newFileMode()) // a new file: 0666 less the umask
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	sweepStale(path)
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	trackTemp(tmp.Name(), true)
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
		trackTemp(tmp.Name(), false)
	}()
	lock(tmp) // marks it live for sweepStale; released when tmp is closed
	fail := func(what string, err error) error {
		return fmt.Errorf("write %s: %s%w", path, what, unwrapPath(err))
	}
	bw := bufio.NewWriterSize(tmp, 1<<20)
	if err := write(bw); err != nil {
		return fail("", err)
	}
	if err := bw.Flush(); err != nil {
		return fail("", err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fail("", err)
	}
	if err := tmp.Sync(); err != nil {
		return fail("sync: ", err)
	}
	if err := tmp.Close(); err != nil {
		return fail("", err)
	}
	if beforeRename != nil {
		beforeRename()
	}
	tmpMu.Lock()
	err = os.Rename(tmp.Name(), path)
	if err == nil {
		delete(tmpFiles, tmp.Name())
		written = append(written, path)
	}
	tmpMu.Unlock()
	if err != nil {
		return fail("", err)
	}
	// The rename is durable once the directory is synced. Some file systems
	// cannot sync a directory; the file itself is complete either way.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// writeTarget returns the file a write of path replaces: path itself, or
// the target of a symbolic link, as a plain write would (renaming over the
// link would replace the link and leave the target stale). It refuses a
// chain of links too long to follow, and an existing file that is not regular or
// that this process may not write (chmod a-w protects a file from
// bloomlab as from any plain write).
func writeTarget(path string) (string, error) {
	if st, err := os.Lstat(path); err == nil && st.Mode()&os.ModeSymlink != 0 {
		target, err := resolveLink(path)
		if err != nil {
			return "", fmt.Errorf("write %s: %w", path, err)
		}
		path = target
	}
	if st, err := os.Stat(path); err == nil {
		if !st.Mode().IsRegular() {
			return "", fmt.Errorf("write %s: not a regular file", path)
		}
		// The rename needs only the directory's permission: ask the file's
		// own, as a plain write would (opened without truncation, so
		// unchanged).
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return "", fmt.Errorf("write %s: %w", path, unwrapPath(err))
		}
		f.Close()
	}
	return path, nil
}

// checkWritable refuses, before any work is done, a path that
// writeFileAtomic would refuse once the work is done: what writeTarget
// refuses, and a directory that does not exist or cannot take a new file
// (probed by creating and removing a temporary file there).
func checkWritable(path string) error {
	target, err := writeTarget(path)
	if err != nil {
		return err
	}
	if err := probeDir(filepath.Dir(target), filepath.Base(target)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// checkDirWritable refuses, before any work is done, a directory that
// os.MkdirAll and writeFileAtomic would refuse: an existing path that is
// not a directory, or a nearest existing ancestor that is not one or
// cannot take a new file. It creates nothing.
func checkDirWritable(dir string) error {
	at := filepath.Clean(dir)
	for {
		st, err := os.Stat(at)
		if err == nil {
			if !st.IsDir() {
				return fmt.Errorf("directory %s: %s is not a directory", dir, at)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return fmt.Errorf("directory %s: %w", dir, err)
		}
		up := filepath.Dir(at)
		if up == at {
			return fmt.Errorf("directory %s: %w", dir, err)
		}
		at = up
	}
	if err := probeDir(at, "probe"); err != nil {
		return fmt.Errorf("directory %s: %w", dir, err)
	}
	return nil
}

// probeDir creates and removes a temporary file named like base's in dir:
// the proof that dir exists and takes new files.
func probeDir(dir, base string) error {
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return unwrapPath(err)
	}
	trackTemp(tmp.Name(), true)
	tmp.Close()
	os.Remove(tmp.Name())
	trackTemp(tmp.Name(), false)
	return nil
}

// resolveLink returns the file a symbolic link leads to, following chains
// of links; the last target need not exist (a write creates it, as a
// plain write through a dangling link would).
func resolveLink(path string) (string, error) {
	for i := 0; i < 40; i++ {
		st, err := os.Lstat(path)
		if err != nil || st.Mode()&os.ModeSymlink == 0 {
			return path, nil
		}
		target, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	return "", errors.New("too many levels of symbolic links")
}

// unwrapPath drops the temporary file's name from an *os.PathError or
// *os.LinkError, so that messages name the target only.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
