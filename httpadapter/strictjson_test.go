package httpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/memory"
)

// strictServer is the real handler over a memory-store Service, with the Service to look
// at what a request stored.
type strictServer struct {
	svc   *payments.Service
	h     http.Handler
	appID string
}

func newStrictServer(t *testing.T) strictServer {
	t.Helper()
	clock := payments.NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	svc, err := payments.New(memory.New(), payments.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	app, err := svc.CreateApplication(context.Background(), payments.CreateApplicationParams{Name: "strict"})
	if err != nil {
		t.Fatal(err)
	}
	return strictServer{svc: svc, h: New(svc, Options{Logger: slog.New(slog.DiscardHandler)}), appID: app.AppID()}
}

// post sends body to path and returns the status and the decoded reply.
func (s strictServer) post(t *testing.T, path, body string) (int, map[string]any) {
	t.Helper()
	r := httptest.NewRequest("POST", path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", s.appID)
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, r)
	var reply map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &reply); err != nil {
		t.Fatalf("reply is not a JSON object: %v: %s", err, w.Body)
	}
	return w.Code, reply
}

func (s strictServer) charges(t *testing.T) []payments.Charge {
	t.Helper()
	cs, _, err := s.svc.ListCharges(context.Background(), payments.ChargeFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func (s strictServer) payments(t *testing.T) []payments.Payment {
	t.Helper()
	ps, _, err := s.svc.ListPayments(context.Background(), payments.PaymentFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// TestDecode_ExactKeys: keys name fields exactly, a key given twice anywhere is a 400
// naming its path, and one field named in two cases is a 400 that stores nothing.
func TestDecode_ExactKeys(t *testing.T) {
	t.Parallel()
	t.Run("ChargeValueInTwoCases", func(t *testing.T) {
		s := newStrictServer(t)
		for _, body := range []string{
			`{"correlationID":"c1","value":100,"Value":5000000}`,
			`{"correlationID":"c1","Value":5000000,"value":100}`,
			`{"correlationID":"c1","value":100,"VALUE":5000000}`,
		} {
			is := is.New(t)
			status, reply := s.post(t, "/api/v1/charge", body)
			is.Equal(status, http.StatusBadRequest)                                                  // not 5000000, not 100: the body says both
			is.True(strings.HasPrefix(reply["error"].(string), `duplicate key "value" in the body`)) // names the field
			is.Equal(len(s.charges(t)), 0)                                                           // nothing created
		}
	})
	t.Run("PaymentValueInTwoCases", func(t *testing.T) {
		s := newStrictServer(t)
		for _, body := range []string{
			`{"value":100,"Value":5000000,"destinationAlias":"ana@example.com","destinationAliasType":"EMAIL","correlationID":"p1"}`,
			`{"value":100,"value":5000000,"destinationAlias":"ana@example.com","destinationAliasType":"EMAIL","correlationID":"p1"}`,
		} {
			is := is.New(t)
			status, reply := s.post(t, "/api/v1/payment", body)
			is.Equal(status, http.StatusBadRequest)                                                  // refused
			is.True(strings.HasPrefix(reply["error"].(string), `duplicate key "value" in the body`)) // names the field
			is.Equal(len(s.payments(t)), 0)                                                          // nothing created
		}
	})
	t.Run("ChargeDuplicateValue", func(t *testing.T) {
		is := is.New(t)
		s := newStrictServer(t)
		status, reply := s.post(t, "/api/v1/charge", `{"correlationID":"c1","value":100,"value":5000000}`)
		is.Equal(status, http.StatusBadRequest)                                                            // refused
		is.Equal(reply["error"], `duplicate key "value" in the body: give each key once`)                  // the key named
		is.Equal(len(s.charges(t)), 0)                                                                     // nothing created
		status, _ = s.post(t, "/api/v1/charge", `{"correlationID":"c1","value":100,"\u0076alue":5000000}`) // "\u0076alue" is "value"
		is.Equal(status, http.StatusBadRequest)                                                            // the same key, escaped
	})
	t.Run("NestedDuplicates", func(t *testing.T) {
		s := newStrictServer(t)
		for _, tc := range []struct{ body, path string }{
			{`{"correlationID":"c2","value":100,"customer":{"name":"a","name":"b","email":"a@example.com"}}`, "customer.name"},
			{`{"correlationID":"c2","value":100,"customer":{"name":"a","Name":"b","email":"a@example.com"}}`, "customer.name"},
			{`{"correlationID":"c2","value":100,"splits":[{"value":1,"pixKey":"a"},{"value":1,"pixKey":"a","value":2}]}`, "splits[1].value"},
			{`{"correlationID":"c2","value":100,"extra":{"a":{"b":1,"b":2}}}`, "extra.a.b"},                                          // in an unknown key too
			{`{"correlationID":"c2","value":100,"customer":{"name":"a","taxID":{"taxID":"1","taxID":"2"}}}`, "customer.taxID.taxID"}, // in a raw value
			{`{"correlationID":"c2","value":100,"customer":{"name":"a","taxID":{"taxID":"52998224725","TaxID":"11144477735"}}}`, "customer.taxID.taxID"},
		} {
			is := is.New(t)
			status, reply := s.post(t, "/api/v1/charge", tc.body)
			is.Equal(status, http.StatusBadRequest)                                                                   // refused
			is.True(strings.HasPrefix(reply["error"].(string), fmt.Sprintf("duplicate key %q in the body", tc.path))) // the path named
			is.Equal(len(s.charges(t)), 0)                                                                            // nothing created
		}
	})
	t.Run("OptionalBody", func(t *testing.T) {
		is := is.New(t)
		s := newStrictServer(t)
		status, reply := s.post(t, "/api/v1/account", `{"pixKey":"a@example.com","name":"A","pixKey":"b@example.com"}`)
		is.Equal(status, http.StatusBadRequest)                                            // decodeOptional reads as decode
		is.Equal(reply["error"], `duplicate key "pixKey" in the body: give each key once`) // named
		status, reply = s.post(t, "/api/v1/account", `{"pixKey":"a@example.com","PixKey":"b@example.com","name":"A"}`)
		is.Equal(status, http.StatusBadRequest)                                                                                        // one field in two cases
		is.Equal(reply["error"], `duplicate key "pixKey" in the body ("pixKey" and "PixKey" differ only in case): give each key once`) // both spellings said
	})
	t.Run("OtherCaseAloneIsUnknown", func(t *testing.T) {
		is := is.New(t)
		s := newStrictServer(t)
		// "COMMENT" and "cuſtomer" (a long s, which encoding/json folds to s) are not fields.
		status, reply := s.post(t, "/api/v1/charge", `{"correlationID":"c3","value":100,"COMMENT":"hidden","cuſtomer":{"name":"A","email":"a@example.com"}}`)
		is.Equal(status, http.StatusOK) // unknown keys are ignored, as before
		charge := reply["charge"].(map[string]any)
		is.Equal(charge["value"], float64(100)) // the exact key
		is.Equal(charge["comment"], "")         // COMMENT is not comment
		is.Equal(charge["customer"], nil)       // nor cuſtomer customer
		status, _ = s.post(t, "/api/v1/charge", `{"CorrelationID":"c4","Value":5000000}`)
		is.Equal(status, http.StatusBadRequest) // no correlationID and no value sent, as JavaScript reads it
		is.Equal(len(s.charges(t)), 1)          // only c3
	})
	t.Run("ExactKeysWork", func(t *testing.T) {
		is := is.New(t)
		s := newStrictServer(t)
		status, reply := s.post(t, "/api/v1/charge", `{"correlationID":"c5","value":1990,"comment":"Pedido","customer":{"name":"Ana","taxID":{"taxID":"52998224725","type":"BR:CPF"},"email":"ana@example.com"},"additionalInfo":[{"key":"k","value":"v"}],"extra":{"Value":1,"value":2}}`)
		is.Equal(status, http.StatusOK) // a documented body, with an extra object of its own keys
		charge := reply["charge"].(map[string]any)
		is.Equal(charge["value"], float64(1990))                                                        // value
		is.Equal(charge["comment"], "Pedido")                                                           // comment
		is.Equal(charge["customer"].(map[string]any)["name"], "Ana")                                    // customer.name
		is.Equal(charge["customer"].(map[string]any)["taxID"].(map[string]any)["taxID"], "52998224725") // customer.taxID.taxID
		status, _ = s.post(t, "/api/v1/payment", `{"value":1000,"destinationAlias":"ana@example.com","destinationAliasType":"EMAIL","correlationID":"p1"}`)
		is.Equal(status, http.StatusOK) // a payment too
		is.Equal(len(s.payments(t)), 1) // stored
	})
}

// TestUnmarshalExact_OtherCasesAreUnknown: each spelling encoding/json takes for the field
// "sk" (any case, the long s, the Kelvin sign) sets it there and not here.
func TestUnmarshalExact_OtherCasesAreUnknown(t *testing.T) {
	t.Parallel()
	type body struct {
		SK string `json:"sk"`
	}
	for _, key := range []string{"SK", "Sk", "sK", "ſk", "s\u212a", "\u017f\u212a", `\u0053k`} {
		is := is.New(t)
		data := []byte(`{"` + key + `":"x"}`)
		var loose, exact body
		is.NoErr(json.Unmarshal(data, &loose))
		is.Equal(loose.SK, "x") // encoding/json takes it for sk
		is.NoErr(unmarshalExact(data, &exact))
		is.Equal(exact.SK, "") // not here
	}
	is := is.New(t)
	var b body
	is.NoErr(unmarshalExact([]byte(`{"sk":"x"}`), &b))
	is.Equal(b.SK, "x") // the exact key
}

// TestExactKeys_DuplicatePaths: the path of a duplicate names every object and item on
// the way to it.
func TestExactKeys_DuplicatePaths(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ body, path string }{
		{`{"a":1,"a":2}`, "a"},
		{`{"a":{"b":[{"c":1},{"c":1,"c":2}]}}`, "a.b[1].c"},
		{`[{"x":1,"x":1}]`, "[0].x"},
		{`{"a":[[{"k":1,"k":2}]]}`, "a[0][0].k"},
		{`{"a":1,"\u0061":2}`, "a"},
		{`{"":1,"":2}`, ""},
	} {
		is := is.New(t)
		_, err := exactKeys([]byte(tc.body), reflect.TypeFor[any]())
		dup, ok := errors.AsType[*duplicateKeyError](err)
		is.True(ok)                 // a duplicate
		is.Equal(dup.path, tc.path) // named by its path
	}
}

// TestExactKeys_LargeObject: an object of many keys is checked in time in proportion to its
// size, and a duplicate far into it is found.
func TestExactKeys_LargeObject(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var b bytes.Buffer
	b.WriteByte('{')
	for i := range 100000 {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	ok := append(bytes.Clone(b.Bytes()), `"end":0}`...)
	dup := append(bytes.Clone(b.Bytes()), `"k7":0}`...)
	_, err := exactKeys(ok, reflect.TypeFor[chargeBody]())
	is.NoErr(err) // 100001 keys, none twice
	_, err = exactKeys(dup, reflect.TypeFor[chargeBody]())
	d, found := errors.AsType[*duplicateKeyError](err)
	is.True(found)           // the 100001st key repeats the 8th
	is.Equal(d.path, "k7")   // named
	is.True(len(ok) > 1<<20) // a body over the size limit, so any body in it is quick
}

// TestExactKeys_Grammar: exactKeys reads JSON's grammar as encoding/json does, up to its
// depth limit.
func TestExactKeys_Grammar(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth),
		strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1),
		strings.Repeat(`{"a":`, maxJSONDepth) + "1" + strings.Repeat("}", maxJSONDepth),
		strings.Repeat(`{"a":`, maxJSONDepth+1) + "1" + strings.Repeat("}", maxJSONDepth+1),
		`{"a":-0.5e+7}`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`, `{"a":"\u12"}`, `{"a":"\x"}`,
		"{\"a\":\"\x01\"}", `{"a":tru}`, `{"a":true} x`, `{"a" 1}`, `{"a":1,}`, `[1,]`, ` "s" `, `nul`, ``, `{`, `"`,
	} {
		is := is.New(t)
		_, err := exactKeys([]byte(body), reflect.TypeFor[chargeBody]())
		is.Equal(err == nil, json.Valid([]byte(body))) // the same verdict as encoding/json's
	}
}

// FuzzStrictJSON's types: nested structs, lists, maps, raw values, a type that decodes
// itself, embedded structs whose names are shadowed or tie, a ",string" field and two
// fields whose names differ only in case.
type (
	strictInner struct {
		Name string `json:"name"` // shadowed by strictBody.Name
		Note string `json:"note"`
		Deep int
	}
	strictTwinA struct{ Twin string }
	strictTwinB struct{ Twin string } // Twin ties with strictTwinA's: no field
	strictItem  struct {
		Value centavos `json:"value"`
		Key   string   `json:"key"`
	}
	// strictSelf decodes itself: its text, normalized, whatever keys it has.
	strictSelf struct{ Text string }
	strictBody struct {
		strictInner
		strictTwinA
		strictTwinB
		Name    string                `json:"name"`
		Value   centavos              `json:"value"`
		Count   int                   `json:"count,string"`
		Skip    string                `json:"-"`
		Item    *strictItem           `json:"item"`
		Items   []strictItem          `json:"items"`
		Pair    [2]strictItem         `json:"pair"`
		ByKey   map[string]strictItem `json:"byKey"`
		Raw     json.RawMessage       `json:"raw"`
		Any     any                   `json:"any"`
		Self    *strictSelf           `json:"self"`
		Plain   string
		ID      string `json:"id"`
		IDUpper string `json:"ID"`
	}
)

func (s *strictSelf) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	text, err := json.Marshal(v)
	s.Text = string(text)
	return err
}

// strictShape is strictBody's fields as written by hand, for the oracle: an independent
// statement of what encoding/json decodes each key into.
type strictShape struct {
	fields map[string]*strictShape // a struct
	elem   *strictShape            // a list or a map
	isList bool
	isMap  bool
}

var strictItemShape = &strictShape{fields: map[string]*strictShape{"value": nil, "key": nil}}

var strictBodyShape = &strictShape{fields: map[string]*strictShape{
	"name": nil, "note": nil, "Deep": nil, "value": nil, "count": nil, "raw": nil, "any": nil, "self": nil,
	"Plain": nil, "id": nil, "ID": nil,
	"item":  strictItemShape,
	"items": {isList: true, elem: strictItemShape},
	"pair":  {isList: true, elem: strictItemShape},
	"byKey": {isMap: true, elem: strictItemShape},
}}

// oracleFilter copies the next JSON value of dec to out with only the keys that name a
// field of sh exactly, and reports whether any object in it has a key twice.
func oracleFilter(dec *json.Decoder, sh *strictShape, out *bytes.Buffer) (dup bool, err error) {
	tok, err := dec.Token()
	if err != nil {
		return false, err
	}
	switch tok := tok.(type) {
	case json.Delim:
		if tok == '[' {
			out.WriteByte('[')
			var elem *strictShape
			if sh != nil && sh.isList {
				elem = sh.elem
			}
			for n := 0; dec.More(); n++ {
				if n > 0 {
					out.WriteByte(',')
				}
				d, err := oracleFilter(dec, elem, out)
				if err != nil {
					return false, err
				}
				dup = dup || d
			}
			out.WriteByte(']')
		} else {
			out.WriteByte('{')
			seen := map[string]bool{}
			for n := 0; dec.More(); {
				kt, err := dec.Token()
				if err != nil {
					return false, err
				}
				key := kt.(string)
				dup = dup || seen[key]
				seen[key] = true
				keep, child := true, (*strictShape)(nil)
				switch {
				case sh != nil && sh.fields != nil:
					child, keep = sh.fields[key]
				case sh != nil && sh.isMap:
					child = sh.elem
				}
				var v bytes.Buffer
				d, err := oracleFilter(dec, child, &v)
				if err != nil {
					return false, err
				}
				dup = dup || d
				if keep {
					if n > 0 {
						out.WriteByte(',')
					}
					k, _ := json.Marshal(key)
					out.Write(k)
					out.WriteByte(':')
					out.Write(v.Bytes())
					n++
				}
			}
			out.WriteByte('}')
		}
		_, err := dec.Token() // the closing delimiter
		return dup, err
	case json.Number:
		out.WriteString(tok.String())
	default: // string, bool, nil
		b, err := json.Marshal(tok)
		if err != nil {
			return false, err
		}
		out.Write(b)
	}
	return dup, nil
}

// normalized is v with its raw text made comparable: Raw re-encoded from its value.
func normalized(v strictBody) strictBody {
	if v.Raw != nil {
		var x any
		if json.Unmarshal(v.Raw, &x) == nil {
			v.Raw, _ = json.Marshal(x)
		}
	}
	return v
}

// FuzzStrictJSON: whatever the text, unmarshalExact does not panic, and either fails or
// decodes what encoding/json decodes from the text with only the keys that name a field
// exactly. It fails when the text is not JSON, has a key twice in an object, or
// encoding/json fails on the exact keys; or, besides, for a field named in two cases.
// exactKeys agrees with json.Valid on what is JSON, but for a duplicate it meets first.
func FuzzStrictJSON(f *testing.F) {
	for _, seed := range []string{
		`{"value":100,"Value":5000000}`, `{"value":100,"value":5000000}`, `{"Value":5000000}`,
		`{"name":"a","NAME":"b","note":"n","NOTE":"m","Deep":1,"deep":2,"Twin":"t","twin":"u"}`,
		`{"item":{"value":1,"VALUE":2,"key":"k"},"items":[{"value":1},{"Value":2}],"pair":[{"key":"a"},{"KEY":"b"}]}`,
		`{"byKey":{"A":{"value":1},"a":{"Value":2}},"raw":{"x":1,"X":2},"any":{"k":[1,{"K":2}]}}`,
		`{"self":{"a":1,"A":2},"count":"7","Count":"8","-":"s","Skip":"t","Plain":"p","plain":"q"}`,
		`{"id":"lower","ID":"upper","Id":"mixed"}`, `{"ſ":1,"\u212a":2,"cuſtomer":3,"\u0076alue":4}`,
		`{"value":1.5}`, `{"value":"1"}`, `{"items":{"value":1}}`, `[1,2]`, `null`, `{}`, `{"a":{"b":1,"b":2}}`,
		"{\"\xff\":1,\"\xfe\":2}", `{"\ud800":1}`, `{"value":1} `, `{"value":1}}`, `{"value":01}`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		valid := json.Valid(data)
		_, err := exactKeys(data, reflect.TypeFor[any]())
		if valid && err != nil && !errors.As(err, new(*duplicateKeyError)) || !valid && err == nil {
			t.Fatalf("exactKeys says %v, json.Valid %v", err, valid) // (a duplicate may come before the text stops being JSON)
		}
		var got strictBody
		gotErr := unmarshalExact(data, &got)

		var want strictBody
		var wantErr error
		if !valid {
			wantErr = errors.New("not JSON")
		} else {
			var filtered bytes.Buffer
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			dup, err := oracleFilter(dec, strictBodyShape, &filtered)
			switch {
			case err != nil:
				t.Fatalf("oracle: %v", err)
			case dup:
				wantErr = errors.New("a key twice")
			default:
				wantErr = json.Unmarshal(filtered.Bytes(), &want)
			}
		}

		switch {
		case wantErr != nil && gotErr == nil:
			t.Fatalf("decoded %+v; want an error (%v)", got, wantErr)
		case wantErr == nil && gotErr != nil:
			dup, ok := errors.AsType[*duplicateKeyError](gotErr)
			if !ok || dup.spellings[0] == "" || dup.spellings[0] == dup.spellings[1] {
				t.Fatalf("error %v; want %+v", gotErr, want)
			}
		case wantErr == nil && !reflect.DeepEqual(normalized(got), normalized(want)):
			t.Fatalf("decoded\n%+v\nwant\n%+v", got, want)
		}
	})
}

// TestJSONStructFields: the fields found are encoding/json's: shadowed and tied names of
// embedded structs, "-", ",string" and names that differ in case.
func TestJSONStructFields(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	got := slices.Sorted(func(yield func(string) bool) {
		for name := range jsonStructFields(reflect.TypeFor[strictBody]()) {
			if !yield(name) {
				return
			}
		}
	})
	var want []string
	for name := range strictBodyShape.fields {
		want = append(want, name)
	}
	slices.Sort(want)
	is.Equal(got, want) // the fields the hand-written shape lists
	fields := jsonStructFields(reflect.TypeFor[strictBody]())
	is.Equal(fields["name"], reflect.TypeFor[string]())      // strictBody's own
	is.Equal(fields["item"], reflect.TypeFor[*strictItem]()) // the field's type, pointer and all
}

// BenchmarkDecodeBody is the decoding of a charge body alone: encoding/json as it is, and
// with exact keys.
func BenchmarkDecodeBody(b *testing.B) {
	body := []byte(`{"correlationID":"c1","value":1990,"comment":"Pedido","customer":{"name":"Ana","email":"ana@example.com","taxID":"52998224725"},"additionalInfo":[{"key":"k","value":"v"}]}`)
	b.Run("EncodingJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v chargeBody
			if err := json.Unmarshal(body, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ExactKeys", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v chargeBody
			if err := unmarshalExact(body, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
