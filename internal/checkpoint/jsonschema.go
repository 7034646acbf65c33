package checkpoint

import "encoding/json"

// SchemaID is the $id of checkpoint v2's JSON Schema.
const SchemaID = "https://gns-guard.dev/schema/checkpoint-v2.json"

// JSONSchema returns the JSON Schema (draft 2020-12) of the checkpoint
// block, from the decoder's own table. `check` also judges what it cannot
// say: budget arithmetic, chain length, issue number. tailLimit is
// history-tail (0: the default, 3); history_tail may hold twice as many
// (TailMost).
func JSONSchema(tailLimit int) []byte {
	if tailLimit <= 0 {
		tailLimit = DefaultTailLimit
	}
	root := map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"$id":                  SchemaID,
		"title":                "GNS-2 checkpoint (schema v2)",
		"description":          "The YAML block in a Gitea issue body that holds a GNS-2 workflow's state.",
		"type":                 "object",
		"required":             []string{"checkpoint"},
		"additionalProperties": false,
		"properties":           map[string]any{"checkpoint": schemaOf(schemaV2, tailLimit)},
	}
	out, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		panic(err) // a map of plain values always marshals
	}
	return append(out, '\n')
}

// schemaOf is the JSON Schema of f's values.
func schemaOf(f field, tailLimit int) map[string]any {
	s := map[string]any{}
	if f.doc != "" {
		s["description"] = f.doc
	}
	types := kindSchema(s, f, tailLimit)
	if f.nullable {
		types = append(types, "null")
	}
	if len(types) == 1 {
		s["type"] = types[0]
	} else {
		s["type"] = types
	}
	return s
}

// kindSchema fills s for f's kind and returns the allowed JSON types, null
// aside.
func kindSchema(s map[string]any, f field, tailLimit int) []string {
	var types []string
	switch f.kind {
	case kindInt:
		types = []string{"integer"}
		if f.constant != nil {
			s["const"] = *f.constant
		}
		if f.minimum != nil {
			s["minimum"] = *f.minimum
		}
	case kindString:
		types = []string{"string"}
		if f.nonEmpty {
			s["minLength"] = 1
			s["pattern"] = `\S`
		}
	case kindTime:
		types = []string{"string"}
		s["format"] = "date-time"
		s["pattern"] = rfc3339Pattern
	case kindIntOrString:
		types = []string{"integer", "string"}
	case kindStrings:
		types = []string{"array"}
		item := map[string]any{"type": "string"}
		if f.nonEmpty {
			item["minLength"] = 1
			item["pattern"] = `\S`
		}
		s["items"] = item
	case kindObject:
		types = []string{"object"}
		objectSchema(s, f, tailLimit)
	case kindObjects:
		types = []string{"array"}
		item := map[string]any{"type": "object"}
		objectSchema(item, f, tailLimit)
		s["items"] = item
		if f.key == "history_tail" {
			s["maxItems"] = TailMost(tailLimit)
		}
	}
	return types
}

func objectSchema(s map[string]any, f field, tailLimit int) {
	props := map[string]any{}
	var required []string
	for _, c := range f.fields {
		props[c.key] = schemaOf(c, tailLimit)
		if c.required {
			required = append(required, c.key)
		}
	}
	s["properties"] = props
	s["additionalProperties"] = false
	if len(required) > 0 {
		s["required"] = required
	}
	if f.key == "checkpoint" {
		s["not"] = map[string]any{"required": []string{"history", "history_tail"}}
	}
}

// rfc3339Pattern matches time.RFC3339 for validators that ignore "format".
const rfc3339Pattern = `^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])` + // date
	`[Tt]([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?` + // time
	`([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$` // offset
