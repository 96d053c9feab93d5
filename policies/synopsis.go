package policies

// Synopsis declares a range-count synopsis on an ordinal column.
type Synopsis struct{}

// checkSynopses validates a dataset's synopses.
func (c *checker) checkSynopses(dp string, d *Dataset) {
	if len(d.Synopses) > 0 {
		c.add(dp+".synopses", "synopses are not supported by this version yet")
	}
}
