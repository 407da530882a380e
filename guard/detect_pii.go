package guard

// numStart reports whether a number may start at i: a word start not glued
// to a preceding number, version or path (1.2.3, a-1, x/1, +1).
func numStart(b []byte, i int) bool {
	if !wordStart(b, i) {
		return false
	}
	if i == 0 || !isByte(b[i-1], "-./+,:_") {
		return true
	}
	_, esc := escBefore(b, i)
	return esc
}

// numEnd reports whether a number that ends at e is whole: not followed by
// an alphanumeric, nor by a separator and a digit (a longer grouped number).
// It returns need when the input ends before that is known.
func numEnd(b []byte, e int, final bool) result {
	if e == len(b) {
		if final {
			return hit
		}
		return need
	}
	c := b[e]
	if is(c, cAlnum) {
		return miss
	}
	if isByte(c, " -.") {
		if e+1 == len(b) {
			if final {
				return hit
			}
			return need
		}
		if is(b[e+1], cDigit) {
			return miss
		}
	}
	return hit
}

// matchSSN: AAA-GG-SSSS with dashes; area 000, 666 and 900-999, group 00
// and serial 0000 are never issued.
func matchSSN(b []byte, i int, final bool) (int, int, result) {
	if !numStart(b, i) {
		return 0, 0, miss
	}
	j := i
	for g, n := range [...]int{3, 2, 4} {
		k, more := run(b, j, cDigit, n)
		if k < n && more && !final {
			return i, 0, need
		}
		if k != n {
			return 0, 0, miss
		}
		j += n
		if g < 2 {
			if r := litAt(b, j, "-", final); r != hit {
				return i, 0, r
			}
			j++
		}
	}
	if r := numEnd(b, j, final); r != hit {
		return i, 0, r
	}
	a := string(b[i : i+3])
	if a == "000" || a == "666" || a[0] == '9' || string(b[i+4:i+6]) == "00" || string(b[i+7:i+11]) == "0000" {
		return 0, 0, miss
	}
	return i, j, hit
}

// matchCard: 13-19 digits, ungrouped or in groups of 4 (the last 1-4)
// or 4-6-5 / 4-6-4, joined by one kind of separator (space or dash), with a
// valid Luhn check digit and a known issuer prefix and length.
func matchCard(b []byte, i int, final bool) (int, int, result) {
	if !numStart(b, i) {
		return 0, 0, miss
	}
	var digits [19]byte
	var groups [8]int
	nd, ng := 0, 0
	var sep byte
	j := i
	for {
		k, more := run(b, j, cDigit, 19)
		if more && !final {
			return i, 0, need
		}
		if nd+k > 19 || ng == len(groups) {
			return 0, 0, miss
		}
		copy(digits[nd:], b[j:j+k])
		nd += k
		groups[ng] = k
		ng++
		j += k
		if j == len(b) || (b[j] != ' ' && b[j] != '-') || (sep != 0 && b[j] != sep) {
			break
		}
		if j+1 == len(b) {
			if final {
				break
			}
			return i, 0, need
		}
		if !is(b[j+1], cDigit) {
			break
		}
		sep = b[j]
		j++
	}
	if j < len(b) && is(b[j], cAlnum) {
		return 0, 0, miss
	}
	if nd < 13 || !cardGroups(groups[:ng]) || !luhn(digits[:nd]) || !cardIssuer(digits[:nd]) {
		return 0, 0, miss
	}
	return i, j, hit
}

func cardGroups(g []int) bool {
	if len(g) == 1 {
		return true
	}
	if len(g) == 3 && g[0] == 4 && g[1] == 6 && (g[2] == 5 || g[2] == 4) {
		return true
	}
	for k, n := range g {
		if n != 4 && !(k == len(g)-1 && n >= 1 && n < 4) {
			return false
		}
	}
	return true
}

// luhn reports whether the digits pass the Luhn (mod 10) check.
func luhn(d []byte) bool {
	sum := 0
	for k := len(d) - 1; k >= 0; k-- {
		v := int(d[k] - '0')
		if (len(d)-1-k)&1 == 1 {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return sum%10 == 0
}

// cardIssuer reports whether the prefix and length belong to a card network:
// Visa, Mastercard, American Express, Discover, JCB, UnionPay, Diners.
func cardIssuer(d []byte) bool {
	n := len(d)
	p2 := int(d[0]-'0')*10 + int(d[1]-'0')
	p4 := p2*100 + int(d[2]-'0')*10 + int(d[3]-'0')
	switch {
	case d[0] == '4':
		return n == 13 || n == 16 || n == 19
	case p2 >= 51 && p2 <= 55, p4 >= 2221 && p4 <= 2720:
		return n == 16
	case p2 == 34 || p2 == 37:
		return n == 15
	case p4 == 6011 || p2 == 65 || p4/10 >= 644 && p4/10 <= 649:
		return n >= 16 && n <= 19
	case p2 == 35:
		return n >= 16 && n <= 19
	case p2 == 62:
		return n >= 16 && n <= 19
	case p2 == 36 || p2 == 38 || p4/10 >= 300 && p4/10 <= 305:
		return n == 14
	}
	return false
}

// ibanLen is the IBAN length per country (ISO 13616), indexed by the two
// letters; 0 means not an IBAN country.
var ibanLen = func() (t [26 * 26]uint8) {
	for _, e := range []struct {
		cc string
		n  uint8
	}{
		{"AD", 24}, {"AE", 23}, {"AL", 28}, {"AT", 20}, {"AZ", 28}, {"BA", 20}, {"BE", 16},
		{"BG", 22}, {"BH", 22}, {"BR", 29}, {"CH", 21}, {"CR", 22}, {"CY", 28}, {"CZ", 24},
		{"DE", 22}, {"DK", 18}, {"DO", 28}, {"EE", 20}, {"EG", 29}, {"ES", 24}, {"FI", 18},
		{"FO", 18}, {"FR", 27}, {"GB", 22}, {"GE", 22}, {"GI", 23}, {"GL", 18}, {"GR", 27},
		{"GT", 28}, {"HR", 21}, {"HU", 28}, {"IE", 22}, {"IL", 23}, {"IS", 26}, {"IT", 27},
		{"JO", 30}, {"KW", 30}, {"KZ", 20}, {"LB", 28}, {"LI", 21}, {"LT", 20}, {"LU", 20},
		{"LV", 21}, {"MC", 27}, {"MD", 24}, {"ME", 22}, {"MK", 19}, {"MR", 27}, {"MT", 31},
		{"MU", 30}, {"NL", 18}, {"NO", 15}, {"PK", 24}, {"PL", 28}, {"PS", 29}, {"PT", 25},
		{"QA", 29}, {"RO", 24}, {"RS", 22}, {"SA", 24}, {"SE", 24}, {"SI", 19}, {"SK", 24},
		{"SM", 27}, {"TN", 24}, {"TR", 26}, {"UA", 29}, {"VG", 24}, {"XK", 20},
	} {
		t[int(e.cc[0]-'A')*26+int(e.cc[1]-'A')] = e.n
	}
	return t
}()

// matchIBAN: two letters of a country, two check digits and the BBAN
// ([A-Z0-9], optionally printed in groups of four separated by one space),
// as long as the country's IBAN and with mod 97 == 1. The anchor is the
// first check digit.
func matchIBAN(b []byte, i int, final bool) (int, int, result) {
	s := i - 2
	if s < 0 || !is(b[s], cUpper) || !is(b[s+1], cUpper) || !wordStart(b, s) {
		return 0, 0, miss
	}
	want := int(ibanLen[int(b[s]-'A')*26+int(b[s+1]-'A')])
	if want == 0 {
		return 0, 0, miss
	}
	var v [34]byte
	n := 0
	j := s
	for n < want {
		if j == len(b) {
			if final {
				return 0, 0, miss
			}
			return s, 0, need
		}
		c := b[j]
		if c == ' ' && n%4 == 0 && n > 0 && j+1 < len(b) && is(b[j+1], cUpper|cDigit) {
			j++
			continue
		}
		if c == ' ' && j+1 == len(b) && !final {
			return s, 0, need
		}
		if !is(c, cUpper|cDigit) || (n >= 2 && n < 4 && !is(c, cDigit)) {
			return 0, 0, miss
		}
		v[n] = c
		n++
		j++
	}
	if j == len(b) && !final {
		return s, 0, need
	}
	if j < len(b) && is(b[j], cAlnum) {
		return 0, 0, miss
	}
	if !mod97(v[:n]) {
		return 0, 0, miss
	}
	return s, j, hit
}

// mod97 reports whether the IBAN (country, check digits, BBAN) is valid:
// moved to the end and read as a number with A=10..Z=35, it is 1 mod 97.
func mod97(v []byte) bool {
	r := 0
	for k := 4; k < len(v)+4; k++ {
		c := v[k%len(v)]
		if c >= 'A' {
			r = (r*100 + int(c-'A'+10)) % 97
		} else {
			r = (r*10 + int(c-'0')) % 97
		}
	}
	return r == 1
}

// matchPhone: E.164 (+, a country code, 8-15 digits in all, optional
// single spaces, dashes, dots or one parenthesised group between digits), or
// a US number (NXX) NXX-XXXX, NXX-NXX-XXXX or NXX.NXX.XXXX, or a UK mobile
// 07XXX XXXXXX. Bare digit runs and other national formats are not
// matched: too many ids look like them.
func matchPhone(b []byte, i int, final bool) (int, int, result) {
	switch b[i] {
	case '+':
		return phoneE164(b, i, final)
	case '(':
		return phoneUSParen(b, i, final)
	case '0':
		return phoneUKMobile(b, i, final)
	}
	return phoneUS(b, i, final)
}

// phoneUKMobile: a UK mobile number in national form, 07XXX XXXXXX (the
// space optional).
func phoneUKMobile(b []byte, i int, final bool) (int, int, result) {
	if !numStart(b, i) {
		return 0, 0, miss
	}
	if r := litAt(b, i, "07", final); r != hit {
		return i, 0, r
	}
	k, more := run(b, i, cDigit, 11)
	if more && !final {
		return i, 0, need
	}
	j := i + k
	switch k {
	case 11:
	case 5:
		if r := litAt(b, j, " ", final); r != hit {
			return i, 0, r
		}
		n, more := run(b, j+1, cDigit, 6)
		if n < 6 && more && !final {
			return i, 0, need
		}
		if n != 6 {
			return 0, 0, miss
		}
		j += 7
	default:
		return 0, 0, miss
	}
	if r := numEnd(b, j, final); r != hit {
		return i, 0, r
	}
	return i, j, hit
}

func phoneE164(b []byte, i int, final bool) (int, int, result) {
	if !wordStart(b, i) || (i > 0 && is(b[i-1], cDigit)) {
		return 0, 0, miss
	}
	j := i + 1
	if j == len(b) {
		if final {
			return 0, 0, miss
		}
		return i, 0, need
	}
	if b[j] < '1' || b[j] > '9' {
		return 0, 0, miss
	}
	nd, paren := 0, false
	e := j
	for {
		if j == len(b) {
			if !final {
				return i, 0, need
			}
			break
		}
		c := b[j]
		if is(c, cDigit) {
			nd++
			j++
			e = j
			continue
		}
		if (c == ' ' || c == '-' || c == '.' || c == '(' || c == ')') && j > i+1 {
			if c == '(' && paren || c == ')' && !paren {
				break
			}
			if c == '(' {
				paren = true
			}
			if c == ')' {
				paren = false
			}
			if j+1 == len(b) && !final {
				return i, 0, need
			}
			if j+1 < len(b) && (is(b[j+1], cDigit) || b[j+1] == '(' || c == ')' && b[j+1] == ' ') {
				j++
				continue
			}
		}
		break
	}
	if nd < 8 || nd > 15 || paren {
		return 0, 0, miss
	}
	if e < len(b) && is(b[e], cAlnum) {
		return 0, 0, miss
	}
	return i, e, hit
}

func phoneUSParen(b []byte, i int, final bool) (int, int, result) {
	if !wordStart(b, i) {
		return 0, 0, miss
	}
	j := i + 1
	k, more := run(b, j, cDigit, 3)
	if k < 3 && more && !final {
		return i, 0, need
	}
	if k != 3 || b[j] < '2' {
		return 0, 0, miss
	}
	j += 3
	if r := litAt(b, j, ")", final); r != hit {
		return i, 0, r
	}
	j++
	if j < len(b) && b[j] == ' ' {
		j++
	}
	return phoneTail(b, i, j, '-', final)
}

func phoneUS(b []byte, i int, final bool) (int, int, result) {
	if !numStart(b, i) || b[i] < '2' {
		return 0, 0, miss
	}
	k, more := run(b, i, cDigit, 3)
	if k < 3 && more && !final {
		return i, 0, need
	}
	if k != 3 {
		return 0, 0, miss
	}
	j := i + 3
	if j == len(b) {
		if final {
			return 0, 0, miss
		}
		return i, 0, need
	}
	sep := b[j]
	if sep != '-' && sep != '.' {
		return 0, 0, miss
	}
	return phoneTail(b, i, j+1, sep, final)
}

// phoneTail matches NXX<sep>XXXX at j for a phone number that starts at s.
func phoneTail(b []byte, s, j int, sep byte, final bool) (int, int, result) {
	k, more := run(b, j, cDigit, 3)
	if k < 3 && more && !final {
		return s, 0, need
	}
	if k != 3 || b[j] < '2' {
		return 0, 0, miss
	}
	j += 3
	if r := litAt(b, j, string(sep), final); r != hit {
		return s, 0, r
	}
	j++
	k, more = run(b, j, cDigit, 4)
	if k < 4 && more && !final {
		return s, 0, need
	}
	if k != 4 {
		return 0, 0, miss
	}
	j += 4
	if r := numEnd(b, j, final); r != hit {
		return s, 0, r
	}
	return s, j, hit
}
