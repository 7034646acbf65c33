package metering

import "encoding/json"

// Kind is a refusal's error type, named per provider.
type Kind int

// The kinds of refusal.
const (
	// KindInvalid is a request the meter cannot read (400).
	KindInvalid Kind = iota + 1
	// KindAuth is a missing or rejected key (401).
	KindAuth
	// KindPermission is a call the account, the meter's scope or the
	// issue's state forbids (403); the official SDKs do not retry it.
	KindPermission
	// KindNotFound is a route the meter does not serve (404).
	KindNotFound
	// KindTooLarge is a request body over the meter's limit (413).
	KindTooLarge
	// KindUnavailable is an unreachable server or store (503).
	KindUnavailable
	// KindBudget is a call over the budget or money cap (403); OpenAI
	// names it a quota.
	KindBudget
)

// Refusal is the meter's own answer, in the provider's shape.
type Refusal struct {
	Status int
	Kind   Kind
	// Rule is the rule's id ("budget-exhausted", "meter-over-budget").
	Rule string
	// Message gives the numbers and what a person does.
	Message string
}

// Body is the refusal as the provider would say it: OpenAI's
// {"error":{message,type,param,code}} or Anthropic's
// {"type":"error","error":{type,message}}.
func (r *Refusal) Body(p Provider) []byte {
	msg := "gns-guard meter: " + r.Message + " [" + r.Rule + "]"
	var v any
	if p == Anthropic {
		v = map[string]any{"type": "error", "error": map[string]any{"type": anthropicType[r.Kind], "message": msg}}
	} else {
		v = map[string]any{"error": map[string]any{"message": msg, "type": openAIType[r.Kind], "param": nil, "code": r.Rule}}
	}
	data, _ := json.Marshal(v) // strings and nil: never fails
	return data
}

// openAIType and anthropicType are each provider's error type names.
var (
	openAIType = map[Kind]string{KindInvalid: "invalid_request_error", KindAuth: "authentication_error", KindPermission: "permission_error",
		KindNotFound: "invalid_request_error", KindTooLarge: "invalid_request_error", KindUnavailable: "server_error", KindBudget: "insufficient_quota"}
	anthropicType = map[Kind]string{KindInvalid: "invalid_request_error", KindAuth: "authentication_error", KindPermission: "permission_error",
		KindNotFound: "not_found_error", KindTooLarge: "request_too_large", KindUnavailable: "api_error", KindBudget: "permission_error"}
)
