package meter

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, url, token, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, string(data)
}

func TestChatThroughTheMeter(t *testing.T) {
	r := newRig(t)
	resp, body := post(t, r.base(7, "openai")+"/chat/completions", agentToken1, `{"model":"gpt-4o","max_tokens":50,"messages":[{"role":"user","content":"hello"}]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s\nlog: %s", resp.StatusCode, body, r.log)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(body), &got); err != nil || got["object"] != "chat.completion" {
		t.Fatalf("answer %s", body)
	}
	if resp.Header.Get("X-Gns-Budget-Remaining") != "13800" {
		t.Errorf("budget headers %v", resp.Header)
	}
	t.Log(r.log)
}
