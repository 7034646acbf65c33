package exitcode

import "encoding/json"

// JSONError is how an error is printed under --format json:
// {"error":{"exit_code":2,"kind":"usage","message":"..."}}.
type JSONError struct {
	Error JSONErrorBody `json:"error"`
}

// JSONErrorBody is the error of a JSONError.
type JSONErrorBody struct {
	ExitCode int `json:"exit_code"`
	// Kind is usage (exit 2: a usage or configuration error), violations
	// (exit 1), cannot-run (exit 3), unchecked (exit 4: doctor) or stopped
	// (130 or 143: a signal).
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// JSON is err as one JSONError, without the line's end.
func JSON(err error) []byte {
	code := Code(err)
	e := JSONErrorBody{ExitCode: code, Message: err.Error()}
	switch code {
	case Violation:
		e.Kind = "violations"
	case Usage:
		e.Kind = "usage"
	case Unchecked:
		e.Kind = "unchecked"
	case Interrupted, Terminated:
		e.Kind = "stopped"
	default:
		e.Kind = "cannot-run"
	}
	data, _ := json.Marshal(JSONError{e})
	return data
}
