package cli

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/gns-guard/gns-guard/internal/live"
)

// printIndented prints v as JSON indented by two spaces, with <, > and &
// escaped (as encoding/json.MarshalIndent writes them). Only a value that
// cannot be encoded is an error.
func printIndented(env Env, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return cannotRun(err)
	}
	fmt.Fprintf(env.Stdout, "%s\n", data)
	return nil
}

// printJSON prints v as indented JSON (with <, > and & as they are).
func printJSON(env Env, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return cannotRun(err)
	}
	_, err := env.Stdout.Write(b.Bytes())
	return err
}

// printUntrusted prints text that holds issue content. Inside Actions
// (GITHUB_ACTIONS=true) the runner would obey workflow commands in it, so
// it is fenced with ::stop-commands::<random token> and ::<token>::.
func printUntrusted(env Env, text string) {
	if env.Getenv("GITHUB_ACTIONS") != "true" {
		fmt.Fprint(env.Stdout, text)
		return
	}
	fmt.Fprint(env.Stdout, live.Fenced(text))
}
