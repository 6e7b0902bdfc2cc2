package apipix

import (
	"fmt"
	"regexp"
	"strconv"
	"unicode/utf8"
)

// valorPattern is the standard's money: up to 10 digits, a point, 2 digits. The document
// writes it unanchored ("\d{1,10}\.\d{2}"); PSPs take it whole, so it is anchored here.
var valorPattern = regexp.MustCompile(`^\d{1,10}\.\d{2}$`)

// maxValor is the largest amount the pattern can write, in centavos.
const maxValor = 9_999_999_999_99

// formatValor writes centavos (or basis points, whose percentage has the same two
// decimals) as the standard's decimal string: 1234 is "12.34". It takes 0 to maxValor.
func formatValor(c int64) (string, error) {
	if c < 0 || c > maxValor {
		return "", fmt.Errorf("%d is outside what the API Pix can write (0 to %d)", c, int64(maxValor))
	}
	return fmt.Sprintf("%d.%02d", c/100, c%100), nil
}

// parseValor reads the standard's decimal string as centavos, exactly.
func parseValor(s string) (int64, error) {
	if !valorPattern.MatchString(s) {
		return 0, fmt.Errorf("%q is not an amount of the form 123.45", s)
	}
	n, err := strconv.ParseInt(s[:len(s)-3]+s[len(s)-2:], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, err)
	}
	return n, nil
}

// truncate cuts s to at most n characters (runes, as the document's maxLength counts).
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}
