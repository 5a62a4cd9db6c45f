package wrapper

import "strings"

// Quote renders s as one bash word that expands back to exactly the bytes
// of s. The result is pure ASCII, so it survives transports that require
// valid UTF-8 (protobuf strings): bytes outside a small safe set are written
// as $'\xHH'. A NUL byte cannot be carried by a shell word (or by execve), so
// callers must reject it first; Quote drops nothing silently and instead
// encodes it, which bash then truncates.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	if isPlain(s) {
		return "'" + s + "'"
	}
	var b strings.Builder
	b.Grow(len(s)*2 + 3)
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isSafeByte(c) {
			b.WriteByte(c)
			continue
		}
		// Always two hex digits: bash reads at most two, so a following
		// hex character can never be swallowed.
		const hex = "0123456789abcdef"
		b.WriteString(`\x`)
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	b.WriteByte('\'')
	return b.String()
}

// QuoteAll quotes every word and joins them with spaces.
func QuoteAll(words []string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = Quote(w)
	}
	return strings.Join(quoted, " ")
}

func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isSafeByte(s[i]) {
			return false
		}
	}
	return true
}

// isSafeByte reports bytes that mean nothing special inside either kind of
// single quotes.
func isSafeByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte(" +,-./:=@_%^~#!&*()[]{}<>|;?`\"$", c) >= 0
}
