package policies

// Secrets is a Blowfish secret graph G over the tuple domain: which changes
// of one tuple must stay indistinguishable. In the file it is either a word
// (full, attribute) or a map (partition: {...}, distance: {...}).
type Secrets struct {
	// Kind is one of the Secrets* constants.
	Kind string `yaml:"-"`
	// Columns are the partition columns (partition: {columns: [...]}): two
	// tuples are a secret pair iff they agree on every one of them.
	Columns []string `yaml:"-"`
	// Column is the bucketed partition column or the distance column
	// (lower-case).
	Column string `yaml:"-"`
	// Theta is the distance threshold θ of distance secrets: values of
	// Column at most θ apart are a secret pair.
	Theta float64 `yaml:"-"`
}

// Secret graph kinds.
const (
	SecretsFull      = "full"      // complete graph: plain DP on tuples
	SecretsAttribute = "attribute" // change one attribute of a tuple
	SecretsPartition = "partition" // change within a cell of a partition
	SecretsDistance  = "distance"  // change one ordinal column by at most θ
)

// Constraint is one published exact count (or family of counts).
type Constraint struct{}

// Readings of constraints under model blowfish.
const (
	CompensationAny         = "any"          // He et al. Def. 4.1 as written (default)
	CompensationSecretsOnly = "secrets-only" // every change is a secret pair (weaker guarantee)
)

// checkNoModelFields refuses blowfish/induced/ddp fields on a dp dataset:
// a DBA who declares constraints must not silently get plain DP.
func (c *checker) checkNoModelFields(dp string, d *Dataset) {
	if d.Secrets != nil {
		c.add(dp+".secrets", "secrets need model: blowfish")
	}
	if len(d.Constraints) > 0 {
		c.add(dp+".constraints", "published constraints need model: induced or model: blowfish; under dp they would be ignored")
	}
	if d.Compensation != "" {
		c.add(dp+".compensation", "compensation needs model: blowfish")
	}
	if d.Dependence != nil {
		c.add(dp+".dependence", "dependence needs model: ddp")
	}
}

// checkBlowfish validates a blowfish or induced dataset.
func (c *checker) checkBlowfish(dp string, d *Dataset) {
	c.add(dp+".model", "model %s is not supported by this version yet; use dp", d.Model)
}
