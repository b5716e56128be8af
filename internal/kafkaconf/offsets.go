package kafkaconf

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lovoo/goka"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// ResetOffsets moves a consumer group's committed offsets on topic: to the start of each
// partition when at is zero, otherwise to the first record whose timestamp is at or after
// at. The group must have no running members (stop its processors first). It returns the
// offsets committed.
func (c Config) ResetOffsets(ctx context.Context, group goka.Group, topic goka.Stream, at time.Time) (kadm.Offsets, error) {
	cl, err := c.Client()
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)

	var groups kadm.DescribedGroups
	err = retry(ctx, func() error {
		var err error
		if groups, err = adm.DescribeGroups(ctx, string(group)); err == nil {
			err = groups.Error()
		}
		if errors.Is(err, kerr.GroupIDNotFound) {
			return nil // a group that never committed: nothing runs in it
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("kafka: describe group %s: %w", group, err)
	}
	if g, ok := groups[string(group)]; ok && len(g.Members) > 0 {
		return nil, fmt.Errorf("kafka: group %s has %d running members; stop them before resetting its offsets", group, len(g.Members))
	}
	var listed kadm.ListedOffsets
	if at.IsZero() {
		listed, err = adm.ListStartOffsets(ctx, string(topic))
	} else {
		listed, err = adm.ListOffsetsAfterMilli(ctx, at.UnixMilli(), string(topic))
	}
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("kafka: list offsets of %s: %w", topic, err)
	}
	offsets := listed.Offsets()
	err = retry(ctx, func() error {
		resp, err := adm.CommitOffsets(ctx, string(group), offsets)
		if err == nil {
			err = resp.Error()
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("kafka: commit offsets of group %s: %w", group, err)
	}
	return offsets, nil
}
