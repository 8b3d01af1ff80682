package ingest

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/cortexhq/cortex"
)

// headKeyBytes is how much of a file's start identifies its content
// (cortex.Source.HeadHash).
const headKeyBytes = 1 << 10

// headHash is a file's content identity: the hash of its first KiB, or of
// all of it when shorter.
func headHash(head []byte) string {
	return hashOf(head[:min(len(head), headKeyBytes)])
}

// moves recognizes known files under new paths. A transcript moved or
// renamed (Codex archives a rollout from sessions/ to archived_sessions/; a
// renamed Claude session) keeps its content: a new path whose head is that
// of a known source whose own path no longer exists is that source, moved.
// Ingest then continues it — resumed from its checkpoint, or re-read when
// it changed, the ledger keeping every record once — instead of storing it
// again under a second source. A copy (both paths exist) is a file of its
// own.
type moves struct {
	sources map[string]cortex.Source
	present map[string]bool
	// byHead maps head hashes to the known sources not seen in this scan
	// (built on the first new path, and only when there are sources); a
	// candidate's path is checked when a new file's head matches it, not
	// every known path up front (a store of 40,000 files took 40,000 stats
	// per scan that found one new file).
	byHead map[string][]cortex.Source
	built  bool
	taken  map[int64]bool
	lstat  func(string) (fs.FileInfo, error)
}

func newMoves(sources map[string]cortex.Source, files []candidate) *moves {
	present := make(map[string]bool, len(files))
	for _, c := range files {
		present[c.path] = true
	}
	return &moves{sources: sources, present: present, taken: map[int64]bool{}, lstat: os.Lstat}
}

// find returns the source c is a moved copy of.
func (m *moves) find(c candidate) (cortex.Source, bool) {
	if len(m.sources) == 0 || c.size == 0 {
		return cortex.Source{}, false
	}
	if !m.built {
		m.built = true
		m.byHead = map[string][]cortex.Source{}
		for path, s := range m.sources {
			if s.HeadHash == "" || m.present[path] || s.Kind == KindUnsupported || s.Kind == KindEmpty {
				continue
			}
			m.byHead[s.HeadHash] = append(m.byHead[s.HeadHash], s)
		}
	}
	if len(m.byHead) == 0 {
		return cortex.Source{}, false
	}
	head, err := readHead(c.path)
	if err != nil {
		return cortex.Source{}, false // the worker reports the file's error
	}
	for _, s := range m.byHead[headHash(head)] {
		if m.taken[s.ID] || c.format != "" && string(c.format) != s.Kind {
			continue
		}
		if _, err := m.lstat(s.Path); !errors.Is(err, fs.ErrNotExist) {
			continue // still there: c is a copy
		}
		m.taken[s.ID] = true
		return s, true
	}
	return cortex.Source{}, false
}

func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, headKeyBytes)
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, err
	}
	return b[:n], nil
}
