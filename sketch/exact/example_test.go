package exact_test

import (
	"fmt"
	"time"

	"github.com/rankstream/rankstream/sketch/exact"
)

// A one-minute window sliding by ten seconds: events wait until the
// watermark passes them, and leave a minute later.
func Example() {
	c, err := exact.New(time.Minute, 10*time.Second)
	if err != nil {
		panic(err)
	}
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	c.Advance(t0)
	c.Add("black friday", t0.Add(1*time.Second))
	c.Add("snow storm", t0.Add(2*time.Second))
	c.Add("black friday", t0.Add(15*time.Second))
	c.Advance(t0.Add(20 * time.Second))
	fmt.Println(c.Top(10), c.Stats().Events)
	c.Advance(t0.Add(70 * time.Second))
	fmt.Println(c.Top(10), c.Count("black friday"))
	// Output:
	// [{black friday 2} {snow storm 1}] 3
	// [{black friday 1}] 1
}
