package topics

import (
	"testing"
	"unicode"
)

// TestASCIIFastPathsMatchTheUnicodeRules: checkToken and checkText judge ASCII without the
// Unicode tables; for every ASCII character they must decide as the rules written with the
// tables do.
func TestASCIIFastPathsMatchTheUnicodeRules(t *testing.T) {
	for r := rune(0); r < 0x80; r++ {
		s := "a" + string(r) + "b"
		badToken := r == ':' || unicode.IsSpace(r) || unicode.In(r, unicode.Cc, unicode.Cf)
		if err := checkToken("id", s, MaxIDBytes); (err != nil) != badToken {
			t.Errorf("checkToken(%q) = %v, want an error: %v", s, err, badToken)
		}
		badText := unicode.Is(unicode.Cc, r) && !unicode.IsSpace(r) || unicode.Is(unicode.Cf, r)
		if err := checkText("query", s); (err != nil) != badText {
			t.Errorf("checkText(%q) = %v, want an error: %v", s, err, badText)
		}
	}
}
