// Package settings is the guard's one table of settings: every input of the
// action, every key of the repository's configuration file
// .gitea/gns-guard.yml and every flag of the CLI verbs that judge an issue
// is a row of it, with its type, what it accepts and its default.
//
// Values come in layers (the file, the action's inputs, a verb's flags);
// Resolve starts from the table's defaults, applies the layers in order (a
// later one wins, key by key) and checks every value against its row, so
// the action and the CLI judge with the same configuration and refuse the
// same mistakes with the same words. The configuration reference,
// docs/configuration.md, is rendered from the table too (a test keeps it
// so).
//
// The package reads no files, environment or network: its callers hand it
// the file's bytes, an input reader and a flag set.
package settings
