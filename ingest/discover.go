package ingest

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/transcript"
)

// Root is a default transcript folder of one agent.
type Root struct {
	Tool cortex.Tool
	Path string
}

// DefaultRoots lists the agents' transcript folders under home:
// ~/.claude/projects, ~/.codex/sessions, ~/.codex/archived_sessions and
// ~/.gemini/tmp.
func DefaultRoots(home string) []Root {
	return []Root{
		{cortex.ToolClaude, filepath.Join(home, ".claude", "projects")},
		{cortex.ToolCodex, filepath.Join(home, ".codex", "sessions")},
		{cortex.ToolCodex, filepath.Join(home, ".codex", "archived_sessions")},
		{cortex.ToolGemini, filepath.Join(home, ".gemini", "tmp")},
	}
}

// candidate is a file discovery found, with what its path says.
type candidate struct {
	path     string
	size     int64
	mtimeNS  int64
	format   transcript.Format // from the path, if it says
	explicit bool              // named directly on the command line
	// alias is the file's path under its root as given, when a symbolic
	// link on the way made it differ from path (the path with every link
	// resolved, as the watcher sees it): a store written before paths
	// were resolved knows the file by this name.
	alias string
}

// SkipDir reports the folders a directory walk never descends into
// (version control, dependencies, caches).
func SkipDir(name string) bool {
	switch name {
	case ".git", "node_modules", ".cache", "target", ".venv", "__pycache__":
		return true
	}
	return false
}

// TranscriptName reports whether a file found while walking a directory
// may be a transcript: JSON/JSONL files and extension-less files (Entire
// stores Claude transcripts as "raw_transcript"). Sidecars are excluded.
func TranscriptName(name string) bool {
	if strings.HasSuffix(name, ".meta.json") {
		return false
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".jsonl", ".json", ".ndjson":
		return true
	case "":
		return !strings.HasPrefix(name, ".")
	}
	return false
}

// discovery is what a scan found.
type discovery struct {
	files     []candidate
	missing   []string // explicit paths that do not exist
	symlinks  int
	notPlain  int // devices, sockets, …
	walkErrs  []FileError
	rootsUsed []string
}

// discover lists the candidate files under paths (or the default roots when
// paths is empty). Symlinks are not followed.
func discover(ctx context.Context, paths []string, home string) (discovery, error) {
	var d discovery
	seen := map[string]bool{}
	add := func(c candidate) {
		if seen[c.path] {
			return
		}
		seen[c.path] = true
		d.files = append(d.files, c)
	}
	var roots []string
	explicit := len(paths) > 0
	if explicit {
		roots = paths
	} else {
		for _, r := range DefaultRoots(home) {
			if fi, err := os.Stat(r.Path); err == nil && fi.IsDir() {
				roots = append(roots, r.Path)
			}
		}
	}
	for _, root := range roots {
		if err := ctx.Err(); err != nil {
			return d, err
		}
		abs, err := filepath.Abs(root)
		if err != nil {
			return d, cortex.WrapError(cortex.CodeInvalid, err, "invalid path %q", root)
		}
		fi, err := os.Lstat(abs)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				d.missing = append(d.missing, root)
				continue
			}
			d.walkErrs = append(d.walkErrs, FileError{Path: abs, Error: err.Error()})
			continue
		}
		// One file has one path, whatever link led to it (the root itself,
		// or a folder above it such as a linked ~/.claude): the path with
		// every link resolved, as the watcher names it.
		given := abs
		if t, err := os.Stat(abs); err == nil {
			fi = t
			if resolved, err := filepath.EvalSymlinks(abs); err == nil {
				abs = resolved
			}
		}
		aliasOf := func(p string) string {
			if given == abs {
				return ""
			}
			return given + p[len(abs):]
		}
		d.rootsUsed = append(d.rootsUsed, abs)
		if !fi.IsDir() {
			if !fi.Mode().IsRegular() {
				d.notPlain++
				continue
			}
			f, _ := transcript.FormatFromPath(abs)
			add(candidate{path: abs, size: fi.Size(), mtimeNS: fi.ModTime().UnixNano(), format: f, explicit: true, alias: aliasOf(abs)})
			continue
		}
		err = filepath.WalkDir(abs, func(p string, de fs.DirEntry, err error) error {
			if err != nil {
				d.walkErrs = append(d.walkErrs, FileError{Path: p, Error: err.Error()})
				if de != nil && de.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if ctxErr := ctx.Err(); ctxErr != nil {
				return ctxErr
			}
			name := de.Name()
			if de.IsDir() {
				if p != abs && SkipDir(name) {
					return fs.SkipDir
				}
				return nil
			}
			if de.Type()&fs.ModeSymlink != 0 {
				d.symlinks++
				return nil
			}
			if !de.Type().IsRegular() {
				d.notPlain++
				return nil
			}
			f, byPath := transcript.FormatFromPath(p)
			if !byPath && !TranscriptName(name) {
				return nil
			}
			info, err := de.Info()
			if err != nil {
				d.walkErrs = append(d.walkErrs, FileError{Path: p, Error: err.Error()})
				return nil
			}
			add(candidate{path: p, size: info.Size(), mtimeNS: info.ModTime().UnixNano(), format: f, alias: aliasOf(p)})
			return nil
		})
		if err != nil && !errors.Is(err, fs.SkipDir) {
			if ctx.Err() != nil {
				return d, ctx.Err()
			}
			return d, cortex.WrapError(cortex.CodeUnavailable, err, "cannot scan %s", root)
		}
	}
	sort.Slice(d.files, func(i, j int) bool { return d.files[i].path < d.files[j].path })
	return d, nil
}
