// Package tokens counts tokens exactly as OpenAI's tiktoken does for the
// cl100k_base and o200k_base encodings.
//
// Byte-pair merging is done by github.com/tiktoken-go/tokenizer, with its
// vocabularies embedded here compressed (see vocab.go); the
// pre-tokenization (splitting text into pieces before merging) is done here,
// because the library's splitter disagrees with tiktoken on whitespace runs
// that contain newlines (indented blank lines in YAML) and on U+007F. See
// pretokenize.go for details and testdata/tokens for the reference corpus.
//
// Text is counted as ordinary text: special-token literals such as
// "<|endoftext|>" are not treated specially (tiktoken's encode_ordinary).
// Invalid UTF-8 is first replaced with U+FFFD using the WHATWG / Python
// errors="replace" rules, as tiktoken does for bytes decoded that way.
//
// It is pure.
package tokens
