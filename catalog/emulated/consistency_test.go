package emulated

import (
	"testing"

	"github.com/ddp-proxy/ddp-proxy/catalog"
)

// TestEmulatedMySQLTablesAllowed: every information_schema table the
// emulation has is on catalog's allow list, which the session checks
// before the emulation runs; a table added to tableDefs alone would be
// refused.
func TestEmulatedMySQLTablesAllowed(t *testing.T) {
	for _, d := range tableDefs {
		if !catalog.MySQLInfoSchemaAllowed(d.name) {
			t.Errorf("information_schema.%s is emulated but not on catalog's allow list (catalog/mysql.go mysqlInfoSchemaTables)", d.name)
		}
	}
}
