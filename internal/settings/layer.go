package settings

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/finding"
)

// Layer sources other than a file, which its path names.
const (
	// SourceInput is the Source of the action's inputs.
	SourceInput = "input"
	// SourceFlag is the Source of a CLI verb's flags.
	SourceFlag = "flag"
)

// MaxFileBytes refuses a larger file before parsing.
const MaxFileBytes = 64 << 10

// Value is a setting's value as given, with its position.
type Value struct {
	// Text is a file scalar, an input or a flag.
	Text string
	// List holds a file's YAML list items; IsList marks one.
	List   []string
	IsList bool
	// Line and Col are 1-based in the file; 0 for inputs and flags.
	Line, Col int
}

// Layer is one source: the file, the inputs, or a verb's flags.
type Layer struct {
	// Source is the file's path (FileName in the action), SourceInput or
	// SourceFlag.
	Source string
	// Values maps a setting's Name to its value.
	Values map[string]Value
}

// kind says which of the table's columns governs the layer.
func (l Layer) kind() where {
	switch l.Source {
	case SourceInput:
		return inInput
	case SourceFlag:
		return inFlag
	}
	return inFile
}

// FileLayer reads the configuration file name, a YAML mapping of settings.
// A list may be YAML or comma- or newline-separated text; a number plain or
// quoted; an empty file is an empty layer. Oversize, bad YAML, aliases,
// unknown or repeated keys, secrets and wrong shapes are an *Error with
// line and column. Resolve checks ranges.
func FileLayer(name string, data []byte) (Layer, error) {
	l := Layer{Source: name, Values: map[string]Value{}}
	root, err := fileRoot(name, data)
	if err != nil || root == nil {
		return l, err
	}
	if root.Kind != yaml.MappingNode {
		return l, &Error{Source: name, Line: root.Line, Col: root.Column,
			Reason: "expected a mapping of settings (name: value, one a line), got " + checkpoint.Describe(root)}
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		r, err := fileKey(name, k, seen)
		if err != nil {
			return l, err
		}
		val, err := fileValue(name, r.Setting, v)
		if err != nil {
			return l, err
		}
		l.Values[k.Value] = val
	}
	return l, nil
}

// fileRoot reads the file's one YAML document and returns its root node,
// or nil for an empty file (or one of comments only, or null).
func fileRoot(name string, data []byte) (*yaml.Node, error) {
	if len(data) > MaxFileBytes {
		return nil, &Error{Source: name, Reason: fmt.Sprintf(
			"the file is %d bytes, more than the %d (64 KiB) read; it holds only settings, one a line", len(data), MaxFileBytes)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, yamlError(name, err)
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, yamlError(name, err)
		}
		return nil, &Error{Source: name, Line: next.Line, Col: next.Column,
			Reason: "a second YAML document starts here; keep the settings in one mapping, with no --- line among them"}
	}
	if a := findAlias(&doc); a != nil {
		return nil, &Error{Source: name, Line: a.Line, Col: a.Column,
			Reason: "anchors and aliases are not allowed in this file; write the value out"}
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil, nil
	}
	return doc.Content[0], nil
}

// fileKey checks key node k of the file: a setting's name that a file may
// hold, not given before (seen holds the lines of the keys before).
func fileKey(name string, k *yaml.Node, seen map[string]int) (*row, error) {
	if k.Kind != yaml.ScalarNode {
		return nil, &Error{Source: name, Line: k.Line, Col: k.Column,
			Reason: "expected a setting's name as the key, got " + checkpoint.Describe(k)}
	}
	key := k.Value
	r, known := byName[key]
	switch {
	case !known:
		return nil, &Error{Source: name, Key: key, Line: k.Line, Col: k.Column, Reason: "unknown key" + hint(key)}
	case r.Kind == Secret:
		return nil, &Error{Source: name, Key: key, Line: k.Line, Col: k.Column, Reason: secretInFile(key)}
	case !r.File:
		return nil, &Error{Source: name, Key: key, Line: k.Line, Col: k.Column, Reason: notInFile(r.Setting)}
	}
	if line, dup := seen[key]; dup {
		return nil, &Error{Source: name, Key: key, Line: k.Line, Col: k.Column,
			Reason: fmt.Sprintf("already set at line %d; keep one", line)}
	}
	seen[key] = k.Line
	return r, nil
}

// fileValue reads the value node of setting s.
func fileValue(name string, s Setting, n *yaml.Node) (Value, error) {
	v := Value{Line: n.Line, Col: n.Column}
	wrong := func(n *yaml.Node, what string) error {
		return &Error{Source: name, Key: s.Name, Want: s.Range, Line: n.Line, Col: n.Column,
			Reason: "expected " + what + ", got " + checkpoint.Describe(n)}
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if !isNull(n) {
			v.Text = n.Value
		}
		return v, nil
	case yaml.MappingNode:
		if s.Kind != Map {
			return v, wrong(n, s.Range)
		}
		return mapValue(v, n, wrong)
	case yaml.SequenceNode:
		if s.Kind != List && s.Kind != Map {
			return v, wrong(n, s.Range)
		}
		v.IsList, v.List = true, []string{}
		for _, item := range n.Content {
			if item.Kind != yaml.ScalarNode {
				return v, wrong(item, "a name in the list")
			}
			if !isNull(item) {
				v.List = append(v.List, item.Value)
			}
		}
		return v, nil
	}
	return v, wrong(n, s.Range)
}

// mapValue reads names to a login or logins into NAME=LOGIN items.
func mapValue(v Value, n *yaml.Node, wrong func(*yaml.Node, string) error) (Value, error) {
	v.IsList, v.List = true, []string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return v, wrong(k, "an agent's name")
		}
		logins := []*yaml.Node{val}
		if val.Kind == yaml.SequenceNode {
			logins = val.Content
		}
		for _, l := range logins {
			if l.Kind != yaml.ScalarNode || isNull(l) {
				return v, wrong(l, "a login, or a list of logins")
			}
			v.List = append(v.List, k.Value+"="+l.Value)
		}
	}
	return v, nil
}

// InputLayer is the layer of the action's inputs: every input of
// action.yml whose value, trimmed, is not empty. input returns an input's
// value ("" when the workflow does not give it: a runner hands the step
// "" for an input with no default).
func InputLayer(input func(name string) string) Layer {
	l := Layer{Source: SourceInput, Values: map[string]Value{}}
	for _, r := range rows {
		if !r.Input {
			continue
		}
		if v := strings.TrimSpace(input(r.Name)); v != "" {
			l.Values[r.Name] = Value{Text: v}
		}
	}
	return l
}

// Flags registers a string flag on fs for every setting that is one, with
// its Description and table default as help. The flags' own defaults are
// empty, so an unset flag leaves the file's value. The returned function,
// called after fs.Parse, gives the layer of the flags set (--x= included).
func Flags(fs *flag.FlagSet) func() Layer {
	vals := map[string]*string{}
	for _, r := range rows {
		if !r.Flag {
			continue
		}
		usage := r.Description
		if r.Default != "" {
			usage += " (default " + r.Default + ")"
		}
		vals[r.Name] = fs.String(r.Name, "", usage)
	}
	return func() Layer {
		l := Layer{Source: SourceFlag, Values: map[string]Value{}}
		fs.Visit(func(f *flag.Flag) {
			if p, ok := vals[f.Name]; ok {
				l.Values[f.Name] = Value{Text: *p}
			}
		})
		return l
	}
}

// ParseList is a comma-separated flag's items, as a list setting reads them.
func ParseList(value string) []string { return config.ParseList(value) }

// yamlLine finds the line in yaml.v3's syntax errors.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError keeps a YAML syntax error's line.
func yamlError(name string, err error) error {
	msg := err.Error()
	// yaml.v3 leaves the line out when it is the first.
	e := &Error{Source: name, Line: 1}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	e.Reason = "not valid YAML: " + strings.TrimPrefix(msg, "yaml: ")
	return e
}

// findAlias returns the first alias node under n, or nil.
func findAlias(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode {
		return n
	}
	for _, c := range n.Content {
		if a := findAlias(c); a != nil {
			return a
		}
	}
	return nil
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// secretInFile says why a secret may not be in the file.
func secretInFile(name string) string {
	what := "token"
	if strings.HasSuffix(name, "key") {
		what = "key"
	}
	env := "GNS_GUARD_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	return fmt.Sprintf("a secret never goes in this file, which anyone who can read the repository can read: "+
		"delete the line, make a new %s (this one is exposed), keep it in the repository's Actions secrets "+
		"and pass it to the step as an input (%s: ${{ secrets.%s }})", what, name, env)
}

// notInFile says where a non-file setting goes.
func notInFile(s Setting) string {
	switch {
	case s.Input:
		return "may not be set in this file; give it to the step as an input"
	case s.Flag:
		return "may not be set in this file; give it as a flag"
	}
	return "may not be set in this file"
}

// hint suggests the nearest setting's name for an unknown key (or every
// name it begins, when it is the start of some), or lists the keys a file
// may hold.
func hint(got string) string {
	low := strings.ToLower(got)
	var all, prefixed []string
	for _, r := range rows {
		all = append(all, r.Name)
		if len(low) >= 3 && strings.HasPrefix(r.Name, low) {
			prefixed = append(prefixed, strconv.Quote(r.Name))
		}
	}
	if best, ok := finding.Nearest(got, all); ok {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	if len(prefixed) > 0 {
		return " (did you mean " + strings.Join(prefixed, " or ") + "?)"
	}
	return "; the keys are " + strings.Join(names(func(s Setting) bool { return s.File }), ", ")
}

// CheckFile reports whether a configuration file loads as the guard reads
// it: FileLayer, and every value in its setting's range (Resolve). The
// error names the file, the key and its line.
func CheckFile(name string, data []byte) error {
	l, err := FileLayer(name, data)
	if err != nil {
		return err
	}
	_, err = Resolve(l)
	return err
}
