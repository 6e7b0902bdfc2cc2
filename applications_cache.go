package payments

import (
	"crypto/sha256"
	"crypto/subtle"
	"sync"
	"sync/atomic"
	"time"
)

// The App ID cache of Authenticate.
//
// Authenticate is on every API request. Without the cache each one reads the application
// and its company from the store and decodes them; with it, an App ID verified recently is
// answered from memory: a hash of the secret, compared in constant time with the stored
// hash kept in the entry, and the company id. Only successes are cached, so a wrong secret,
// an unknown client or an inactive application always goes to the store.
//
// Choices, where the issue is silent:
//   - Bounded: at most authCacheSize entries per Service core (every company's Service made
//     from one New or Open shares it), evicted by the clock algorithm (a hit marks an entry;
//     the hand passes over marked entries once, clearing the mark, and replaces the first
//     unmarked one), so hits take only a read lock.
//   - Invalidated within the process: DeactivateApplication bumps a process-wide epoch
//     (authEpoch) after its transaction and before it returns, and an entry is used only in
//     the epoch it was verified in. So once DeactivateApplication returns, no Service in
//     this process (not even one from another New over the same store) answers for that
//     application from memory. Deactivations are rare, so emptying every cache of the
//     process on each is cheap; applications are never deleted and companies never
//     removed, so deactivation is the only change that can revoke an App ID.
//   - Across processes (several servers on one PostgreSQL database): a deactivation in one
//     process is not seen by the others' caches, so an entry lives at most authCacheTTL by
//     the Service's clock, after which the App ID is verified against the store again. A
//     deactivated application can thus keep working on another process for up to
//     authCacheTTL. A Clock that does not move (a ManualClock left alone) never expires
//     entries; a Clock moved backwards expires them at once.
const (
	authCacheSize = 4096
	authCacheTTL  = 2 * time.Second
)

// authEpoch counts the application deactivations of this process. See the App ID cache.
var authEpoch atomic.Uint64

// authCache maps clientId to what verifying its App ID found.
type authCache struct {
	size int
	ttl  time.Duration

	mu    sync.RWMutex
	index map[string]int // clientID → position in ring
	ring  []*authEntry
	hand  int
}

type authEntry struct {
	clientID   string
	secretHash [sha256.Size]byte
	companyID  string
	verifiedAt time.Time
	epoch      uint64
	used       atomic.Bool // the clock algorithm's mark, set on each hit
}

func newAuthCache(size int, ttl time.Duration) *authCache {
	return &authCache{size: size, ttl: ttl, index: make(map[string]int, size)}
}

// lookup returns the company of clientID when an entry verified in the current epoch, less
// than ttl before now, holds the hash of secret.
func (c *authCache) lookup(clientID []byte, secretHash [sha256.Size]byte, now time.Time) (string, bool) {
	epoch := authEpoch.Load()
	c.mu.RLock()
	defer c.mu.RUnlock()
	i, ok := c.index[string(clientID)]
	if !ok {
		return "", false
	}
	e := c.ring[i]
	if e.epoch != epoch || now.Before(e.verifiedAt) || now.Sub(e.verifiedAt) >= c.ttl ||
		subtle.ConstantTimeCompare(e.secretHash[:], secretHash[:]) != 1 {
		return "", false
	}
	if !e.used.Load() {
		e.used.Store(true)
	}
	return e.companyID, true
}

// add records that the App ID of clientID with the secret of secretHash belongs to
// companyID, as verified at now against the store by a read that began in epoch (read
// before the store was). An entry of an older epoch is not added: it may already be stale.
func (c *authCache) add(clientID string, secretHash [sha256.Size]byte, companyID string, now time.Time, epoch uint64) {
	if epoch != authEpoch.Load() {
		return
	}
	e := &authEntry{clientID: clientID, secretHash: secretHash, companyID: companyID, verifiedAt: now, epoch: epoch}
	c.mu.Lock()
	defer c.mu.Unlock()
	if i, ok := c.index[clientID]; ok {
		c.ring[i] = e
		return
	}
	if len(c.ring) < c.size {
		c.index[clientID] = len(c.ring)
		c.ring = append(c.ring, e)
		return
	}
	for { // clock: pass over entries used since the hand last came by, clearing their mark
		old := c.ring[c.hand]
		if old.used.Load() && old.epoch == epoch {
			old.used.Store(false)
			c.hand = (c.hand + 1) % c.size
			continue
		}
		delete(c.index, old.clientID)
		c.index[clientID] = c.hand
		c.ring[c.hand] = e
		c.hand = (c.hand + 1) % c.size
		return
	}
}

// len is the number of entries, for tests.
func (c *authCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.index)
}
