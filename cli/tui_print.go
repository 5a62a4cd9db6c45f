package cli

import (
	"io"

	"sandtop/ui"
)

// contextsDoc is what the hidden --print-contexts prints: the sandboxes the
// TUI would open, in its order, and the one it would show first. Tests of
// the shipped binary read it; it is not a documented interface.
type contextsDoc struct {
	Initial  string         `json:"initial"`
	Contexts []contextEntry `json:"contexts"`
}

type contextEntry struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Target string `json:"target"`
	Error  string `json:"error,omitempty"`
}

func printContexts(w io.Writer, contexts []ui.SandboxSpec, initial int) error {
	doc := contextsDoc{Contexts: []contextEntry{}}
	for i, c := range contexts {
		e := contextEntry{Name: c.Name, Kind: c.Kind, Target: c.Target}
		if c.Err != nil {
			e.Error = c.Err.Error()
		}
		if i == initial {
			doc.Initial = c.Name
		}
		doc.Contexts = append(doc.Contexts, e)
	}
	return writeJSON(w, doc)
}
