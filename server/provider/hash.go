package provider

// Hash is FNV-1a over b: the key of a model or a conversation in the
// cooldown table and the affinity map. It never returns 0, which means
// "none" to Pick.
func Hash(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h | 1
}

// HashString is Hash over a string.
func HashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h | 1
}

// mix spreads a pair of hashes over the table.
func mix(a, b uint64) uint64 {
	h := a ^ (b * 0x9E3779B97F4A7C15)
	h ^= h >> 29
	h *= 0xBF58476D1CE4E5B9
	return h ^ h>>32
}
