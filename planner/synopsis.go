package planner

// SynopsisPlan says that a range count is answered from a released
// synopsis instead of a fresh release.
type SynopsisPlan struct{}

// planSynopsis decides whether the private plan being built can be
// answered from a synopsis the policy declares.
func (b *builder) planSynopsis() error { return nil }
