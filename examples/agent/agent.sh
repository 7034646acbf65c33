#!/bin/sh
# One agent invocation under gns-guard: the protocol's entry, exit and
# recovery, as the three commands an agent runs. The model's own work is
# the part marked WORK; everything else is the protocol.
#
#   GITHUB_SERVER_URL  the Gitea server, e.g. https://gitea.example
#   GITEA_TOKEN        the agent's own token (it writes as that user)
#   REPO, ISSUE        the repository (OWNER/NAME) and the issue
#   AGENT, NEXT_AGENT  this agent's name and the next one's
#                      (default lead-developer, code-reviewer)
#   INVOCATION         this invocation's id: a re-run with the same id
#                      writes nothing twice (default AGENT-<UTC time>-<pid>)
#   GUARD_USER         the login the guard writes as (default gitea-actions)
#   WORKDIR            where entry.md is written (default .)
#
# POSIX sh and POSIX utilities only: it runs the same on Linux, macOS and
# the BSDs, and in busybox.
set -u
: "${GITHUB_SERVER_URL:?}" "${GITEA_TOKEN:?}" "${REPO:?}" "${ISSUE:?}"
AGENT=${AGENT:-lead-developer}
NEXT_AGENT=${NEXT_AGENT:-code-reviewer}
INVOCATION=${INVOCATION:-$AGENT-$(date -u +%Y%m%dT%H%M%SZ)-$$}
GUARD_USER=${GUARD_USER:-gitea-actions}
WORKDIR=${WORKDIR:-.}

# 1. Entry: the checkpoint, the last comments, at most 3 files and one
#    skill, under a hard token cap.
gns-guard context --repo "$REPO" --issue "$ISSUE" --guard-user "$GUARD_USER" >"$WORKDIR/entry.md"
status=$?
case $status in
0) ;;
1)
	# No checkpoint an agent may resume from: propose one rebuilt from
	# the guard's ledger and the agents' footers, for a person to apply.
	echo "agent: the checkpoint cannot be trusted; the recovery proposal:" >&2
	gns-guard recover --repo "$REPO" --issue "$ISSUE" --guard-user "$GUARD_USER"
	exit 1
	;;
*) exit "$status" ;;
esac

# WORK: the model reads entry.md and does its task; here it only counts.
# (BSD wc pads the number with blanks: keep the digits only.)
CONSUMED=$(wc -c <"$WORKDIR/entry.md" | tr -cd '0-9')

# 2. Exit: the result comment with its footer, the checkpoint patched
#    compare-and-swap, labels and assignee. Refused (exit 1) when the guard
#    would fail the state it leaves; safe to repeat (exit 3: the server
#    could not be reached) with the same invocation.
for try in 1 2 3; do
	gns-guard report --repo "$REPO" --issue "$ISSUE" --guard-user "$GUARD_USER" \
		--agent "$AGENT" --invocation "$INVOCATION" --consumed "$CONSUMED" \
		--action "implemented the rate limiter middleware, with tests" \
		--verdict ready-for-review --files-changed 3 --key-stats '{"tests": 14}' \
		--next-agent "$NEXT_AGENT" --next-estimate 3000 \
		--labels-add phase::review --labels-remove phase::implementation
	status=$?
	[ "$status" -eq 3 ] || exit "$status"
	sleep "$try"
done
exit 3
