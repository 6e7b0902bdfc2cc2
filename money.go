package payments

// checkCentavos checks a money input: a whole number of centavos from 1 (or from 0 when
// zeroOK, for inputs where 0 means "all" or "none") to MaxChargeValue, the bound of a
// charge's value. Every amount a caller sends goes through it, so that no sum or product
// of amounts can overflow int64.
// MaxChargeValue is the largest amount a BR Code can carry (9999999999.99), in centavos.
const MaxChargeValue = 999_999_999_999

func checkCentavos(field string, v int64, zeroOK bool) error {
	switch {
	case zeroOK && (v < 0 || v > MaxChargeValue):
		return invalid(field, "%s must be a number of centavos from 0 to %d", field, int64(MaxChargeValue))
	case !zeroOK && (v <= 0 || v > MaxChargeValue):
		return invalid(field, "%s must be a positive number of centavos up to %d", field, int64(MaxChargeValue))
	}
	return nil
}
