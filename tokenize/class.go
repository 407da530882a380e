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

var asciiClass = buildASCIIClass()

func buildASCIIClass() (tab [utf8.RuneSelf]class) {
	for r := range tab {
		tab[r] = classifySlow(rune(r))
	}
	return tab
}

// classAt returns the class and encoded length of the rune at t[i].
//
// An invalid UTF-8 byte counts as one U+FFFD (a symbol), matching Go's
// []rune conversion, which is what the tiktoken-go oracle splits.
func classAt(t []byte, i int) (class, int) {
	if b := t[i]; b < utf8.RuneSelf {
		return asciiClass[b], 1
	}
	r, n := utf8.DecodeRune(t[i:])
	if r < bmpSize {
		return bmpClassOf(r), n
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

func bmpClassOf(r rune) class {
	if !bmpBlockReady[r>>8].Load() {
		fillBMPBlock(r >> 8)
	}
	return bmpClass[r]
}

func fillBMPBlock(block rune) {
	bmpBlockOnce[block].Do(func() {
		for r := block << 8; r < (block+1)<<8; r++ {
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
	for i < len(t) {
		c, n := classAt(t, i)
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
	for i < len(t) {
		c, n := classAt(t, i)
		if c&mask != 0 {
			break
		}
		i += n
	}
	return i
}
