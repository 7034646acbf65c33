#!/bin/sh
# Try gns-guard in one command, on this machine, with no Docker: a
# throwaway Gitea 1.26 and a Gitea runner in host mode (built from the Go
# module proxy, as the tests build them), a repository adopted with
# `gns-guard init --runner host`, an issue opened from its template, and
# three agent steps with the shipped tools: examples/agent/agent.sh, then
# `gns-guard context` and `report` by hand, then agent.sh again, and a
# fourth that the guard refuses (over half the budget left). Every step
# runs the guard through the runner on the real event. It prints the
# issue's address and the guard's status comment, and stops everything it
# started when it ends, however it ends.
#
#   sh examples/try/run.sh            from a clone of gns-guard
#   KEEP=1 sh examples/try/run.sh     keep Gitea running until Ctrl-C, to look around
#
# Needs Go (the version in go.mod), git and a C compiler (Gitea's SQLite
# driver). The first run builds Gitea and the runner (3 to 6 minutes on 2
# cores) into ~/.cache/gns-guard; later runs take under a minute.
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/gns-guard-try.XXXXXX")
serve_pid=
cleanup() {
	if [ -n "$serve_pid" ]; then
		kill "$serve_pid" 2>/dev/null || true
		wait "$serve_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step() { printf '\n== %s\n' "$*"; }

step "Building gns-guard (into $work/bin)"
mkdir -p "$work/bin"
(cd "$root" && go build -o "$work/bin/gns-guard" ./cmd/gns-guard && go build -o "$work/bin/trygitea" ./internal/testkit/trygitea)
PATH="$work/bin:$PATH"
export PATH

step "Starting a throwaway Gitea and a runner in host mode"
trygitea serve "$work/gitea" 2>"$work/serve.log" &
serve_pid=$!
while [ ! -f "$work/gitea/env" ]; do
	if ! kill -0 "$serve_pid" 2>/dev/null; then
		cat "$work/serve.log" >&2
		exit 3
	fi
	sleep 1
done
. "$work/gitea/env"
TRY_DIR=$work/gitea
GITHUB_SERVER_URL=$TRY_SERVER
export TRY_SERVER TRY_TOKEN TRY_DIR GITHUB_SERVER_URL
echo "Gitea is at $TRY_SERVER (administrator $TRY_ADMIN, files in $TRY_GITEA_WORK);"
echo "the runner finds gns-guard on its PATH, as the host workflow expects."

# The repository's owner: an organisation, so that init can give the
# agents a team of their own (Issues and Pull requests write, Code read).
# Its administrator is the owner; the agents and the guard have accounts.
repo=acme/api
trygitea org acme
trygitea repo acme api
agent_token=$(trygitea user agent1 agent)    # an agent's token: the scopes docs/operations.md#tokens lists
guard_token=$(trygitea user gns-bot guard)   # GNS_GUARD_TOKEN's
owner() { GITEA_TOKEN=$TRY_TOKEN "$@"; }

step "gns-guard init --runner host: the workflow, settings and template, proposed in a pull request"
owner gns-guard init --repo "$repo" --runner host --agents agent1,gns-bot

step "The next steps init printed: the secrets, the merge, the public key"
key=$(gns-guard keygen)
printf '%s' "$key" | trygitea secret "$repo" GNS_GUARD_LEDGER_KEY
printf '%s' "$TRY_TOKEN" | trygitea secret "$repo" GNS_GUARD_ADMIN_TOKEN
printf '%s' "$guard_token" | trygitea secret "$repo" GNS_GUARD_TOKEN
trygitea merge "$repo" 1
trygitea append "$repo" .gitea/gns-guard.yml "ledger-public-key: $(GNS_GUARD_LEDGER_KEY=$key gns-guard pubkey)"
echo "Secrets set, pull request #1 merged, ledger-public-key published."

step "gns-guard init again: it protects main now that the workflow is there, and says what is done"
owner gns-guard init --repo "$repo" --runner host --agents agent1,gns-bot

step "gns-guard doctor: which guarantees of the threat model hold"
owner gns-guard doctor --repo "$repo" --admin-token "$TRY_TOKEN" || echo "(doctor exited $?)"

step "A person opens an issue from the \"GNS task\" template, writing only the task"
n=$(trygitea open "$repo" "Rate limits for the public API" \
	"Add a token-bucket rate limiter to the public API: 100 requests a minute per API key, HTTP 429 with Retry-After beyond it, and tests.")
echo "Issue #$n: $TRY_SERVER/$repo/issues/$n"
echo "The guard's runs on the host runner (cancelled: a waiting run a newer one for the"
echo "same issue replaced, as the workflow's concurrency says; the newer one reads the issue live):"
trygitea wait "$repo"

# The agents work as agent1, with its own token.
GITEA_TOKEN=$agent_token REPO=$repo ISSUE=$n WORKDIR=$work
export GITEA_TOKEN REPO ISSUE WORKDIR

step "Agent step 1: the orchestrator, with examples/agent/agent.sh"
AGENT=orchestrator NEXT_AGENT=lead-developer INVOCATION=try-1 CONSUMED=1200 \
	ACTION="split the task: the bucket, the middleware, the tests" VERDICT=planned \
	FILES_CHANGED=0 KEY_STATS='{"steps": 3}' LABELS_ADD= LABELS_REMOVE= \
	sh "$root/examples/agent/agent.sh"
trygitea wait "$repo"

step "Agent step 2: the lead developer, with gns-guard context and report"
gns-guard context --repo "$repo" --issue "$n" >"$work/entry.md"
echo "context loaded $(wc -c <"$work/entry.md" | tr -cd '0-9') bytes (head):"
sed -n '1,12p' "$work/entry.md"
cat >"$work/result.md" <<'EOF'
Implemented `internal/limits/bucket.go`, a token bucket per API key, and
the middleware that answers 429 with `Retry-After`. 14 tests, all passing.
EOF
gns-guard report --repo "$repo" --issue "$n" --agent lead-developer --invocation try-2 \
	--consumed 2400 --action "implemented the token bucket and its middleware" \
	--result-file "$work/result.md" --verdict ready-for-review --files-changed 3 \
	--key-stats '{"tests": 14}' --next-agent code-reviewer --next-estimate 1500
trygitea wait "$repo"

step "Agent step 3: the code reviewer, with examples/agent/agent.sh"
AGENT=code-reviewer NEXT_AGENT=lead-developer INVOCATION=try-3 CONSUMED=1500 \
	ACTION="reviewed the limiter: two findings" VERDICT=changes-requested \
	FILES_CHANGED=0 KEY_STATS='{"findings": 2}' LABELS_ADD= LABELS_REMOVE= \
	sh "$root/examples/agent/agent.sh"
trygitea wait "$repo"

step "The guard refuses: the lead developer asks for more than half the budget left"
echo "report decides as the guard's runs would, and writes nothing the guard would fail:"
if gns-guard report --repo "$repo" --issue "$n" --agent lead-developer --invocation try-4 \
	--consumed 300 --action "fix the two findings, and rewrite the gateway while at it" \
	--verdict ready-for-review --next-agent code-reviewer --next-estimate 12000; then
	echo "BROKEN: report wrote a step the guard would fail" >&2
	exit 1
else
	echo "(report exited $?: nothing was written; the step stays with the lead developer)"
fi

step "The issue: $TRY_SERVER/$repo/issues/$n"
echo "The guard's status comment:"
echo
trygitea status "$repo" "$n"

if [ -n "${KEEP:-}" ]; then
	step "Gitea keeps running at $TRY_SERVER: the repository is public, open the issue's address in a browser. Ctrl-C stops it."
	while kill -0 "$serve_pid" 2>/dev/null; do sleep 1; done
fi
