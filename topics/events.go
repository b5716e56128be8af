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
