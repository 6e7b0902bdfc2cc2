package payments

import (
	stdjson "encoding/json"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
)

// codecCharges are charges of every shape a record takes: plain, with a customer and
// address, OVERDUE with its settings, paid, with splits.
func codecCharges() []Charge {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	due := now.Add(72 * time.Hour)
	paid := now.Add(time.Hour)
	plain := Charge{ID: "6740f3a0aabbccddeeff0011", Status: ChargeActive, Type: ChargeDynamic, Value: 1990, Comment: "Pedido 42 – ação",
		CorrelationID: "order-1", Identifier: "019ab0c0d0e0f0a1b2c3d4e5f6a7b8c9", TransactionID: "019ab0c0d0e0f0a1b2c3d4e5f6a7b8c9",
		GlobalID: "Q2hhcmdlOjY3NDBmM2EwYWFiYmNjZGRlZWZmMDAxMQ==", PaymentLinkID: "0193a5b4-1c2d-7e8f-9a0b-1c2d3e4f5a6b",
		BRCode: "00020101021126580014br.gov.bcb.pix0136pix@loja.example.com520400005303986540519.905802BR5912Loja Exemplo6009Sao Paulo62290525019ab0c0d0e0f0a1b2c3d4e5f6304ABCD",
		PixKey: "pix@loja.example.com", ExpiresIn: 86400, ExpiresDate: now.Add(24 * time.Hour), Fee: 50, CreatedAt: now, UpdatedAt: now}
	withCustomer := plain
	withCustomer.Customer = &Customer{Name: "Ana", TaxID: &TaxID{TaxID: "52998224725", Type: "BR:CPF"}, CorrelationID: "cust-1",
		Email: "ana@example.com", Address: &Address{Zipcode: "01310100", Street: "Av. Paulista", Number: "1000", City: "São Paulo", State: "SP"}}
	withCustomer.AdditionalInfo = []AdditionalInfo{{Key: "pedido", Value: "42"}}
	withCustomer.Subscription = "sub-1"
	overdue := plain
	overdue.Type, overdue.DaysForDueDate, overdue.DaysAfterDueDate, overdue.DueDate = ChargeOverdue, 3, 10, &due
	overdue.Interests, overdue.Fines = &Interests{Value: 100}, &Fines{Value: 200}
	done := withCustomer
	done.Status, done.PaidAt, done.PaidValue, done.EndToEndID = ChargeCompleted, &paid, 1990, "E99999999202611221200000000001"
	done.Splits = []Split{{Value: 500, PixKey: "sub@example.com", SplitType: SplitSubAccount}}
	done.EnableCashbackPercentage = true
	return []Charge{plain, withCustomer, overdue, done}
}

// TestCodec_DecodesAsEncodingJSON: a stored charge decodes to the value encoding/json
// gives, so records written by any version read the same.
func TestCodec_DecodesAsEncodingJSON(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	for _, c := range codecCharges() {
		r, err := encode(c.ID, c, nil, nil)
		is.NoErr(err)
		var want, got Charge
		is.NoErr(stdjson.Unmarshal(r.Data, &want))
		is.NoErr(decode(r, &got))
		is.Equal(got, want)
	}
	var c Charge
	is.True(decode(store.Record{ID: "x", Data: []byte(`{"value":"text"}`)}, &c) != nil) // a corrupt record is an error
}

// BenchmarkCodec compares the record codec with encoding/json on stored charges.
func BenchmarkCodec(b *testing.B) {
	cs := codecCharges()
	recs, v1 := make([]store.Record, len(cs)), make([]store.Record, len(cs))
	for i, c := range cs {
		recs[i], _ = encode(c.ID, chargeRecord{&c}, nil, nil) // as stored (appendChargeRecord)
		v1[i], _ = encode(c.ID, c, nil, nil)                  // as stored before, with what present derives
	}
	for _, set := range []struct {
		name string
		recs []store.Record
	}{{"decode", recs}, {"decode-v1", v1}} {
		b.Run(set.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				var c Charge
				if err := decode(set.recs[i%len(set.recs)], &c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("decode-encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			var c Charge
			if err := stdjson.Unmarshal(recs[i%len(recs)].Data, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := encode("x", cs[i%len(cs)], nil, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Many decodes of types never decoded before, at once, as a server starting meets them
// (its background work and its first requests read the same record types): each gets its
// value. go-json v0.10.5 published a type's new decoder without synchronization outside
// -race builds, and a decode at that moment could read it half-written and panic (the CI
// crash harness met it once, 4 ms after a restart). Under -race that version took a locked
// path instead, so no test run under -race could have caught it; v0.11 has one path for
// every build, published atomically, and here the race detector watches it.
func TestDecode_ConcurrentFirstUse(t *testing.T) {
	is := is.New(t)
	const types, callers = 40, 4
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range types {
		typ := reflect.StructOf([]reflect.StructField{
			{Name: "N" + strconv.Itoa(i), Type: reflect.TypeFor[int64](), Tag: `json:"n"`},
			{Name: "P", Type: reflect.TypeFor[*Customer](), Tag: `json:"p"`},
		})
		for range callers {
			wg.Go(func() {
				<-start
				v := reflect.New(typ)
				is.NoErr(decode(store.Record{ID: "x", Data: []byte(`{"n":` + strconv.Itoa(i) + `,"p":{"name":"Ana"}}`)}, v.Interface()))
				is.Equal(v.Elem().Field(0).Int(), int64(i))
				is.Equal(v.Elem().Field(1).Interface().(*Customer).Name, "Ana")
			})
		}
	}
	close(start)
	wg.Wait()
}
