package metering

// validJSON is encoding/json's Valid, several times faster on a long
// body: one JSON value, strings of any bytes but control characters, at
// most maxDepth nested. The meter checks every request body with it
// before its one-pass reader, which relies on valid JSON (lex.go).
// FuzzValidJSON holds it to json.Valid.
func validJSON(b []byte) bool {
	stack := make([]byte, 0, 16) // the open objects and arrays
	i := space(b, 0)
	want := true // a value, else what follows one
	for {
		if want {
			if i >= len(b) {
				return false
			}
			switch c := b[i]; c {
			case '{', '[':
				if len(stack) == maxDepth {
					return false
				}
				stack = append(stack, c)
				i = space(b, i+1)
				if i < len(b) && b[i] == c+2 { // '}' or ']'
					stack, i, want = stack[:len(stack)-1], i+1, false
				} else if c == '{' {
					i = member(b, i)
				}
			case '"':
				i, want = str(b, i), false
			case 't':
				i, want = word(b, i, "true"), false
			case 'f':
				i, want = word(b, i, "false"), false
			case 'n':
				i, want = word(b, i, "null"), false
			default:
				i, want = number(b, i), false
			}
			if i < 0 {
				return false
			}
			continue
		}
		i = space(b, i)
		if len(stack) == 0 {
			return i == len(b)
		}
		if i >= len(b) {
			return false
		}
		switch open := stack[len(stack)-1]; {
		case b[i] == ',':
			i, want = space(b, i+1), true
			if open == '{' {
				if i = member(b, i); i < 0 {
					return false
				}
			}
		case b[i] == open+2:
			stack, i = stack[:len(stack)-1], i+1
		default:
			return false
		}
	}
}

// space skips blanks from i.
func space(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// member reads a key and its colon from i, and returns where the value
// starts, or -1.
func member(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = str(b, i); i < 0 {
		return -1
	}
	if i = space(b, i); i >= len(b) || b[i] != ':' {
		return -1
	}
	return space(b, i+1)
}

// plain are the bytes a string holds as they are.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str reads the string at i and returns where it ends, or -1.
func str(b []byte, i int) int {
	for i++; i < len(b); i++ {
		for i < len(b) && plain[b[i]] {
			i++
		}
		if i == len(b) {
			return -1
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			i++
			if i >= len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
					return -1
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// word reads the literal w at i and returns where it ends, or -1.
func word(b []byte, i int, w string) int {
	if len(b)-i < len(w) || string(b[i:i+len(w)]) != w {
		return -1
	}
	return i + len(w)
}

// number reads the number at i (RFC 8259: -? int frac? exp?) and returns
// where it ends, or -1.
func number(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if i++; i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		i = digits(b, i)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		if i++; i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		i = digits(b, i)
	}
	return i
}

func digits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
