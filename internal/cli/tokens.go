package cli

import (
	"fmt"

	"github.com/gns-guard/gns-guard/internal/tokens"
)

func runTokens(args []string, env Env) error {
	fs := newFlags("tokens", env, "tokens FILE|- [--encoding cl100k_base|o200k_base]")
	encName := fs.String("encoding", string(tokens.CL100kBase), "tokenizer encoding: cl100k_base or o200k_base")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	name, err := oneArg("tokens", pos)
	if err != nil {
		return err
	}
	enc, err := tokens.ParseEncoding(*encName)
	if err != nil {
		return usageError("tokens: %v", err)
	}
	text, err := readInput(env, name)
	if err != nil {
		return err
	}
	counter, err := tokens.New(enc)
	if err != nil {
		return cannotRun(err)
	}
	fmt.Fprintln(env.Stdout, counter.Count(text))
	return nil
}
