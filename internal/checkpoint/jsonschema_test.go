package checkpoint

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// structural reports whether a parse found a problem JSON Schema can see:
// everything but the cross-field invariants (budget arithmetic, agent chain
// length, the issue number), which only check knows.
func structural(r Result) bool {
	for _, f := range r.Findings {
		if f.Rule == RuleTailTooLong {
			return true
		}
		if f.Rule != RuleInvalid {
			continue
		}
		switch f.KeyPath {
		case "checkpoint.budget.remaining", "checkpoint.agent_chain", "checkpoint.issue":
			if strings.Contains(f.Message, "expected total - consumed") ||
				strings.Contains(f.Message, "agents (one per level") ||
				strings.Contains(f.Message, "this issue's number") {
				continue
			}
		}
		return true
	}
	return false
}

// TestSchemaAgreesWithCheck validates every golden case's checkpoint block
// with the generated JSON Schema and with the decoder: both must accept or
// both must reject.
func TestSchemaAgreesWithCheck(t *testing.T) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(JSONSchema(0)))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource(SchemaID, doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile(SchemaID)
	if err != nil {
		t.Fatalf("the generated schema does not compile: %v", err)
	}
	files, _ := filepath.Glob("../../testdata/check/*/*")
	files = append(files, extraSchemaCases(t)...)
	checked := 0
	for _, file := range files {
		if strings.HasSuffix(file, ".out") {
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		r := Parse(string(data), Options{})
		if len(r.Blocks) != 1 || r.Checkpoint == nil {
			continue // no single readable block: nothing for a schema to judge
		}
		var v any
		if err := yaml.Unmarshal([]byte(r.Blocks[0].Content()), &v); err != nil {
			continue // duplicate keys and the like: YAML itself rejects it
		}
		instance, err := jsonschema.UnmarshalJSON(bytes.NewReader(toJSON(t, v)))
		if err != nil {
			t.Fatal(err)
		}
		schemaOK := schema.Validate(instance) == nil
		checkOK := !structural(r)
		if schemaOK != checkOK {
			t.Errorf("%s: schema accepts=%v, check accepts=%v; findings: %v; schema: %v", file, schemaOK, checkOK, r.Findings, schema.Validate(instance))
		}
		checked++
	}
	if checked < 20 {
		t.Fatalf("only %d cases compared", checked)
	}
}

// toJSON converts decoded YAML to JSON the way an editor plugin would
// (timestamps stay strings).
func toJSON(t *testing.T, v any) []byte {
	t.Helper()
	out, err := json.Marshal(normalize(v))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
	case interface{ Format(string) string }:
		return x.Format("2006-01-02T15:04:05Z07:00")
	}
	return v
}

// extraSchemaCases writes small variations that golden files do not cover.
func extraSchemaCases(t *testing.T) []string {
	dir := t.TempDir()
	cases := map[string]string{
		"neg-remaining": strings.Replace(good, "consumed: 30, remaining: 70", "consumed: 130, remaining: -30", 1),
		"null-next":     strings.Replace(good, "next_agent: reviewer", "next_agent:", 1),
		"empty-label":   strings.Replace(good, "labels: [cascade::depth-1]", `labels: [""]`, 1),
		"blank-phase":   strings.Replace(good, "phase: build", `phase: "  "`, 1),
		// Not compared: depth: 1.0. Converted to JSON it is the number 1,
		// which JSON Schema calls an integer; check rejects the YAML float.
		"bool-issue":    strings.Replace(good, "issue: 7", "issue: true", 1),
		"zero-issue":    strings.Replace(good, "issue: 7", "issue: 0", 1),
		"milestone-int": strings.Replace(good, "assignee: dev}", "assignee: dev, milestone: 3}", 1),
		"milestone-bad": strings.Replace(good, "assignee: dev}", "assignee: dev, milestone: [3]}", 1),
		"offset-time":   strings.Replace(good, `"2026-05-16T12:50:00Z"`, `"2026-05-16T12:50:00.25+02:00"`, 1),
		"extra-root":    good + "other: 1\n",
		"tail-4":        good + "  history_tail: [{agent: a, action: b, timestamp: \"2026-05-16T12:50:00Z\"}, {agent: a, action: b, timestamp: \"2026-05-16T12:50:00Z\"}, {agent: a, action: b, timestamp: \"2026-05-16T12:50:00Z\"}, {agent: a, action: b, timestamp: \"2026-05-16T12:50:00Z\"}]\n",
		"tail-no-time":  good + "  history_tail: [{agent: a, action: b}]\n",
		"hist-no-time":  good + "  history: [{agent: a, action: b}]\n",
	}
	var files []string
	for name, body := range cases {
		p := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	return files
}
