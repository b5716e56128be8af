package gateway

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
)

// APIKey is one accepted key: a name (for logs and metrics) and the SHA-256 of the secret.
type APIKey struct {
	Name string
	Hash [sha256.Size]byte
}

// KeyOf returns the APIKey of a secret under name (e.g. the key `rankstream dev` prints).
func KeyOf(name, secret string) APIKey {
	return APIKey{Name: name, Hash: sha256.Sum256([]byte(secret))}
}

// keyName is what a key's name may be: it becomes a metric label and a log field.
var keyName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// ParseKeys reads a keys file: one key a line, `name sha256-hex` (the SHA-256 of the secret in
// lower- or upper-case hex, e.g. from `printf %s "$KEY" | sha256sum`); blank lines and lines
// starting with # are ignored. Names are unique, 1-64 of [A-Za-z0-9._-]. At least one key.
func ParseKeys(r io.Reader) ([]APIKey, error) {
	var keys []APIKey
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("api keys: line %d: want `name sha256-hex`, got %d fields", n, len(f))
		}
		if !keyName.MatchString(f[0]) {
			return nil, fmt.Errorf("api keys: line %d: name %q: want 1-64 of A-Z a-z 0-9 . _ -", n, f[0])
		}
		if seen[f[0]] {
			return nil, fmt.Errorf("api keys: line %d: name %q given twice", n, f[0])
		}
		h, err := hex.DecodeString(f[1])
		if err != nil || len(h) != sha256.Size {
			return nil, fmt.Errorf("api keys: line %d (%s): want the SHA-256 of the key as 64 hex digits", n, f[0])
		}
		seen[f[0]] = true
		keys = append(keys, APIKey{Name: f[0], Hash: [sha256.Size]byte(h)})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("api keys: %w", err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("api keys: no key")
	}
	return keys, nil
}

// ReadKeys reads the keys file at path (see ParseKeys).
func ReadKeys(path string) ([]APIKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("api keys: %w", err)
	}
	defer f.Close()
	keys, err := ParseKeys(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return keys, nil
}

// Keys is the set of accepted keys, replaced as a whole by Set (a reload) while requests are
// checked against it. It is safe for concurrent use.
type Keys struct{ set atomic.Pointer[[]APIKey] }

// NewKeys returns a set holding keys.
func NewKeys(keys []APIKey) *Keys {
	k := new(Keys)
	k.Set(keys)
	return k
}

// Set replaces the accepted keys.
func (k *Keys) Set(keys []APIKey) { k.set.Store(&keys) }

// check returns the name of the key whose hash the secret has. It compares the secret's hash
// with every key's in constant time, without stopping at a match, so the time taken tells
// nothing about which key matched or how close a guess came.
func (k *Keys) check(secret string) (name string, ok bool) {
	if secret == "" {
		return "", false
	}
	h := sha256.Sum256([]byte(secret))
	for _, key := range *k.set.Load() {
		if subtle.ConstantTimeCompare(h[:], key.Hash[:]) == 1 {
			name, ok = key.Name, true
		}
	}
	return name, ok
}

// bearer returns the key of an `Authorization: Bearer <key>` header ("" when there is none;
// the scheme is case-insensitive, RFC 6750).
func bearer(r *http.Request) string {
	scheme, key, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(key)
}
