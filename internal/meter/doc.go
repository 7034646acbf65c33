// Package meter is gns-guard meter's HTTP shell: a proxy between agents
// and model providers that speaks their APIs unchanged. It authenticates
// an agent by its Gitea token, admits each call by package metering,
// passes the answer through, records the spend (package meterstore) and
// signs receipts. It holds the provider keys; no agent sees one
// (docs/meter.md).
package meter
