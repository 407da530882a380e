package guardtest

import (
	"math/rand/v2"
	"strings"
)

// databaseURL: connection URLs with a password; Value is the password
// (letters, digits and -_.~!*, which need no escape in a URL or JSON).
func databaseURL(r *rand.Rand, v int) Secret {
	pass := randString(r, alnumChars+"-_.~!*", 12+r.IntN(13))
	host := pick(r, []string{"db.internal", "10.0.12.7", "prod-db-1.cluster-abc123.eu-west-1.rds.amazonaws.com", "localhost"})
	user := pick(r, []string{"app", "admin", "svc_billing", "postgres"})
	ctx, variant := "", ""
	switch v {
	case 0:
		ctx, variant = "DATABASE_URL=postgres://"+user+":%s@"+host+":5432/app?sslmode=require", "postgres"
	case 1:
		ctx, variant = "postgresql://"+user+":%s@"+host+"/orders", "postgresql"
	case 2:
		ctx, variant = "MYSQL_URL=mysql://"+user+":%s@"+host+":3306/shop", "mysql"
	case 3:
		ctx, variant = "mongodb+srv://"+user+":%s@cluster0."+randString(r, lowerChars+digitChars, 5)+".mongodb.net/app?retryWrites=true&w=majority", "mongodb+srv"
	case 4:
		ctx, variant = "REDIS_URL=redis://default:%s@"+host+":6379/0", "redis"
	case 5:
		ctx, variant = "rediss://:%s@"+host+":6380", "rediss"
	case 6:
		ctx, variant = "CELERY_BROKER_URL=amqp://"+user+":%s@"+host+":5672/vhost", "amqp"
	default:
		ctx, variant = "amqps://"+user+":%s@"+host+"/prod", "amqps"
	}
	return Secret{Rule: "database_url", Value: pass, Context: ctx, Variant: variant}
}

// email: addresses of several shapes (tags, subdomains, digits).
func email(r *rand.Rand, v int) Secret {
	first := pick(r, []string{"anna", "jorge", "li.wei", "fatima", "oskar", "priya", "tomasz", "amara"})
	last := pick(r, []string{"schmidt", "garcia", "chen", "okafor", "novak", "sharma", "dubois", "kim"})
	dom := pick(r, []string{"acme-corp.com", "example-shop.de", "mail.startup.io", "uni-leipzig.de", "contoso.co.uk"})
	var val, variant string
	switch v {
	case 0:
		val, variant = first+"."+last+"@"+dom, "dotted"
	case 1:
		val, variant = first+"+billing@"+dom, "tag"
	case 2:
		val, variant = last+randDigits(r, 2, false)+"@"+dom, "digits"
	default:
		val, variant = strings.ToUpper(first[:1])+last+"@eng."+dom, "subdomain"
	}
	ctx := pick(r, []string{"contact: %s", "Author: " + first + " " + last + " <%s>", "ADMIN_EMAIL=%s", "please email %s about the invoice"})
	return Secret{Rule: "email", Value: val, Context: ctx, Variant: variant}
}

// phone: E.164 and the usual national forms of the US, the UK and Germany.
func phone(r *rand.Rand, v int) Secret {
	n := func(k int) string { return randDigits(r, k, true) }
	// NANP: area code and exchange start with 2-9.
	nxx := func() string { return randString(r, "23456789", 1) + randDigits(r, 2, false) }
	us := func() (string, string, string) { return nxx(), nxx(), randDigits(r, 4, false) }
	var val, variant string
	switch v {
	case 0:
		a, b, c := us()
		val, variant = "+1"+a+b+c, "e164_us"
	case 1:
		a, b, c := us()
		val, variant = "("+a+") "+b+"-"+c, "us_parens"
	case 2:
		a, b, c := us()
		val, variant = a+"-"+b+"-"+c, "us_dashes"
	case 3:
		a, b, c := us()
		val, variant = "+1 "+a+"-"+b+"-"+c, "us_intl"
	case 4:
		val, variant = "+44 20 "+n(4)+" "+randDigits(r, 4, false), "uk_london"
	case 5:
		val, variant = "+447"+randDigits(r, 9, false), "e164_uk_mobile"
	case 6:
		val, variant = "07"+randDigits(r, 3, false)+" "+randDigits(r, 6, false), "uk_mobile_national"
	case 7:
		val, variant = "+49 30 "+n(8), "de_berlin"
	default:
		val, variant = "+49 1"+pick(r, []string{"51", "60", "70", "76"})+" "+n(8), "de_mobile"
	}
	ctx := pick(r, []string{"phone: %s", "Call me at %s tomorrow.", "\"phone\": \"%s\"", "Tel. %s"})
	return Secret{Rule: "phone", Value: val, Context: ctx, Variant: variant}
}

// paymentCard: Visa, Mastercard (51-55 and 2221-2720), Amex and Discover
// numbers with a valid Luhn digit, plain or grouped with spaces or dashes.
func paymentCard(r *rand.Rand, v int) Secret {
	var prefix string
	length := 16
	switch v % 4 {
	case 0:
		prefix = "4"
	case 1:
		if v < 4 {
			prefix = "5" + string(byte('1'+r.IntN(5)))
		} else {
			prefix = "2" + randDigitsRange(r, 221, 720)
		}
	case 2:
		prefix, length = pick(r, []string{"34", "37"}), 15
	default:
		prefix = pick(r, []string{"6011", "65", "644", "649"})
	}
	payload := prefix + randDigits(r, length-1-len(prefix), false)
	num := payload + string(luhnDigit(payload))
	variant := []string{"visa", "mastercard", "amex", "discover"}[v%4]
	sep := []string{"", " ", "-", " "}[v/2%4]
	if sep != "" {
		num = groupCard(num, sep)
		variant += "_grouped"
	}
	ctx := pick(r, []string{"card: %s", "Card number %s, exp 09/29", "\"pan\": \"%s\"", "charge failed for %s"})
	return Secret{Rule: "payment_card", Value: num, Context: ctx, Variant: variant}
}

// randDigitsRange returns a decimal number in [lo, hi] as three digits.
func randDigitsRange(r *rand.Rand, lo, hi int) string {
	n := lo + r.IntN(hi-lo+1)
	return string([]byte{byte('0' + n/100), byte('0' + n/10%10), byte('0' + n%10)})
}

// groupCard groups a card number as printed: 4-6-5 for 15 digits, else
// blocks of four.
func groupCard(num, sep string) string {
	if len(num) == 15 {
		return num[:4] + sep + num[4:10] + sep + num[10:]
	}
	var parts []string
	for len(num) > 4 {
		parts = append(parts, num[:4])
		num = num[4:]
	}
	return strings.Join(append(parts, num), sep)
}

// ibanFormats are the BBAN layouts of the countries generated: n digits,
// a upper-case letters, c alphanumerics, in order.
var ibanFormats = []struct{ cc, layout string }{
	{"DE", "18n"},
	{"GB", "4a14n"},
	{"FR", "10n11c2n"},
	{"NL", "4a10n"},
	{"ES", "20n"},
	{"IT", "1a10n12c"},
	{"CH", "5n12c"},
	{"BE", "12n"},
}

// iban: an IBAN of one of several countries with valid mod-97 check
// digits, compact or in groups of four.
func iban(r *rand.Rand, v int) Secret {
	f := ibanFormats[v%len(ibanFormats)]
	var bban strings.Builder
	layout := f.layout
	for layout != "" {
		i := strings.IndexAny(layout, "nac")
		k := 0
		for _, d := range layout[:i] {
			k = k*10 + int(d-'0')
		}
		alphabet := map[byte]string{'n': digitChars, 'a': upperChars, 'c': upperChars + digitChars}[layout[i]]
		bban.WriteString(randString(r, alphabet, k))
		layout = layout[i+1:]
	}
	val := f.cc + ibanCheck(f.cc, bban.String()) + bban.String()
	variant := f.cc
	if r.IntN(2) == 0 {
		var parts []string
		for len(val) > 4 {
			parts = append(parts, val[:4])
			val = val[4:]
		}
		val = strings.Join(append(parts, val), " ")
		variant += "_grouped"
	}
	ctx := pick(r, []string{"IBAN: %s", "Please transfer to %s by Friday.", "\"iban\": \"%s\""})
	return Secret{Rule: "iban", Value: val, Context: ctx, Variant: variant}
}

// usSSN: AAA-GG-SSSS in the valid ranges: area 001-899 but not 666, group
// 01-99, serial 0001-9999.
func usSSN(r *rand.Rand, v int) Secret {
	area := 1 + r.IntN(899)
	if area == 666 {
		area = 665
	}
	group, serial := 1+r.IntN(99), 1+r.IntN(9999)
	val := pad(area, 3) + "-" + pad(group, 2) + "-" + pad(serial, 4)
	ctx := []string{"SSN: %s", `"ssn": "%s"`}[v]
	return Secret{Rule: "us_ssn", Value: val, Context: ctx, Variant: []string{"text", "json"}[v]}
}

// pad writes n with leading zeros to width digits.
func pad(n, width int) string {
	b := make([]byte, width)
	for i := width - 1; i >= 0; i-- {
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b)
}
