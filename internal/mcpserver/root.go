package mcpserver

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// A server's file arguments are confined to the folder it serves
// (docs/mcp.md): its working directory, or --root. A path is resolved,
// then read through os.Root, which follows no symlink out of the folder:
// a prompt-injected model cannot have a tool read ~/.ssh or the server's
// .env. The command line reads whatever its user names.

// Root is the folder the server serves, resolved: root, or the working
// directory.
func Root(root string) (string, error) {
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		root = wd
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(resolved); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s is not a folder", root)
	}
	return resolved, nil
}

// ConfinedRead reads a file under root (its resolved path) only, at most
// limit bytes (more is an *os.PathError wrapping tooLarge): a file on disk
// through os.Root, anything else (no such file) as base answers.
func ConfinedRead(root string, limit int, tooLarge error, base func(string) ([]byte, error)) func(string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		rel, ok := underRoot(root, name)
		if !ok {
			return nil, fmt.Errorf("%s lies outside the folder the MCP server serves (%s): its tools read files under it only (gns-guard mcp --root)",
				name, root)
		}
		if _, err := os.Lstat(filepath.Join(root, rel)); err != nil {
			return base(name)
		}
		r, err := os.OpenRoot(root)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		f, err := r.Open(rel)
		if err != nil {
			return nil, fmt.Errorf("%s: %w (the MCP server's tools read files under %s only, following no link out of it)", name, err, root)
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
		if err == nil && len(data) > limit {
			return nil, &os.PathError{Op: "read", Path: name, Err: tooLarge}
		}
		return data, err
	}
}

// underRoot is name relative to root, when it lies under it: a relative
// name is taken from root; an absolute one must name a path under root
// as given or as resolved.
func underRoot(root, name string) (string, bool) {
	if !filepath.IsAbs(name) {
		return name, filepath.IsLocal(name)
	}
	candidates := []string{filepath.Clean(name)}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(name)); err == nil {
		candidates = append(candidates, filepath.Join(dir, filepath.Base(name)))
	}
	for _, c := range candidates {
		if rel, err := filepath.Rel(root, c); err == nil && filepath.IsLocal(rel) {
			return rel, true
		}
	}
	return "", false
}
