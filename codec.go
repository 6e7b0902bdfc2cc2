package payments

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	gojson "github.com/goccy/go-json"

	"github.com/pixfoundry/payments/store"
)

// The record codec. Records stay JSON, as every version wrote them, so data written
// before is read as it is and needs no migration. Decoding, which every read does (43% of
// the CPU of an HTTP get-charge with encoding/json), goes through github.com/goccy/go-json:
// measured on stored charges on this (loaded, noisy) machine (BenchmarkCodec,
// codec_internal_test.go) it decoded 1.7 to 3 times faster than encoding/json (medians of
// 5 runs: 10.0 against 16.7 µs) with 9 allocations instead of 29, into the same values
// (TestCodec_DecodesAsEncodingJSON). Encoding stays with
// encoding/json (go-json does not honour the omitzero option the records use, and was
// not faster at encoding a charge), except for charges and their event payloads, which
// codec_charge.go writes directly, byte for byte the same.

func decode(r store.Record, v any) error {
	if err := goccy.unmarshal(r.Data, v); err != nil {
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

// goccy is how every decode reaches github.com/goccy/go-json (decode, payloadPix).
var goccy = firstUse{unmarshalFn: gojson.Unmarshal}

// firstUse runs the first decode of each type alone, and publishes it to the decodes after
// it. go-json v0.10.5 compiles a type's decoder on its first use and stores it in a global
// table without synchronization (outside -race builds): a decode of the same type at the
// same moment can read the entry half-written, a non-nil decoder whose pointer is nil, and
// panic (github.com/goccy/go-json issues 495 and 566; fixed upstream in v0.11, a rewrite
// not taken here). A server meets that when it starts: its background work and its first
// requests decode the same record types at once. The crash harness did, once in CI: a
// nil pointer in ReceiveChargePix 4 ms after a restart. Here, a type's decodes wait for its
// first one to end, under a lock; those after it find the type in ready, which orders them
// after the table's write. A decode costs a map look-up more.
type firstUse struct {
	unmarshalFn func(data []byte, v any) error
	mu          sync.Mutex
	ready       sync.Map // reflect.Type of v → struct{}: decoded once, successfully
}

func (f *firstUse) unmarshal(data []byte, v any) error {
	t := reflect.TypeOf(v)
	if _, ok := f.ready.Load(t); ok {
		return f.unmarshalFn(data, v)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	err := f.unmarshalFn(data, v)
	if err == nil {
		f.ready.Store(t, struct{}{})
	}
	return err
}
