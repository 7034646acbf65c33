// Package meterstore keeps the meter's calls, a row each, in a SQLite file
// or a PostgreSQL database that meters share. A call is reserved at its
// worst case before it goes upstream and settled after; one never settled
// stays charged at its worst. Admission reserves under the lock, so
// concurrent calls cannot overshoot together (docs/meter.md#the-store).
// It also keeps the invocations the gate opened, under the same lock.
package meterstore
