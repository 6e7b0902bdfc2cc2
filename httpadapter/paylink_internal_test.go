package httpadapter

import (
	"math"
	"testing"
	"time"

	"github.com/matryer/is"
)

func TestFormatBRL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		centavos int64
		want     string
	}{
		{0, "R$ 0,00"},
		{5, "R$ 0,05"},
		{50, "R$ 0,50"},
		{100, "R$ 1,00"},
		{99999, "R$ 999,99"},
		{100000, "R$ 1.000,00"},
		{123456, "R$ 1.234,56"},
		{12345678, "R$ 123.456,78"},
		{999_999_999_999, "R$ 9.999.999.999,99"},
		{-50, "-R$ 0,50"},
		{-123456, "-R$ 1.234,56"},
		{math.MaxInt64, "R$ 92.233.720.368.547.758,07"},
		{math.MinInt64, "-R$ 92.233.720.368.547.758,08"},
	} {
		is.New(t).Equal(formatBRL(tc.centavos), tc.want) // thousands with ".", centavos with ","
	}
}

func TestPageLanguage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		header, want string
	}{
		{"", "pt-BR"}, // Portuguese by default
		{"pt-BR,pt;q=0.9,en;q=0.8", "pt-BR"},
		{"en-US,en;q=0.9", "en"},
		{"en", "en"},
		{"EN-gb", "en"},
		{"fr-FR,fr;q=0.9", "pt-BR"},     // neither: the default
		{"fr-FR,en;q=0.5", "en"},        // English is the only one asked for
		{"en;q=0.5,pt;q=0.8", "pt-BR"},  // ranked by q, not by order
		{"pt;q=0.5,en;q=0.8", "en"},     //
		{"en;q=0.8,pt;q=0.8", "pt-BR"},  // a tie keeps the default
		{"en;q=0,pt-BR;q=0.1", "pt-BR"}, // q=0 refuses English
		{"en;q=0", "pt-BR"},             //
		{"*", "pt-BR"},                  //
		{"en;q=abc", "pt-BR"},           // a malformed q is ignored
		{"en;q=2", "pt-BR"},             // out of range too
		{";;;,,,=", "pt-BR"},            // junk
		{"english", "pt-BR"},            // not a tag of English
		{"en-US;q=0.9, de;q=1", "en"},   // spaces
	} {
		is.New(t).Equal(pageLanguage(tc.header).Lang, tc.want) // the header's choice
	}
}

func TestFormatTimeLeft(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		seconds int64
		want    string
	}{
		{0, "00:00:00"},
		{59, "00:00:59"},
		{3600, "01:00:00"},
		{86399, "23:59:59"},
		{86400, "1 d 00:00:00"},
		{3*86400 + 4*3600 + 5*60 + 6, "3 d 04:05:06"},
	} {
		is.New(t).Equal(formatTimeLeft(tc.seconds, "d"), tc.want)
	}
}

func TestPageText_Date(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	d := mustTime(t, "2026-03-05T23:30:00Z")
	is.Equal(textPT.date(d), "05/03/2026")
	is.Equal(textEN.date(d), "Mar 5, 2026")
	late := mustTime(t, "2026-03-06T01:30:00Z") // 22:30 on the 5th in Brasília
	is.Equal(textPT.date(late), "05/03/2026")
	is.Equal(textEN.date(late), "Mar 5, 2026")
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
