// Package jsoncap reads JSON of untrusted size in bounded memory. Copy
// compacts one value, leaving out every string over a limit and noting it;
// input cut at a cap is closed so what came before still decodes. Texts
// anyone may write reach six bytes a character in Gitea's JSON.
package jsoncap
