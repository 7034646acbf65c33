package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// commandLine turns a call's arguments, which the schema has checked,
// into the verb's command line (after its name) and its standard input:
// the flags every call is given, the defaults the call does not override,
// the call's own flags in the schema's order, and the FILE last, after
// "--" (a path that begins with a dash is still a path).
func commandLine(t Tool, params []param, o Options, args map[string]any) ([]string, string, error) {
	var argv []string
	for _, name := range sortedKeys(o.Fixed) {
		if t.Flags.Lookup(name) != nil {
			argv = append(argv, "--"+name+"="+o.Fixed[name])
		}
	}
	_, offline := args[ArgName(t.Offline)]
	for _, name := range sortedKeys(o.Defaults) {
		if _, given := args[ArgName(name)]; !given && !(t.Offline != "" && offline) && t.Flags.Lookup(name) != nil && o.Defaults[name] != "" {
			argv = append(argv, "--"+name+"="+o.Defaults[name])
		}
	}
	for _, p := range params {
		v, ok := args[p.name]
		if !ok || p.flag == "" {
			continue
		}
		vals, err := flagValues(p, v)
		if err != nil {
			return nil, "", err
		}
		for _, s := range vals {
			argv = append(argv, "--"+p.flag+"="+s)
		}
	}
	if !t.File {
		return argv, "", nil
	}
	return fileArgs(argv, args)
}

// fileArgs gives FILE: the file argument, or "-" with text on stdin.
func fileArgs(argv []string, args map[string]any) ([]string, string, error) {
	file, hasFile := args[FileArg].(string)
	body, hasText := args[TextArg].(string)
	switch {
	case hasFile && hasText:
		return nil, "", fmt.Errorf("give %s (a path) or %s (the content), not both", FileArg, TextArg)
	case hasText:
		return append(argv, "--", "-"), body, nil
	case hasFile && file != "" && file != "-":
		return append(argv, "--", file), "", nil
	case hasFile:
		return nil, "", fmt.Errorf("%s must name a file; give the content itself as %s", FileArg, TextArg)
	}
	return nil, "", fmt.Errorf("give %s (a path) or %s (the content)", FileArg, TextArg)
}

// flagValues are one text, or one per list item.
func flagValues(p param, v any) ([]string, error) {
	switch p.kind {
	case list:
		return stringItems(v)
	case joined:
		if items, ok := v.([]any); ok {
			texts, err := stringItems(items)
			return []string{strings.Join(texts, ",")}, err
		}
	}
	s, err := scalar(v)
	return []string{s}, err
}

// stringItems are the items of an array of strings.
func stringItems(v any) ([]string, error) {
	items, ok := v.([]any)
	if !ok {
		return nil, errors.New("want an array of strings")
	}
	out := make([]string, len(items))
	for i, it := range items {
		s, ok := it.(string)
		if !ok {
			return nil, fmt.Errorf("item %d is not a string", i)
		}
		out[i] = s
	}
	return out, nil
}

// scalar renders a string, number or boolean as flag text.
func scalar(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case json.Number:
		return x.String(), nil
	}
	return "", fmt.Errorf("a %T is not a flag's value", v)
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
