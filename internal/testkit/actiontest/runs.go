package actiontest

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3" // Gitea's own SQLite driver (cgo), to read its database
	"gopkg.in/yaml.v3"

	"github.com/gns-guard/gns-guard/internal/testkit"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// What a runner hands a step, as Gitea 1.26.0 and the Gitea runner 1.0.8
// make it (read in their sources, not assumed):
//
//   - Gitea's Actions notifier (services/actions/notifier.go) builds its own
//     payload for every issue, comment and label event and, for each
//     workflow whose `on:` matches, stores it in the action_run row it
//     inserts (notifier_helper.go handleWorkflows): event_payload, with
//     event the server's event type (issues, issue_label, issue_comment,
//     pull_request, pull_request_label, ...) and trigger_event the name of
//     the matched `on:` entry (issues, issue_comment, pull_request). The
//     API does not show event_payload.
//   - This payload is not the webhook's. An issue edit
//     (IssueChangeContent → notifyIssueChangeWithTitleOrContent) drops the
//     old body: no `changes`. A label change (notifyIssueChange) carries
//     changes.added_labels / changes.removed_labels, which the webhook's
//     label payload does not. Clearing every label at once
//     (IssueClearLabels, the webhook's label_cleared) has no Actions
//     notification: it starts no run. And an event caused by the Actions
//     user (writes made with the Actions token) starts no run at all
//     (notifier_helper.go notify: Doer.IsGiteaActions()).
//   - github.event_name is run.TriggerEvent (services/actions/context.go
//     GenerateGiteaContext), so a label change of an issue arrives as
//     `issues` with action label_updated (modules/actions/workflows.go
//     matchIssuesEvent maps it to the labeled/unlabeled types only to
//     match the workflow), a label change of a pull request as
//     `pull_request`. The runner sets GITHUB_EVENT_NAME from it.
//   - github.event is event_payload decoded into a map; the task context
//     reaches the runner as a protobuf Struct, and the runner writes the
//     event file as json.Marshal of that map (runner internal/app/run
//     runner.go: json.Marshal(preset.Event)): keys sorted, numbers as
//     float64, compact. Runs reproduces that rendering.

// CaptureWorkflow is the workflow NewRuns commits to a test repository.
const CaptureWorkflow = ".gitea/workflows/gns-guard-capture.yml"

// NoRunnerLabel is the capture workflow's runs-on: no runner serves it, so
// its runs are recorded and stay waiting; none is ever executed.
const NoRunnerLabel = "gns-guard-capture-no-runner"

// Runs captures, for one repository, the event payloads of the workflow
// runs the server records: what a runner would hand the guard's step.
type Runs struct {
	db     *sql.DB
	repoID int64
	label  string // owner/name, for messages

	mu      sync.Mutex
	last    int64 // the highest run id read
	pending []Delivery
}

// NewRuns commits the capture workflow to owner/repo's default branch (as
// the administrator), makes sure Actions are on for the repository, and
// reads the server's database from then on. Its triggers are the `on:` of
// examples/workflows/gns-guard.yml, the workflow users copy, without the
// concurrency group (a waiting run replaced in its group would hide an
// event from the tests; the guard's own tolerance of replaced runs is the
// end-to-end test's business).
func NewRuns(t testing.TB, s *giteatest.Server, owner, repo string) *Runs {
	t.Helper()
	db, err := openDatabase(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	r := &Runs{db: db, label: owner + "/" + repo}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = db.QueryRowContext(ctx, `SELECT id FROM repository WHERE lower_name = lower(?) AND lower(owner_name) = lower(?)`, repo, owner).Scan(&r.repoID)
	if err != nil {
		t.Fatalf("actiontest: finding %s in the server's database: %v", r.label, err)
	}
	var units int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM repo_unit WHERE repo_id = ? AND type = ?`, r.repoID, unitActions).Scan(&units); err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("/repos/%s/%s", url.PathEscape(owner), url.PathEscape(repo))
	if units == 0 {
		if err := API(ctx, s, s.AdminToken, http.MethodPatch, base, map[string]any{"has_actions": true}, nil); err != nil {
			t.Fatalf("actiontest: turning Actions on for %s: %v", r.label, err)
		}
	}
	wf, err := captureWorkflow()
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]string{
		"content": base64.StdEncoding.EncodeToString(wf),
		"message": "Record a run for every event the guard is triggered by",
	}
	if err := API(ctx, s, s.AdminToken, http.MethodPost, base+"/contents/"+CaptureWorkflow, in, nil); err != nil {
		t.Fatalf("actiontest: committing the capture workflow to %s: %v", r.label, err)
	}
	if err := db.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM action_run WHERE repo_id = ?`, r.repoID).Scan(&r.last); err != nil {
		t.Fatal(err)
	}
	return r
}

// unitActions is Gitea's unit type of Actions (models/unit TypeActions).
const unitActions = 10

// openDatabase opens the server's database read-only, waiting up to ten
// seconds for Gitea's writes.
func openDatabase(s *giteatest.Server) (*sql.DB, error) {
	path := s.DatabasePath()
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("actiontest: the server's database: %w", err)
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&_busy_timeout=10000")
	if err != nil {
		return nil, fmt.Errorf("actiontest: opening %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// captureWorkflow is the capture workflow: the example workflow's
// triggers, one job on a label no runner serves.
func captureWorkflow() ([]byte, error) {
	root, err := testkit.Root()
	if err != nil {
		return nil, err
	}
	example := filepath.Join(root, "examples", "workflows", "gns-guard.yml")
	data, err := os.ReadFile(example)
	if err != nil {
		return nil, err
	}
	var doc struct {
		On yaml.Node `yaml:"on"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", example, err)
	}
	if doc.On.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: on: is not a mapping of events", example)
	}
	wf := map[string]any{
		"name": "gns-guard-capture",
		"on":   &doc.On,
		"jobs": map[string]any{
			"capture": map[string]any{
				"runs-on": NoRunnerLabel,
				"steps":   []map[string]string{{"run": "true"}},
			},
		},
	}
	b, err := yaml.Marshal(wf)
	if err != nil {
		return nil, err
	}
	head := "# Written by the tests (internal/testkit/actiontest): every event the guard is\n" +
		"# triggered by records a run; no runner serves " + NoRunnerLabel + ",\n" +
		"# so the runs stay waiting and the tests read their event payloads.\n"
	return append([]byte(head), b...), nil
}

// poll reads the runs recorded since the last poll. The caller holds mu.
func (r *Runs) poll() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := r.db.QueryContext(ctx, `SELECT r.id, r.event, r.trigger_event, r.event_payload, coalesce(u.name, ''), r.commit_sha
		FROM action_run r LEFT JOIN "user" u ON u.id = r.trigger_user_id
		WHERE r.repo_id = ? AND r.id > ? ORDER BY r.id`, r.repoID, r.last)
	if err != nil {
		return fmt.Errorf("actiontest: reading the runs of %s: %w", r.label, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var event, trigger, payload, user, commit string
		if err := rows.Scan(&id, &event, &trigger, &payload, &user, &commit); err != nil {
			return err
		}
		d, err := delivery(id, event, trigger, payload, user)
		d.Commit = commit
		if err != nil {
			return fmt.Errorf("actiontest: run %d of %s: %w", id, r.label, err)
		}
		r.pending = append(r.pending, d)
		r.last = id
	}
	return rows.Err()
}

// delivery is a recorded run as the step gets it.
func delivery(id int64, event, trigger, payload, user string) (Delivery, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(payload), &m); err != nil {
		return Delivery{}, fmt.Errorf("event_payload is not a JSON object: %w", err)
	}
	file, err := json.Marshal(m) // as the runner writes the event file
	if err != nil {
		return Delivery{}, err
	}
	d := Delivery{Event: trigger, Type: event, TriggerUser: user, Run: id, Payload: file}
	if err := d.readPayload(); err != nil {
		return Delivery{}, err
	}
	return d, nil
}

// Next waits up to 30 seconds for the first recorded run not yet taken
// that match accepts (nil accepts any), takes it and returns its delivery.
// (Gitea records a run in the request that caused the event; the wait
// covers a server under load.)
func (r *Runs) Next(t testing.TB, match func(Delivery) bool) Delivery {
	t.Helper()
	d, err := r.next(match, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var errNoRun = errors.New("no matching run")

func (r *Runs) next(match func(Delivery) bool, wait time.Duration) (Delivery, error) {
	deadline := time.Now().Add(wait)
	pause := 5 * time.Millisecond
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		if err := r.poll(); err != nil {
			return Delivery{}, err
		}
		for i, d := range r.pending {
			if match == nil || match(d) {
				r.pending = append(r.pending[:i:i], r.pending[i+1:]...)
				return d, nil
			}
		}
		if !time.Now().Before(deadline) {
			var seen []string
			for _, d := range r.pending {
				seen = append(seen, d.String())
			}
			return Delivery{}, fmt.Errorf("actiontest: %w of %s recorded within %s (the capture workflow's triggers are those of examples/workflows/gns-guard.yml; the Actions user's events start none); recorded, not taken: %v", errNoRun, r.label, wait, seen)
		}
		r.mu.Unlock()
		time.Sleep(pause)
		r.mu.Lock()
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// Pending returns the recorded runs not taken yet, oldest first.
func (r *Runs) Pending(t testing.TB) []Delivery {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.poll(); err != nil {
		t.Fatal(err)
	}
	return append([]Delivery(nil), r.pending...)
}

// String names a delivery in failure messages.
func (d Delivery) String() string {
	s := fmt.Sprintf("%s/%s #%d by %s", d.Event, d.Action, d.Number, d.Sender)
	if d.Type != "" && d.Type != d.Event {
		s += " (" + d.Type + ")"
	}
	return strings.TrimSpace(s)
}
