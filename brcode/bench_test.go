package brcode

import "testing"

func BenchmarkEncodeStatic(b *testing.B) {
	s := Static{Key: evp, Name: "João da Silva", City: "São Paulo", Info: "Pedido 123", TxID: "Pedido123", Amount: 12345}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeStatic(s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeDynamic(b *testing.B) {
	d := Dynamic{URL: "pix.example.com/qr/v2/8b3da2f39a4140d1a91abd93113bd441", Name: "Fulano de Tal", City: "BRASILIA"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeDynamic(d); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	// P16: static with key, info, fss, amount and txid.
	const s = "00020126970014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400000223Pagamento do pedido 1230308123456785204000053039865406123.455802BR5913Fulano de Tal6008BRASILIA62130509Pedido1236304FD70"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseTaxID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ParseTaxID("12.ABC.345/01DE-35"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDetectKey(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := DetectKey("Fulano.Tal@Example.com"); err != nil {
			b.Fatal(err)
		}
	}
}
