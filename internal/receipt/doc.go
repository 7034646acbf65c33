// Package receipt holds the meter's signed receipt of an invocation: what
// gns-guard meter counted for one invocation on one issue (calls, token
// classes, cost), signed with the Ed25519 key derived from the meter-key
// secret. `report` carries it in the result comment's GNS_EVENT footer;
// the guard verifies it with meter-public-key
// (docs/meter.md#receipts). It is data and cryptography only: no request,
// no clock.
package receipt
