package exprtype

// LikeMatch reports whether s matches the SQL LIKE pattern (% and _,
// backslash escapes), case-insensitively with fold. It is the proxy's one
// LIKE outside the backend: post-processing and the MySQL front end's
// SHOW ... LIKE both use it.
func LikeMatch(s, pattern string, fold bool) bool { return likeMatch(s, pattern, fold) }
