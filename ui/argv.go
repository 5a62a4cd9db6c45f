package ui

import (
	"fmt"
	"strings"
)

// splitArgs splits a command line into argv the way a shell would split
// words, without any of a shell's expansions: 'single' and "double" quotes
// group, backslash escapes the next character. :run never goes through a
// shell; to get one, type sh -c '…'.
func splitArgs(s string) ([]string, error) {
	var (
		args    []string
		cur     strings.Builder
		inWord  bool
		quote   rune
		escaped bool
		// Inside double quotes a backslash only escapes " and \ (as in sh).
		pendingBackslash bool
	)
	for _, r := range s {
		if pendingBackslash {
			pendingBackslash = false
			if r != '"' && r != '\\' {
				cur.WriteRune('\\')
			}
			cur.WriteRune(r)
			continue
		}
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case r == '\\' && quote == 0:
			escaped, inWord = true, true
		case r == '\\' && quote == '"':
			pendingBackslash = true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				args = append(args, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if escaped {
		return nil, fmt.Errorf("trailing backslash")
	}
	if inWord {
		args = append(args, cur.String())
	}
	return args, nil
}
