package ratelimit

import "time"

// Bucket is a token bucket refilled every second.
type Bucket struct {
	tokens, burst int
	last          time.Time
}

// Allow takes cost tokens if the bucket holds them.
func (b *Bucket) Allow(now time.Time, cost int) bool {
	b.refill(now)
	if b.tokens < cost {
		return false
	}
	b.tokens -= cost
	return true
}
