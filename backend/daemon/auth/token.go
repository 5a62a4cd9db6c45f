// Package auth holds the daemon's rules for a request's proofs: the
// X-Access-Token header, envd's signed /files URLs, envd's Basic
// Authorization header (which picks a user, not a password), and the 401
// answers to a refused request. It keeps no state: the daemon's Guard
// passes in the current token and decides which rule a route takes.
package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"
)

// TokenHeader carries the access token on every route but /init.
const TokenHeader = "X-Access-Token"

// ErrNoToken is CheckToken's answer to a request with no token at all, which
// /init and a signed /files request may do without.
var ErrNoToken = errors.New("missing " + TokenHeader)

// CheckToken checks a request's TokenHeader against token, which must not
// be empty.
func CheckToken(h http.Header, token string) error {
	v := h.Values(TokenHeader)
	if len(v) == 0 || v[0] == "" {
		return ErrNoToken
	}
	if len(v) != 1 || !SameToken(v[0], token) {
		return errors.New("invalid " + TokenHeader)
	}
	return nil
}

// SameToken compares two tokens in a time that says nothing of either
// (their hashes are compared, so not even the length shows).
func SameToken(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// ParseBasicUser reads envd's "Authorization: Basic base64(user:)". The
// header only picks a Unix user (it is not a password check), but one that
// cannot be read must not fall back to the daemon's own user.
func ParseBasicUser(header string) (string, error) {
	scheme, cred, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Basic") {
		return "", errors.New(`malformed Authorization header: want "Basic base64(user:)"`)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
	if err != nil {
		return "", errors.New("malformed Authorization header: the credentials are not base64")
	}
	name, _, ok := strings.Cut(string(raw), ":")
	if !ok {
		return "", errors.New(`malformed Authorization header: the credentials have no ":"`)
	}
	if strings.ContainsAny(name, "\x00/\n") || len(name) > 256 {
		return "", errors.New("malformed Authorization header: the user name is not valid")
	}
	return name, nil
}

// drainBytes and drainTime bound how much of a refused request's body is
// read before the 401 goes out: reading it lets an h2c client finish its
// half of the stream, so it sees the answer instead of a stream reset.
const (
	drainBytes = 1 << 20
	drainTime  = time.Second
)

func drain(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(drainTime))
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, drainBytes))
}

// Reject answers 401 in Connect's JSON error form, which gRPC and gRPC-Web
// clients also read as Unauthenticated from the HTTP status. It first reads
// (a bounded part of) the body.
func Reject(w http.ResponseWriter, r *http.Request, msg string) {
	drain(w, r)
	body, _ := json.Marshal(map[string]string{"code": "unauthenticated", "message": msg})
	w.Header().Set("Content-Type", "application/json")
	if r.ProtoMajor == 1 {
		w.Header().Set("Connection", "close") // the body may not be fully read
	}
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write(body)
}
