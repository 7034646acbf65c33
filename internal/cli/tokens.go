package cli

import (
	"fmt"

	"github.com/gns-guard/gns-guard/internal/tokens"
)

// tokensReport is the JSON form of `tokens`.
type tokensReport struct {
	File     string `json:"file"`
	Encoding string `json:"encoding"`
	Tokens   int    `json:"tokens"`
}

// runTokens prints the token count of a file as the guard counts it.
func runTokens(args []string, env Env) error {
	fs := newFlags("tokens", env, "tokens FILE|- [--encoding cl100k_base|o200k_base] [--format text|json]")
	encName := fs.String("encoding", string(tokens.CL100kBase), "tokenizer encoding: cl100k_base or o200k_base")
	format := fs.String("format", "text", "output format: text (the count alone) or json")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	name, err := oneArg("tokens", pos)
	if err != nil {
		return err
	}
	if err := checkFormat("tokens", *format); err != nil {
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
	n := counter.Count(text)
	if *format == "json" {
		source := name
		if name == "-" {
			source = "stdin"
		}
		return printJSON(env, tokensReport{File: source, Encoding: string(enc), Tokens: n})
	}
	_, err = fmt.Fprintln(env.Stdout, n)
	return err
}
