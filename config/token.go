package config

import (
	"fmt"
	"strings"
)

// ReadTokenFile reads a bearer token from a file: one non-empty line,
// surrounding space trimmed. An empty file is an error, never an
// unauthenticated connection. Group-readable files are accepted: secret
// volumes in pods are 0644 by default. Errors name the path, never the
// token.
func ReadTokenFile(path string) (string, error) {
	b, err := ReadSmallFile(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("token file %s is empty", path)
	}
	if strings.ContainsAny(tok, "\r\n") {
		return "", fmt.Errorf("token file %s holds more than one line", path)
	}
	return tok, nil
}
