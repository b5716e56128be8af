package rank

// Redis key names of the contract (see README). Ids are validated by package topics to
// contain no ':' or spaces, so they are embedded unescaped.

// StepKey is the String holding a user's merged steps for a local day.
func StepKey(d Day, user string) string { return "step:" + d.String() + ":" + user }

// StepsGlobalBoard is the daily steps board of every user.
func StepsGlobalBoard(d Day) string { return "rank:steps:global:" + d.String() }

// StepsRegionBoard is the daily steps board of one region.
func StepsRegionBoard(region string, d Day) string {
	return "rank:steps:region:" + region + ":" + d.String()
}

// StepUpdate is a user's merged state for one local day, as the steps processor hands it to
// the serving store. Every field is absolute, so writing it again is harmless.
type StepUpdate struct {
	User      string
	Day       Day
	Steps     int64
	ReachedMs int64
	Region    string
	// Left are the regions the user was ranked in on this day besides Region: the user is
	// removed from their boards (again) with every update, which a redelivery needs after a
	// crash that came between the state's write and the boards' write.
	Left []string
}

// HotKey is the String holding the JSON of a Top-K stream's latest snapshot, e.g.
// hot:search:latest. Stream names hold no ':', braces or spaces (topics checks them).
func HotKey(stream string) string { return "hot:" + stream + ":latest" }

// HotZSetKey is the ZSET mirror of HotKey (item → count), for clients that prefer ZREVRANGE.
// Its hash tag is HotKey, so in a Redis Cluster both keys live in one slot and a script can
// replace them together.
func HotZSetKey(stream string) string { return "{" + HotKey(stream) + "}:z" }
