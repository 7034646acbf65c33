package scopes

import "strings"

// Scope is a Gitea token scope a token needs.
type Scope struct {
	// Name is Gitea's; a write scope includes its read scope.
	Name string
	// For tells the token's creator what it is used for.
	For string
	// Routes under /api/v1 asking for it (Gitea 1.26 routers/api/v1/api.go,
	// tokenRequiresScopes).
	Routes []string
}

// Token is one access token a person creates for gns-guard.
type Token struct {
	// ID names it in the docs' markers (guard, admin, ...).
	ID string
	// Name is where it is held ("GNS_GUARD_TOKEN") or given ("init
	// --token").
	Name string
	// Whose is e.g. "the guard's own account".
	Whose string
	// Given says where gns-guard takes it from.
	Given string
	// Scopes are what it needs: no fewer, no more.
	Scopes []Scope
}

// The routes of a repository, under /api/v1.
const (
	repo  = "/repos/{owner}/{repo}"
	issue = repo + "/issues/{index}"
)

// Guard is the token of the guard's own account (the action's token
// input): it reads the issue and writes the guard's comments, labels and
// edits as that account.
var Guard = Token{
	ID:    "guard",
	Name:  "GNS_GUARD_TOKEN",
	Whose: "the guard's own account",
	Given: "the action's token input",
	Scopes: []Scope{
		{Name: "write:issue", For: "reads the issue, its comments and labels; writes the status and archive comments, the body's " +
			"checkpoint, labels; keeps the dashboard issue",
			Routes: []string{"GET, PATCH " + issue, "GET " + issue + "/timeline", "GET, POST " + issue + "/comments", "PATCH, DELETE " +
				repo + "/issues/comments/{id}",
				"GET, POST " + issue + "/labels", "DELETE " + issue + "/labels/{id}", "GET, POST " + repo + "/labels", "GET, POST " + repo + "/issues"}},
		{Name: "read:repository", For: "reads the settings file, a pull request's files, and who can reach the repository (the posture: " +
			"teams, collaborators, workflows, the default branch)",
			Routes: []string{"GET " + repo, "GET " + repo + "/raw/{path}", "GET " + repo + "/pulls/{index}", "GET " + repo + "/pulls/{index}/files",
				"GET " + repo + "/assignees", "GET " + repo + "/teams", "GET " + repo + "/collaborators", "GET " + repo +
					"/actions/workflows", "GET " + repo + "/branches/{branch}"}},
		{Name: "read:user", For: "learns its own login, to know its own comments and skip the events it caused",
			Routes: []string{"GET /user"}},
	},
}

// Admin is the repository owner's token (the action's admin-token input,
// doctor's --admin-token): it writes what only the owner may, and reads
// who may do what.
var Admin = Token{
	ID:    "admin",
	Name:  "GNS_GUARD_ADMIN_TOKEN",
	Whose: "the repository's owner",
	Given: "the action's admin-token input; doctor's --admin-token",
	Scopes: []Scope{
		{Name: "write:repository", For: "writes each issue's anchor, the grant list and the label pins (Actions variables, which only " +
			"the owner may write); reads a user's permission (approvers), the default branch's protection and the secrets' names",
			Routes: []string{"GET, POST, PUT " + repo + "/actions/variables/{name}", "GET " + repo + "/collaborators/{user}/permission",
				"GET " + repo + "/branches/{branch}", "GET " + repo + "/branch_protections/{name}", "GET " + repo + "/actions/secrets"}},
		{Name: "write:issue", For: "locks an issue (a repository admin's right); creates the governance labels it pins",
			Routes: []string{"PUT " + issue + "/lock", "GET, POST " + repo + "/labels"}},
		{Name: "read:organization", For: "in an organisation, reads the members of the teams that reach the repository (the posture)",
			Routes: []string{"GET /teams/{id}/members"}},
	},
}

// Agent is an agent's own token, for the verbs it runs (context, report,
// recover, history, status), the meter and the MCP server: Agent's
// scopes are the union of AgentVerbs'.
var Agent = Token{
	ID:    "agent",
	Name:  "GITEA_TOKEN",
	Whose: "an agent's own account",
	Given: "the verbs' --token (else GITEA_TOKEN), the meter's API key, the MCP server's environment",
	Scopes: []Scope{
		{Name: "write:issue", For: "reads the issue; report posts its result, edits the checkpoint and sets labels and the assignee; " +
			"recover --apply, status --publish",
			Routes: []string{"GET, PATCH " + issue, "GET " + issue + "/timeline", "GET, POST " + issue + "/comments", "PATCH " + repo +
				"/issues/comments/{id}",
				"GET, POST " + issue + "/labels", "DELETE " + issue + "/labels/{id}", "GET " + repo + "/labels", "GET, POST " + repo + "/issues"}},
		{Name: "read:repository", For: "reads the settings file, the repository and its assignees; the meter reads whether the agent " +
			"may write the repository",
			Routes: []string{"GET " + repo, "GET " + repo + "/raw/{path}", "GET " + repo + "/assignees", "GET " + repo + "/collaborators/{user}/permission"}},
		{Name: "read:user", For: "learns whose token it is: report, recover and the meter name the agent's account",
			Routes: []string{"GET /user"}},
	},
}

// Init is the owner's, or an organisation owner's, for `gns-guard init`.
var Init = Token{
	ID:    "init",
	Name:  "init --token",
	Whose: "the repository's owner",
	Given: "init's --token (else GITEA_TOKEN)",
	Scopes: []Scope{
		{Name: "write:repository", For: "commits the workflow, the settings file and the issue template, opens the pull request, " +
			"protects the default branch",
			Routes: []string{"GET " + repo, "GET " + repo + "/contents/{path}", "POST " + repo + "/contents", "GET, POST " + repo + "/pulls",
				"GET " + repo + "/branches/{branch}", "GET, POST, PATCH " + repo + "/branch_protections[/{name}]", "GET " + repo + "/actions/secrets"}},
		{Name: "write:issue", For: "creates the labels",
			Routes: []string{"GET, POST " + repo + "/labels"}},
		{Name: "write:organization", For: "tells an organisation from a user; in an organisation, creates the agents' team and gives it " +
			"the repository and the agents",
			Routes: []string{"GET /orgs/{owner}", "GET, POST /orgs/{org}/teams", "GET, PUT /teams/{id}/repos/{org}/{repo}",
				"GET /teams/{id}/members", "PUT /teams/{id}/members/{user}"}},
	},
}

// Gate is the gate account's token (docs/gate.md): it writes what
// report wrote, so it needs report's scopes.
var Gate = Token{
	ID:    "gate",
	Name:  "meter --gate-token-env",
	Whose: "the gate account (gate-account)",
	Given: "the variable the meter's --gate-token-env names",
	Scopes: []Scope{
		{Name: "write:issue", For: "writes what passes the gate: the agents' results, the checkpoint, labels, the assignee, sub-issues",
			Routes: []string{"GET, PATCH " + issue, "GET " + issue + "/timeline", "GET, POST " + issue + "/comments", "GET, POST " + issue + "/labels",
				"DELETE " + issue + "/labels/{id}", "GET " + repo + "/labels", "GET, POST " + repo + "/issues"}},
		{Name: "read:repository", For: "reads the settings file, the repository and its assignees",
			Routes: []string{"GET " + repo, "GET " + repo + "/raw/{path}", "GET " + repo + "/assignees"}},
		{Name: "read:user", For: "learns its own login, which must be gate-account's",
			Routes: []string{"GET /user"}},
	},
}

// GatedAgent is an agent's token in the gated posture: read only,
// measured by TestGatedAgentTokenScopes (internal/testkit/e2e).
var GatedAgent = Token{
	ID:    "gatedagent",
	Name:  "GITEA_TOKEN",
	Whose: "an agent's own account, in the gated posture",
	Given: "the verbs' --token (else GITEA_TOKEN), the gate's and the meter's API key",
	Scopes: []Scope{
		{Name: "read:issue", For: "context, history and status read the issue, its comments, timeline and labels",
			Routes: []string{"GET " + issue, "GET " + issue + "/timeline", "GET " + issue + "/comments", "GET " + issue + "/labels"}},
		{Name: "read:repository", For: "context and status read the settings file and the repository",
			Routes: []string{"GET " + repo, "GET " + repo + "/raw/{path}", "GET " + repo + "/assignees"}},
		{Name: "read:user", For: "the gate and the meter learn whose token it is",
			Routes: []string{"GET /user"}},
	},
}

// Tokens are in the docs' order.
var Tokens = []Token{Guard, Admin, Agent, Init, Gate, GatedAgent}

// Names are the token's scopes: write:issue, read:repository, ...
func (t Token) Names() []string {
	out := make([]string, len(t.Scopes))
	for i, s := range t.Scopes {
		out[i] = s.Name
	}
	return out
}

// List reads "write:issue, read:repository and read:user".
func (t Token) List() string { return Join(t.Names()) }

// Join reads "a, b and c".
func Join(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// Holds says whether a token with the scopes held has the scope want: a
// write scope holds its read scope, and "all" holds every scope.
func Holds(held []string, want string) bool {
	level, category, _ := strings.Cut(want, ":")
	for _, h := range held {
		if h == "all" || h == want || level == "read" && h == "write:"+category {
			return true
		}
	}
	return false
}
