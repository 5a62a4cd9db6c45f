package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"sandtop/backend/local"
)

// The seam's spawn spec has no tag field, so "run --tag" records tags on
// this machine: per sandbox endpoint, the group's state-directory id (a
// random id the wrapper never reuses) maps to its tag. Another machine
// does not see them; see the README's limits.

type tagFile struct {
	Version int                          `json:"version"`
	Tags    map[string]map[string]string `json:"tags"` // endpoint -> id -> tag
}

// tagStore is the tag file in the local state directory.
type tagStore struct{ path string }

func openTagStore() (tagStore, error) {
	p, err := local.DefaultPaths()
	if err != nil {
		return tagStore{}, err
	}
	if err := os.MkdirAll(p.StateDir, 0o700); err != nil {
		return tagStore{}, fmt.Errorf("tags: %w", err)
	}
	return tagStore{path: filepath.Join(p.StateDir, "tags.json")}, nil
}

// load returns endpoint's tags (id -> tag); none is not an error.
func (s tagStore) load(endpoint string) map[string]string {
	f, err := s.read()
	if err != nil {
		return map[string]string{}
	}
	if m := f.Tags[endpoint]; m != nil {
		return m
	}
	return map[string]string{}
}

// update changes endpoint's tags under an exclusive lock: set maps ids to
// tags, and ids missing from keep (when keep is non-nil) are forgotten.
func (s tagStore) update(endpoint string, set map[string]string, keep map[string]bool) error {
	lock, err := os.OpenFile(s.path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("tags: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("tags: lock: %w", err)
	}
	f, err := s.read()
	if err != nil {
		return err
	}
	m := f.Tags[endpoint]
	if m == nil {
		m = map[string]string{}
	}
	if keep != nil {
		for id := range m {
			if !keep[id] {
				delete(m, id)
			}
		}
	}
	for id, tag := range set {
		m[id] = tag
	}
	f.Tags[endpoint] = m
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp := s.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("tags: %w", err)
	}
	return os.Rename(tmp, s.path)
}

func (s tagStore) read() (tagFile, error) {
	f := tagFile{Version: 1, Tags: map[string]map[string]string{}}
	b, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("tags: %w", err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return tagFile{Version: 1, Tags: map[string]map[string]string{}}, nil // a damaged file only loses tags
	}
	if f.Tags == nil {
		f.Tags = map[string]map[string]string{}
	}
	return f, nil
}
