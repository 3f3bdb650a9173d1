package gate

// VerdictOf is verdict, for the external tests.
var VerdictOf = verdict
