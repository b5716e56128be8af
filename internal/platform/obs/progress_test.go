package obs

import (
	"testing"
	"time"
)

func TestProgressBar(t *testing.T) {
	for _, c := range []struct {
		done, total int64
		elapsed     time.Duration
		want        string
	}{
		{0, 1000, 0, "[..............................]   0% 0/1000 records  0/s  ETA ?  "},
		{250, 1000, 5 * time.Second, "[#######.......................]  25% 250/1000 records  50/s  ETA 15s  "},
		{1000, 1000, 10 * time.Second, "[##############################] 100% 1000/1000 records  100/s  ETA 0s  "},
		{0, 0, time.Second, "[##############################] 100% 0/0 records  0/s  ETA ?  "},
	} {
		if got := ProgressOf(c.done, c.total, c.elapsed).Bar(); got != c.want {
			t.Errorf("progress %d/%d after %s:\n got %q\nwant %q", c.done, c.total, c.elapsed, got, c.want)
		}
	}
}
