package cli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// writeTLS writes a CA and a serving certificate it signed for ips
// (default 127.0.0.1): ca.pem, cert.pem, key.pem in dir.
func writeTLS(t *testing.T, dir string, ips ...string) (ca, cert, key string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	srvKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "daemon"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: sanIPs(ips), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(srvKey)
	ca, cert, key = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	for path, block := range map[string]*pem.Block{ca: {Type: "CERTIFICATE", Bytes: caDER}, cert: {Type: "CERTIFICATE", Bytes: srvDER}, key: {Type: "EC PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return ca, cert, key
}

// serve --tls-cert/--tls-key with the token from $SANDTOP_TOKEN_FILE; a
// client dials it with --ca-file, and without it is refused.
func TestServeTLSWithTokenFromTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	ca, cert, key := writeTLS(t, dir)
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("tls-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	port := serveTCP(t, []string{"SANDTOP_TOKEN_FILE=" + tokenFile}, "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key)
	url := "https://127.0.0.1:" + strconv.Itoa(port)

	r := sandtop(t, "run", "--wait", "--envd", url, "--token-file", tokenFile, "--ca-file", ca, "--", "echo", "over-tls")
	if r.code != 0 || r.stdout != "over-tls\n" {
		t.Fatalf("run over TLS: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := sandtop(t, "ls", "--envd", url, "--token-file", tokenFile); r.code == 0 || !strings.Contains(r.stderr, "certificate") {
		t.Fatalf("without --ca-file: exit %d %s", r.code, r.stderr)
	}
	// The token came from the environment: without it the daemon refuses.
	if r := sandtop(t, "ls", "--envd", url, "--ca-file", ca); r.code == 0 || !strings.Contains(strings.ToLower(r.stderr), "token") {
		t.Fatalf("without the token: exit %d %s", r.code, r.stderr)
	}
	if r := sandtop(t, "ls", "--ca-file", ca); r.code != exitUsage || !strings.Contains(r.stderr, "--ca-file goes with") {
		t.Fatalf("--ca-file alone: exit %d %s", r.code, r.stderr)
	}
	if r := sandtop(t, "serve", "--listen", "127.0.0.1:0", "--tls-cert", cert); r.code != exitUsage || !strings.Contains(r.stderr, "--tls-key") {
		t.Fatalf("--tls-cert alone: exit %d %s", r.code, r.stderr)
	}
}

func sanIPs(ips []string) []net.IP {
	if len(ips) == 0 {
		ips = []string{"127.0.0.1"}
	}
	var out []net.IP
	for _, ip := range ips {
		out = append(out, net.ParseIP(ip))
	}
	return out
}
