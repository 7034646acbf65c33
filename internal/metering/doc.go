// Package metering holds the meter's decisions, pure: the route an agent
// calls (the issue, the invocation, the provider and its endpoint), the
// worst case of a call read from its request, the standing read
// from the guard's judgement, whether a call is admitted, the usage read
// from a provider's answer (JSON or a server-sent-event stream), the cost
// by the price table, and every refusal in the provider's own error shape.
// It makes no request and reads no clock: package meter is the HTTP shell
// around it (docs/meter.md).
package metering
