package wrapper

import (
	"fmt"
	"strconv"
	"strings"
)

// ParsePgid validates a published process-group id. The file may have been
// rewritten by any process running as the sandbox user, so the value is
// checked strictly, and 0 or 1 (kill(-1) reaches everything) are refused.
func ParsePgid(text string) (int, error) {
	s := strings.TrimSpace(text)
	n, err := parseDecimal(s, 1<<22)
	if err != nil {
		return 0, fmt.Errorf("wrapper published invalid process-group id %q", clip(s))
	}
	if n <= 1 {
		return 0, fmt.Errorf("unsafe published process-group id %d", n)
	}
	return n, nil
}

// ParseExitCode validates a published exit status: a decimal 0..255.
func ParseExitCode(text string) (int, error) {
	s := strings.TrimSpace(text)
	n, err := parseDecimal(s, 255)
	if err != nil {
		return 0, fmt.Errorf("wrapper published invalid exit code %q", s)
	}
	return n, nil
}

// ParseSignal validates a published signal number: 1..64.
func ParseSignal(text string) (int, error) {
	s := strings.TrimSpace(text)
	n, err := parseDecimal(s, 64)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("wrapper published invalid signal %q", s)
	}
	return n, nil
}

// ParsePublishedLine parses the wrapper's first stdout line (without its
// newline) into the pgid.
func ParsePublishedLine(line string) (int, error) {
	rest, ok := strings.CutPrefix(line, PublishedPrefix)
	if !ok {
		return 0, fmt.Errorf("wrapper did not publish its process group (got %q)", clip(line))
	}
	return ParsePgid(rest)
}

// parseDecimal accepts only canonical decimals (no sign, no leading zero).
func parseDecimal(s string, max int) (int, error) {
	if s == "" || len(s) > 10 || (len(s) > 1 && s[0] == '0') {
		return 0, strconv.ErrSyntax
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, strconv.ErrSyntax
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > max {
		return 0, strconv.ErrRange
	}
	return n, nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// ParseArgv splits the argv file (each argument NUL-terminated). A file
// cut short keeps its complete arguments; an empty one gives nil.
func ParseArgv(text string) []string {
	parts := strings.Split(text, "\x00")
	parts = parts[:len(parts)-1] // after the last NUL: empty, or a cut argument
	if len(parts) == 0 {
		return nil
	}
	return parts
}
