package watch

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/fsnotify/fsnotify"

	"github.com/cortexhq/cortex/ingest"
	"github.com/cortexhq/cortex/transcript"
)

// syncRoots brings the watches in line with the file system: every folder
// under each existing root is (re)watched, the nearest existing parent of
// each missing root is watched, and watches no longer needed are dropped.
// It runs at start and before every full pass; files are not queued (the
// full pass reads them).
func (w *watcher) syncRoots() {
	for _, r := range w.roots {
		w.resolveRoot(r, false)
	}
	w.pruneWatches()
}

// resolveMissing picks up roots that did not exist and may have been
// created, queueing the files already inside them (they may have been
// written before the watch was added).
func (w *watcher) resolveMissing() {
	changed := false
	for _, r := range w.roots {
		if !r.exists {
			w.resolveRoot(r, true)
			changed = true
		}
	}
	if changed {
		w.pruneWatches()
	}
}

// resolveRoot watches root r if it exists, else its nearest existing
// parent. The check repeats when the parent changed meanwhile, so a
// folder created between the check and the watch is not missed.
func (w *watcher) resolveRoot(r *root, enqueue bool) {
	for range 8 {
		fi, err := os.Stat(r.path)
		if err == nil {
			resolved := r.path
			if p, err := filepath.EvalSymlinks(r.path); err == nil {
				resolved = p
			}
			fresh := !r.exists
			r.exists, r.isDir, r.resolved, r.ancestor = true, fi.IsDir(), resolved, ""
			if fresh {
				w.log.Debug("watch: root found", "path", resolved)
			}
			if r.isDir {
				w.addTree(resolved, enqueue && fresh)
				return
			}
			w.addWatch(filepath.Dir(resolved), kindFileParent)
			if enqueue && fresh {
				w.enqueue(resolved)
			}
			return
		}
		r.exists, r.resolved = false, ""
		a := nearestExisting(r.path)
		if a == r.ancestor {
			return
		}
		r.ancestor = a
		w.addWatch(a, kindAncestor)
		// Loop: the root may have appeared before the watch was in place.
	}
}

// nearestExisting returns the closest existing folder above path.
func nearestExisting(path string) string {
	for {
		parent := filepath.Dir(path)
		if parent == path {
			return parent
		}
		path = parent
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			return path
		}
	}
}

// addTree watches dir and every folder below it (except the folders ingest
// skips). With enqueue, the transcript files found are queued: they may
// have been written before their folder was watched.
func (w *watcher) addTree(dir string, enqueue bool) {
	_ = filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			if de != nil && de.IsDir() && p != dir {
				return fs.SkipDir
			}
			return nil
		}
		if de.IsDir() {
			if p != dir && ingest.SkipDir(de.Name()) {
				return fs.SkipDir
			}
			// Watch first, then list: a file created meanwhile is seen by
			// one or the other.
			w.addWatch(p, kindTree)
			return nil
		}
		if enqueue && de.Type().IsRegular() && candidate(p) {
			w.enqueue(p)
		}
		return nil
	})
}

// addWatch records why dir is watched and adds its fsnotify watch (again:
// adding is idempotent, and a folder deleted and re-created needs a new
// one).
func (w *watcher) addWatch(dir string, kind watchKind) {
	had, known := w.watched[dir]
	w.watched[dir] = had | kind
	if w.fsw == nil || w.degraded {
		return
	}
	if err := w.fsw.Add(dir); err != nil {
		if isWatchLimit(err) {
			w.degrade("too many folders to watch", err)
			return
		}
		// Gone already, or unreadable: the next rescan looks again.
		w.log.Debug("watch: cannot watch folder", "path", dir, "err", err)
		if !known {
			delete(w.watched, dir)
		} else {
			w.watched[dir] = had
		}
	}
}

// dropTree forgets the watches of a folder that was removed or renamed,
// and of everything below it. A root among them is waited for again.
func (w *watcher) dropTree(dir string) {
	prefix := dir + string(filepath.Separator)
	for p := range w.watched {
		if p == dir || strings.HasPrefix(p, prefix) {
			delete(w.watched, p)
			if w.fsw != nil {
				_ = w.fsw.Remove(p) // usually already gone with the folder
			}
		}
	}
	lost := false
	for _, r := range w.roots {
		if r.exists && (r.resolved == dir || strings.HasPrefix(r.resolved, prefix)) ||
			!r.exists && (r.ancestor == dir || strings.HasPrefix(r.ancestor, prefix)) {
			r.exists, r.ancestor = false, ""
			lost = true
		}
	}
	if lost {
		w.resolveMissing()
	}
}

// pruneWatches drops watches on parents no missing root waits for any more,
// and on folders of file roots that are gone.
func (w *watcher) pruneWatches() {
	need := map[string]watchKind{}
	for _, r := range w.roots {
		switch {
		case !r.exists:
			need[r.ancestor] |= kindAncestor
		case !r.isDir:
			need[filepath.Dir(r.resolved)] |= kindFileParent
		}
	}
	for p, k := range w.watched {
		extra := k & (kindAncestor | kindFileParent) &^ need[p]
		if extra == 0 {
			continue
		}
		k &^= extra
		if k != 0 {
			w.watched[p] = k
			continue
		}
		delete(w.watched, p)
		if w.fsw != nil {
			_ = w.fsw.Remove(p)
		}
	}
}

// handleEvent turns one file notification into queued work.
func (w *watcher) handleEvent(ev fsnotify.Event) {
	if !ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Write) && !ev.Has(fsnotify.Remove) && !ev.Has(fsnotify.Rename) {
		return // Chmod: content unchanged
	}
	p := filepath.Clean(ev.Name)
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		if _, ok := w.watched[p]; ok {
			w.dropTree(p)
		}
	}
	parent := w.watched[filepath.Dir(p)]
	if ev.Has(fsnotify.Create) {
		if parent&kindAncestor != 0 {
			w.resolveMissing()
		}
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			if parent&kindTree != 0 && !ingest.SkipDir(fi.Name()) {
				w.addTree(p, true)
			}
			return
		}
	}
	if !ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Write) && !ev.Has(fsnotify.Rename) {
		return // removed: nothing to read
	}
	if parent&kindTree != 0 && candidate(p) || parent&kindFileParent != 0 && w.isFileRoot(p) {
		// A Rename is the old name: queued anyway, and dropped at pass time
		// if it is gone (the new name arrives as a Create).
		w.enqueue(p)
	}
}

func (w *watcher) isFileRoot(p string) bool {
	for _, r := range w.roots {
		if r.exists && !r.isDir && r.resolved == p {
			return true
		}
	}
	return false
}

// stopNotify gives up on file notifications for good.
func (w *watcher) stopNotify(what string, err error) {
	if w.fsw != nil {
		_ = w.fsw.Close()
		w.fsw = nil
	}
	w.degrade(what, err)
}

// candidate reports whether a file found in a watched folder may be a
// transcript: a path the agents use for transcripts, or a name ingest's
// folder walk would read (ingest.TranscriptName).
func candidate(path string) bool {
	if _, ok := transcript.FormatFromPath(path); ok {
		return true
	}
	return ingest.TranscriptName(filepath.Base(path))
}

// isWatchLimit reports running out of watches (inotify's ENOSPC) or file
// descriptors (kqueue).
func isWatchLimit(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE)
}
