// Package meterstore keeps the meter's calls: a row per call, reserved at
// its worst case before it goes upstream and settled with what it spent
// after, in an embedded SQLite file (the default) or a PostgreSQL database
// that several meters share. Admission reads an issue's pending spend and
// reserves in one transaction under the lock, so concurrent calls
// cannot overshoot together; the writes queued at once share that
// transaction and its commit (batch.go). A call reserved and never settled (a meter
// that died) stays charged at its worst case: no spend is lost.
package meterstore
