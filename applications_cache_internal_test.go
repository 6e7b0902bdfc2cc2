package payments

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
)

// TestAuthenticate_CacheTTL stands for another process: it deactivates an application in
// the store directly, as a server sharing the database would, which this process's epoch
// does not see. The cached App ID keeps working until authCacheTTL has passed on the
// Service's clock, and not after.
func TestAuthenticate_CacheTTL(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	svc, clock := newMemoryService(t)
	a, err := svc.CreateApplication(ctx, CreateApplicationParams{Name: "elsewhere"})
	is.NoErr(err)
	_, err = svc.Authenticate(ctx, a.AppID())
	is.NoErr(err) // verified and cached

	err = svc.core.store.Update(ctx, func(tx store.Tx) error { // "another process" deactivates it
		r, err := tx.GetByKey(collApplications, systemSpace, "clientId:"+a.ClientID)
		if err != nil {
			return err
		}
		var rec applicationRecord
		if err := decode(r, &rec); err != nil {
			return err
		}
		rec.IsActive = false
		r, err = encode(r.ID, rec, rec.keys(), rec.indexes())
		if err != nil {
			return err
		}
		return tx.Put(collApplications, systemSpace, r)
	})
	is.NoErr(err)

	clock.Advance(authCacheTTL - time.Millisecond)
	_, err = svc.Authenticate(ctx, a.AppID())
	is.NoErr(err) // within the TTL the cache still answers: the documented staleness across processes
	clock.Advance(time.Millisecond)
	_, err = svc.Authenticate(ctx, a.AppID())
	is.Equal(ErrorCode(err), EUNAUTHORIZED) // at the TTL it is verified against the store again
}

// TestAuthCache_Bounded checks the size limit and the clock eviction: entries hit since the
// hand last passed survive one pass, unused ones go first.
func TestAuthCache_Bounded(t *testing.T) {
	is := is.New(t)
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	c := newAuthCache(4, time.Minute)
	hash := func(s string) [sha256.Size]byte { return sha256.Sum256([]byte(s)) }
	epoch := authEpoch.Load()
	add := func(id string) { c.add(id, hash(id), "co-"+id, now, epoch) }
	has := func(id string) bool { _, ok := c.lookup([]byte(id), hash(id), now); return ok }

	for i := range 4 {
		add(fmt.Sprint("c", i))
	}
	is.Equal(c.len(), 4)
	is.True(has("c0")) // c0 and c2 are used: marked
	is.True(has("c2"))
	add("c4")
	is.Equal(c.len(), 4) // never more than the limit
	is.True(!has("c1"))  // the first unmarked entry went
	is.True(has("c0"))   // the marked ones stayed
	is.True(has("c2"))   //
	is.True(has("c4"))   // the new one is in
	for i := 5; i < 50; i++ {
		add(fmt.Sprint("c", i))
		is.True(c.len() <= 4) // whatever the pattern
	}
	co, ok := c.lookup([]byte("c49"), hash("c49"), now)
	is.True(ok)
	is.Equal(co, "co-c49") // the newest is always in, with its company

	_, ok = c.lookup([]byte("c49"), hash("c49"), now.Add(-time.Second))
	is.True(!ok) // a clock moved back does not extend an entry's life
	_, ok = c.lookup([]byte("c49"), hash("c49"), now.Add(time.Minute))
	is.True(!ok) // nor is one used at its TTL

	c.add("stale", hash("stale"), "co", now, epoch-1)
	_, ok = c.lookup([]byte("stale"), hash("stale"), now)
	is.True(!ok) // a verification from before a deactivation is not cached
}

// TestDeactivateApplication_RefusedKeepsCache: a deactivation refused for what it asked (an
// unknown clientId, the last active application) or of an application inactive already
// changed nothing and leaves every cached App ID in place; one that deactivates empties
// the cache.
func TestDeactivateApplication_RefusedKeepsCache(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	svc, _ := newMemoryService(t)
	a, err := svc.CreateApplication(ctx, CreateApplicationParams{Name: "only"})
	is.NoErr(err)
	before := authEpoch.Load()
	_, err = svc.DeactivateApplication(ctx, "no-such-client")
	is.Equal(ErrorCode(err), ENOTFOUND)
	_, err = svc.DeactivateApplication(ctx, a.ClientID)
	is.Equal(ErrorCode(err), EPRECONDITION) // the last active one
	is.Equal(authEpoch.Load(), before)      // nothing changed, nothing emptied
	b, err := svc.CreateApplication(ctx, CreateApplicationParams{Name: "second"})
	is.NoErr(err)
	_, err = svc.DeactivateApplication(ctx, b.ClientID)
	is.NoErr(err)
	is.True(authEpoch.Load() > before) // a deactivation empties it
	before = authEpoch.Load()
	again, err := svc.DeactivateApplication(ctx, b.ClientID)
	is.NoErr(err) // inactive already: answered as it is
	is.True(!again.IsActive)
	is.Equal(authEpoch.Load(), before) // and, as nothing changed, nothing emptied (it was, every time)
}
