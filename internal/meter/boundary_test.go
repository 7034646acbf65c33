package meter

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/meterstore"
	"github.com/gns-guard/gns-guard/internal/receipt"
)

// The attacks a red team made on the meter, as an attacker sends them:
// each asserts what the stand-in provider charged against the issue's
// budget.

// bounded checks what the stand-in charged against the budget left when
// the attack began: in all, at most remaining; each call at most the worst
// case the meter reserved for it, and charged by the meter as the
// provider charged it.
func bounded(t *testing.T, r *rig, remaining int64) {
	t.Helper()
	calls, err := r.calls()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]int{}
	for i, c := range calls {
		byID[c.RequestID] = i
	}
	for _, q := range r.prov.Requests() {
		i, ok := byID[q.ID]
		switch {
		case q.Charged == 0:
		case !ok:
			t.Errorf("%s: the provider charged %d for a call the meter does not hold", q.ID, q.Charged)
		case calls[i].Worst < q.Charged:
			t.Errorf("%s: the provider charged %d, past the worst case %d the meter reserved", q.ID, q.Charged, calls[i].Worst)
		case calls[i].Tokens != q.Charged:
			t.Errorf("%s: the provider charged %d, the meter %d", q.ID, q.Charged, calls[i].Tokens)
		}
	}
	if got := r.prov.Charged(); got > remaining {
		t.Errorf("the provider charged %d in all, past the %d the budget had left", got, remaining)
	}
}

// attack sends body to url until the meter refuses it (at most max
// times), and returns the refusal's status and body.
func attack(t *testing.T, url, body string, max int) (int, string) {
	t.Helper()
	for range max {
		resp, answer := post(t, url, agentToken1, body)
		if resp.StatusCode != 200 {
			return resp.StatusCode, answer
		}
	}
	return 200, ""
}

// One repository, five spellings: Gitea's names ignore letter case, and
// the meter keys the budget by the repository's id, so the calls of every
// spelling spend one budget, and a receipt asked under any spelling
// counts them all, named as Gitea names the repository.
func TestOneRepositoryOneBudget(t *testing.T) {
	r := newRig(t)
	r.gitea.Change(7, func(is *issues.Issue) {
		is.Body = strings.Replace(body(7, 20000, 4500), "next_estimated_tokens: 3500", "next_estimated_tokens: 1000", 1)
	})
	judge(t, r.gitea, 7)
	r.prov.Count.Store(true)
	r.prov.Output.Store(1000)
	call := `{"model":"gpt-4o","max_tokens":1000,"messages":[{"role":"user","content":"hello"}]}`
	spellings := []string{"acme/app", "ACME/app", "acme/APP", "Acme/App", "aCmE/aPp"}
	var statuses []int
	for _, s := range spellings {
		url := fmt.Sprintf("%s/%s/issues/7/invocations/inv-1/openai/v1/chat/completions", r.srv.URL, s)
		resp, _ := post(t, url, agentToken1, call)
		statuses = append(statuses, resp.StatusCode)
	}
	if fmt.Sprint(statuses) != "[200 200 200 200 403]" {
		t.Errorf("five spellings of one repository: %v; want four calls of 1,000 tokens on 4,500 left, the fifth refused", statuses)
	}
	bounded(t, r, 4500)
	for _, s := range spellings[:2] {
		req, _ := http.NewRequest(http.MethodGet, r.srv.URL+"/"+s+"/issues/7/invocations/inv-1/receipt", nil)
		req.Header.Set("Authorization", "Bearer "+agentToken1)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var rc receipt.Receipt
		_ = json.NewDecoder(resp.Body).Decode(&rc)
		resp.Body.Close()
		if rc.Calls != 4 || rc.Repo != "acme/app" || receipt.Verify(&rc, r.key.Public(), receipt.For{Repo: "acme/app", Issue: 7, Invocation: "inv-1"}) != nil {
			t.Errorf("the receipt asked as %s: %+v", s, rc)
		}
	}
}

// Token ids are tokens: an embeddings input of 24,000 ids is 24,000
// tokens, refused on 13,800 left; inputs of 5,000 ids go through while
// their ids fit.
func TestTokenIDsAreCounted(t *testing.T) {
	r := newRig(t)
	r.prov.Count.Store(true)
	emb := r.base(7, "openai") + "/embeddings"
	ids := func(n int) string { return strings.TrimSuffix(strings.Repeat("1734,", n), ",") }
	status, answer := attack(t, emb, `{"model":"text-embedding-3-small","input":[[`+ids(24000)+`]]}`, 5)
	if code, _, _ := openAIError(t, answer); status != 403 || code != "meter-over-budget" {
		t.Errorf("24,000 ids on 13,800 left: %d %s", status, answer)
	}
	status, answer = attack(t, emb, `{"model":"text-embedding-3-small","input":[`+ids(5000)+`]}`, 5)
	if status != 403 {
		t.Errorf("5,000 ids a call, 5 calls on 13,800 left: %d %s", status, answer)
	}
	if n := len(r.prov.Requests()); n != 2 {
		t.Errorf("%d calls reached the provider, want 2", n)
	}
	bounded(t, r, 13800)
}

// emptyProperties are 600 properties with empty schemas, 37,980 bytes of
// names.
func emptyProperties() string {
	var props []string
	for i := range 600 {
		name := fmt.Sprintf("argument_%03d_%s", i, strings.Repeat("option", 9))[:63]
		if i < 180 {
			name += "s"
		}
		props = append(props, `"`+name+`":{}`)
	}
	return `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`
}

// Tools are counted as the provider renders them: 600 properties with
// empty schemas cost thousands of tokens a call, not a handful, and the
// calls stop before they pass the budget (60,000 left).
func TestToolSchemasAreCounted(t *testing.T) {
	for _, tt := range []struct{ provider, path, body string }{
		{"openai", "/chat/completions", `{"model":"gpt-4o","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":` + emptyProperties() + `}}]}`},
		{"openai", "/responses", `{"model":"gpt-4.1","max_output_tokens":10,"input":"hi","tools":[{"type":"function","name":"f","parameters":` + emptyProperties() + `}]}`},
		{"anthropic", "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":10,"system":"be brief","messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":` + emptyProperties() + `}]}`},
		{"openai", "/chat/completions", `{"model":"gpt-4o","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":{"type":"string","enum":["a"` + strings.Repeat(`,"a"`, 2999) + `]}}}}}]}`},
	} {
		t.Run(tt.provider+tt.path, func(t *testing.T) {
			r := newRig(t)
			r.gitea.Change(7, func(is *issues.Issue) { is.Body = body(7, 66200, 60000) })
			judge(t, r.gitea, 7)
			r.prov.Count.Store(true)
			status, answer := attack(t, r.base(7, tt.provider)+tt.path, tt.body, 20)
			if status != 403 || !strings.Contains(answer, "meter-over-budget") {
				t.Errorf("twenty calls on 60,000 left: %d %s", status, answer)
			}
			bounded(t, r, 60000)
			calls, _ := r.calls()
			if len(calls) == 0 {
				t.Error("no call went through")
			}
			for i, q := range r.prov.Requests() {
				t.Logf("the provider charged %d for a call the meter priced at %d at worst", q.Charged, calls[i].Worst)
			}
		})
	}
}

// What the provider keeps or fetches, out of the meter's sight, is
// refused in the provider's error shape, naming the field; nothing
// reaches the provider.
func TestServerStateIsRefused(t *testing.T) {
	r := newRig(t)
	r.prov.Count.Store(true)
	for _, tt := range []struct{ provider, path, body, field string }{
		{"openai", "/responses", `{"model":"gpt-4.1","max_output_tokens":10,"previous_response_id":"resp_1","input":"go on"}`, "previous_response_id"},
		{"openai", "/responses", `{"model":"gpt-4.1","max_output_tokens":10,"conversation":{"id":"conv_1"},"input":"go on"}`, "conversation"},
		{"openai", "/responses", `{"model":"gpt-4.1","max_output_tokens":10,"prompt":{"id":"pmpt_1","version":"2"}}`, "prompt"},
		{"openai", "/responses", `{"model":"gpt-4.1","max_output_tokens":10,"input":[{"role":"user","content":[{"type":"input_file","file_id":"file-1"}]}]}`, "input[0].content[0].file_id"},
		{"openai", "/chat/completions", `{"model":"gpt-4o","max_tokens":10,"messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"file-1"}}]}]}`, "messages[0].content[0].file.file_id"},
		{"anthropic", "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"file","file_id":"file_1"}}]}]}`, "messages[0].content[0].source.file_id"},
	} {
		resp, answer := post(t, r.base(7, tt.provider)+tt.path, agentToken1, tt.body)
		msg, ok := providerError(t, tt.provider, answer)
		if resp.StatusCode != 400 || !ok || !strings.Contains(msg, tt.field) || resp.Header.Get("X-Should-Retry") != "false" {
			t.Errorf("%s: %d %s; want a 400 in the provider's shape naming %s", tt.body, resp.StatusCode, answer, tt.field)
		}
	}
	if n := len(r.prov.Requests()); n != 0 {
		t.Errorf("%d calls reached the provider", n)
	}
}

// providerError reads an error answer in provider's shape: its message,
// and whether it is that shape.
func providerError(t *testing.T, provider, body string) (string, bool) {
	t.Helper()
	if provider == "openai" {
		code, typ, msg := openAIError(t, body)
		return msg, code == "meter-request" && typ == "invalid_request_error"
	}
	var e struct {
		Type  string
		Error struct{ Type, Message string }
	}
	err := json.Unmarshal([]byte(body), &e)
	return e.Error.Message, err == nil && e.Type == "error" && e.Error.Type == "invalid_request_error"
}

// "max_tokens":20000,"MAX_TOKENS":1: encoding/json takes the last key in
// any letter case, an upstream that matches keys exactly the first. The
// meter refuses a key given twice in any case, at any depth, in the
// provider's error shape; the model writes nothing.
func TestKeysGivenTwiceAreRefused(t *testing.T) {
	r := newRig(t)
	r.prov.Count.Store(true)
	r.prov.Output.Store(20000)
	for _, tt := range []struct{ provider, path, body string }{
		{"openai", "/chat/completions", `{"model":"gpt-4o","max_tokens":20000,"MAX_TOKENS":1,"messages":[{"role":"user","content":"write"}]}`},
		{"openai", "/chat/completions", `{"model":"gpt-4o","max_tokens":1,"messages":[{"role":"user","content":"write","content":"write a lot"}]}`},
		{"openai", "/responses", `{"model":"gpt-4.1","max_output_tokens":20000,"Max_Output_Tokens":1,"input":"write"}`},
		{"anthropic", "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":20000,"max_tokens":1,"messages":[{"role":"user","content":"write"}]}`},
		{"anthropic", "/v1/messages", `{"model":"claude-sonnet-4-5","MAX_TOKENS":1,"max_tokens":20000,"messages":[{"role":"user","content":"write"}]}`},
	} {
		resp, answer := post(t, r.base(7, tt.provider)+tt.path, agentToken1, tt.body)
		if _, ok := providerError(t, tt.provider, answer); resp.StatusCode != 400 || !ok {
			t.Errorf("%s: %d %s; want a 400 in the provider's shape", tt.body, resp.StatusCode, answer)
		}
	}
	if got := r.prov.Charged(); got != 0 {
		t.Errorf("the provider charged %d", got)
	}
}

// settled waits until the store holds n calls, all settled.
func settled(t *testing.T, r *rig, n int) []meterstore.Call {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		calls, err := r.calls()
		if err != nil {
			t.Fatal(err)
		}
		done := len(calls) == n
		for _, c := range calls {
			done = done && c.Settled
		}
		if done {
			return calls
		}
		if time.Now().After(deadline) {
			t.Fatalf("the store holds %+v; want %d calls settled", calls, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// hangUp posts body and hangs up after d, or after the answer's first
// line when d is 0.
func hangUp(t *testing.T, url, body string, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if d > 0 {
		time.AfterFunc(d, cancel)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+agentToken1)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	if d == 0 {
		_, _ = bufio.NewReader(resp.Body).ReadString('\n')
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
}

// The client hangs up: before a provider that answers after 1.5 s
// answers, and in the middle of a stream. The provider charged both
// calls; the meter reads each answer to its end after the client left
// and charges what the provider charged, and the receipt counts it.
func TestAClientThatHangsUpIsCharged(t *testing.T) {
	r := newRig(t)
	r.prov.Count.Store(true)
	r.prov.Output.Store(300)
	chat := r.base(7, "openai") + "/chat/completions"
	r.prov.AnswerDelay.Store(int64(1500 * time.Millisecond))
	hangUp(t, chat, `{"model":"gpt-4o","max_tokens":300,"messages":[{"role":"user","content":"think long"}]}`, 300*time.Millisecond)
	r.prov.AnswerDelay.Store(0)
	r.prov.Delay.Store(int64(5 * time.Millisecond))
	hangUp(t, chat, `{"model":"gpt-4o","max_tokens":300,"stream":true,"messages":[{"role":"user","content":"write long"}]}`, 0)
	calls := settled(t, r, 2)
	bounded(t, r, 13800)
	charged := r.prov.Charged()
	for _, c := range calls {
		if !c.UsageKnown || c.Tokens < 300 {
			t.Errorf("a call whose client hung up was charged %+v; want the provider's usage", c)
		}
	}
	if n := strings.Count(r.log.String(), "client-gone:usage-read"); n != 2 {
		t.Errorf("%d log lines say the client left and the usage was read, want 2:\n%s", n, r.log)
	}
	if rc := getReceipt(t, r); rc.Tokens != charged || rc.WorstCase != 0 {
		t.Errorf("the receipt says %d tokens (%d at the worst case); the provider charged %d", rc.Tokens, rc.WorstCase, charged)
	}
}

// The meter reads after the client left for HangupRead at most: an answer
// that comes later is charged the call's worst case, and the log line and
// the receipt say so.
func TestAnAnswerPastTheReadLimitIsChargedTheWorstCase(t *testing.T) {
	r := newRig(t, func(o *Options) { o.HangupRead = 200 * time.Millisecond })
	r.prov.Count.Store(true)
	r.prov.AnswerDelay.Store(int64(1500 * time.Millisecond))
	hangUp(t, r.base(7, "openai")+"/chat/completions", `{"model":"gpt-4o","max_tokens":300,"messages":[{"role":"user","content":"think long"}]}`, 200*time.Millisecond)
	calls := settled(t, r, 1)
	c := calls[0]
	if c.UsageKnown || c.Tokens != c.Worst || c.Worst < r.prov.Charged() {
		t.Errorf("charged %+v; want its worst case, at least the %d the provider charged", c, r.prov.Charged())
	}
	if !strings.Contains(r.log.String(), "client-gone:read-limit") || !strings.Contains(r.log.String(), "charged-worst-case") {
		t.Errorf("the log line does not say why:\n%s", r.log)
	}
	if rc := getReceipt(t, r); rc.Tokens != c.Worst || rc.WorstCase != c.Worst {
		t.Errorf("the receipt %+v does not say the call was charged its worst case %d", rc, c.Worst)
	}
}

func getReceipt(t *testing.T, r *rig) receipt.Receipt {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, r.srv.URL+"/acme/app/issues/7/invocations/inv-1/receipt", nil)
	req.Header.Set("Authorization", "Bearer "+agentToken1)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rc receipt.Receipt
	if err := json.NewDecoder(resp.Body).Decode(&rc); err != nil {
		t.Fatal(err)
	}
	if err := receipt.Verify(&rc, r.key.Public(), receipt.For{Repo: "acme/app", Issue: 7, Invocation: "inv-1"}); err != nil {
		t.Fatal(err)
	}
	return rc
}

// Hop-by-hop headers, those Connection names included, cross the meter
// in neither direction; end-to-end headers do. The request is sent as
// an attacker sends it, on a raw connection.
func TestHopByHopHeadersDoNotCross(t *testing.T) {
	r := newRig(t)
	r.prov.Count.Store(true)
	r.prov.Header = http.Header{"Connection": {"X-Hop-Back"}, "X-Hop-Back": {"1"}, "Keep-Alive": {"timeout=9"},
		"Proxy-Authenticate": {"Basic"}, "X-End-Back": {"1"}}
	conn, err := net.Dial("tcp", strings.TrimPrefix(r.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"model":"gpt-4o","max_tokens":20,"messages":[{"role":"user","content":"hello"}]}`
	fmt.Fprintf(conn, "POST /acme/app/issues/7/invocations/inv-1/openai/v1/chat/completions HTTP/1.1\r\nHost: meter\r\n"+
		"Authorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"+
		"Connection: keep-alive, Upgrade, X-Hop-Test\r\nX-Hop-Test: secret\r\nKeep-Alive: timeout=5\r\nUpgrade: websocket\r\n"+
		"Proxy-Authorization: Basic c2VjcmV0\r\nProxy-Connection: keep-alive\r\nTE: gzip\r\nX-End-To-End: yes\r\n\r\n%s", agentToken1, len(body), body)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	reqs := r.prov.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests reached the provider", len(reqs))
	}
	got := reqs[0].Header
	for _, h := range []string{"X-Hop-Test", "Keep-Alive", "Upgrade", "Proxy-Authorization", "Proxy-Connection", "Te", "Connection"} {
		if v := got.Values(h); len(v) > 0 {
			t.Errorf("the provider received %s: %v", h, v)
		}
	}
	if got.Get("X-End-To-End") != "yes" {
		t.Errorf("an end-to-end header did not reach the provider: %v", got)
	}
	for _, h := range []string{"X-Hop-Back", "Keep-Alive", "Proxy-Authenticate"} {
		if v := resp.Header.Values(h); len(v) > 0 {
			t.Errorf("the client received %s: %v", h, v)
		}
	}
	if strings.Contains(strings.ToLower(resp.Header.Get("Connection")), "x-hop-back") || resp.Header.Get("X-End-Back") != "1" {
		t.Errorf("the client received %v", resp.Header)
	}
	bounded(t, r, 13800)
}

// A meter serves the owners and repositories of its scope alone: a call,
// a receipt and a listing for a stranger's repository are refused
// meter-scope before Gitea is asked who the key is and before any
// provider is called; the repository's name in another letter case is in
// scope.
func TestAStrangersRepositoryIsOutOfScope(t *testing.T) {
	r := newRig(t, func(o *Options) { o.Scope = []string{"acme"} })
	r.prov.Count.Store(true)
	const chat = `{"model":"gpt-4o","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	before := r.gitea.Requests()
	for _, u := range []string{
		r.srv.URL + "/mallory/free-tokens/issues/1/invocations/inv-1/openai/v1/chat/completions",
		r.srv.URL + "/acmex/app/issues/7/invocations/inv-1/openai/v1/chat/completions",
	} {
		resp, answer := post(t, u, agentToken1, chat)
		if resp.StatusCode != 403 || !strings.Contains(answer, "meter-scope") {
			t.Errorf("%s: %d %s; want 403 meter-scope", u, resp.StatusCode, answer)
		}
	}
	for _, u := range []string{r.srv.URL + "/mallory/free-tokens/issues/1/invocations/inv-1/receipt", r.srv.URL + "/mallory/free-tokens/metered"} {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		req.Header.Set("Authorization", "Bearer "+agentToken1)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 403 || !strings.Contains(string(b), "meter-scope") {
			t.Errorf("GET %s: %d %s; want 403 meter-scope", u, resp.StatusCode, b)
		}
	}
	if n := len(r.prov.Requests()); n != 0 || r.gitea.Requests() != before {
		t.Errorf("out of scope, %d calls reached the provider and %d requests Gitea", n, r.gitea.Requests()-before)
	}
	if resp, answer := post(t, r.srv.URL+"/ACME/app/issues/7/invocations/inv-1/openai/v1/chat/completions", agentToken1, chat); resp.StatusCode != 200 {
		t.Errorf("the scope's own repository, its owner in capitals: %d %s", resp.StatusCode, answer)
	}
}

// A checkpoint that names a spent invocation without raising
// budget.consumed by its spend does not give the spend back: three rounds
// of spending under a new invocation and recording only its name (the
// guard passes each state) stay within the 3,000 tokens left.
func TestARecordedInvocationKeepsItsSpend(t *testing.T) {
	r := newRig(t, func(o *Options) { o.IssueTTL = time.Nanosecond })
	start := strings.Replace(body(7, 20000, 3000), "next_estimated_tokens: 3500", "next_estimated_tokens: 1000", 1)
	r.gitea.Change(7, func(is *issues.Issue) { is.Body = start })
	judge(t, r.gitea, 7)
	r.prov.Count.Store(true)
	r.prov.Output.Store(1000)
	call := `{"model":"gpt-4o","max_tokens":1000,"messages":[{"role":"user","content":"hello"}]}`
	for k := 1; k <= 3; k++ {
		inv := fmt.Sprintf("ghost-%d", k)
		url := fmt.Sprintf("%s/acme/app/issues/7/invocations/%s/openai/v1/chat/completions", r.srv.URL, inv)
		attack(t, url, call, 4)
		r.gitea.Change(7, func(is *issues.Issue) {
			is.Body = strings.Replace(start, "last_invocation: inv-20260516-1320-a7", "last_invocation: "+inv, 1)
		})
		judge(t, r.gitea, 7)
	}
	bounded(t, r, 3000)
	if got := r.prov.Charged(); got < 2000 {
		t.Errorf("the provider charged %d: the honest first calls should have gone through", got)
	}
}
