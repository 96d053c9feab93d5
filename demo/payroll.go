package demo

import (
	"math"
	"math/rand/v2"
)

// Shape of the synthetic payroll (the payroll dataset: Blowfish distance
// secrets on salary and a range synopsis).
const (
	numEmployees = 4000
	// Salaries are yearly USD, set in steps of salaryStep as pay scales
	// usually are, between salaryMin and salaryMax (the payroll system's
	// documented cap is salaryCap, the top of the declared domain).
	salaryStep = 500
	salaryMin  = 18000
	salaryMax  = 99000
	salaryCap  = 99999
)

const payrollSeed1, payrollSeed2 = 1099, 2014

// departments and their median salaries.
var departments = []struct {
	name   string
	median float64
}{
	{"engineering", 72000}, {"sales", 51000}, {"operations", 43000}, {"support", 36000}, {"research", 64000},
}

type employee struct {
	dept   string
	salary int64
}

// generatePayroll draws the employees: log-normal salaries around the
// department median, rounded to the pay step and cut to [salaryMin,
// salaryMax]. Deterministic: the same rows on every build.
func generatePayroll() []employee {
	r := rand.New(rand.NewPCG(payrollSeed1, payrollSeed2))
	out := make([]employee, numEmployees)
	for i := range out {
		d := departments[r.IntN(len(departments))]
		s := d.median * math.Exp(0.28*r.NormFloat64())
		v := int64(math.Round(s/salaryStep)) * salaryStep
		out[i] = employee{dept: d.name, salary: min(max(v, salaryMin), salaryMax)}
	}
	return out
}

func payrollTable(es []employee) table {
	return table{
		name: "salaries",
		create: "CREATE TABLE salaries (employee_id INTEGER PRIMARY KEY, department TEXT NOT NULL, " +
			"salary INTEGER NOT NULL)",
		cols: 3,
		rows: len(es),
		row: func(i int, dst []any) {
			dst[0], dst[1], dst[2] = int64(i+1), es[i].dept, es[i].salary
		},
	}
}
