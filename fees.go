package payments

// FeePolicy is what the platform takes from each Pix a company receives: BasisPoints of
// the amount (100 = 1%), at least Min and at most Max centavos, and never more than the
// amount itself. A zero Max means no maximum.
type FeePolicy struct {
	BasisPoints int64 `json:"basisPoints"`
	Min         int64 `json:"min"`
	Max         int64 `json:"max"`
}

// DefaultFeePolicy is the real API's published default: 0.8% per Pix received, at least
// R$ 0,50 and at most R$ 5,00.
var DefaultFeePolicy = FeePolicy{BasisPoints: 80, Min: 50, Max: 500}

// Fee returns the fee on a received amount.
func (p FeePolicy) Fee(amount int64) int64 {
	if amount <= 0 {
		return 0
	}
	fee := percentOf(amount, p.BasisPoints)
	if fee < p.Min {
		fee = p.Min
	}
	if p.Max > 0 && fee > p.Max {
		fee = p.Max
	}
	return min(fee, amount)
}

// percentOf returns basisPoints/10000 of amount, rounded half up, in integers.
func percentOf(amount, basisPoints int64) int64 {
	return (amount*basisPoints + 5000) / 10000
}
