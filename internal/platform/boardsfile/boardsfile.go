// Package boardsfile reads the boards file (--boards FILE, YAML) of rankstream process, serve
// and dev: it maps the YAML onto board.Spec, lets board check every rule, and names
// the line, column and field of the first fault. It is a package of its own because
// board, which holds the rules, must stay on the standard library, and the Kafka
// contract (topics) is no place for a configuration file; only the commands' wiring
// (internal/service/app, cmd) reads a boards file, the processors and sinks take the checked
// []*board.Board.
//
// It imports board and the YAML library; never Kafka, a store's driver, a processor
// or a sink.
package boardsfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rankstream/rankstream/board"
)

// Error is a boards file rejected: where, which field, and why.
type Error struct {
	File         string
	Line, Column int    // 0 when the fault has no place (an empty file)
	Field        string // e.g. "boards[1].seasons[0].end"; "" for a syntax error
	Err          error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "boards file %s", e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	return b.String() + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Load reads and checks the boards file at path.
func Load(path string) ([]*board.Board, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("boards file: %w", err)
	}
	return Parse(path, data)
}

// Parse checks the content of a boards file; name names it in errors. The file is one YAML
// document:
//
//	boards:
//	  - name: arena
//	    periods: [h, d, w, m, season, total]
//	    tz: Asia/Shanghai
//	    seasons: [{name: s1, start: 2026-09-01, end: 2026-12-01}]
//	    retention: 30d
//	    shards: 16
//	    max_incr: 1000                       # fair play (optional)
//	    max_rate: {ops: 60, points: 5000}    # per member and minute of event time
//
// Unknown keys, keys given twice, anchors and aliases, and values of the wrong shape are
// rejected like the rules of board (board.NewBoards).
func Parse(name string, data []byte) ([]*board.Board, error) {
	p := parser{file: name, at: map[string]*yaml.Node{}}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: name, Field: "boards", Err: fmt.Errorf("%w: the file is empty", board.ErrMissing)}
		}
		return nil, &Error{File: name, Err: err}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, p.fail(&extra, "", board.ErrInvalid, "one YAML document only")
	}
	specs, err := p.root(doc.Content[0])
	if err != nil {
		return nil, err
	}
	boards, err := board.NewBoards(specs)
	if err != nil {
		var fe *board.FieldError
		if !errors.As(err, &fe) {
			return nil, fmt.Errorf("boards file %s: %w", name, err)
		}
		n := p.node(fe.Field)
		return nil, &Error{File: name, Line: n.Line, Column: n.Column, Field: fe.Field, Err: fe.Err}
	}
	return boards, nil
}

// parser remembers the node of every field path it mapped, to place the rules' errors.
type parser struct {
	file string
	at   map[string]*yaml.Node
}

// node returns the node of field, or of the closest enclosing field that was present.
func (p *parser) node(field string) *yaml.Node {
	for {
		if n, ok := p.at[field]; ok {
			return n
		}
		i := strings.LastIndexAny(field, ".[")
		if i < 0 {
			return p.at[""]
		}
		field = field[:i]
	}
}

func (p *parser) fail(n *yaml.Node, field string, err error, format string, args ...any) *Error {
	return &Error{File: p.file, Line: n.Line, Column: n.Column, Field: field, Err: fmt.Errorf("%w: "+format, append([]any{err}, args...)...)}
}

// mapping returns the value nodes of a mapping by key, rejecting unknown and repeated keys.
func (p *parser) mapping(n *yaml.Node, field string, known ...string) (map[string]*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.fail(n, field, board.ErrInvalid, "want a mapping of %s", strings.Join(known, ", "))
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		sub := join(field, k.Value)
		switch {
		case k.Kind != yaml.ScalarNode || !slices.Contains(known, k.Value):
			return nil, p.fail(k, sub, board.ErrInvalid, "unknown key %q (known: %s)", k.Value, strings.Join(known, ", "))
		case out[k.Value] != nil:
			return nil, p.fail(k, sub, board.ErrDuplicate, "key %q twice", k.Value)
		case v.Kind == yaml.AliasNode || v.Anchor != "":
			return nil, p.fail(v, sub, board.ErrInvalid, "anchors and aliases are not supported")
		}
		out[k.Value] = v
		p.at[sub] = v
	}
	return out, nil
}

func (p *parser) sequence(n *yaml.Node, field string) ([]*yaml.Node, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, p.fail(n, field, board.ErrInvalid, "want a list")
	}
	for i, c := range n.Content {
		if c.Kind == yaml.AliasNode || c.Anchor != "" {
			return nil, p.fail(c, field, board.ErrInvalid, "anchors and aliases are not supported")
		}
		p.at[field+"["+strconv.Itoa(i)+"]"] = c
	}
	return n.Content, nil
}

// scalar returns the text of m[key], "" when absent.
func (p *parser) scalar(m map[string]*yaml.Node, key, field string) (string, error) {
	n := m[key]
	if n == nil {
		return "", nil
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", p.fail(n, join(field, key), board.ErrInvalid, "want a single value")
	}
	return n.Value, nil
}

// scalars sets dst[i] to the text of m[keys[i]], in order.
func (p *parser) scalars(m map[string]*yaml.Node, field string, keys []string, dst ...*string) error {
	for i, key := range keys {
		v, err := p.scalar(m, key, field)
		if err != nil {
			return err
		}
		*dst[i] = v
	}
	return nil
}

func (p *parser) root(root *yaml.Node) ([]board.Spec, error) {
	p.at[""] = root
	top, err := p.mapping(root, "", "boards")
	if err != nil {
		return nil, err
	}
	if top["boards"] == nil {
		return nil, p.fail(root, "boards", board.ErrMissing, "no boards: list")
	}
	list, err := p.sequence(top["boards"], "boards")
	if err != nil {
		return nil, err
	}
	specs := make([]board.Spec, 0, len(list))
	for i, n := range list {
		s, err := p.board(n, "boards["+strconv.Itoa(i)+"]")
		if err != nil {
			return nil, err
		}
		specs = append(specs, s)
	}
	return specs, nil
}

func (p *parser) board(n *yaml.Node, field string) (board.Spec, error) {
	var s board.Spec
	m, err := p.mapping(n, field, "name", "periods", "tz", "seasons", "retention", "shards", "max_incr", "max_rate")
	if err != nil {
		return s, err
	}
	if err := p.scalars(m, field, []string{"name", "tz", "retention", "shards", "max_incr"}, &s.Name, &s.TZ, &s.Retention, &s.Shards, &s.MaxIncr); err != nil {
		return s, err
	}
	if m["max_rate"] != nil {
		rf := field + ".max_rate"
		rm, err := p.mapping(m["max_rate"], rf, "ops", "points")
		if err != nil {
			return s, err
		}
		if err := p.scalars(rm, rf, []string{"ops", "points"}, &s.MaxRateOps, &s.MaxRatePoints); err != nil {
			return s, err
		}
		s.HasMaxRate = true
	}
	if m["periods"] != nil {
		list, err := p.sequence(m["periods"], field+".periods")
		if err != nil {
			return s, err
		}
		for i, c := range list {
			v, err := p.scalar(map[string]*yaml.Node{"": c}, "", field+".periods["+strconv.Itoa(i)+"]")
			if err != nil {
				return s, err
			}
			s.Periods = append(s.Periods, v)
		}
	}
	if m["seasons"] != nil {
		list, err := p.sequence(m["seasons"], field+".seasons")
		if err != nil {
			return s, err
		}
		for i, c := range list {
			sf := field + ".seasons[" + strconv.Itoa(i) + "]"
			sm, err := p.mapping(c, sf, "name", "start", "end")
			if err != nil {
				return s, err
			}
			var ss board.SeasonSpec
			if err := p.scalars(sm, sf, []string{"name", "start", "end"}, &ss.Name, &ss.Start, &ss.End); err != nil {
				return s, err
			}
			s.Seasons = append(s.Seasons, ss)
		}
	}
	return s, nil
}

func join(field, key string) string {
	if field == "" || key == "" {
		return field + key
	}
	return field + "." + key
}
