package policies

// Dependence is the declared dependence between records of a ddp dataset.
type Dependence struct{}

// checkDDP validates a ddp dataset.
func (c *checker) checkDDP(dp string, d *Dataset) {
	c.add(dp+".model", "model %s is not supported by this version yet; use dp", d.Model)
}
