package control

import (
	"errors"
	"fmt"
	"strings"
)

// MaxTagBytes bounds a spawn or terminal tag.
const MaxTagBytes = 256

// ValidateTag accepts a one-line tag of at most MaxTagBytes; empty is none.
func ValidateTag(tag string) error {
	if len(tag) > MaxTagBytes {
		return fmt.Errorf("tag is %d bytes, more than %d", len(tag), MaxTagBytes)
	}
	if strings.ContainsAny(tag, "\x00\r\n") {
		return errors.New("tag must be one line without NUL bytes")
	}
	return nil
}
