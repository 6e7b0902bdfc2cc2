package payments

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/pixfoundry/payments/rail/sandbox"
)

// idSource makes every id the Service generates: record ids, transactionIDs and
// identifiers, paymentLinkIDs, generated correlationIDs, client ids and secrets, default
// Pix keys. It draws bytes from Options.IDs (default crypto/rand.Reader) and times from
// the Service clock, so a test with a ManualClock and a seeded reader gets byte-identical
// output.
type idSource struct {
	mu sync.Mutex
	r  io.Reader

	// For objectID: 5 bytes and a counter drawn once from r, as a MongoDB ObjectId's
	// per-process random value and counter.
	once    sync.Once
	process [5]byte
	counter atomic.Uint32

	// The last ticks hex32At and uuid7 gave (see tick), under mu.
	lastTx, lastLink uint64
}

// read fills b from the source. The source must not fail (crypto/rand.Reader never does);
// if a caller-supplied reader does, ids cannot be made and read panics with the reason,
// which the store turns into a rolled-back transaction.
func (g *idSource) read(b []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, err := io.ReadFull(g.r, b); err != nil {
		panic(fmt.Sprintf("payments: Options.IDs failed: %v", err))
	}
}

// objectID is a 24-hex id shaped like the real API's (a MongoDB ObjectId): the seconds of
// now, 5 bytes drawn once per source, a counter. Ids made in one second grow, so records
// created at the same instant list in creation order (indexes break ties by id).
func (g *idSource) objectID(now time.Time) string {
	g.once.Do(func() {
		var c [4]byte
		g.read(g.process[:])
		g.read(c[:])
		g.counter.Store(binary.BigEndian.Uint32(c[:]) & 0xffff) // room below 2^24 to grow
	})
	var b [12]byte
	binary.BigEndian.PutUint32(b[0:4], uint32(now.Unix()))
	copy(b[4:9], g.process[:])
	n := g.counter.Add(1)
	b[9], b[10], b[11] = byte(n>>16), byte(n>>8), byte(n)
	return hex.EncodeToString(b[:])
}

// uuid is a random (version 4) UUID, e.g. a paymentLinkID.
func (g *idSource) uuid() string {
	var b [16]byte
	g.read(b[:])
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return uuid.UUID(b).String()
}

// hex32 is 32 hex characters (16 random bytes), the real API's transactionID.
func (g *idSource) hex32() string {
	var b [16]byte
	g.read(b[:])
	return hex.EncodeToString(b[:])
}

// alphanumerics is n letters and digits drawn from the source (each byte mod 62: a small
// bias, harmless for ids that need only be unique).
func (g *idSource) alphanumerics(n int) string {
	b := make([]byte, n)
	g.read(b)
	for i, c := range b {
		b[i] = sandbox.Alphanumerics[int(c)%len(sandbox.Alphanumerics)]
	}
	return string(b)
}

func newIDSource(r io.Reader) *idSource {
	if r == nil {
		r = rand.Reader
	}
	return &idSource{r: r}
}

// The ids of a charge that other records are keyed by (transactionID and its txid prefix,
// paymentLinkID) begin with the time, so that the charges created in one commit land on
// the same few pages of each key index instead of one random page each (issue 12).
//
// Within one unit of that time they grow too: the time is followed by a counter, as RFC
// 9562 allows for UUIDv7 (its method 1), so that ids made at the same instant, which a
// busy server makes by the dozen and a test with a stopped clock by the thousand, are in
// order as well, not scattered at random across the pages the instant covers. tick gives
// the time and counter of each new id.

// tick is the next value of a per-kind logical clock kept in *last: the time t (Unix
// seconds or milliseconds) shifted left by bits, with a counter in the low bits, strictly
// greater than the value it gave before. When the counter runs out within one unit of t,
// or the clock goes back, the time it gives runs ahead of the clock's; the value still
// grows.
func (g *idSource) tick(last *uint64, t int64, bits uint) uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	v := max(uint64(t)<<bits, *last+1)
	*last = v
	return v
}

// hex32At is a charge's transactionID, 32 hex characters: the tick (Unix seconds in 4
// bytes, then a 16-bit counter), 6.5 random bytes, then txidCheck of those first 25
// characters (the charge's txid). Seconds rather than milliseconds leave the txid its 52
// random bits, which is what keeps two processes on one database from making the same txid
// when their counters meet; the store would reject a duplicate anyway. Because the last 7
// characters follow from the txid, a charge needs no key of its own for its txid: a lookup
// by txid looks up the transactionID it implies (txidKeys). It draws 10 bytes, as it
// always has, so that a seeded source gives every other id as before.
func (g *idSource) hex32At(now time.Time) string {
	var b [16]byte
	g.read(b[6:])
	v := g.tick(&g.lastTx, now.Unix(), 16) // 48 bits: 32 of seconds, 16 of counter
	b[0], b[1], b[2], b[3], b[4], b[5] = byte(v>>40), byte(v>>32), byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	h := hex.EncodeToString(b[:])
	return h[:25] + txidCheck(h[:25])
}

// txidCheck is the 7 hex characters hex32At puts after a txid: the first 7 of the
// FNV-1a hash of the txid.
func txidCheck(txid string) string {
	f := fnv.New32a()
	f.Write([]byte(txid))
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], f.Sum32())
	return hex.EncodeToString(b[:])[:7]
}

// txidImplied reports whether the transactionID is one hex32At made, whose txid implies
// it. A charge made before (a random tail) keeps a key for its txid (Charge.keys).
func txidImplied(transactionID string) bool {
	return len(transactionID) == 32 && transactionID[25:] == txidCheck(transactionID[:25])
}

// txidKeys are the charge keys a txid is found by: the key of a charge whose transactionID
// the txid implies, and the txid key an older charge has.
func txidKeys(txid string) []string {
	return []string{"transactionID:" + txid + txidCheck(txid), "txid:" + txid}
}

// uuid7 is a version 7 UUID (RFC 9562): Unix milliseconds, a 12-bit counter in rand_a
// (the tick; RFC 9562 method 1), then 62 random bits.
func (g *idSource) uuid7(now time.Time) string {
	var b [16]byte
	g.read(b[6:])
	t := g.tick(&g.lastLink, now.UnixMilli(), 12)
	binary.BigEndian.PutUint64(b[:8], t>>12<<16|t&0xfff) // 48 bits of milliseconds, 4 for the version, 12 of counter
	b[6] |= 0x70                                         // version 7
	b[8] = b[8]&0x3f | 0x80                              // RFC 4122 variant
	return uuid.UUID(b).String()
}

// chargeIDs are the generated identifiers of one charge.
type chargeIDs struct {
	id, transactionID, paymentLinkID string
}

func (g *idSource) chargeIDs(now time.Time) *chargeIDs {
	return &chargeIDs{id: g.objectID(now), transactionID: g.hex32At(now), paymentLinkID: g.uuid7(now)}
}
