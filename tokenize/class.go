package tokenize

import (
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
)

// class is the set of character classes of one rune that the split patterns
// of o200k_base and cl100k_base distinguish.
type class uint8

const (
	cUpper   class = 1 << iota // \p{Lu} or \p{Lt}
	cLower                     // \p{Ll}
	cOtherL                    // \p{Lm} or \p{Lo}
	cMark                      // \p{M}
	cNumber                    // \p{N}
	cSpace                     // \s, which regexp2 defines as unicode.IsSpace
	cNewline                   // \r or \n (always also cSpace)

	cLetter = cUpper | cLower | cOtherL // \p{L}
	// cU is o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}].
	cU = cUpper | cOtherL | cMark
	// cLw is o200k's [\p{Ll}\p{Lm}\p{Lo}\p{M}].
	cLw = cLower | cOtherL | cMark
	// notPrefix are the classes outside [^\r\n\p{L}\p{N}], the optional
	// one-rune prefix of a word.
	notPrefix = cNewline | cLetter | cNumber
	// notPunct are the classes outside [^\s\p{L}\p{N}].
	notPunct = cSpace | cLetter | cNumber
)

// cMulti marks, in byteClass, a byte that starts (or is part of) a
// multi-byte sequence: the rune must be decoded. No rune has this class.
const cMulti class = 1 << 7

// byteClass is the class of each ASCII byte, and cMulti for every other
// byte, so the hot loops classify ASCII with one table load.
var byteClass = buildByteClass()

func buildByteClass() (tab [256]class) {
	for b := range tab {
		tab[b] = cMulti
		if b < utf8.RuneSelf {
			tab[b] = classifySlow(rune(b))
		}
	}
	return tab
}

// classAt returns the class and encoded length of the rune at t[i].
//
// An invalid UTF-8 byte counts as one U+FFFD (a symbol), matching Go's
// []rune conversion, which is what the tiktoken-go oracle splits.
func classAt(t []byte, i int) (class, int) {
	if c := byteClass[t[i]]; c != cMulti {
		return c, 1
	}
	return classAtMulti(t[i:])
}

// classAtMulti is classAt for a non-ASCII byte. Two- and three-byte
// sequences (every script but emoji and rare CJK) are decoded and checked
// inline; the rest goes through utf8.DecodeRune.
func classAtMulti(t []byte) (class, int) {
	b0 := t[0]
	switch {
	case b0 >= 0xC2 && b0 < 0xE0 && len(t) > 1:
		if b1 := t[1]; b1&0xC0 == 0x80 {
			return bmpClassOf(uint16(b0&0x1F)<<6 | uint16(b1&0x3F)), 2
		}
	case b0 >= 0xE0 && b0 < 0xF0 && len(t) > 2:
		b1, b2 := t[1], t[2]
		if b1&0xC0 == 0x80 && b2&0xC0 == 0x80 {
			r := uint16(b0&0x0F)<<12 | uint16(b1&0x3F)<<6 | uint16(b2&0x3F)
			if r >= 0x800 && (r < 0xD800 || r > 0xDFFF) {
				return bmpClassOf(r), 3
			}
		}
	}
	return classAtSlow(t)
}

func classAtSlow(t []byte) (class, int) {
	r, n := utf8.DecodeRune(t)
	if r < bmpSize {
		return bmpClassOf(uint16(r)), n
	}
	return classifySlow(r), n
}

// bmpSize is how many runes the class cache covers: the Basic Multilingual
// Plane, where nearly all non-ASCII text lives.
const bmpSize = 1 << 16

// The class cache holds the class of every BMP rune, filled lazily one block
// of 256 runes at a time, so text in one script touches a few blocks. It is
// static data (64 KiB of BSS, paged in as used), not heap. A block is read
// only after its ready flag is set, which orders the fill before the read.
var (
	bmpClass      [bmpSize]class
	bmpBlockOnce  [bmpSize >> 8]sync.Once
	bmpBlockReady [bmpSize >> 8]atomic.Bool
)

func bmpClassOf(r uint16) class {
	if bmpBlockReady[r>>8].Load() {
		return bmpClass[r]
	}
	return bmpClassSlow(r)
}

//go:noinline
func bmpClassSlow(r uint16) class {
	fillBMPBlock(r >> 8)
	return bmpClass[r]
}

func fillBMPBlock(block uint16) {
	bmpBlockOnce[block].Do(func() {
		for r := rune(block) << 8; r < rune(block+1)<<8; r++ {
			bmpClass[r] = classifySlow(r)
		}
		bmpBlockReady[block].Store(true)
	})
}

func classifySlow(r rune) class {
	switch {
	case unicode.IsLetter(r):
		if unicode.IsUpper(r) || unicode.IsTitle(r) {
			return cUpper
		}
		if unicode.IsLower(r) {
			return cLower
		}
		return cOtherL
	case unicode.IsMark(r):
		return cMark
	case unicode.IsNumber(r):
		return cNumber
	case r == '\r' || r == '\n':
		return cSpace | cNewline
	case unicode.IsSpace(r):
		return cSpace
	}
	return 0
}

// skipClass returns the end of the run of runes starting at t[i] whose
// classes intersect mask.
func skipClass(t []byte, i int, mask class) int {
	// ASCII runs first: one table load per byte (cMulti is in no mask).
	for i < len(t) && byteClass[t[i]]&mask != 0 {
		i++
	}
	if i < len(t) && byteClass[t[i]] == cMulti {
		return skipClassSlow(t, i, mask)
	}
	return i
}

func skipClassSlow(t []byte, i int, mask class) int {
	for i < len(t) {
		c, n := byteClass[t[i]], 1
		if c == cMulti {
			c, n = classAtMulti(t[i:])
		}
		if c&mask == 0 {
			break
		}
		i += n
	}
	return i
}

// skipNotClass returns the end of the run of runes starting at t[i] whose
// classes do not intersect mask.
func skipNotClass(t []byte, i int, mask class) int {
	for i < len(t) && byteClass[t[i]]&(mask|cMulti) == 0 {
		i++
	}
	if i < len(t) && byteClass[t[i]] == cMulti {
		return skipNotClassSlow(t, i, mask)
	}
	return i
}

func skipNotClassSlow(t []byte, i int, mask class) int {
	for i < len(t) {
		c, n := byteClass[t[i]], 1
		if c == cMulti {
			c, n = classAtMulti(t[i:])
		}
		if c&mask != 0 {
			break
		}
		i += n
	}
	return i
}
