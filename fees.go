package payments

import (
	"math"
	"math/bits"
)

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
func DefaultFeePolicy() FeePolicy { return FeePolicy{BasisPoints: 80, Min: 50, Max: 500} }

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

// percentOf returns basisPoints/10000 of amount, rounded half up, in integers; 0 when
// either is not positive. The product is taken in 128 bits, so a large amount times many
// basis points (interest over years of a large charge) cannot wrap; a result beyond int64
// saturates.
func percentOf(amount, basisPoints int64) int64 {
	if amount <= 0 || basisPoints <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(amount), uint64(basisPoints))
	lo, carry := bits.Add64(lo, 5000, 0)
	hi += carry
	if hi >= 10000 { // the quotient would not fit in 64 bits
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, 10000)
	return int64(min(q, math.MaxInt64))
}
