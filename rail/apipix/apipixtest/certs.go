package apipixtest

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
	"os"
	"path/filepath"
	"time"
)

// certs are the PSP's certificates, all made by newCerts: a CA, the server's certificate
// it signs (for 127.0.0.1 and localhost) and the company's client certificate it signs.
type certs struct {
	pool   *x509.CertPool // holds the CA: trusts the server, verifies the client
	server tls.Certificate
	client tls.Certificate
	// The PEM forms WritePEM writes.
	caPEM, clientPEM, clientKeyPEM []byte
}

func newCerts() (certs, error) {
	var c certs
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return c, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "apipixtest CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(7 * 24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return c, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return c, err
	}
	c.pool = x509.NewCertPool()
	c.pool.AddCert(ca)
	c.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})

	// The server's certificate also serves as the PSP's client certificate when it calls
	// the company's webhook over mutual TLS.
	server := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "apipixtest PSP"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	var serverPEM, serverKeyPEM []byte
	if serverPEM, serverKeyPEM, err = issue(server, ca, caKey); err != nil {
		return c, err
	}
	if c.server, err = tls.X509KeyPair(serverPEM, serverKeyPEM); err != nil {
		return c, err
	}

	client := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "apipixtest client", Organization: []string{"company"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if c.clientPEM, c.clientKeyPEM, err = issue(client, ca, caKey); err != nil {
		return c, err
	}
	c.client, err = tls.X509KeyPair(c.clientPEM, c.clientKeyPEM)
	return c, err
}

// issue makes a P-256 key and a certificate of tmpl for it signed by the CA, both PEM.
func issue(tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}

// WritePEM writes the client certificate, its key and the CA (which trusts the PSP's
// server certificate) as PEM files in dir, for a program that takes them as files (a
// server's -psp-cert, -psp-key and -psp-ca flags), and returns their paths. The key file
// is readable by its owner only.
func (p *PSP) WritePEM(dir string) (certFile, keyFile, caFile string, err error) {
	certFile = filepath.Join(dir, "psp-client.pem")
	keyFile = filepath.Join(dir, "psp-client-key.pem")
	caFile = filepath.Join(dir, "psp-ca.pem")
	for _, f := range []struct {
		path string
		data []byte
		mode os.FileMode
	}{
		{certFile, p.certs.clientPEM, 0o644},
		{keyFile, p.certs.clientKeyPEM, 0o600},
		{caFile, p.certs.caPEM, 0o644},
	} {
		if err := os.WriteFile(f.path, f.data, f.mode); err != nil {
			return "", "", "", err
		}
	}
	return certFile, keyFile, caFile, nil
}
