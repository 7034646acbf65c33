package actiontest

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

func TestMain(m *testing.M) { giteatest.Main(m) }

func TestParseOutputsRejectsASecondValue(t *testing.T) {
	_, err := ParseOutputs("result=pass\nresult=fail\n")
	if err == nil || !strings.Contains(err.Error(), "set twice") {
		t.Fatalf("a repeated output must be an error, got %v", err)
	}
	got, err := ParseOutputs("a<<EOF_1\nline 1\nline 2\nEOF_1\nb=2\n")
	if err != nil || got["a"] != "line 1\nline 2" || got["b"] != "2" {
		t.Fatalf("got %q, %v", got, err)
	}
}

// The harness end to end: a real issue event, recorded by the server as a
// workflow run, drives the built binary, which reads the issue live and
// passes.
func TestHealthyIssuePasses(t *testing.T) {
	t.Parallel()
	r := NewRepo(t)
	n, d := r.Open(t, "healthy", func(n int64) string { return Example(t, "healthy.md", n) }, "cascade::depth-2", "size::medium")
	if d.Event != "issues" || d.Type != "issues" || d.Action != "opened" || d.TriggerUser != r.S.AdminLogin || d.Run == 0 {
		t.Errorf("the opened run: %+v", d)
	}
	// The guard's token belongs to a user other than the issue's author: a
	// personal token's own events are skipped (no loops).
	res := r.Run(t, d)
	if res.Code != 0 || res.Outputs["result"] != "pass" {
		t.Fatalf("issue #%d: exit %d, result %q\n%s", n, res.Code, res.Outputs["result"], res.String())
	}
	if res.Outputs["depth"] != "1" || res.Outputs["max-depth"] != "2" || res.Outputs["budget-remaining"] != "13800" {
		t.Errorf("outputs: %v", res.Outputs)
	}
}

// decode decodes a delivery's payload.
func decode(t *testing.T, d Delivery) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(d.Payload, &m); err != nil {
		t.Fatalf("%s: %v\n%s", d, err, d.Payload)
	}
	return m
}

// field walks a decoded payload along keys (nil when absent).
func field(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

// labelNames are the names of a payload's list of labels, sorted.
func labelNames(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, l := range list {
		if name, ok := field(l.(map[string]any), "name").(string); ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// What the step gets for an issue edit is not what a webhook gets: the
// webhook's payload carries the previous body in changes.body.from, the
// recorded run's (Gitea's Actions notifier) has no changes at all. Both
// carry the new body.
func TestActionsPayloadOfAnEditHasNoChanges(t *testing.T) {
	t.Parallel()
	r := NewRepo(t)
	h := newHook(t, r.S, r.Owner, r.Name)
	n, _ := r.Open(t, "edited", func(n int64) string { return Example(t, "healthy.md", n) })
	before := h.next(t, Is("issues", "opened", n))
	if before.Action != "opened" {
		t.Fatalf("webhook: %s", before)
	}
	var is struct {
		Body string `json:"body"`
	}
	r.API(t, r.S.AdminToken, http.MethodGet, r.Path("/issues/%d", n), nil, &is)
	edited := strings.Replace(is.Body, "consumed: 6200", "consumed: 1000", 1)
	r.API(t, r.S.AdminToken, http.MethodPatch, r.Path("/issues/%d", n), map[string]string{"body": edited}, nil)

	run := r.Runs.Next(t, From("issues", "edited", n, r.S.AdminLogin))
	hook := h.next(t, From("issues", "edited", n, r.S.AdminLogin))
	rp, hp := decode(t, run), decode(t, hook)
	if c, ok := rp["changes"]; ok && c != nil {
		t.Errorf("the recorded run's payload of an edit has changes: %v\n%s", c, run.Payload)
	}
	if from := field(hp, "changes", "body", "from"); from != is.Body {
		t.Errorf("the webhook's payload of an edit does not carry the previous body in changes.body.from: %v", from)
	}
	for name, p := range map[string]map[string]any{"run": rp, "webhook": hp} {
		if got := field(p, "issue", "body"); got != edited {
			t.Errorf("%s: issue.body is not the new body: %v", name, got)
		}
		if got := field(p, "sender", "login"); got != r.S.AdminLogin {
			t.Errorf("%s: sender %v", name, got)
		}
	}
	if run.Event != "issues" || run.Type != "issues" || run.TriggerUser != r.S.AdminLogin {
		t.Errorf("the recorded edit: %+v", run)
	}
}

// A label change reaches the step as event issues, action label_updated
// (Gitea maps it to the labeled/unlabeled types only to match the
// workflow), with the sender and the labels added or removed in
// changes.added_labels / changes.removed_labels; the webhook's payload has
// neither list. Clearing every label at once records no run at all (the
// webhook says label_cleared). Opening an issue with labels records a
// label run besides the opened one.
func TestActionsPayloadOfALabelChange(t *testing.T) {
	t.Parallel()
	r := NewRepo(t)
	h := newHook(t, r.S, r.Owner, r.Name)
	person, personTok := Collaborator(t, r.S, r.Owner, r.Name, "person", giteatest.PermWrite)
	n, _ := r.Open(t, "labels", func(n int64) string { return Example(t, "healthy.md", n) }, "cascade::depth-2")
	h.next(t, Is("issues", "opened", n))
	// Opening an issue with labels records a second run: the labels added.
	opened := r.Runs.Next(t, From("issues", "label_updated", n, r.S.AdminLogin))
	if got := labelNames(field(decode(t, opened), "changes", "added_labels")); !slices.Equal(got, []string{"cascade::depth-2"}) {
		t.Errorf("opening the issue with a label: changes.added_labels %v\n%s", got, opened.Payload)
	}

	ids := LabelIDs(t, r.S, r.Owner, r.Name, "size::medium", "budget::exhausted")
	r.API(t, personTok, http.MethodPost, r.Path("/issues/%d/labels", n), map[string]any{"labels": ids}, nil)
	added := r.Runs.Next(t, From("issues", "label_updated", n, person))
	p := decode(t, added)
	if got := labelNames(field(p, "changes", "added_labels")); !slices.Equal(got, []string{"budget::exhausted", "size::medium"}) {
		t.Errorf("changes.added_labels %v, want the two labels added\n%s", got, added.Payload)
	}
	if got := labelNames(field(p, "changes", "removed_labels")); len(got) != 0 {
		t.Errorf("changes.removed_labels %v on an addition", got)
	}
	if added.Event != "issues" || added.Type != "issue_label" || added.TriggerUser != person {
		t.Errorf("the recorded label addition: %+v", added)
	}
	hp := decode(t, h.next(t, From("issues", "label_updated", n, person)))
	if c := field(hp, "changes"); c != nil {
		t.Errorf("the webhook's label payload has changes after all: %v", c)
	}

	r.API(t, personTok, http.MethodDelete, r.Path("/issues/%d/labels/%d", n, ids[1]), nil, nil)
	removed := r.Runs.Next(t, From("issues", "label_updated", n, person))
	p = decode(t, removed)
	if got := labelNames(field(p, "changes", "removed_labels")); !slices.Equal(got, []string{"budget::exhausted"}) {
		t.Errorf("changes.removed_labels %v, want [budget::exhausted]\n%s", got, removed.Payload)
	}
	if got := labelNames(field(p, "changes", "added_labels")); len(got) != 0 {
		t.Errorf("changes.added_labels %v on a removal", got)
	}
	if got := labelNames(field(p, "issue", "labels")); !slices.Equal(got, []string{"cascade::depth-2", "size::medium"}) {
		t.Errorf("issue.labels %v after the removal", got)
	}
	h.next(t, From("issues", "label_updated", n, person))

	// Clearing every label: the webhook says label_cleared; no run is
	// recorded. A comment after it records its run, and nothing before it.
	r.API(t, personTok, http.MethodDelete, r.Path("/issues/%d/labels", n), nil, nil)
	if d := h.next(t, From("issues", "label_cleared", n, person)); d.Type != "issue_label" {
		t.Errorf("the webhook's label_cleared: %+v", d)
	}
	r.API(t, personTok, http.MethodPost, r.Path("/issues/%d/comments", n), map[string]string{"body": "cleared"}, nil)
	r.Runs.Next(t, From("issue_comment", "created", n, person))
	for _, d := range r.Runs.Pending(t) {
		if d.Sender == person {
			t.Errorf("clearing the labels recorded a run: %s\n%s", d, d.Payload)
		}
	}
}
