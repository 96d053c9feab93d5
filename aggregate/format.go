package aggregate

import "strconv"

// noiseDigits is how many significant digits a noise figure keeps. The
// figures are themselves approximate (a 95% bound, a scale for an ε the
// analyst chose), so more digits would only be noise to read.
const noiseDigits = 4

// The decimal exponents written without e-notation: 0.0001 up to
// 999900000000000. Below, the leading zeros would outnumber the digits;
// from 1e15 on, the trailing ones (sixteen digits and more).
const (
	minPlainExp = -4
	maxPlainExp = 14
)

// FormatNoise is AppendNoise as a string.
func FormatNoise(x float64) string {
	var buf [32]byte
	return string(AppendNoise(buf[:0], x))
}

// AppendNoise appends x, a noise scale or the half-width of a 95%
// interval, as the cost notices and the units' interval texts write it.
// It is the one writer of these figures, so PostgreSQL NOTICEs and MySQL
// warnings (the same text) read alike.
//
// x is rounded to 4 significant digits, as %.4g did, but written without
// an exponent from 1e-4 up to 1e15: %.4g wrote a count's interval as
// ±2.996e+06, which analysts misread and spreadsheets keep as text; this
// writes ±2996000. Outside that range it is written as %.4g writes it
// (9.999e-05, 1e+15). Zero is "0" whatever its sign: a sign on a scale of
// zero means nothing. NaN and ±Inf, which no release produces, are
// written as strconv writes them ("NaN", "+Inf").
func AppendNoise(dst []byte, x float64) []byte {
	if x == 0 {
		return append(dst, '0')
	}
	var buf [32]byte
	// [-]d.ddde±dd, rounded as %.4g rounds; the exponent is the rounded
	// value's (9999.6 is 1.000e+04), so the range test sees what is shown.
	e := strconv.AppendFloat(buf[:0], x, 'e', noiseDigits-1, 64)
	var d [noiseDigits]byte
	neg, digits, exp, ok := splitExp(e, d[:0])
	if !ok || exp < minPlainExp || exp > maxPlainExp {
		return strconv.AppendFloat(dst, x, 'g', noiseDigits, 64)
	}
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	if neg {
		dst = append(dst, '-')
	}
	if exp < 0 {
		dst = append(dst, '0', '.')
		for i := -1; i > exp; i-- {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	for i := 0; i <= exp; i++ { // exp+1 digits before the point
		if i < len(digits) {
			dst = append(dst, digits[i])
		} else {
			dst = append(dst, '0')
		}
	}
	if len(digits) > exp+1 {
		dst = append(dst, '.')
		dst = append(dst, digits[exp+1:]...)
	}
	return dst
}

// splitExp reads strconv's 'e' format, [-]d.ddde±dd: the sign, the
// significant digits without the point (appended to digits) and the
// exponent. ok is false for anything else (NaN, Inf).
func splitExp(e, digits []byte) (neg bool, _ []byte, exp int, ok bool) {
	if len(e) > 0 && e[0] == '-' {
		neg, e = true, e[1:]
	}
	i := 0
	for i < len(e) && e[i] != 'e' {
		i++
	}
	if i < 3 || i+2 >= len(e) || e[1] != '.' {
		return false, nil, 0, false
	}
	digits = append(append(digits, e[0]), e[2:i]...)
	sign := 1
	switch e[i+1] {
	case '-':
		sign = -1
	case '+':
	default:
		return false, nil, 0, false
	}
	for _, c := range e[i+2:] {
		if c < '0' || c > '9' {
			return false, nil, 0, false
		}
		exp = exp*10 + int(c-'0')
	}
	return neg, digits, sign * exp, true
}
