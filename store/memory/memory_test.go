package memory_test

import (
	"testing"

	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/memory"
	"github.com/pixfoundry/payments/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		Open: func(t *testing.T) store.Store { return memory.New() },
	})
}
