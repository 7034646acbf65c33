package briefing

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/gns-guard/gns-guard/internal/entryload"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// MaxFiles is the most files a load takes: the protocol's limit.
const MaxFiles = entryload.MaxFiles

// maxDocBytes bounds a file or skill: the largest cap (a large task's
// 18,500 tokens) holds far less text.
const maxDocBytes = 1 << 20

// ReadDocs reads the files a task names and the skill ("" for none), in
// that order, through read: paths in the local checkout.
func ReadDocs(read func(name string) ([]byte, error), files []string, skill string) ([]entryload.Doc, *entryload.Doc, error) {
	var docs []entryload.Doc
	for _, p := range files {
		d, err := readDoc(read, "file", p)
		if err != nil {
			return nil, nil, err
		}
		docs = append(docs, d)
	}
	if skill == "" {
		return docs, nil, nil
	}
	s, err := readDoc(read, "skill", skill)
	if err != nil {
		return nil, nil, err
	}
	return docs, &s, nil
}

// readDoc reads a file or skill and refuses what cannot be loaded as
// text.
func readDoc(read func(string) ([]byte, error), what, path string) (entryload.Doc, error) {
	data, err := read(path)
	if err != nil {
		return entryload.Doc{}, usageError("context: cannot read the %s %s: %v", what, path, unwrapPath(err))
	}
	if len(data) > maxDocBytes {
		return entryload.Doc{}, usageError("context: the %s %s is %s bytes, over the %s a load reads (the largest cap, a large task's "+
			"18,500 tokens, holds about 70 KB): name a smaller file or the part the task needs",
			what, path, tokens.Format(len(data)), "1 MiB")
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		line := 1 + bytes.Count(data[:i], []byte("\n"))
		return entryload.Doc{}, notText("context: the %s %s looks binary (a NUL byte on line %d, byte offset %d): only text files can be "+
			"loaded", what, path, line, i)
	}
	if err := issues.CheckUTF8(data); err != nil {
		return entryload.Doc{}, notText("context: the %s %s is not UTF-8 text (%v): convert it to UTF-8 or leave it out", what, path, err)
	}
	return entryload.Doc{Path: path, Text: string(data)}, nil
}

// unwrapPath drops the repeated path from an *os.PathError.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// usageError is a mistake in what the caller asked for: exit 2.
func usageError(format string, args ...any) error {
	return &exitcode.UsageError{Err: fmt.Errorf(format, args...)}
}

// notText is a finding about an input: it is not text the guard reads.
// Exit 1, as for any finding about the input (docs/contract.md §9).
func notText(format string, args ...any) error {
	return &exitcode.ViolationError{Err: fmt.Errorf(format, args...)}
}
