package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// jsonVersion is the "version" field of every JSON document sandtop
// prints. It changes only when a field is removed or changes meaning;
// new fields may appear without a bump.
const jsonVersion = 1

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // "<" stays "<": the output is read by people and jq, not HTML
	return enc.Encode(v)
}

// checkOutputFormat rejects an -o value that the command does not print.
func checkOutputFormat(got string, allowed ...string) error {
	if slices.Contains(allowed, got) {
		return nil
	}
	return usagef(fmt.Errorf("-o %q: choose one of %s", got, strings.Join(allowed, ", ")))
}
