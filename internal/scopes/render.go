package scopes

import (
	"fmt"
	"strings"
)

// Needs says, e.g., "GNS_GUARD_TOKEN, ..., needs the scopes write:issue,
// ...".
func (t Token) Needs() string {
	return fmt.Sprintf("%s, the token of %s, needs the scopes %s", t.Name, t.Whose, t.List())
}

// Lacking reads "the scope read:user" or "the scopes a and b".
func Lacking(names []string) string {
	if len(names) == 1 {
		return "the scope " + names[0]
	}
	return "the scopes " + Join(names)
}

// code writes each name as Markdown code.
func code(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "`" + n + "`"
	}
	return out
}

// Markdown reads "`write:issue`, `read:repository` and `read:user`".
func (t Token) Markdown() string { return Join(code(t.Names())) }

// Table is the table of every token in Markdown, one row a scope: the
// token, whose it is, the scope, what it is for and Gitea's routes that
// ask for it.
func Table() string {
	var b strings.Builder
	b.WriteString("| token | whose, given as | scope | for | Gitea 1.26's routes that ask for it (under `/api/v1`; `…` is `" + repo +
		"`) |\n|---|---|---|---|---|\n")
	for _, t := range Tokens {
		for i, s := range t.Scopes {
			name, whose := "", ""
			if i == 0 {
				name, whose = "`"+t.Name+"`", t.Whose+"; "+t.Given
			}
			routes := make([]string, len(s.Routes))
			for i, r := range s.Routes {
				routes[i] = strings.Replace(r, repo, "…", 1)
			}
			fmt.Fprintf(&b, "| %s | %s | `%s` | %s | %s |\n", name, whose, s.Name, s.For, strings.Join(code(routes), ", "))
		}
	}
	return b.String()
}

// VerbTable lists each agent verb and its scopes.
func VerbTable() string {
	var b strings.Builder
	b.WriteString("| verb | scopes |\n|---|---|\n")
	for _, v := range AgentVerbs {
		s := strings.Join(code(v.Scopes), ", ")
		if v.Flag != "" {
			also := ""
			if v.Also != "" {
				also = ", and " + v.Also
			}
			s += fmt.Sprintf(" (`%s`: %s%s)", v.Flag, strings.Join(code(v.Adds), ", "), also)
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", v.Name, s)
	}
	return b.String()
}

// Block is what the docs hold between <!-- scopes:id --> and <!--
// /scopes -->: "table" the table, "verbs" the agents' verbs, a token's
// ID its scopes in a sentence; ok is false for an unknown id.
func Block(id string) (text string, ok bool) {
	switch id {
	case "table":
		return "\n" + Table(), true
	case "verbs":
		return "\n" + VerbTable(), true
	}
	for _, t := range Tokens {
		if t.ID == id {
			return t.Markdown(), true
		}
	}
	return "", false
}

// Lacks says that the token, given as given ("admin-token"), lacks the
// scopes missing (none: it reaches public repositories and organisations
// only), and what it needs: "admin-token lacks the scope read:organization
// (GNS_GUARD_ADMIN_TOKEN, the token of the repository's owner, needs the
// scopes ...)".
func (t Token) Lacks(given string, missing []string) string {
	if len(missing) == 0 {
		return fmt.Sprintf("%s reaches public repositories and organisations only (%s, on private ones too)", given, t.Needs())
	}
	return fmt.Sprintf("%s lacks %s (%s)", given, Lacking(missing), t.Needs())
}
