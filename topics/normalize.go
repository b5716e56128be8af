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
//   - Cherokee folds to its capital letters, as Unicode's case folding says
//     (x/text lower-cases it instead, see foldCherokee).
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
	q = cases.Fold().String(q)
	if strings.ContainsFunc(q, isCherokeeSmall) {
		q = strings.Map(foldCherokee, q)
	}
	return q
}

// Cherokee's small letters fold to its capital letters (Unicode's
// CaseFolding.txt: U+AB70–U+ABBF to U+13A0–U+13EF, U+13F8–U+13FD to
// U+13F0–U+13F5), but golang.org/x/text/cases.Fold (v0.43.0) lower-cases
// them, mapping each capital to its small letter and back, which is not
// idempotent. foldCherokee restores the Unicode folding.
func foldCherokee(r rune) rune {
	if isCherokeeSmall(r) {
		if r >= 0xAB70 {
			return r - 0xAB70 + 0x13A0
		}
		return r - 8
	}
	return r
}

func isCherokeeSmall(r rune) bool {
	return (0xAB70 <= r && r <= 0xABBF) || (0x13F8 <= r && r <= 0x13FD)
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
