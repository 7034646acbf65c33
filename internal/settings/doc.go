// Package settings is the one table of settings: every action input, key of
// .gitea/gns-guard.yml and verb flag is a row with its type, range and
// default. Resolve applies the layers (file, inputs, flags) over the
// defaults and checks each value, so action and CLI refuse the same
// mistakes alike. docs/configuration.md is rendered from it. It is pure.
package settings
