package httpadapter

import (
	"net/netip"
	"testing"

	"github.com/matryer/is"
)

// TestPublicAddr: the addresses a public webhook may reach. 0.0.0.0/8 and 198.18.0.0/15
// were let through before; on the machine they were tried on they reached its egress
// gateway.
func TestPublicAddr(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	for a, want := range map[string]bool{
		"8.8.8.8": true, "200.160.2.3": true, "2001:4860:4860::8888": true, "::ffff:8.8.8.8": true,
		"127.0.0.1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.0.1": false, "169.254.169.254": false,
		"100.64.0.1": false, "0.0.0.0": false, "0.1.2.3": false, "198.18.0.1": false, "198.19.255.255": false,
		"192.0.0.8": false, "192.0.2.1": false, "198.51.100.7": false, "203.0.113.9": false, "240.0.0.1": false,
		"255.255.255.255": false, "224.0.0.1": false, "::1": false, "::": false, "fe80::1": false, "fd00::1": false,
		"::ffff:127.0.0.1": false, "::127.0.0.1": false, "::a00:1": false, "64:ff9b::a00:1": false, "64:ff9b:1::1": false, "2002:a00:1::1": false,
		"2001:db8::1": false, "2001:0:4136:e378::1": false, "100::1": false, "ff02::1": false,
		"3fff::1": false, "3fff:fff::1": false, "4000::1": true, "5f00::1": false,
	} {
		if got := publicAddr(netip.MustParseAddr(a)); got != want {
			t.Errorf("publicAddr(%s) = %v, want %v", a, got, want)
		}
	}
	is.True(!publicAddr(netip.Addr{})) // no address
}
