package demo

import (
	"strconv"
	"strings"
)

// checkinsDDPView is the view the social_ddp dataset reads: the same rows
// as checkins (a table belongs to exactly one dataset of a policy).
const checkinsDDPView = "CREATE VIEW checkins_ddp AS SELECT * FROM checkins"

// The friend-distance model of the social_ddp dataset (liu2016 Eq. 26),
// as printed by
//
//	ddp-proxy estimate-dependence --policy demo-policy.yaml --table friendships \
//	  --columns user_a,user_b --attributes latitude,longitude --attribute-table checkins
//
// on the generated data: its conditional (grid-normalised) fit, the one it
// recommends here because the pair fit's ρ (0.44) is below that of the
// best-fitting conditional (0.58), while this one's (0.98) is not.
// TestDDPModelMatchesData refits it.
const (
	ddpA = 2.594855873e-05
	ddpB = 0.04253650127
	ddpC = 3.160760675
)

// ddpTemplateData is what the social_ddp block of the policy template
// needs besides the shared values.
func ddpTemplateData() map[string]string {
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', 10, 64) }
	lat, lon := make([]string, gridSize), make([]string, gridSize)
	for i := range gridSize {
		la, _ := cellCenter(i * gridSize)
		_, lo := cellCenter(i)
		lat[i], lon[i] = num(la), num(lo)
	}
	var cats []string
	for _, c := range venueCategories() {
		cats = append(cats, c.code)
	}
	return map[string]string{
		"DDPA":       num(ddpA),
		"DDPB":       num(ddpB),
		"DDPC":       num(ddpC),
		"LatCenters": strings.Join(lat, ", "),
		"LonCenters": strings.Join(lon, ", "),
		"Categories": strings.Join(cats, ", "),
	}
}
