package topics

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
)

// Normalize returns the canonical form of a search query: the item that hot
// search counts, and that the gateway, the pipeline and the offline
// `rankstream topk` tool all apply.
//
//   - Leading and trailing white space is removed and every run of white
//     space inside becomes one ASCII space; white space is what
//     unicode.IsSpace reports (so tabs, newlines and no-break spaces count).
//   - Letters are case-folded with full Unicode case folding
//     (golang.org/x/text/cases.Fold), not strings.ToLower: "Straße",
//     "STRASSE" and "strasse" are one query, and so are "ΣΊΣΥΦΟΣ" and
//     "σίσυφος".
//   - Invalid UTF-8 bytes become U+FFFD.
//
// Unicode normalization forms are not applied: a query typed with a
// combining accent and the same query precomposed stay different, as most
// keyboards produce the precomposed form. Normalize is idempotent, and for a
// query that is already normalized ASCII it returns the query itself without
// allocating.
func Normalize(query string) string {
	if s, ok := normalizeASCII(query); ok {
		return s
	}
	q := strings.ToValidUTF8(query, string(utf8.RuneError))
	q = strings.Join(strings.FieldsFunc(q, unicode.IsSpace), " ")
	// A Caser holds state, so each call gets its own; folding never
	// creates white space, so the result stays collapsed.
	return cases.Fold().String(q)
}

// normalizeASCII normalizes a query made of ASCII bytes only; ok is false if
// the query has other bytes.
func normalizeASCII(q string) (s string, ok bool) {
	clean := true // no upper case, no white space but single inner spaces
	prevSpace := true
	for i := range len(q) {
		c := q[i]
		switch {
		case c >= utf8.RuneSelf:
			return "", false
		case isASCIISpace(c):
			if c != ' ' || prevSpace {
				clean = false
			}
			prevSpace = true
		case 'A' <= c && c <= 'Z':
			clean = false
			prevSpace = false
		default:
			prevSpace = false
		}
	}
	if clean && !prevSpace || q == "" {
		return q, true
	}
	var b strings.Builder
	b.Grow(len(q))
	pending := false
	for i := range len(q) {
		c := q[i]
		if isASCIISpace(c) {
			pending = b.Len() > 0
			continue
		}
		if pending {
			b.WriteByte(' ')
			pending = false
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String(), true
}

// isASCIISpace reports the ASCII bytes that unicode.IsSpace accepts.
func isASCIISpace(c byte) bool {
	return c == ' ' || ('\t' <= c && c <= '\r')
}
