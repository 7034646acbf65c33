package offline

import (
	"bytes"
	"context"
	"fmt"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// ParseTimeout bounds a parse of a body's YAML.
const ParseTimeout = checkpoint.ParseTimeout

// DefaultTailLimit is the history-tail setting's default.
const DefaultTailLimit = checkpoint.DefaultTailLimit

// Schema is the checkpoint's JSON Schema (version 2) for a history-tail
// setting.
func Schema(tail int) []byte { return checkpoint.JSONSchema(tail) }

// DefaultEncoding is the tokenizer encoding the guard counts with unless
// configured.
const DefaultEncoding = string(tokens.DefaultEncoding)

// Encoding is the encoding s names (case and spaces aside), or an error
// naming the accepted ones.
func Encoding(s string) (string, error) {
	e, err := tokens.ParseEncoding(s)
	return string(e), err
}

// TokenCount is a file's token count, the JSON form of `tokens`.
type TokenCount struct {
	File     string `json:"file"`
	Encoding string `json:"encoding"`
	Tokens   int    `json:"tokens"`
}

// Count is the token count of file's text in the encoding, as the guard
// counts it.
func Count(ctx context.Context, file, text, encoding string) (TokenCount, error) {
	tc := TokenCount{File: file, Encoding: encoding}
	c, err := tokens.New(tokens.Encoding(encoding))
	if err != nil {
		return tc, &exitcode.CannotRunError{Err: err}
	}
	tc.Tokens, err = c.CountContext(ctx, text)
	return tc, err
}

// Counted is in with the counter of its configuration's encoding.
func (in Input) Counted() (Input, error) {
	c, err := tokens.New(in.Config.Encoding)
	if err != nil {
		return in, &exitcode.CannotRunError{Err: err}
	}
	in.Counter = c
	return in, nil
}

// CheckText refuses what cannot be text the guard reads: more than limit
// bytes (a usage error), a NUL byte, or bytes that are not UTF-8 (a
// violation). Each refusal names the verb, what the input is for, the file
// and where the problem is.
func CheckText(verb, what, name string, data []byte, limit int) error {
	if len(data) > limit {
		return &exitcode.UsageError{Err: fmt.Errorf("%s: the %s %s is %s bytes, over the %s bytes it may hold: shorten it",
			verb, what, name, tokens.Format(len(data)), tokens.Format(limit))}
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		line := 1 + bytes.Count(data[:i], []byte("\n"))
		return &exitcode.ViolationError{Err: fmt.Errorf("%s: the %s %s looks binary (a NUL byte on line %d, byte offset %d): only text can be read",
			verb, what, name, line, i)}
	}
	if err := issues.CheckUTF8(data); err != nil {
		return &exitcode.ViolationError{Err: fmt.Errorf("%s: the %s %s is not UTF-8 text (%v): convert it to UTF-8", verb, what, name, err)}
	}
	return nil
}
