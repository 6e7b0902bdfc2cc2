package payments

import (
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
)

func TestStoreErr_Conflict(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ key, field string }{
		{"correlationID:order-1", "correlationID"},
		{"taxID:52998224725", "taxID"},
		{"endToEndId:E9999999920261122120000000000001", "endToEndId"},
		{"name:co1:erp", "name"},
		{"id:6b02d940b1fdc9abc70031f6", "id"},
	} {
		t.Run(tc.field, func(t *testing.T) {
			is := is.New(t)
			err := storeErr(fmt.Errorf("put: %w", &store.ConflictError{Collection: "things", Key: tc.key}), "thing")
			is.Equal(ErrorCode(err), ECONFLICT)                                        // a taken key is a conflict
			is.Equal(ErrorField(err), tc.field)                                        // naming the field of the key
			is.Equal(ErrorMessage(err), "thing with this "+tc.field+" already exists") // in words, without the value
		})
	}
}
