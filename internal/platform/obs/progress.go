package obs

import (
	"fmt"
	"strings"
	"time"
)

// Progress is how far a long job over records is (a replay catching up, the read of a group
// table): Done records of Total after some time, at Rate.
type Progress struct {
	Done, Total int64
	Rate        float64       // records a second since the start
	ETA         time.Duration // at that rate; 0 when unknown
}

// ProgressOf returns the progress of done records of total after elapsed.
func ProgressOf(done, total int64, elapsed time.Duration) Progress {
	p := Progress{Done: done, Total: total}
	if s := elapsed.Seconds(); s > 0 && done > 0 {
		p.Rate = float64(done) / s
		p.ETA = time.Duration(float64(total-done) / p.Rate * float64(time.Second))
	}
	return p
}

// Bar renders p as one terminal line: a 30-cell bar, the share, the counts, rate and ETA.
func (p Progress) Bar() string {
	const cells = 30
	share := 1.0
	if p.Total > 0 {
		share = float64(p.Done) / float64(p.Total)
	}
	full := int(share * cells)
	eta := "?"
	if p.Rate > 0 {
		eta = p.ETA.Round(time.Second).String()
	}
	return fmt.Sprintf("[%s%s] %3.0f%% %d/%d records  %.0f/s  ETA %s  ",
		strings.Repeat("#", full), strings.Repeat(".", cells-full), share*100, p.Done, p.Total, p.Rate, eta)
}
