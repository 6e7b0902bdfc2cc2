package apipix_test

import (
	"fmt"

	"github.com/pixfoundry/payments/rail/apipix"
)

// A PSP's POST to the webhook carries the Pix received; its devoluções come with them.
func ExampleParseNotification() {
	body := []byte(`{"pix":[{"endToEndId":"E09089356202611221200abcdefghijk","txid":"pedido123","valor":"10.50",
		"chave":"pix@loja.example.com","horario":"2026-11-22T09:00:00-03:00","infoPagador":"obrigado"}]}`)
	n, err := apipix.ParseNotification(body)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range n.Pix {
		fmt.Println(p.EndToEndID, p.TxID, p.Value, p.At.UTC().Format("2006-01-02 15:04"), p.Message)
	}
	// Output:
	// E09089356202611221200abcdefghijk pedido123 1050 2026-11-22 12:00 obrigado
}

// The Service's order ids are their own idEnvio; another id is hashed to one.
func ExampleOrderRef() {
	fmt.Println(apipix.OrderRef("0123456789abcdef01234567"))
	fmt.Println(len(apipix.OrderRef("pedido-42")))
	// Output:
	// 0123456789abcdef01234567
	// 32
}
