package demo

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/csv"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// adultSample is 5,000 rows of UCI Adult (CC BY 4.0), see data/README.md.
//
//go:embed data/adult_sample.csv.gz
var adultSample []byte

// Sample size and layout, as written by data/mksample.go.
const (
	SampleRows = 5000
	sampleCols = 15
)

// adultHeader is the header line of the sample: UCI's names with hyphens.
func adultHeader() []string {
	return []string{"age", "workclass", "fnlwgt", "education", "education-num",
		"marital-status", "occupation", "relationship", "race", "sex", "capital-gain",
		"capital-loss", "hours-per-week", "native-country", "income"}
}

// peopleColumns are the columns of the people table after person_id: the
// sample's columns without fnlwgt (a survey weight, not a property of the
// person), with underscores for SQL, and whether each is an integer.
func peopleColumns() []peopleColumn {
	return []peopleColumn{
		{"age", true}, {"workclass", false}, {"education", false}, {"education_num", true},
		{"marital_status", false}, {"occupation", false}, {"relationship", false},
		{"race", false}, {"sex", false}, {"capital_gain", true}, {"capital_loss", true},
		{"hours_per_week", true}, {"native_country", false}, {"income", false},
	}
}

type peopleColumn struct {
	name    string
	integer bool
}

// readSample decodes the embedded CSV: the header and the records, every
// field as written (not yet trimmed).
func readSample() (header []string, records [][]string, err error) {
	zr, err := gzip.NewReader(bytes.NewReader(adultSample))
	if err != nil {
		return nil, nil, fmt.Errorf("embedded Adult sample: %w", err)
	}
	r := csv.NewReader(zr)
	r.FieldsPerRecord = sampleCols
	all, err := r.ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("embedded Adult sample: %w", err)
	}
	if err := zr.Close(); err != nil {
		return nil, nil, fmt.Errorf("embedded Adult sample: %w", err)
	}
	if len(all) == 0 {
		return nil, nil, fmt.Errorf("embedded Adult sample is empty")
	}
	return all[0], all[1:], nil
}

// peopleRows converts the sample into rows of the people table: person_id
// (1.., in file order) then peopleColumns. Fields are trimmed, "?" (Adult's
// unknown) becomes NULL, integer columns are parsed.
func peopleRows() ([][]any, error) {
	header, records, err := readSample()
	if err != nil {
		return nil, err
	}
	if want := adultHeader(); !slices.Equal(header, want) {
		return nil, fmt.Errorf("embedded Adult sample has header %v, want %v", header, want)
	}
	cols := peopleColumns()
	// src[j] is the sample column of cols[j].
	src := make([]int, len(cols))
	for j, c := range cols {
		src[j] = slices.IndexFunc(header, func(h string) bool { return strings.ReplaceAll(h, "-", "_") == c.name })
	}
	rows := make([][]any, len(records))
	for i, rec := range records {
		row := make([]any, 0, 1+len(cols))
		row = append(row, int64(i+1))
		for j, c := range cols {
			switch v := strings.TrimSpace(rec[src[j]]); {
			case v == "?":
				row = append(row, nil)
			case c.integer:
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("embedded Adult sample row %d: column %s is not an integer", i+2, c.name)
				}
				row = append(row, n)
			default:
				row = append(row, v)
			}
		}
		rows[i] = row
	}
	return rows, nil
}

func peopleTable(rows [][]any) table {
	cols := peopleColumns()
	var b strings.Builder
	b.WriteString("CREATE TABLE people (person_id INTEGER PRIMARY KEY")
	for _, c := range cols {
		typ := "TEXT"
		if c.integer {
			typ = "INTEGER"
		}
		b.WriteString(", " + c.name + " " + typ)
	}
	b.WriteString(")")
	return table{
		name:   "people",
		create: b.String(),
		cols:   1 + len(cols),
		rows:   len(rows),
		row:    func(i int, dst []any) { copy(dst, rows[i]) },
	}
}
