package cli

import (
	"bytes"
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
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // "<" stays "<": the output is read by people and jq, not HTML
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(escapeC1(buf.Bytes()))
	return err
}

// escapeC1 writes DEL and the C1 controls (U+0080–U+009F), which
// encoding/json leaves raw, as \u escapes: strings from the sandbox keep
// their exact value, and a terminal showing the document acts on none of
// them. In the encoder's output such bytes occur only inside strings.
func escapeC1(b []byte) []byte {
	if !bytes.Contains(b, []byte{0x7f}) && !bytes.Contains(b, []byte{0xc2}) {
		return b
	}
	out := make([]byte, 0, len(b)+64)
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == 0x7f:
			out = append(out, `\u007f`...)
		case b[i] == 0xc2 && i+1 < len(b) && b[i+1] >= 0x80 && b[i+1] <= 0x9f:
			out = fmt.Appendf(out, `\u%04x`, b[i+1])
			i++
		default:
			out = append(out, b[i])
		}
	}
	return out
}

// checkOutputFormat rejects an -o value that the command does not print.
func checkOutputFormat(got string, allowed ...string) error {
	if slices.Contains(allowed, got) {
		return nil
	}
	return usagef(fmt.Errorf("-o %q: choose one of %s", got, strings.Join(allowed, ", ")))
}
