// Package checkpoint finds, decodes, validates and rewrites the GNS-2
// checkpoint block (schema v2), and prints its JSON Schema. Every value
// keeps its position in the body, so a finding points at the line and
// column to fix. It is pure; a caller's deadline bounds the YAML parse.
package checkpoint
