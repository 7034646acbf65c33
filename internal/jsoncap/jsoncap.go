package jsoncap

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Result is what Copy read.
type Result struct {
	// JSON is the copy: valid JSON, every string over the limit replaced
	// by "" and, when the input was cut, every open value closed (a value
	// not begun is null).
	JSON []byte
	// Long maps the path of every string left out to its length in bytes,
	// decoded: at least that many when the input was cut inside it (a
	// string cut off is left out whatever its length so far). A path is
	// object keys and array indexes joined with "/": "body", "3/body".
	Long map[string]int64
	// Whole holds top-level keys or indexes read to their end.
	Whole map[string]bool
	// Cut is the accepted read error that stopped input; nil when whole.
	Cut error
}

// ErrSyntax: the input is not JSON.
var ErrSyntax = errors.New("not valid JSON")

// MaxDepth bounds the nesting of the input.
const MaxDepth = 64

// maxKey bounds an escaped key; answers' keys are short.
const maxKey = 4 << 10

// Copy reads one JSON value from r, keeping strings of at most limit bytes.
// A read error cut accepts ends the value early, with Cut set. Any other
// error, or input that is not JSON, is returned (io.ErrUnexpectedEOF for a
// value cut short, io.EOF for none).
func Copy(r io.Reader, limit int64, cut func(error) bool) (*Result, error) {
	c := &copier{
		r:     bufio.NewReaderSize(r, 64<<10),
		limit: limit,
		res:   &Result{Long: map[string]int64{}, Whole: map[string]bool{}},
	}
	started, err := c.value(0)
	if err != nil {
		if cut != nil && cut(err) {
			if !started {
				c.out.WriteString("null")
			}
			c.res.Cut = err
			c.res.JSON = c.out.Bytes()
			return c.res, nil
		}
		if started && err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	c.res.JSON = c.out.Bytes()
	return c.res, nil
}

type copier struct {
	r     *bufio.Reader
	out   bytes.Buffer
	limit int64
	path  []string
	res   *Result
	raw   []byte // the string being read, escaped, while it is short enough
}

func syntaxError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSyntax, fmt.Sprintf(format, args...))
}

// next skips white space and returns the next byte.
func (c *copier) next() (byte, error) {
	for {
		b, err := c.r.ReadByte()
		if err != nil {
			return 0, err
		}
		switch b {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return b, nil
	}
}

// value copies one value. started says it read the value's first byte:
// then, even on an error, the copy holds a whole value in its place;
// otherwise it wrote nothing.
func (c *copier) value(depth int) (started bool, err error) {
	b, err := c.next()
	if err != nil {
		return false, err
	}
	switch {
	case b == '{':
		return true, c.object(depth + 1)
	case b == '[':
		return true, c.array(depth + 1)
	case b == '"':
		return true, c.stringValue()
	}
	return true, c.literal(b)
}

func (c *copier) object(depth int) (err error) {
	if depth > MaxDepth {
		return syntaxError("nested deeper than %d", MaxDepth)
	}
	c.out.WriteByte('{')
	defer c.out.WriteByte('}')
	b, err := c.next()
	if err != nil {
		return err
	}
	if b == '}' {
		return nil
	}
	for first := true; ; first = false {
		if err := c.member(b, depth, first); err != nil {
			return err
		}
		if b, err = c.next(); err != nil {
			return err
		}
		if b == '}' {
			return nil
		}
		if b != ',' {
			return syntaxError("expected ',' or '}' in an object, found %q", b)
		}
		if b, err = c.next(); err != nil {
			return err
		}
	}
}

// member copies one key and value; b starts it.
func (c *copier) member(b byte, depth int, first bool) error {
	if b != '"' {
		return syntaxError("expected an object key, found %q", b)
	}
	raw, key, err := c.key()
	if err != nil {
		return err
	}
	if b, err = c.next(); err != nil {
		return err
	}
	if b != ':' {
		return syntaxError("expected ':' after object key %q, found %q", key, b)
	}
	if !first {
		c.out.WriteByte(',')
	}
	c.out.WriteByte('"')
	c.out.Write(raw)
	c.out.WriteString(`":`)
	c.path = append(c.path, key)
	started, err := c.value(depth)
	c.path = c.path[:len(c.path)-1]
	if err != nil {
		if !started {
			c.out.WriteString("null")
		}
		return err
	}
	if depth == 1 {
		c.res.Whole[key] = true
	}
	return nil
}

func (c *copier) array(depth int) error {
	if depth > MaxDepth {
		return syntaxError("nested deeper than %d", MaxDepth)
	}
	c.out.WriteByte('[')
	defer c.out.WriteByte(']')
	b, err := c.next()
	if err != nil {
		return err
	}
	if b == ']' {
		return nil
	}
	if err := c.r.UnreadByte(); err != nil {
		return err
	}
	for i := 0; ; i++ {
		if err := c.element(i, depth); err != nil {
			return err
		}
		b, err := c.next()
		if err != nil {
			return err
		}
		if b == ']' {
			return nil
		}
		if b != ',' {
			return syntaxError("expected ',' or ']' in an array, found %q", b)
		}
	}
}

// element copies element i of an array.
func (c *copier) element(i, depth int) error {
	mark := c.out.Len()
	if i > 0 {
		c.out.WriteByte(',')
	}
	idx := strconv.Itoa(i)
	c.path = append(c.path, idx)
	started, err := c.value(depth)
	c.path = c.path[:len(c.path)-1]
	if err != nil {
		if !started {
			c.out.Truncate(mark) // no element begun: no comma either
		}
		return err
	}
	if depth == 1 {
		c.res.Whole[idx] = true
	}
	return nil
}

// key returns escaped bytes and decoded text, after the quote.
func (c *copier) key() ([]byte, string, error) {
	raw, _, over, err := c.str(maxKey)
	if err != nil {
		return nil, "", err
	}
	if over {
		return nil, "", syntaxError("an object key longer than %d bytes", maxKey)
	}
	raw = bytes.Clone(raw)
	var k string
	if err := json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &k); err != nil {
		return nil, "", syntaxError("object key: %v", err)
	}
	return raw, k, nil
}

// stringValue copies or leaves out a string, after the quote.
func (c *copier) stringValue() error {
	raw, size, over, err := c.str(c.limit)
	if err != nil || over {
		c.out.WriteString(`""`)
		c.res.Long[strings.Join(c.path, "/")] = size
		return err
	}
	c.out.WriteByte('"')
	c.out.Write(raw)
	c.out.WriteByte('"')
	return nil
}

// str reads a string after its opening quote, up to and including its
// closing quote. It returns the string's escaped bytes while its decoded
// length is at most limit (over is false), and that length in bytes (as
// far as it was read, on an error).
func (c *copier) str(limit int64) (raw []byte, size int64, over bool, err error) {
	c.raw = c.raw[:0]
	s := &strRead{c: c, limit: limit, keep: true}
	for {
		if s.keep && s.size > limit {
			s.keep, s.over = false, true
			c.raw = c.raw[:0]
		}
		done, err := s.step()
		switch {
		case err != nil:
			return nil, s.size, s.over, err
		case done:
			return c.raw, s.size, s.over, nil
		}
	}
}

// strRead is one string being read by str: its decoded size so far, and
// whether its bytes are still kept (in c.raw) or it went over the limit.
type strRead struct {
	c          *copier
	limit      int64
	size       int64
	keep, over bool
}

// add keeps bytes within the limit.
func (s *strRead) add(b ...byte) {
	if s.keep {
		s.c.raw = append(s.c.raw, b...)
	}
}

// step reads plain bytes, an escape, or the closing quote (done).
func (s *strRead) step() (done bool, err error) {
	n, err := s.plain()
	if err != nil || n > 0 {
		return false, err
	}
	b, _ := s.c.r.ReadByte()
	switch {
	case b == '"':
		return true, nil
	case b < 0x20:
		return false, syntaxError("a control character in a string")
	}
	return false, s.escape() // after a backslash
}

// plain reads the run of plain bytes ahead (no quote, backslash or control
// byte) and returns its length; past the limit, the rest is not kept.
func (s *strRead) plain() (int, error) {
	r := s.c.r
	buf, err := r.Peek(1)
	if err != nil {
		return 0, err
	}
	if n := r.Buffered(); n > 1 {
		buf, _ = r.Peek(n)
	}
	i := 0
	for i < len(buf) && buf[i] != '"' && buf[i] != '\\' && buf[i] >= 0x20 {
		i++
	}
	if i == 0 {
		return 0, nil
	}
	if s.keep && s.size+int64(i) > s.limit {
		i = int(s.limit-s.size) + 1 // just over: the rest is not kept
	}
	s.add(buf[:i]...)
	s.size += int64(i)
	_, _ = r.Discard(i)
	return i, nil
}

// escape reads an escape after its backslash.
func (s *strRead) escape() error {
	e, err := s.c.r.ReadByte()
	if err != nil {
		return err
	}
	switch e {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.add('\\', e)
		s.size++
		return nil
	case 'u':
		return s.unicode()
	}
	return syntaxError("invalid escape \\%c", e)
}

// unicode reads \u's hex digits, counting decoded bytes.
func (s *strRead) unicode() error {
	var hex [4]byte
	if _, err := io.ReadFull(s.c.r, hex[:]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	v, err := strconv.ParseUint(string(hex[:]), 16, 32)
	if err != nil {
		return syntaxError("invalid \\u escape %q", hex[:])
	}
	s.add('\\', 'u')
	s.add(hex[:]...)
	if r := rune(v); utf16.IsSurrogate(r) {
		s.size += 2 // a pair decodes to 4 bytes
	} else {
		s.size += int64(utf8.RuneLen(r))
	}
	return nil
}

// literal copies a scalar starting with b; cut off, it is null.
func (c *copier) literal(b byte) error {
	lit := []byte{b}
	for {
		p, err := c.r.Peek(1)
		if err == io.EOF {
			break
		}
		if err != nil {
			c.out.WriteString("null")
			return err
		}
		if !isLiteralByte(p[0]) {
			break
		}
		lit = append(lit, p[0])
		_, _ = c.r.Discard(1)
		if len(lit) > 64 {
			return syntaxError("a number or literal longer than 64 bytes")
		}
	}
	if !json.Valid(lit) {
		return syntaxError("invalid literal %q", lit)
	}
	c.out.Write(lit)
	return nil
}

func isLiteralByte(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '-' || b == '+' || b == '.'
}
