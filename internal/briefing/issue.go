package briefing

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/live"
)

// window is how many of the issue's last comments a briefing asks the
// timeline for: the 3 it loads plus room for the guard's own comments
// (status, archive parts, digest, recovery) between them. One read of the
// timeline's tail returns them, as it does for the guard.
const window = 8

// Issue is the issue a briefing is assembled from: read from the server
// (Read) or from files (ReadOffline).
type Issue struct {
	*live.Snapshot
	reader      *live.Reader // an empty one offline: it decides, never reads
	online      bool
	source      string // offline: the body's file name
	labelsKnown bool
}

// Read reads issue number through rd: the issue and the tail of its
// timeline, deep enough for cfg.
func Read(ctx context.Context, rd *live.Reader, number int64, cfg config.Config) (Issue, error) {
	s, err := rd.Read(ctx, number, live.ReadOptions{Window: max(window, cfg.RecentWindow()), Ungoverned: true, Shallow: true})
	if err != nil {
		return Issue{}, err
	}
	return Issue{Snapshot: s, reader: rd, online: true, labelsKnown: true}, nil
}

// Offline names an issue kept in files.
type Offline struct {
	// Body is the body's file; Comments, if not "", a JSON array of the
	// issue's comments, oldest first.
	Body, Comments string
	// Number is the issue's number; 0 takes the checkpoint's.
	Number int64
	// Labels are the issue's labels when LabelsSet (none is a fact);
	// otherwise the checkpoint's state.labels stand for them.
	Labels    []string
	LabelsSet bool
	// Guard is the login the guard writes as ("": issues.ActionsUser).
	Guard string
}

// ReadOffline reads the issue o names through read.
func ReadOffline(read func(name string) ([]byte, error), o Offline) (Issue, error) {
	body, err := read(o.Body)
	if err != nil {
		return Issue{}, err
	}
	if err := issues.CheckUTF8(body); err != nil {
		return Issue{}, notText("context: the body %s is not UTF-8 text (%v)", o.Body, err)
	}
	iss := issues.Issue{Number: o.Number, Body: string(body)}
	var recent []issues.Comment
	if o.Comments != "" {
		if recent, err = readComments(read, o.Comments); err != nil {
			return Issue{}, err
		}
	}
	labels, known := o.Labels, o.LabelsSet // no labels given says the issue has none
	if !o.LabelsSet {
		labels = nil
		if cp := checkpoint.Parse(iss.Body, checkpoint.Options{}).Checkpoint; cp != nil {
			// Offline, the labels are the checkpoint's own record of them.
			for _, l := range cp.State.Labels.Items {
				labels = append(labels, l.Value)
			}
			known = cp.State.Labels.Set
		}
	}
	for i, l := range labels {
		iss.Labels = append(iss.Labels, issues.Label{ID: int64(i + 1), Name: l})
	}
	guard := strings.TrimSpace(o.Guard)
	if guard == "" {
		guard = issues.ActionsUser
	}
	s := &live.Snapshot{Issue: iss, Governed: true, Recent: issues.CommentPage{Comments: recent}, Guard: guard}
	return Issue{Snapshot: s, reader: &live.Reader{}, source: o.Body, labelsKnown: known}, nil
}

// commentsFileEntry is one comment of a comments file. author may be
// given as Gitea's user.login, so the API's own comment list works as is.
type commentsFileEntry struct {
	ID     int64  `json:"id"`
	Author string `json:"author"`
	User   *struct {
		Login string `json:"login"`
	} `json:"user"`
	Body    *string `json:"body"`
	HTMLURL string  `json:"html_url"`
}

// readComments reads a JSON array of comments, oldest first.
func readComments(read func(string) ([]byte, error), name string) ([]issues.Comment, error) {
	data, err := read(name)
	if err != nil {
		return nil, err
	}
	if err := issues.CheckUTF8(data); err != nil {
		return nil, notText("context: the comments file %s is not UTF-8 text (%v)", name, err)
	}
	var entries []commentsFileEntry
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, commentsError(name, data, err)
	}
	out := make([]issues.Comment, 0, len(entries))
	for i, e := range entries {
		if e.Body == nil {
			return nil, usageError("context: %s: comment %d of %d (id %d) has no body", name, i+1, len(entries), e.ID)
		}
		author := e.Author
		if author == "" && e.User != nil {
			author = e.User.Login
		}
		out = append(out, issues.Comment{ID: e.ID, Author: author, Body: *e.Body, HTMLURL: e.HTMLURL})
	}
	return out, nil
}

// commentsError says where and how a comments file is not the JSON it
// must be.
func commentsError(name string, data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		line, col := offsetLineCol(data, int(se.Offset))
		return usageError("context: %s:%d:%d: not valid JSON: %v (expected an array of {id, author, body, html_url})", name, line, col, se)
	case errors.As(err, &te):
		line, col := offsetLineCol(data, int(te.Offset))
		if te.Field == "" {
			return usageError("context: %s:%d:%d: expected a JSON array of {id, author, body, html_url}, found %s", name, line, col, jsonKind(te.Value))
		}
		return usageError("context: %s:%d:%d: a comment's %s must be %s, found %s", name, line, col, te.Field, jsonWant(te.Field), jsonKind(te.Value))
	}
	return usageError("context: %s: %v (expected an array of {id, author, body, html_url})", name, err)
}

// jsonKind names a JSON value kind as encoding/json reports it.
func jsonKind(v string) string {
	switch v {
	case "object", "array":
		return "an " + v
	case "string", "number", "bool":
		return "a " + strings.Replace(v, "bool", "boolean", 1)
	}
	return v
}

// jsonWant says what a field of the comments file holds.
func jsonWant(field string) string {
	switch field {
	case "id":
		return "a whole number"
	case "user":
		return "an object with a login"
	}
	return "a string"
}

// offsetLineCol is the line and column of a byte offset in data.
func offsetLineCol(data []byte, off int) (int, int) {
	off = max(0, min(off, len(data)))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	return line, 1 + utf8.RuneCount(data[start:off])
}

// ungoverned says an issue read from the server is none the guard
// governs: no checkpoint, no governance label, no anchor, and no status
// comment among the comments read (one holds a ledger: the issue was
// governed, and its checkpoint is gone).
func (i Issue) ungoverned() bool {
	return i.online && !i.Governed && i.Status == nil && !i.Unreached
}
