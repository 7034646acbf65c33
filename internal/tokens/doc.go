// Package tokens counts tokens exactly as OpenAI's tiktoken does for
// cl100k_base and o200k_base (encode_ordinary).
// github.com/tiktoken-go/tokenizer merges, with vocabularies embedded
// compressed (vocab.go). Splitting is done here, since the library's
// disagrees with tiktoken (pretokenize.go). Invalid UTF-8 becomes U+FFFD as
// in Python. It is pure.
package tokens
