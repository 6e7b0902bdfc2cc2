package main

import (
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"time"

	"go.etcd.io/bbolt"
)

// The -keys floor: the durable floor writing every key the server's create writes, in the
// shapes and sizes store/bolt gives them, so that the create's gap to the four-key floor
// splits into what keeping those keys costs bbolt (this floor against the four-key one)
// and what the service adds to it (the server against this floor).
//
// Per create, as a charge created by the load script leaves them in the server's file
// (the server's sizes, not its encodings; TestKeysFloorWritesWhatTheServerWrites compares
// the two files):
//   - records: the charge (recordSize bytes) under its time-ordered id; its
//     CHARGE_CREATED (eventSize) under its sequence number; the payment link
//     (allSizes.link) under a time-ordered UUID; the txid route (allSizes.route) under
//     the txid;
//   - keys: the correlationID and the transactionID, each naming the charge's id;
//   - index: five entries, empty values: the charge by creation time in "all" and in
//     "status:ACTIVE", by expiry time in "expiry"; the event by number in "all" and by
//     time and number under its name;
//
// and per commit, for all the creates in it: the five indexes' counts and the events'
// sequence counter, once each, as the store writes them. The correlationID is looked up
// first, as the four-key floor does. Keys are tuples as store/bolt makes them: each
// component followed by 0x00 0x01.
//
// It builds no BR Code, reads no company, account or book (the server does, for the fee
// and the event's payload), and does not diff the record's keys and indexes.

// allSizes are the byte sizes of the other values the server stores per create (see
// above): the payment link, the txid route, and each key's value (the charge's id).
var allSizes = struct{ link, route, key int }{link: 71, route: 23, key: 24}

// allIndexes are the indexes a create adds an entry to (collection and name), whose counts
// each commit writes.
var allIndexes = [][2]string{{"charges", "all"}, {"charges", "status:ACTIVE"}, {"charges", "expiry"}, {"events", "all"}, {"events", "name:OPENPIX:CHARGE_CREATED"}}

// allBuckets are store/bolt's buckets: records, keys, index, counts, counters.
var allBuckets = [][]byte{[]byte("records"), []byte("keys"), []byte("index"), []byte("counts"), []byte("counters")}

// company is the space the records of the server's default company are kept under.
const company = "default"

// tuple is a store/bolt key of parts.
func tuple(parts ...string) []byte {
	var b []byte
	for _, p := range parts {
		b = append(append(b, p...), 0, 1)
	}
	return b
}

// allCorrKey is the keys-bucket key of a correlationID in the -keys floor.
func allCorrKey(corr string) []byte {
	return tuple("charges", company, "correlationID:"+corr)
}

// putAll writes batch's creates with every key (see above) in tx; errs[i] is set for a
// correlationID taken.
func (d *durable) putAll(tx *bbolt.Tx, batch []*pending, errs []error) error {
	var bk [5]*bbolt.Bucket
	for i, name := range allBuckets {
		bk[i] = tx.Bucket(name)
		bk[i].FillPercent = 0.9
	}
	records, keys, index, counts, counters := bk[0], bk[1], bk[2], bk[3], bk[4]
	seqKey := tuple("events", company, "seq")
	seq := uint64(0)
	if v := counters.Get(seqKey); len(v) == 8 {
		seq = binary.BigEndian.Uint64(v)
	}
	added := 0
	for i, p := range batch {
		corrKey := allCorrKey(p.corr)
		if keys.Get(corrKey) != nil {
			errs[i] = errTaken
			continue
		}
		now := time.Now().UTC()
		seq++
		added++
		var raw [12]byte // the seconds, then the event's number: time-ordered and unique, as the server's ids
		binary.BigEndian.PutUint32(raw[:4], uint32(now.Unix()))
		binary.BigEndian.PutUint64(raw[4:], seq)
		id := hex.EncodeToString(raw[:])
		txID := id + "00000000"
		link := id[:8] + "-" + id[8:12] + "-7" + id[13:16] + "-8" + id[17:20] + "-" + id[20:24] + "00000000"
		created := now.Format("2006-01-02T15:04:05.000000000Z")
		expires := now.Add(24 * time.Hour).Format("2006-01-02T15:04:05.000000000Z")
		seqID := strconv.FormatUint(seq, 10)
		seqID = "00000000000000000000"[len(seqID):] + seqID
		idv := make([]byte, allSizes.key)
		copy(idv, id)
		puts := []struct {
			b    *bbolt.Bucket
			k, v []byte
		}{
			{records, tuple("charges", company, id), p.record},
			{records, tuple("events", company, seqID), p.ev},
			{records, tuple("paymentlinks", "_system", link), make([]byte, allSizes.link)},
			{records, tuple("txid_routes", "_system", txID[:25]), make([]byte, allSizes.route)},
			{keys, corrKey, idv},
			{keys, tuple("charges", company, "transactionID:"+txID), idv},
			{index, tuple("charges", company, "all", created, id), nil},
			{index, tuple("charges", company, "status:ACTIVE", created, id), nil},
			{index, tuple("charges", company, "expiry", expires, id), nil},
			{index, tuple("events", company, "all", seqID, seqID), nil},
			{index, tuple("events", company, "name:OPENPIX:CHARGE_CREATED", created+"|"+seqID, seqID), nil},
		}
		for _, put := range puts {
			if err := put.b.Put(put.k, put.v); err != nil {
				return err
			}
		}
	}
	if added == 0 {
		return nil
	}
	for _, ix := range allIndexes {
		k := tuple(ix[0], company, ix[1])
		n := uint64(0)
		if v := counts.Get(k); len(v) == 8 {
			n = binary.BigEndian.Uint64(v)
		}
		if err := counts.Put(k, binary.BigEndian.AppendUint64(nil, n+uint64(added))); err != nil {
			return err
		}
	}
	return counters.Put(seqKey, binary.BigEndian.AppendUint64(nil, seq))
}
