package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/segmentio/encoding/json"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/topics"
)

// BanConfig is an operator op of `rankstream ban`: ban, unban or release a member on one
// board or on every board (topics.AllBoards).
type BanConfig struct {
	Kafka  kafka.Config
	Op     string // topics.OpBan, OpUnban or OpRelease
	Board  string
	Member string
	// By is who issues it (the audit's who), Reason why.
	By, Reason string
}

// Ban produces cfg's op onto scores.updated, keyed by the member (so it lands in the
// partition of the member's other ops, after them), with ts and record time now and a new
// request id, once it passed the checks the scores processor applies to every record
// (topics.DecodeScoreOp; whether the board is declared is the processor's to check: an
// undeclared one goes to the dead-letter topic). It returns the op as sent.
func Ban(ctx context.Context, cfg BanConfig, now time.Time) (*topics.ScoreOp, error) {
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, fmt.Errorf("ban: request id: %w", err)
	}
	op := topics.ScoreOp{RequestID: cfg.Op + "-" + now.UTC().Format("20060102T150405.000Z") + "-" + hex.EncodeToString(id[:]),
		Board: cfg.Board, Member: cfg.Member, Op: cfg.Op, TS: topics.Timestamp{Time: now}, By: cfg.By, Reason: cfg.Reason}
	value, err := json.Marshal(op)
	if err != nil {
		return nil, fmt.Errorf("ban: %w", err)
	}
	if _, err := topics.DecodeScoreOp(cfg.Member, value, now, topics.DefaultScoreRules); err != nil {
		return nil, fmt.Errorf("ban: %w", err)
	}
	cl, err := kafka.NewClient(cfg.Kafka)
	if err != nil {
		return nil, fmt.Errorf("ban: %w", err)
	}
	defer cl.Close()
	rec := &kgo.Record{Topic: string(cfg.Kafka.Names.Stream(topics.ScoresUpdated)), Key: []byte(cfg.Member), Value: value, Timestamp: now}
	if err := cl.ProduceSync(ctx, rec); err != nil {
		return nil, fmt.Errorf("ban: %w", err)
	}
	return &op, nil
}
