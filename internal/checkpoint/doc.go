// Package checkpoint finds, decodes, validates and rewrites the GNS-2
// checkpoint block of an issue body (schema v2), and prints its JSON Schema.
//
// Every decoded value keeps its position in the issue body, so a finding
// points at the exact line and column a person has to fix. It is pure: no
// request, no clock (a caller's deadline bounds the YAML parse).
package checkpoint
