// Command ddp evaluates dependent differential privacy (liu2016) on the
// Gowalla New York check-ins, or on the demo's generated social data of the
// same structure when the Gowalla files are absent:
//
//	go run ./eval/ddp [--data DIR] [--out DIR] [--eps 0.1,0.5,1] ...
//
// It fits the friend-distance model (Eq. 26) to the friendships, computes ρ
// by Eq. 18 and Eq. 14 and the DPM multiplier at each ε, answers a GROUP BY
// cell histogram and a SUM under plain DP (LPM), the baseline (L·ΔQ) and
// DPM, measures their errors, runs the inference attack of §IV-C against
// the released histograms, and writes utility.csv, attack.csv, rho.csv and
// ddp-eval.svg into --out. Runs are reproducible: all noise comes from
// noise.SeededSource(--seed). That source is for tests only in the proxy;
// here the "releases" protect nothing (the data is public research data)
// and only their statistics are reported, so a fixed seed is the point.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

func main() {
	cfg := defaultConfig()
	flag.StringVar(&cfg.dataDir, "data", cfg.dataDir, "directory with the Gowalla NYC files (checkins.csv.gz, edges.csv); generated data when absent")
	flag.StringVar(&cfg.outDir, "out", cfg.outDir, "directory for the CSV files and the plot")
	epsList := flag.String("eps", "0.1,0.2,0.5,1,2,5", "comma-separated ε values")
	flag.IntVar(&cfg.reps, "reps", cfg.reps, "noise draws per (ε, mechanism) for the error means")
	flag.IntVar(&cfg.attackReps, "attack-reps", cfg.attackReps, "released histograms attacked per (ε, mechanism)")
	flag.IntVar(&cfg.targets, "targets", cfg.targets, "random users with friends attacked (plus the 20 of highest degree)")
	flag.Uint64Var(&cfg.seed, "seed", cfg.seed, "seed of all randomness")
	flag.StringVar(&cfg.fit, "fit", cfg.fit, "dependence model the DPM is calibrated with: pairs (Backstrom, as liu2016 §VII) or conditional (grid-normalised MLE, more conservative)")
	flag.Parse()
	var err error
	if cfg.eps, err = parseFloats(*epsList); err != nil {
		log.Fatalf("--eps: %v", err)
	}
	res, err := run(cfg, os.Stderr)
	if err != nil {
		log.Fatal(err)
	}
	if err := res.write(cfg.outDir); err != nil {
		log.Fatal(err)
	}
	res.report(os.Stdout)
	fmt.Printf("\nwrote %s\n", strings.Join(res.files(cfg.outDir), ", "))
}

type config struct {
	dataDir, outDir string
	eps             []float64
	reps            int
	attackReps      int
	targets         int
	seed            uint64
	fit             string
	mic             bool
}

func defaultConfig() config {
	// The data set lives next to the repositories (../shared/data in the
	// team layout); DDP_EVAL_DATA or --data override it.
	data := os.Getenv("DDP_EVAL_DATA")
	for _, dir := range []string{"../shared/data/gowalla_nyc", "../../shared/data/gowalla_nyc", "/work/shared/data/gowalla_nyc"} {
		if data != "" {
			break
		}
		if _, err := os.Stat(filepath.Join(dir, "checkins.csv.gz")); err == nil {
			data = dir
		}
	}
	if data == "" {
		data = "../shared/data/gowalla_nyc" // absent: the generated data is used
	}
	return config{
		dataDir:    data,
		outDir:     filepath.Join("eval", "ddp", "results"),
		eps:        []float64{0.1, 0.2, 0.5, 1, 2, 5},
		reps:       200,
		attackReps: 8,
		targets:    400,
		seed:       1,
		fit:        "pairs",
		mic:        true,
	}
}

func parseFloats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, v)
	}
	return out, nil
}

func progress(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}
