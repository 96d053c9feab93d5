package catalog

import "strings"

// statistics are catalog columns, of either dialect, that hold row counts,
// sizes, value statistics or activity counters of tables: facts about
// private data. A pass-through statement that names one, or reaches one
// implicitly (*, USING, NATURAL, whole-row values), is refused or gets
// NULL in its place.
var statistics = map[string]bool{
	// PostgreSQL pg_class and pg_stat_*.
	"reltuples": true, "relpages": true, "relallvisible": true, "relallfrozen": true,
	"n_live_tup": true, "n_dead_tup": true, "n_tup_ins": true, "n_tup_upd": true, "n_tup_del": true,
	"n_tup_hot_upd": true, "n_tup_newpage_upd": true,
	"n_mod_since_analyze": true, "n_ins_since_vacuum": true, "seq_tup_read": true, "idx_tup_fetch": true,
	"seq_scan": true, "idx_scan": true, "idx_tup_read": true, "heap_blks_read": true, "heap_blks_hit": true,
	// pg_stats / pg_statistic.
	"most_common_vals": true, "most_common_freqs": true, "histogram_bounds": true, "n_distinct": true,
	"null_frac": true, "avg_width": true, "correlation": true,
	"most_common_elems": true, "most_common_elem_freqs": true, "elem_count_histogram": true,
	// pg_sequences.last_value counts the rows inserted through a sequence.
	"last_value": true,
	// Transaction-counter positions (pg_class, pg_database): they advance
	// with every write of every session.
	"relfrozenxid": true, "relminmxid": true, "datfrozenxid": true, "datminmxid": true,
	// MySQL / MariaDB information_schema.TABLES and STATISTICS:
	// AUTO_INCREMENT counts rows ever inserted, CARDINALITY distinct values,
	// CHECKSUM and UPDATE_TIME/CHECK_TIME tell when and how data changed.
	"table_rows": true, "data_length": true, "avg_row_length": true, "index_length": true, "data_free": true,
	"max_data_length": true, "auto_increment": true, "cardinality": true, "checksum": true,
	"update_time": true, "check_time": true,
	// MariaDB's TABLES.MAX_INDEX_LENGTH, like MAX_DATA_LENGTH, is a size.
	"max_index_length": true,
	// InnoDB persistent statistics.
	"num_rows": true, "clust_index_size": true, "other_index_size": true, "modified_counter": true,
}

// IsStatistics reports whether a catalog column name (any case) is a
// statistics column.
func IsStatistics(column string) bool { return statistics[strings.ToLower(column)] }

// StatisticsColumns returns the lower-case names of every statistics
// column, for checks that scan a whole statement.
func StatisticsColumns() []string {
	out := make([]string, 0, len(statistics))
	for c := range statistics {
		out = append(out, c)
	}
	return out
}
