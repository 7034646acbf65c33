package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/gns-guard/gns-guard/internal/offline"
)

// tokensOptions are the parsed flags and FILE of `tokens`.
type tokensOptions struct {
	fileOptions
	encodingName string
	encoding     string
}

// tokensFlags declares the flags of `tokens`.
func tokensFlags(fs *flag.FlagSet) options {
	o := &tokensOptions{}
	fs.StringVar(&o.encodingName, "encoding", offline.DefaultEncoding, "tokenizer encoding: `cl100k_base|o200k_base`")
	fs.StringVar(&o.format, "format", "text", "output format: `text|json` (text: the count alone)")
	return o
}

func (o *tokensOptions) validate(_ *flag.FlagSet, pos []string, _ Env) error {
	if err := o.validateFile("tokens", pos); err != nil {
		return err
	}
	enc, err := offline.Encoding(o.encodingName)
	if err != nil {
		return usageError("tokens: %v", err)
	}
	o.encoding = enc
	return nil
}

// runTokens prints the token count of a file as the guard counts it.
func runTokens(ctx context.Context, o *tokensOptions, env Env) error {
	text, err := o.read(env)
	if err != nil {
		return err
	}
	n, err := offline.Count(ctx, o.source(), text, o.encoding)
	if err != nil {
		return err
	}
	if o.format == "json" {
		return printJSON(env, n)
	}
	_, err = fmt.Fprintln(env.Stdout, n.Tokens)
	return err
}
