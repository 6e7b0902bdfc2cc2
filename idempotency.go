package payments

// correlationKey is the unique key of the record with the correlationID cid: the
// caller's idempotency key, unique per collection and company.
func correlationKey(cid string) string { return "correlationID:" + cid }

// replay is the first step of a create that its caller may send again under the same
// correlationID cid: it reads the record of coll that cid names (noun names it in errors)
// and sets its id with setID (nil when the record keeps its id in its body). ok says there
// is one and same finds it is what the request asks for again: the caller returns it and
// does nothing twice. A record that is not the same (any record, when same is nil: a
// correlationID that can be used only once) is a conflict on "correlationID" with the
// message differs formats with args. An empty cid names no record: ok is false.
func replay[T any](t *txn, coll, noun, cid string, setID func(*T, string), same func(T) bool, differs string, args ...any) (T, bool, error) {
	var rec, zero T
	if cid == "" {
		return zero, false, nil
	}
	id, err := t.getByKey(coll, correlationKey(cid), noun, &rec)
	if ok, err := found(err); err != nil || !ok {
		return zero, false, err
	}
	if setID != nil {
		setID(&rec, id)
	}
	if same == nil || !same(rec) {
		return zero, false, conflict("correlationID", differs, args...)
	}
	return rec, true, nil
}
