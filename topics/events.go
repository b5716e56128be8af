package topics

// StepReport is a device's report of a user's step count so far on the user's local day
// (topic steps.reported, key = user id).
type StepReport struct {
	RequestID string    `json:"request_id"`
	UserID    string    `json:"user_id"`
	DeviceID  string    `json:"device_id,omitempty"`
	Steps     int64     `json:"steps"`
	TS        Timestamp `json:"ts"`
	// TZ is an IANA zone name; it fixes the user's calendar day.
	TZ     string `json:"tz"`
	Region string `json:"region,omitempty"`
}

// SearchQuery is one search (topic search.queries, key = anything, usually the user id).
type SearchQuery struct {
	Query  string    `json:"query"`
	TS     Timestamp `json:"ts"`
	UserID string    `json:"user_id,omitempty"`
}

// ScoreOp is one op on a member's score on a declared board (topic scores.updated, key =
// member id). Score is 0 for a delete and the operator ops (ban, unban, release), which may
// name the board AllBoards and carry By (required) and Reason for the audit.
type ScoreOp struct {
	RequestID string    `json:"request_id"`
	Board     string    `json:"board"`
	Member    string    `json:"member"`
	Op        string    `json:"op"`
	Score     int64     `json:"score"`
	TS        Timestamp `json:"ts"`
	// Scope is a region or any custom scope the member is also ranked in besides the global
	// board; "" for none.
	Scope string `json:"scope,omitempty"`
	// By is who issued an operator op (a user or an automation's name); Reason says why.
	By     string `json:"by,omitempty"`
	Reason string `json:"reason,omitempty"`
}
