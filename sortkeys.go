package payments

import (
	"time"

	"github.com/pixfoundry/payments/internal/wiretime"
	"github.com/pixfoundry/payments/store"
)

// Sort keys: how times and creation order are written into the store's indexes, so that
// their bytewise order is the order listings need.

// sortTime formats t so that bytewise order is time order (fixed width, UTC).
func sortTime(t time.Time) string {
	return string(appendSortTime(make([]byte, 0, len(sortTimeLayout)), t))
}

// appendSortTime appends sortTime's text of t.
func appendSortTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	if out, ok := wiretime.AppendFixed(b, t, 9); ok {
		return append(out, 'Z')
	}
	return t.AppendFormat(b, sortTimeLayout) // a year the width does not hold
}

// sortTimeLayout is the fixed-width layout of sortTime, whose bytewise order is time order.
const sortTimeLayout = "2006-01-02T15:04:05.000000000Z"

// timeRange is the From and To of a listing of the times from start to end, both included
// (zero: unbounded), as sortTime writes them. sortTime's width holds the years 0000 to 9999
// in UTC: beyond that a bound would be written "10000-..." and sort before every entry, so
// that an end such as 9999-12-31T23:59:59-03:00 (a client's "no upper bound", in Brasília)
// listed nothing. An end past the last time it can write is no bound, and so is a start
// before the first; a start past the last is an error naming startField.
func timeRange(start, end time.Time, startField string) (from, to string, err error) {
	first := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)
	last := time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC)
	if !start.IsZero() {
		switch {
		case start.After(last):
			return "", "", invalid(startField, "%s must be before the year 10000", startField)
		case !start.Before(first):
			from = sortTime(start)
		}
	}
	if !end.IsZero() && end.Before(last) {
		to = sortTime(end.Add(time.Nanosecond))
	}
	return from, to, nil
}

// Index names shared by every collection.
const (
	indexAll = "all" // every record, by creation time
)

func byCreation(t time.Time) store.Index { return store.Index{Name: indexAll, Sort: sortTime(t)} }

// byCreationThen is byCreation for a record whose id does not grow with creation (a Pix
// key, an encoded id): objectID, one made with the record, breaks the ties of one instant
// in creation order, as the id does for the others (indexes break ties by id).
func byCreationThen(t time.Time, objectID string) store.Index {
	return store.Index{Name: indexAll, Sort: sortTime(t) + objectID}
}
