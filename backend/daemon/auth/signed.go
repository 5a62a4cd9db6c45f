package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Signed /files URLs, as envd checks them: a daemon with an access token
// serves GET /files (operation "read") and POST /files ("write") without
// the X-Access-Token header when the query carries
//
//	signature = "v1_" + base64raw(sha256(path:operation:username:token[:expiration]))
//
// where path and username are the query's own values ("" when absent) and
// expiration, when the query has signature_expiration, is that Unix time
// in seconds, after which the signature is refused.

// FileSignature is the signature of one /files operation (operation "read"
// or "write"); expiration is nil for one that does not expire.
func FileSignature(path, operation, username, token string, expiration *int64) string {
	parts := []string{path, operation, username, token}
	if expiration != nil {
		parts = append(parts, strconv.FormatInt(*expiration, 10))
	}
	sum := sha256.Sum256([]byte(strings.Join(parts, ":")))
	return "v1_" + base64.RawStdEncoding.EncodeToString(sum[:])
}

// CheckFileSignature checks a /files request's signature against token
// (the current one; "" passes everything). Its messages are envd's, which
// E2B's SDKs show.
func CheckFileSignature(r *http.Request, token string) error {
	if token == "" {
		return nil
	}
	q := r.URL.Query()
	if !q.Has("signature") {
		return errors.New("missing signature query parameter")
	}
	var exp *int64
	if q.Has("signature_expiration") {
		n, err := strconv.ParseInt(q.Get("signature_expiration"), 10, 64)
		if err != nil {
			return errors.New("invalid signature_expiration: not a whole number of seconds")
		}
		exp = &n
	}
	op := "read"
	if r.Method == http.MethodPost {
		op = "write"
	}
	want := FileSignature(q.Get("path"), op, q.Get("username"), token, exp)
	if subtle.ConstantTimeCompare([]byte(want), []byte(q.Get("signature"))) != 1 {
		return errors.New("invalid signature")
	}
	if exp != nil && *exp < time.Now().Unix() {
		return errors.New("signature is already expired")
	}
	return nil
}

// RejectFiles answers a refused /files request with envd's /files error
// body ({"code":401,"message":…}), after reading a bounded part of its body
// as Reject does.
func RejectFiles(w http.ResponseWriter, r *http.Request, msg string) {
	drain(w, r)
	w.Header().Set("Content-Type", "application/json")
	if r.ProtoMajor == 1 {
		w.Header().Set("Connection", "close")
	}
	w.WriteHeader(http.StatusUnauthorized)
	_ = json.NewEncoder(w).Encode(struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{http.StatusUnauthorized, msg})
}
