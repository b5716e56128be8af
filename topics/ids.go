package topics

// CheckID applies the rules of every input's user and member ids to id (the read path
// validates ids in URLs with it): 1..MaxIDBytes of valid UTF-8 without spaces, control
// characters or ':'. field names the id in the error, an *InvalidError.
func CheckID(field, id string) error { return checkID(field, id) }

// CheckRegion applies the rules of a step report's region to a non-empty region: at most
// MaxRegionBytes of valid UTF-8 without spaces, control characters or ':'.
func CheckRegion(region string) error { return checkToken("region", region, MaxRegionBytes) }

// CheckScope applies the rules of a score op's scope to a non-empty scope: those of a region
// (at most MaxRegionBytes of valid UTF-8 without spaces, control characters or ':').
func CheckScope(scope string) error { return checkToken("scope", scope, MaxRegionBytes) }
