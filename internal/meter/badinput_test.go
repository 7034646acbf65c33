package meter

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/receipt"
	"github.com/gns-guard/gns-guard/internal/testkit/fakeforge"
)

const chatBody = `{"model":"gpt-4o","max_tokens":50,"messages":[{"role":"user","content":"hello"}]}`

// openAIError reads an OpenAI error body.
func openAIError(t *testing.T, body string) (code, typ, msg string) {
	t.Helper()
	var e struct {
		Error struct {
			Message, Type string
			Code          string
		}
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("not an OpenAI error: %v\n%s", err, body)
	}
	return e.Error.Code, e.Error.Type, e.Error.Message
}

// Requests the meter cannot take get the provider's error shape, a
// status the SDKs do not retry, and nothing reaches the provider.
func TestBadRequests(t *testing.T) {
	r := newRig(t)
	chat := r.base(7, "openai") + "/chat/completions"
	huge := `{"model":"gpt-4o","max_tokens":5,"messages":[{"role":"user","content":"` + strings.Repeat("x", metering.MaxBodyBytes) + `"}]}`
	for _, tt := range []struct {
		name, url, token, body string
		status                 int
		code                   string
	}{
		{"no key", chat, "", chatBody, 401, "meter-auth"},
		{"a provider's key", chat, "sk-proj-abc", chatBody, 401, "meter-auth"},
		{"a reader's token", chat, "reader-token", chatBody, 403, "meter-auth"},
		{"malformed JSON", chat, agentToken1, `{"model": "gpt-4o", "messages": [`, 400, "meter-request"},
		{"not an object", chat, agentToken1, `["gpt-4o"]`, 400, "meter-request"},
		{"no model", chat, agentToken1, `{"messages":[]}`, 400, "meter-request"},
		{"huge body", chat, agentToken1, huge, 413, "meter-request"},
		{"unknown route", r.srv.URL + "/acme/app/issues/7/invocations/i/openai/v1/images/generations", agentToken1, chatBody, 404, "meter-route"},
		{"no issue", r.srv.URL + "/acme/app/openai/v1/chat/completions", agentToken1, chatBody, 404, "meter-route"},
		{"a bad invocation", r.srv.URL + "/acme/app/issues/7/invocations/a%20b/openai/v1/chat/completions", agentToken1, chatBody, 400, "meter-invocation"},
		{"missing issue", r.base(8, "openai") + "/chat/completions", agentToken1, chatBody, 404, "meter-issue"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := post(t, tt.url, tt.token, tt.body)
			code, _, msg := openAIError(t, body)
			if resp.StatusCode != tt.status || code != tt.code {
				t.Errorf("status %d code %q, want %d %q: %s", resp.StatusCode, code, tt.status, tt.code, msg)
			}
			if strings.Contains(body, "goroutine") || strings.Contains(body, ".go:") {
				t.Errorf("a stack trace in the answer: %s", body)
			}
		})
	}
	if n := len(r.prov.Requests()); n != 0 {
		t.Errorf("%d bad requests reached the provider", n)
	}
	if strings.Contains(r.log.String(), agentToken1) || strings.Contains(r.log.String(), "hello") {
		t.Errorf("the log shows a key or the prompt:\n%s", r.log)
	}
}

// A provider's error is passed through untouched (status and body), and
// charges nothing.
func TestProviderErrorPassesThrough(t *testing.T) {
	r := newRig(t)
	r.prov.FailStatus.Store(400)
	resp, body := post(t, r.base(7, "openai")+"/chat/completions", agentToken1, chatBody)
	want := `{"error":{"message":"the stand-in was told to fail","type":"invalid_request_error","param":null,"code":"standin_400"}}`
	if resp.StatusCode != 400 || body != want {
		t.Errorf("status %d body %s\nwant 400 %s", resp.StatusCode, body, want)
	}
	calls, _ := r.calls()
	if len(calls) != 1 || calls[0].Tokens != 0 || !calls[0].Settled {
		t.Errorf("a refused call was charged: %+v", calls)
	}
}

// A stream cut in the middle reaches the client as far as it came; with
// no usage read, the call is charged its worst case and the log says so.
func TestStreamCutInTheMiddle(t *testing.T) {
	r := newRig(t)
	r.prov.CutAfter.Store(5)
	req, _ := http.NewRequest(http.MethodPost, r.base(7, "openai")+"/chat/completions", strings.NewReader(`{"model":"gpt-4o","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"hello"}]}`))
	req.Header.Set("Authorization", "Bearer "+agentToken1)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if n := bytes.Count(data, []byte("data: ")); n != 5 || bytes.Contains(data, []byte("[DONE]")) {
		t.Errorf("the client got %d events (want the 5 sent before the cut):\n%s", n, data)
	}
	calls, _ := r.calls()
	if len(calls) != 1 || calls[0].UsageKnown || calls[0].Tokens != calls[0].Worst || calls[0].Worst < 50 {
		t.Errorf("a cut stream was charged %+v; want its worst case", calls)
	}
	if !strings.Contains(r.log.String(), "stream-cut") {
		t.Errorf("the log does not say the stream was cut:\n%s", r.log)
	}
}

// An answer without usage is charged its worst case, and the log says so.
func TestUsageUnreadChargesTheWorstCase(t *testing.T) {
	r := newRig(t)
	r.prov.NoUsage.Store(true)
	post(t, r.base(7, "anthropic")+"/v1/messages", agentToken1, `{"model":"claude-sonnet-4-5","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"hello"}]}`)
	calls, _ := r.calls()
	if len(calls) != 1 || calls[0].UsageKnown || calls[0].Tokens != calls[0].Worst {
		t.Errorf("charged %+v; want the worst case", calls)
	}
	if !strings.Contains(r.log.String(), "usage-unread:charged-worst-case") {
		t.Errorf("log:\n%s", r.log)
	}
}

// A locked, unjudged, failing or ungoverned issue gets no call. The
// error's type is its cause's: a quota for the budget, a permission for
// the rest.
func TestIssueStatesThatGetNoCall(t *testing.T) {
	const permission, quota = "permission_error", "insufficient_quota"
	for _, tt := range []struct {
		name string
		edit func(f *fakeforge.Server)
		rule string
		typ  string
	}{
		{"locked", func(f *fakeforge.Server) { f.Change(7, func(is *issues.Issue) { is.Locked = true }) }, "meter-issue-locked", permission},
		{"never judged", func(f *fakeforge.Server) { unjudge(f, 7) }, "meter-unjudged", permission},
		{"budget::exhausted", func(f *fakeforge.Server) {
			f.Change(7, func(is *issues.Issue) { is.Labels = append(is.Labels, issues.Label{ID: 9, Name: "budget::exhausted"}) })
		}, "budget-exhausted", quota},
		{"not governed", func(f *fakeforge.Server) {
			f.Change(7, func(is *issues.Issue) { is.Body, is.Labels = "no checkpoint", nil })
			unjudge(f, 7)
		}, "meter-not-governed", permission},
		{"tampered", func(f *fakeforge.Server) {
			f.Change(7, func(is *issues.Issue) {
				is.Body = strings.Replace(is.Body, "total: 20000", "total: 90000", 1)
				is.Body = strings.Replace(is.Body, "remaining: 13800", "remaining: 83800", 1)
				is.ContentVersion = 1
			})
		}, "checkpoint-tampered", permission},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			tt.edit(r.gitea)
			resp, body := post(t, r.base(7, "openai")+"/chat/completions", agentToken1, chatBody)
			code, typ, msg := openAIError(t, body)
			if resp.StatusCode != 403 || code != tt.rule || typ != tt.typ || resp.Header.Get("X-Should-Retry") != "false" {
				t.Errorf("status %d code %q type %q: %s", resp.StatusCode, code, typ, msg)
			}
			if n := len(r.prov.Requests()); n != 0 {
				t.Errorf("%d calls reached the provider", n)
			}
		})
	}
}

// Calls go through while the budget allows; the one whose worst case
// would pass what is left is refused with the numbers; the headers say
// what is left and warn at 80, 90 and 95 %.
func TestBudgetRefusalAndWarnings(t *testing.T) {
	r := newRig(t)
	r.gitea.Change(7, func(is *issues.Issue) {
		is.Body = strings.Replace(body(7, 20000, 4500), "next_estimated_tokens: 3500", "next_estimated_tokens: 1000", 1)
	})
	judge(t, r.gitea, 7)
	r.prov.Output.Store(1000)
	chat := r.base(7, "openai") + "/chat/completions"
	call := `{"model":"gpt-4o","max_tokens":1000,"messages":[{"role":"user","content":"hello"}]}`
	var warnings []string
	for i := range 4 {
		resp, body := post(t, chat, agentToken1, call)
		if resp.StatusCode != 200 {
			t.Fatalf("call %d: %d %s", i, resp.StatusCode, body)
		}
		warnings = append(warnings, resp.Header.Get(metering.HeaderWarning))
	}
	resp, body := post(t, chat, agentToken1, call)
	code, _, msg := openAIError(t, body)
	if resp.StatusCode != 403 || code != "meter-over-budget" || !strings.Contains(msg, "more than the 452 the issue's budget has left (remaining 4,500 of 20,000 in the checkpoint, 4,048 metered and not in budget.consumed)") {
		t.Errorf("the fifth call: %d %s", resp.StatusCode, msg)
	}
	if resp.Header.Get(metering.HeaderRemaining) != "452" {
		t.Errorf("remaining header %q", resp.Header.Get(metering.HeaderRemaining))
	}
	warnings = append(warnings, resp.Header.Get(metering.HeaderWarning))
	// Used before each call: 15,500, 16,512, 17,524, 18,536, 19,548 of 20,000.
	if warnings[0] != "" || !strings.HasPrefix(warnings[1], "80%") || !strings.HasPrefix(warnings[2], "80%") || !strings.HasPrefix(warnings[3], "90%") || !strings.HasPrefix(warnings[4], "95%") {
		t.Errorf("warnings %q", warnings)
	}
}

// The receipt of an invocation is its metered total, signed with the
// meter's key: the guard's check passes on it, and fails on another
// issue's or invocation's.
func TestReceipt(t *testing.T) {
	r := newRig(t)
	for range 2 {
		post(t, r.base(7, "openai")+"/chat/completions", agentToken1, chatBody)
	}
	get := func(token, path string) (int, receipt.Receipt) {
		req, _ := http.NewRequest(http.MethodGet, r.srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var rc receipt.Receipt
		_ = json.NewDecoder(resp.Body).Decode(&rc)
		return resp.StatusCode, rc
	}
	status, rc := get(agentToken1, "/acme/app/issues/7/invocations/inv-1/receipt")
	if status != 200 || rc.Calls != 2 || rc.Tokens != 64 || rc.Login != "coder" {
		t.Fatalf("receipt %d %+v", status, rc)
	}
	if err := receipt.Verify(&rc, r.key.Public(), receipt.For{Repo: "acme/app", Issue: 7, Invocation: "inv-1"}); err != nil {
		t.Errorf("the receipt does not verify: %v", err)
	}
	if err := receipt.Verify(&rc, r.key.Public(), receipt.For{Repo: "acme/app", Issue: 8, Invocation: "inv-1"}); err == nil {
		t.Error("a receipt for issue 7 verifies for issue 8")
	}
	if status, _ := get("reader-token", "/acme/app/issues/7/invocations/inv-1/receipt"); status != 403 {
		t.Errorf("a reader got a receipt: %d", status)
	}
}

// An agent that spends under an invocation the checkpoint already records
// (its report is in budget.consumed) cannot pass the budget: what it
// spends after that report is pending like any other spend.
func TestSpendUnderAReportedInvocationIsPending(t *testing.T) {
	r := newRig(t)
	r.gitea.Change(7, func(is *issues.Issue) {
		is.Body = strings.Replace(body(7, 20000, 4500), "next_estimated_tokens: 3500", "next_estimated_tokens: 1000", 1)
	})
	judge(t, r.gitea, 7)
	r.prov.Output.Store(1000)
	reported := r.srv.URL + "/acme/app/issues/7/invocations/inv-20260516-1320-a7/openai/v1/chat/completions"
	call := `{"model":"gpt-4o","max_tokens":1000,"messages":[{"role":"user","content":"hello"}]}`
	for i := range 5 {
		resp, body := post(t, reported, agentToken1, call)
		if i < 4 && resp.StatusCode != 200 {
			t.Fatalf("call %d: %d %s", i, resp.StatusCode, body)
		}
		if i == 4 && resp.StatusCode != 403 {
			t.Fatalf("the fifth call of 1,012 tokens on 4,500 left went through under the reported invocation: %d", resp.StatusCode)
		}
	}
}

// A call refused for budget says the issue waits for an approver and how
// the chain resumes; once an approver raises budget.total, the next call
// of the same agent through the same meter is admitted, within one
// --issue-ttl, with nothing restarted.
func TestAnApproversRaiseResumesTheChain(t *testing.T) {
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	r := newRig(t, func(o *Options) { o.Now = clock })
	start := strings.Replace(body(7, 20000, 1500), "next_estimated_tokens: 3500", "next_estimated_tokens: 700", 1)
	r.gitea.Change(7, func(is *issues.Issue) { is.Body = start })
	judge(t, r.gitea, 7)
	r.prov.Output.Store(1000)
	chat := r.base(7, "openai") + "/chat/completions"
	call := `{"model":"gpt-4o","max_tokens":1000,"messages":[{"role":"user","content":"hello"}]}`
	if resp, body := post(t, chat, agentToken1, call); resp.StatusCode != 200 {
		t.Fatalf("the first call: %d %s", resp.StatusCode, body)
	}
	resp, body := post(t, chat, agentToken1, call)
	if _, _, msg := openAIError(t, body); resp.StatusCode != 403 || !strings.Contains(msg, metering.Resume) {
		t.Fatalf("the call over budget: %d %s", resp.StatusCode, msg)
	}
	r.gitea.Change(7, func(is *issues.Issue) {
		is.Body = strings.Replace(strings.Replace(start, "total: 20000", "total: 30000", 1), "remaining: 1500", "remaining: 11500", 1)
	})
	judge(t, r.gitea, 7)
	mu.Lock()
	now = now.Add(DefaultIssueTTL + time.Millisecond)
	mu.Unlock()
	if resp, body := post(t, chat, agentToken1, call); resp.StatusCode != 200 {
		t.Errorf("the call after the raise: %d %s", resp.StatusCode, body)
	}
}
