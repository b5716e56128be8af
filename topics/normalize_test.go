package topics_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"

	"github.com/rankstream/rankstream/topics"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"only spaces", " \t\n ", ""},
		{"already normal", "weather today", "weather today"},
		{"trim and collapse", "  Weather \t  TODAY\n", "weather today"},
		{"carriage return and vertical tab", "a\r\v\fb", "a b"},
		{"no-break space is white space", "caf\u00e9\u00a0au\u2003lait", "café au lait"},
		{"sharp s folds to ss", "Straße", "strasse"},
		{"capital sharp s", "STRAẞE", "strasse"},
		{"upper case ss", "STRASSE", "strasse"},
		{"final sigma", "ΣΊΣΥΦΟΣ", "σίσυφοσ"},
		{"final sigma lower", "σίσυφος", "σίσυφοσ"},
		{"kelvin sign", "\u212a", "k"},
		{"ligature", "ﬁle", "file"},
		{"title case digraph", "ǅemal", "ǆemal"},
		{"dotted capital I", "İstanbul", "i̇stanbul"},
		{"invalid utf-8", "a\xffb", "a\ufffdb"},
		{"cherokee capital stays", "\u13a5", "\u13a5"},
		{"cherokee small folds to capital", "\uab75\u13fd", "\u13a5\u13f5"},
		{"digits and punctuation", "iPhone 17 Pro-Max!", "iphone 17 pro-max!"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := topics.Normalize(tt.in); got != tt.want {
				t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestNormalizeASCIINoAlloc checks the fast path: a normalized ASCII query
// comes back as is.
func TestNormalizeASCIINoAlloc(t *testing.T) {
	q := "weather in berlin"
	if n := testing.AllocsPerRun(100, func() { _ = topics.Normalize(q) }); n != 0 {
		t.Errorf("Normalize of a normalized query allocates %v times", n)
	}
}

// reference is the definition without the ASCII fast path, with Unicode's
// folding of Cherokee to its capitals.
func reference(q string) string {
	q = strings.ToValidUTF8(q, "\ufffd")
	q = cases.Fold().String(strings.Join(strings.FieldsFunc(q, unicode.IsSpace), " "))
	return strings.Map(func(r rune) rune {
		switch {
		case 0xAB70 <= r && r <= 0xABBF:
			return r - 0xAB70 + 0x13A0
		case 0x13F8 <= r && r <= 0x13FD:
			return r - 8
		}
		return r
	}, q)
}

// FuzzNormalize checks the properties of Normalize on any input: it agrees
// with the reference definition, is idempotent, and yields valid UTF-8
// without white space at the ends or runs of it inside.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"", " a  B ", "Straße", "ΣΊΣΥΦΟΣ", "a\xffb", "\u00a0x\u2028y", "İ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		got := topics.Normalize(q)
		if want := reference(q); got != want {
			t.Fatalf("Normalize(%q) = %q, reference %q", q, got, want)
		}
		if again := topics.Normalize(got); again != got {
			t.Fatalf("not idempotent: %q → %q → %q", q, got, again)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("Normalize(%q) = %q is not valid UTF-8", q, got)
		}
		if strings.TrimFunc(got, unicode.IsSpace) != got || strings.Contains(got, "  ") {
			t.Fatalf("Normalize(%q) = %q has white space left", q, got)
		}
		for _, r := range got {
			if unicode.IsSpace(r) && r != ' ' {
				t.Fatalf("Normalize(%q) = %q keeps white space %U", q, got, r)
			}
		}
	})
}
