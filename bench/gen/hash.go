package gen

// Deterministic, allocation-free mixing helpers. Every "random" choice of the
// generator (replacement ids, time offsets, unit order) is a pure function of
// the seed, the copy index and a key derived from the source bytes, so the
// same inputs always produce the same corpus.

// Domain-separation salts, one per kind of derived value.
const (
	saltUUIDHi  uint64 = 0x6a09e667f3bcc908
	saltUUIDLo  uint64 = 0xbb67ae8584caa73b
	saltID      uint64 = 0x3c6ef372fe94f82b
	saltAgent   uint64 = 0xa54ff53a5f1d36f1
	saltTime    uint64 = 0x510e527fade682d1
	saltOrder   uint64 = 0x9b05688c2b3e6c1f
	saltSession uint64 = 0x1f83d9abfb41bd6b
)

// mix64 is the splitmix64 finaliser: a fast bijective 64-bit mixer.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// hash4 mixes a salt, the seed, the copy index and a key into 64 bits.
func hash4(salt uint64, seed int64, k int, key uint64) uint64 {
	h := mix64(salt ^ uint64(seed))
	h = mix64(h ^ uint64(k))
	return mix64(h ^ key)
}

// fnv64 is FNV-1a over b; it turns source tokens into stable 64-bit keys.
func fnv64(b []byte) uint64 {
	h := uint64(0xcbf29ce484222325)
	for _, c := range b {
		h ^= uint64(c)
		h *= 0x100000001b3
	}
	return h
}

// rng is a tiny splitmix64 generator used for deterministic shuffles.
type rng struct{ state uint64 }

// next returns the next pseudo-random value.
func (r *rng) next() uint64 {
	r.state += 0x9e3779b97f4a7c15
	return mix64(r.state)
}

// intn returns a value in [0, n); n must be positive.
func (r *rng) intn(n int) int {
	return int(r.next() % uint64(n))
}
