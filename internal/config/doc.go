// Package config is the guard's configuration as the decision core reads
// it: limits, thresholds, label names, keys and prices, and their
// defaults. internal/settings resolves it from the action's inputs, the
// command line and .gitea/gns-guard.yml; the layers above take it as it
// is.
package config
