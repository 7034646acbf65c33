// Package meterstore keeps the meter's calls, a row each, in a SQLite file
// or a PostgreSQL database that meters share, and the invocations the gate
// opened. A call is reserved at its worst case before it goes upstream and
// settled after. Admission reserves under the lock, so concurrent
// calls cannot overshoot together (docs/meter.md#the-store).
package meterstore
