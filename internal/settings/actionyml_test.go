package settings

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

var update = flag.Bool("update", false, "rewrite docs/configuration.md and action.yml's inputs from the table")

// actionYML is action.yml, at the repository's root.
var actionYML = filepath.Join("..", "..", "action.yml")

// fileSuffix ends the description of every input a file may set.
func fileSuffix(s Setting) string {
	return " Default: " + s.ShownDefault() + ". May also be set in " + FileName + "."
}

// wantDescription is the description action.yml gives an input.
func wantDescription(s Setting) string {
	if s.File {
		return s.Description + fileSuffix(s)
	}
	return s.Description
}

// TestActionYAML holds action.yml's inputs to the table: the same inputs,
// the same descriptions, and no default for an input a file may set (a
// runner hands the step every default of action.yml as an input, which
// would override the file).
func TestActionYAML(t *testing.T) {
	data, err := os.ReadFile(actionYML)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		data = rewriteInputs(t, data)
		if err := os.WriteFile(actionYML, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var doc struct {
		Inputs yaml.Node `yaml:"inputs"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	type input struct {
		Description string  `yaml:"description"`
		Required    *bool   `yaml:"required"`
		Default     *string `yaml:"default"`
	}
	var order []string
	inputs := map[string]input{}
	for i := 0; i+1 < len(doc.Inputs.Content); i += 2 {
		name := doc.Inputs.Content[i].Value
		var in input
		if err := doc.Inputs.Content[i+1].Decode(&in); err != nil {
			t.Fatalf("action.yml: input %s: %v", name, err)
		}
		order = append(order, name)
		inputs[name] = in
	}
	if want := names(func(s Setting) bool { return s.Input }); !slices.Equal(order, want) {
		t.Errorf("action.yml's inputs are\n  %s\nthe table's inputs, in its order, are\n  %s", strings.Join(order, ", "), strings.Join(want, ", "))
	}
	const fix = "(go test ./internal/settings -run TestActionYAML -update rewrites action.yml's inputs from the table)"
	for _, s := range Table() {
		in, ok := inputs[s.Name]
		switch {
		case !s.Input && ok:
			t.Errorf("action.yml declares input %s, which the table says is not an input %s", s.Name, fix)
			continue
		case !s.Input:
			continue
		case !ok:
			t.Errorf("action.yml lacks input %s %s", s.Name, fix)
			continue
		}
		if in.Required == nil || *in.Required {
			t.Errorf("action.yml: input %s: want required: false", s.Name)
		}
		switch {
		case s.File && in.Default != nil:
			t.Errorf("action.yml: input %s has default %q; an input the file may set has none (its default, %s, lives in the table) %s",
				s.Name, *in.Default, s.ShownDefault(), fix)
		case !s.File && s.ActionDefault != "" && (in.Default == nil || *in.Default != s.ActionDefault):
			t.Errorf("action.yml: input %s: want default %s", s.Name, s.ActionDefault)
		case !s.File && s.ActionDefault == "" && in.Default != nil:
			t.Errorf("action.yml: input %s has default %q; the table gives it none", s.Name, *in.Default)
		}
		if s.File && !strings.HasSuffix(in.Description, fileSuffix(s)) {
			t.Errorf("action.yml: the description of input %s does not end with the table's default:\n  %q\nwant it to end with\n  %q %s",
				s.Name, in.Description, fileSuffix(s), fix)
		}
		if want := wantDescription(s); in.Description != want {
			t.Errorf("action.yml: input %s:\n  description %q\n  want        %q %s", s.Name, in.Description, want, fix)
		}
	}
}

// rewriteInputs replaces action.yml's inputs section with the table's
// inputs, leaving the rest of the file as it is.
func rewriteInputs(t *testing.T, data []byte) []byte {
	t.Helper()
	start := bytes.Index(data, []byte("\ninputs:\n"))
	end := bytes.Index(data, []byte("\noutputs:\n"))
	if start < 0 || end < start {
		t.Fatal("action.yml: no inputs: section followed by an outputs: section to rewrite")
	}
	var b bytes.Buffer
	b.Write(data[:start])
	b.WriteString("\ninputs:\n")
	b.WriteString("  # Written from the settings table (internal/settings) by\n")
	b.WriteString("  # go test ./internal/settings -run TestActionYAML -update\n")
	b.WriteString("  # The inputs .gitea/gns-guard.yml may set have no default here: a runner\n")
	b.WriteString("  # hands the step every default as an input, which would override the file.\n")
	for _, s := range Table() {
		if !s.Input {
			continue
		}
		b.WriteString("  " + s.Name + ":\n    description: >-\n")
		for _, line := range wrap(wantDescription(s), 72) {
			b.WriteString("      " + line + "\n")
		}
		b.WriteString("    required: false\n")
		if s.ActionDefault != "" {
			b.WriteString("    default: " + s.ActionDefault + "\n")
		}
	}
	b.Write(data[end:])
	return b.Bytes()
}

// wrap breaks text into lines of at most width bytes at spaces (a longer
// word gets a line of its own); an expression ${{ ... }} is one word.
func wrap(text string, width int) []string {
	var words []string
	for _, w := range strings.Fields(text) {
		if n := len(words); n > 0 && strings.Contains(words[n-1], "${{") && !strings.Contains(words[n-1], "}}") {
			words[n-1] += " " + w
			continue
		}
		words = append(words, w)
	}
	var lines []string
	line := ""
	for _, w := range words {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	return append(lines, line)
}

func TestWrap(t *testing.T) {
	got := wrap("aa bb cc dddddd e ${{ x.y }}.", 5)
	want := []string{"aa bb", "cc", "dddddd", "e", "${{ x.y }}."}
	if !slices.Equal(got, want) {
		t.Errorf("wrap = %q, want %q", got, want)
	}
}
