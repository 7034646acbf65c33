// Package metering holds the meter's pure decisions: the route, a call's
// worst case read from its request, the standing, admission, the
// usage read from an answer, its cost, and refusals in the provider's own
// error shape. It makes no request and reads no clock; package meter is the
// HTTP shell (docs/meter.md).
package metering
