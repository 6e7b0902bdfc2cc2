package payments

import (
	"encoding/json"
	"fmt"

	gojson "github.com/goccy/go-json"

	"github.com/pixfoundry/payments/store"
)

// The record codec. Records stay JSON, as every version wrote them, so data written
// before is read as it is and needs no migration. Decoding, which every read does (43% of
// the CPU of an HTTP get-charge with encoding/json), goes through github.com/goccy/go-json:
// measured on stored charges (BenchmarkCodec, codec_internal_test.go; 2026-11-28, medians
// of 5 runs) v0.11.0 decodes one in 1.9 to 2.1 µs with 4 allocations, against 11.4 µs
// and 29 for encoding/json, into the same values (TestCodec_DecodesAsEncodingJSON);
// v0.10.5, before it, took 3.6 µs and 9 allocations in the same sitting, and published a
// type's new decoder unsynchronized (see TestDecode_ConcurrentFirstUse). Encoding stays with
// encoding/json (go-json does not honour the omitzero option the records use, and was
// not faster at encoding a charge), except for charges and their event payloads, which
// codec_charge.go writes directly, byte for byte the same.

func decode(r store.Record, v any) error {
	if err := gojson.Unmarshal(r.Data, v); err != nil {
		return fmt.Errorf("decode %s: %w", r.ID, err)
	}
	return nil
}

func encode(id string, v any, keys []string, indexes []store.Index) (store.Record, error) {
	data, err := marshal(v) // encoding/json's bytes; charges written directly (codec_charge.go)
	if err != nil {
		return store.Record{}, fmt.Errorf("encode %s: %w", id, err)
	}
	return store.Record{ID: id, Data: data, Keys: keys, Indexes: indexes}, nil
}

// jsonAppender is a value that writes its own JSON, byte for byte what encoding/json
// writes for it. encode and emit use it when a value has it.
type jsonAppender interface {
	appendJSON(b []byte) []byte
}

// marshal is json.Marshal, through appendJSON when v has it.
func marshal(v any) ([]byte, error) {
	if a, ok := v.(jsonAppender); ok {
		return a.appendJSON(make([]byte, 0, 1024)), nil
	}
	return json.Marshal(v)
}
