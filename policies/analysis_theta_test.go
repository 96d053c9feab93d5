package policies

import "testing"

// TestDistanceEdgesAtThetaOnDecimals: distance secrets relate values at
// most θ apart as the policy writes them. 0.8 − 0.6 is 0.2 in decimal but
// 0.20000000000000007 in doubles; read literally, the pair fell outside θ =
// 0.2, so a published count of 0.6 alone was found unchanged by every
// secret pair (maxT 1) — while the DBA declared 0.6 and 0.8 a secret pair
// and that count changes between them.
func TestDistanceEdgesAtThetaOnDecimals(t *testing.T) {
	p, err := LoadBytes("t.yaml", []byte(analysisHead+`    model: blowfish
    secrets: {distance: {column: v, theta: 0.2}}
    constraints: [{count: {v: [0.6]}}]
    tables:
      people:
        unit: id
        columns:
          v: {type: real, bounds: [0, 1], domain: {values: [0.6, 0.8]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	bf := p.Datasets["d"].Analysis.Blowfish
	if bf == nil {
		t.Fatal("no blowfish analysis")
	}
	if bf.EdgesKeepCounts || bf.MaxT < 2 {
		t.Errorf("edges keep counts %v, maxT %d: the pair 0.6 ~ 0.8 (distance θ) changes the count of 0.6", bf.EdgesKeepCounts, bf.MaxT)
	}
}
