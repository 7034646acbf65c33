package cli

import "github.com/gns-guard/gns-guard/internal/offline"

// readText reads a text input, FILE or standard input for "-", as
// readInput does, and refuses what cannot be text the guard reads
// (offline.CheckText): too large, binary, or not UTF-8.
func readText(env Env, verb, what, name string, limit int) (string, error) {
	text, err := readInput(env, name)
	if err != nil {
		return "", err
	}
	if err := offline.CheckText(verb, what, name, []byte(text), limit); err != nil {
		return "", inputError{err}
	}
	return text, nil
}
