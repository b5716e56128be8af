package board

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
