package catalog

// BlankRelations is the derived-table rewrite alone, for the external
// tests that run its output on a real server.
var BlankRelations = blankRelations
