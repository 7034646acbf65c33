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
#   NEXT_ESTIMATE      the tokens the next agent call will take (default:
#                      half the room the guard leaves it, from context)
#   GUARD_USER         the login the guard writes as (default: the writer
#                      its signed ledger names; set it only to override)
#   WORKDIR            where entry.md and entry.json are written (default .)
#
# What the model did, for the report (the defaults are the example's):
#   CONSUMED           the tokens this call used, as the model's runtime
#                      counts them (default: the size of entry.md, a
#                      stand-in for a model that reports nothing)
#   ACTION             one line: what the agent did
#   RESULT_FILE        a file holding the result comment's body (optional)
#   VERDICT, FILES_CHANGED, KEY_STATS
#                      the footer's verdict, files changed and key figures
#                      (a JSON object)
#   LABELS_ADD, LABELS_REMOVE
#                      labels to set and to take off, comma-separated
#                      (empty: none)
#
# POSIX sh and POSIX utilities only: it runs the same on Linux, macOS and
# the BSDs, and in busybox.
set -u
: "${GITHUB_SERVER_URL:?}" "${GITEA_TOKEN:?}" "${REPO:?}" "${ISSUE:?}"
AGENT=${AGENT:-lead-developer}
NEXT_AGENT=${NEXT_AGENT:-code-reviewer}
INVOCATION=${INVOCATION:-$AGENT-$(date -u +%Y%m%dT%H%M%SZ)-$$}
WORKDIR=${WORKDIR:-.}
# The verbs find the guard's login in its signed ledger; --guard-user only
# when GUARD_USER overrides it. "$@" holds the flags every verb takes.
set -- --repo "$REPO" --issue "$ISSUE"
if [ -n "${GUARD_USER:-}" ]; then
	set -- "$@" --guard-user "$GUARD_USER"
fi

# 1. Entry: the issue's task, the checkpoint, the last comments, at most 3
#    files and one skill, under a hard token cap.
gns-guard context "$@" >"$WORKDIR/entry.md"
status=$?
case $status in
0) ;;
1)
	# No checkpoint an agent may resume from: propose one rebuilt from
	# the guard's ledger and the agents' footers, for a person to apply.
	echo "agent: the checkpoint cannot be trusted; the recovery proposal:" >&2
	gns-guard recover "$@"
	exit 1
	;;
*) exit "$status" ;;
esac

# WORK: the model reads entry.md and does its task. Here it does nothing:
# what it would report comes from the variables above. (BSD wc pads the
# number with blanks: keep the digits only.)
CONSUMED=${CONSUMED:-$(wc -c <"$WORKDIR/entry.md" | tr -cd '0-9')}
ACTION=${ACTION-implemented the rate limiter middleware, with tests}
VERDICT=${VERDICT-ready-for-review}
FILES_CHANGED=${FILES_CHANGED-3}
KEY_STATS=${KEY_STATS-'{"tests": 14}'}
LABELS_ADD=${LABELS_ADD-phase::review}
LABELS_REMOVE=${LABELS_REMOVE-phase::implementation}

# The next call's estimate: what the guard accepts is at most half the
# budget left after this call (next-over-budget) and the room the pressure
# threshold leaves past the next agent's entry load (context-pressure).
# Take half that room (the other half is for this call's result comment)
# and stay under half the budget left. When this call's consumption ends
# the phase, the guard's prune leaves the next call the new phase's
# budget: the carried-over share of what is left, plus the phase grant.
if [ -z "${NEXT_ESTIMATE:-}" ]; then
	gns-guard context "$@" --format json >"$WORKDIR/entry.json" || exit $?
	# The JSON is indented by the program: these keys sit at four spaces.
	key() {
		sed -n 's/^    "'"$1"'": \(-\{0,1\}[0-9][0-9.eE+-]*\),\{0,1\}$/\1/p' "$WORKDIR/entry.json"
	}
	ROOM=$(key pressure_room)
	LEFT=$(key budget_remaining)
	PHASE_ENDS_AT=$(key phase_ends_at)
	CARRYOVER=$(key carryover_ratio)
	GRANT=$(key phase_grant)
	if [ -z "$ROOM" ] || [ -z "$LEFT" ] || [ -z "$PHASE_ENDS_AT" ] || [ -z "$CARRYOVER" ] || [ -z "$GRANT" ]; then
		echo "agent: context --format json gave no next_estimate (an older gns-guard?): set NEXT_ESTIMATE" >&2
		exit 2
	fi
	NEXT_ESTIMATE=$((ROOM / 2))
	LEFT=$((LEFT - CONSUMED))
	if [ "$CONSUMED" -ge "$PHASE_ENDS_AT" ] && [ "$LEFT" -gt 0 ]; then
		# floor(LEFT × CARRYOVER) + GRANT, as the guard computes it (awk
		# for the fraction: POSIX sh counts in whole numbers only).
		LEFT=$(awk -v l="$LEFT" -v r="$CARRYOVER" -v g="$GRANT" 'BEGIN { printf "%d\n", int(l * r) + g }')
	fi
	BUDGET=$((LEFT / 2))
	[ "$BUDGET" -lt "$NEXT_ESTIMATE" ] && NEXT_ESTIMATE=$BUDGET
	[ "$NEXT_ESTIMATE" -lt 0 ] && NEXT_ESTIMATE=0
fi

# 2. Exit: the result comment with its footer, the checkpoint patched
#    compare-and-swap, labels and assignee. Refused (exit 1) when the guard
#    would fail the state it leaves; safe to repeat (exit 3: the server
#    could not be reached) with the same invocation. Anything else (2: a
#    usage or configuration error, a repository or issue that does not
#    exist) is not retried. An optional flag is left out when its variable
#    is empty.
set -- "$@" --agent "$AGENT" --invocation "$INVOCATION" --consumed "$CONSUMED" --action "$ACTION" \
	--next-agent "$NEXT_AGENT" --next-estimate "$NEXT_ESTIMATE"
[ -n "${RESULT_FILE:-}" ] && set -- "$@" --result-file "$RESULT_FILE"
[ -n "$VERDICT" ] && set -- "$@" --verdict "$VERDICT"
[ -n "$FILES_CHANGED" ] && set -- "$@" --files-changed "$FILES_CHANGED"
[ -n "$KEY_STATS" ] && set -- "$@" --key-stats "$KEY_STATS"
[ -n "$LABELS_ADD" ] && set -- "$@" --labels-add "$LABELS_ADD"
[ -n "$LABELS_REMOVE" ] && set -- "$@" --labels-remove "$LABELS_REMOVE"
for try in 1 2 3; do
	gns-guard report "$@"
	status=$?
	[ "$status" -eq 3 ] || exit "$status"
	sleep "$try"
done
exit 3
