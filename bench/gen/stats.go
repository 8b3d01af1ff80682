package gen

import (
	"fmt"
	"io/fs"
	"path/filepath"
)

// ScanStats counts the transcript files under dir (the same name rules as
// the source discovery: *.jsonl, raw_transcript and Gemini session-*.json,
// but not *.meta.json sidecars) and their total size in bytes.
func ScanStats(dir string) (files int, bytes int64, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() || !isTranscriptName(d.Name()) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files++
		bytes += info.Size()
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("scan stats %s: %w", dir, err)
	}
	return files, bytes, nil
}
