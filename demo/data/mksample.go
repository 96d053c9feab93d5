//go:build ignore

// mksample writes adult_sample.csv.gz: a fixed-seed random sample of rows
// of the full UCI Adult adult.csv (see README.md in this directory). It is
// run by hand, once; the demo embeds its output and never needs the full
// file. Usage, from the repository root:
//
//	go run ./demo/data/mksample.go -in /work/shared/data/adult/adult.csv -out demo/data/adult_sample.csv.gz
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"slices"
)

// The sample is fixed by these: changing any of them changes the demo data.
const (
	sampleSize = 5000
	seed1      = 1994 // the CPS year
	seed2      = 48842
)

func main() {
	in := flag.String("in", "adult.csv", "the full adult.csv (header + 48,842 rows)")
	out := flag.String("out", "adult_sample.csv.gz", "output file")
	flag.Parse()
	data, err := os.ReadFile(*in)
	if err != nil {
		log.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	header, rows := lines[0], lines[1:]
	if len(rows) < sampleSize {
		log.Fatalf("%s has %d rows, want at least %d", *in, len(rows), sampleSize)
	}
	// A uniform sample without replacement: the first sampleSize entries of
	// a seeded permutation, written in the original file order.
	r := rand.New(rand.NewPCG(seed1, seed2))
	idx := r.Perm(len(rows))[:sampleSize]
	slices.Sort(idx)

	var buf bytes.Buffer
	// No name and no modification time in the gzip header, so the output is
	// byte-identical on every run.
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriter(zw)
	fmt.Fprintf(w, "%s\n", header)
	for _, i := range idx {
		fmt.Fprintf(w, "%s\n", rows[i])
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}
