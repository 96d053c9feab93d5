package demo

import (
	"bufio"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// The UCI column names of adult.names, hyphenated, in file order.
var wantSampleHeader = []string{"age", "workclass", "fnlwgt", "education", "education-num",
	"marital-status", "occupation", "relationship", "race", "sex", "capital-gain",
	"capital-loss", "hours-per-week", "native-country", "income"}

func TestEmbeddedSample(t *testing.T) {
	header, records, err := readSample()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(header, wantSampleHeader) {
		t.Errorf("header = %v, want %v", header, wantSampleHeader)
	}
	if len(records) != 5000 {
		t.Fatalf("%d records, want 5000", len(records))
	}
	for i, rec := range records {
		if len(rec) != 15 {
			t.Fatalf("record %d has %d fields, want 15", i+1, len(rec))
		}
		if age, err := strconv.Atoi(strings.TrimSpace(rec[0])); err != nil || age < 17 || age > 90 {
			t.Fatalf("record %d: age %q is not an integer in 17..90 (adult.names)", i+1, rec[0])
		}
		if inc := rec[14]; inc != "<=50K" && inc != ">50K" {
			t.Fatalf("record %d: income %q, want <=50K or >50K", i+1, inc)
		}
	}
}

// TestSampleIsFromAdult checks that every sampled row is a distinct row of
// the full data (a multiset inclusion), when the full file is at hand.
func TestSampleIsFromAdult(t *testing.T) {
	const full = "/work/shared/data/adult/adult.csv"
	f, err := os.Open(full)
	if err != nil {
		t.Skipf("the full Adult data is not here (%v): skipping the provenance check", err)
	}
	defer f.Close()
	left := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		left[sc.Text()]++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	_, records, err := readSample()
	if err != nil {
		t.Fatal(err)
	}
	for i, rec := range records {
		line := strings.Join(rec, ",")
		if left[line] == 0 {
			t.Fatalf("sample record %d is not a (remaining) row of %s: %s", i+1, full, line)
		}
		left[line]--
	}
}

// TestPeopleRows checks the conversion on two rows written out by hand
// from the sample file: its first row, and its fourth, whose
// native-country is "?".
func TestPeopleRows(t *testing.T) {
	rows, err := peopleRows()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5000 {
		t.Fatalf("%d rows, want 5000", len(rows))
	}
	tests := []struct {
		name string
		i    int
		want []any
	}{
		{"first row", 0, []any{int64(1), int64(39), "State-gov", "Bachelors", int64(13), "Never-married",
			"Adm-clerical", "Not-in-family", "White", "Male", int64(2174), int64(0), int64(40), "United-States", "<=50K"}},
		{"unknown country", 3, []any{int64(4), int64(40), "Private", "Assoc-voc", int64(11), "Married-civ-spouse",
			"Craft-repair", "Husband", "Asian-Pac-Islander", "Male", int64(0), int64(0), int64(40), nil, ">50K"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rows[tt.i]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("row %d =\n %v\nwant\n %v", tt.i, got, tt.want)
			}
		})
	}
}
