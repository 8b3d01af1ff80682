package cli_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// writeSelfSigned writes a certificate for 127.0.0.1 and its key.
func writeSelfSigned(t *testing.T, dir string) (certPath, keyPath string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cortex test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certPath, keyPath
}

// TestServeTLSAndHostCheck runs `cortex serve` with [server] tls_cert and
// tls_key: it answers over HTTPS only, and refuses a rebinding Host on
// the real listener.
func TestServeTLSAndHostCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	e := newEnv(t)
	db := indexedLabelled(t, e)
	cert, key := writeSelfSigned(t, e.home)
	cfg := filepath.Join(e.home, "tls.toml")
	if err := os.WriteFile(cfg, []byte("[server]\ntls_cert = \""+cert+"\"\ntls_key = \""+key+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.vars = append(e.vars, "CORTEX_DB="+db)
	_, m := startDaemon(t, e, regexp.MustCompile(`https://(127\.0\.0\.1:\d+)`), "--config", cfg, "serve", "--listen", "127.0.0.1:0", "--no-watch")
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	get := func(url, host string) int {
		req, _ := http.NewRequest("GET", url, nil)
		if host != "" {
			req.Host = host
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if code := get("https://"+m[0]+"/api/status", ""); code != 200 {
		t.Fatalf("https status: %d", code)
	}
	if code := get("https://"+m[0]+"/api/status", "evil.example"); code != 403 {
		t.Fatalf("rebinding host over https: %d", code)
	}
	if res, err := http.Get("http://" + m[0] + "/api/status"); err == nil && res.StatusCode == 200 {
		t.Fatal("plain HTTP answered with data on a TLS listener")
	}
}
