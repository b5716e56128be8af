package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrSchemaMismatch means that a table of the contract exists with another engine, or lacks
// a column or has it with another type. Migrate changes no existing table; fix it by hand.
var ErrSchemaMismatch = errors.New("clickhouse sink: existing table differs from the schema")

// Migrate creates the database and the tables of the contract that do not exist yet, then
// checks the engine and columns of every table. It returns what it created, e.g.
// "table rankstream.topk_history (TTL 90 days)"; nothing when the schema was already there.
// Running it again, or from two processes at once, is harmless.
func (s *Sink) Migrate(ctx context.Context) ([]string, error) {
	var raw string
	if err := s.conn.QueryRow(ctx, "SELECT version()").Scan(&raw); err != nil {
		return nil, fmt.Errorf("clickhouse sink: migrate: server version: %w", err)
	}
	v, err := parseVersion(raw)
	if err != nil {
		return nil, fmt.Errorf("clickhouse sink: migrate: %w", err)
	}
	ttlDays := 0
	if v.hasTTL() {
		ttlDays = s.cfg.retentionDays
	}

	var created []string
	var dbs uint64
	if err := s.conn.QueryRow(ctx, "SELECT count() FROM system.databases WHERE name = ?", s.database).Scan(&dbs); err != nil {
		return nil, fmt.Errorf("clickhouse sink: migrate: look for database %s: %w", s.database, err)
	}
	if dbs == 0 {
		if err := s.conn.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+s.database); err != nil {
			return nil, fmt.Errorf("clickhouse sink: migrate: create database %s: %w", s.database, err)
		}
		created = append(created, "database "+s.database)
	}

	engines, err := s.tableEngines(ctx)
	if err != nil {
		return created, err
	}
	for _, t := range tables {
		if _, ok := engines[t.name]; ok {
			continue
		}
		ddl := t.createSQL(s.database, ttlDays)
		if err := s.conn.Exec(ctx, ddl); err != nil {
			return created, fmt.Errorf("clickhouse sink: migrate: %s: %w", ddl, err)
		}
		created = append(created, fmt.Sprintf("table %s.%s%s", s.database, t.name, ttlNote(t, ttlDays, v)))
	}
	// Read again: a table created meanwhile by another process is checked too.
	if engines, err = s.tableEngines(ctx); err != nil {
		return created, err
	}
	for _, t := range tables {
		if err := s.checkTable(ctx, t, engines[t.name]); err != nil {
			return created, err
		}
	}
	return created, nil
}

// ttlNote says how long the table keeps its rows, for Migrate's report.
func ttlNote(t *table, ttlDays int, v serverVersion) string {
	switch {
	case t.ttlColumn == "":
		return ""
	case !v.hasTTL():
		return fmt.Sprintf(" (no TTL: server %s predates TTL)", v)
	case ttlDays == 0:
		return " (no TTL: retention 0 keeps rows forever)"
	}
	return fmt.Sprintf(" (TTL %d days)", ttlDays)
}

// tableEngines returns the engine of every table in the sink's database.
func (s *Sink) tableEngines(ctx context.Context) (map[string]string, error) {
	var rows []struct {
		Name   string `ch:"name"`
		Engine string `ch:"engine"`
	}
	if err := s.conn.Select(ctx, &rows, "SELECT name, engine FROM system.tables WHERE database = ?", s.database); err != nil {
		return nil, fmt.Errorf("clickhouse sink: migrate: list tables of %s: %w", s.database, err)
	}
	engines := make(map[string]string, len(rows))
	for _, r := range rows {
		engines[r.Name] = r.Engine
	}
	return engines, nil
}

// checkTable checks that an existing table has a ReplacingMergeTree engine (replicated or
// not) and every column of the schema with its type. Extra columns are allowed.
func (s *Sink) checkTable(ctx context.Context, t *table, engine string) error {
	if !strings.HasSuffix(engine, "ReplacingMergeTree") {
		return fmt.Errorf("%w: %s.%s has engine %s, want ReplacingMergeTree", ErrSchemaMismatch, s.database, t.name, engine)
	}
	var rows []struct {
		Name string `ch:"name"`
		Type string `ch:"type"`
	}
	if err := s.conn.Select(ctx, &rows, "SELECT name, type FROM system.columns WHERE database = ? AND table = ?", s.database, t.name); err != nil {
		return fmt.Errorf("clickhouse sink: migrate: columns of %s.%s: %w", s.database, t.name, err)
	}
	have := make(map[string]string, len(rows))
	for _, r := range rows {
		have[r.Name] = r.Type
	}
	var problems []string
	for _, c := range t.columns {
		switch typ, ok := have[c.name]; {
		case !ok:
			problems = append(problems, "no column "+c.name)
		case typ != c.typ:
			problems = append(problems, fmt.Sprintf("column %s is %s, want %s", c.name, typ, c.typ))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s.%s: %s", ErrSchemaMismatch, s.database, t.name, strings.Join(problems, "; "))
	}
	return nil
}
