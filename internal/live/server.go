package live

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/gns-guard/gns-guard/internal/exitcode"
)

// ServerURL is the server --server or $GITHUB_SERVER_URL names. One
// written without its scheme (gitea.example.com) is a usage error that
// says what to add.
func ServerURL(verb, flagValue string, getenv func(string) string) (string, error) {
	server, source := strings.TrimSpace(flagValue), "--server"
	if server == "" {
		server, source = strings.TrimSpace(getenv("GITHUB_SERVER_URL")), "GITHUB_SERVER_URL"
	}
	if err := NotPlaceholder(verb, source, server); err != nil {
		return "", err
	}
	scheme, rest, hasScheme := strings.Cut(server, "://")
	switch {
	case server == "":
		return "", usageError("%s: no server: pass --server URL or set GITHUB_SERVER_URL", verb)
	case !hasScheme || rest == "":
		return "", usageError("%s: %s %q has no scheme: write https://%s (or http:// for a server without TLS)",
			verb, source, server, strings.TrimPrefix(server, "//"))
	case scheme != "http" && scheme != "https":
		return "", usageError("%s: %s %q: the server's URL starts with https:// or http://, not %s://", verb, source, server, scheme)
	}
	return server, nil
}

// placeholderRef is a reference to a variable left as written: ${VAR},
// {env:VAR}, $VAR, %VAR%.
var placeholderRef = regexp.MustCompile(`\$\{[^}]*\}|\{env:[^}]*\}|^\$[A-Za-z_][A-Za-z0-9_]*$|^%[A-Za-z_][A-Za-z0-9_]*%$`)

// NotPlaceholder refuses a value that is a variable's reference nobody
// expanded (what a client's configuration passes on when it does not
// expand it): the server would reject it as a token, and the message would
// blame the token. A usage error naming the value's source and the
// reference.
func NotPlaceholder(verb, source, value string) error {
	ref := placeholderRef.FindString(strings.TrimSpace(value))
	if ref == "" {
		return nil
	}
	return usageError("%s: %s is %q, a placeholder nobody expanded, not a value: whatever started gns-guard passed the text as written "+
		"(an MCP client's configuration?); set the variable itself in the environment it starts gns-guard from (docs/mcp.md)", verb, source, ref)
}

// Token is the token the flag or the environment gives, and where it
// came from ("" when none was given).
func Token(flagValue string, getenv func(string) string) (token, source string) {
	for _, c := range []struct{ value, source string }{
		{flagValue, "--token"}, {getenv("GITEA_TOKEN"), "GITEA_TOKEN"}, {getenv("GITHUB_TOKEN"), "GITHUB_TOKEN"},
	} {
		if v := strings.TrimSpace(c.value); v != "" {
			return v, c.source
		}
	}
	return "", ""
}

func usageError(format string, args ...any) error {
	return &exitcode.UsageError{Err: fmt.Errorf(format, args...)}
}
