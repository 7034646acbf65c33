package mcpserver

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/flagdoc"
	"github.com/gns-guard/gns-guard/internal/settings"
	"github.com/google/jsonschema-go/jsonschema"
)

// A FILE verb's tool takes one of these instead.
const (
	// FileArg is a path, as the verb's FILE.
	FileArg = "file"
	// TextArg is the input itself, fed on standard input.
	TextArg = "text"
)

// param is a tool argument: its flag and schema.
type param struct {
	name string // the argument: the flag's name, hyphens as underscores
	flag string // the flag's name; "" for FileArg and TextArg
	kind kind
}

// kind is how an argument's value becomes a flag's value.
type kind int

const (
	text    kind = iota // a string, as it is
	number              // a JSON number
	boolean             // true or false
	list                // an array of strings: the flag repeated
	joined              // a string, or an array of strings joined by commas
	either              // a whole number or a string (a depth: 3 or n)
)

// ArgName turns a flag's hyphens into underscores.
func ArgName(flagName string) string { return strings.ReplaceAll(flagName, "-", "_") }

// schema is a tool's input schema and its arguments, made from the verb's
// flags: every flag the tool takes, typed by the settings table or by the
// flag's own type, described by its usage text; the tool's Required are
// required, and a flag whose value is named a|b|c takes one of those
// words (package flagdoc).
func schema(t Tool, o Options) (*jsonschema.Schema, []param, error) {
	s := &jsonschema.Schema{
		Type:       "object",
		Properties: map[string]*jsonschema.Schema{},
		// An unknown argument is a mistake, not ignored.
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
	var params []param
	add := func(p param, ps *jsonschema.Schema, required bool) error {
		if _, dup := s.Properties[p.name]; dup {
			return fmt.Errorf("mcpserver: tool %s: two arguments are named %s", t.Name, p.name)
		}
		s.Properties[p.name] = ps
		s.PropertyOrder = append(s.PropertyOrder, p.name)
		if required {
			s.Required = append(s.Required, p.name)
		}
		params = append(params, p)
		return nil
	}
	var err error
	t.Flags.VisitAll(func(f *flag.Flag) {
		if err != nil || o.omitted(f.Name) {
			return
		}
		p, ps := flagParam(f)
		err = add(p, ps, slices.Contains(t.Required, f.Name) && o.Defaults[f.Name] == "")
	})
	if err == nil && t.File {
		err = addFileParams(t, add)
	}
	return s, params, err
}

// addFileParams adds FileArg and TextArg.
func addFileParams(t Tool, add func(param, *jsonschema.Schema, bool) error) error {
	what := t.FileDescription
	if what == "" {
		what = "the input"
	}
	if err := add(param{name: FileArg, kind: text}, &jsonschema.Schema{Type: "string",
		Description: "a file holding " + what + ", on the server's machine (give " + FileArg + " or " + TextArg + ")"}, false); err != nil {
		return err
	}
	return add(param{name: TextArg, kind: text}, &jsonschema.Schema{Type: "string",
		Description: what + " itself, as text (give " + FileArg + " or " + TextArg + ")"}, false)
}

// flagParam is the argument and schema of one flag.
func flagParam(f *flag.Flag) (param, *jsonschema.Schema) {
	_, usage := flagdoc.Value(f)
	p := param{name: ArgName(f.Name), flag: f.Name}
	ps := &jsonschema.Schema{Description: usage}
	if s, ok := settings.Lookup(f.Name); ok && s.Flag {
		p.kind = settingKind(s, ps)
		return p, ps
	}
	p.kind = valueKind(f, ps)
	for _, c := range flagdoc.Choices(f) {
		ps.Enum = append(ps.Enum, c)
	}
	return p, ps
}

// settingKind types a setting flag by its table row; the command line takes
// strings.
func settingKind(s settings.Setting, ps *jsonschema.Schema) kind {
	ps.Description += " Accepts " + s.Range + "."
	switch s.Kind {
	case settings.Bool:
		ps.Type = "boolean"
		return boolean
	case settings.Int:
		ps.Type = "integer"
		return number
	case settings.Float:
		ps.Type = "number"
		return number
	case settings.List:
		ps.Types = []string{"string", "array"}
		ps.Items = &jsonschema.Schema{Type: "string"}
		return joined
	case settings.MaxDepth:
		ps.Types = []string{"integer", "string"}
		return either
	case settings.Enum:
		ps.Type = "string"
		for _, c := range s.Choices {
			ps.Enum = append(ps.Enum, c)
		}
		return text
	}
	ps.Type = "string"
	return text
}

// valueKind types a flag by its value: a bool flag is a boolean, a number
// flag an integer or a number, a string flag a string, and a flag whose
// value is none of these (a repeatable flag) an array of strings.
func valueKind(f *flag.Flag, ps *jsonschema.Schema) kind {
	switch {
	case flagdoc.IsBool(f):
		ps.Type = "boolean"
		return boolean
	case flagdoc.Repeats(f):
		ps.Type = "array"
		ps.Items = &jsonschema.Schema{Type: "string"}
		return list
	}
	switch f.Value.(flag.Getter).Get().(type) {
	case int, int64, uint, uint64:
		ps.Type = "integer"
		return number
	case float64:
		ps.Type = "number"
		return number
	}
	ps.Type = "string"
	return text
}

// omitted: the server's connection, secrets, and what every call is given.
func (o Options) omitted(name string) bool {
	if _, fixed := o.Fixed[name]; fixed {
		return true
	}
	return slices.Contains(o.Omit, name)
}
