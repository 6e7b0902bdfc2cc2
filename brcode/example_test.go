package brcode_test

import (
	"fmt"

	"github.com/pixfoundry/payments/brcode"
)

func Example() {
	code, err := brcode.EncodeStatic(brcode.Static{
		Key:    "123e4567-e12b-12d1-a456-426655440000",
		Name:   "Fulano de Tal",
		City:   "Brasília",
		Amount: 100050, // centavos
		TxID:   "Pedido123",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(code)

	c, err := brcode.Parse(code)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Key, c.City, c.Amount, c.TxID, c.Dynamic())

	_, err = brcode.Parse(code[:len(code)-4] + "0000")
	fmt.Println(err)

	id, typ, _ := brcode.ParseTaxID("12.ABC.345/01DE-35")
	fmt.Println(id, typ)
	// Output:
	// 00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-42665544000052040000530398654071000.505802BR5913Fulano de Tal6008Brasilia62130509Pedido1236304849C
	// 123e4567-e12b-12d1-a456-426655440000 Brasilia 100050 Pedido123 false
	// brcode: 63: CRC mismatch: got 0000, computed 849C
	// 12ABC34501DE35 BR:CNPJ
}
