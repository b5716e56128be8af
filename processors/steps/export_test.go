package steps

// ShuffleKeepingFirsts is shuffleKeepingFirsts, for the tests of package steps_test.
var ShuffleKeepingFirsts = shuffleKeepingFirsts
