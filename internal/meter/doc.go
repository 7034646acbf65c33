// Package meter is gns-guard meter's HTTP shell: a proxy between agents
// and model providers that speaks their APIs unchanged, authenticates an
// agent by its own Gitea token, reads the issue through the one live
// reader (package live), admits each call with package metering's
// decisions, passes the answer through (JSON whole, streams event by
// event), counts what it spent into the store (package meterstore) and
// signs an invocation's total on request (package receipt). It holds the
// provider keys; no agent sees one (docs/meter.md).
package meter
