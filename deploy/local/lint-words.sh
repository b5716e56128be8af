#!/usr/bin/env bash
# Usage: deploy/local/lint-words.sh
#
# Fails when a tracked file speaks of how the work was organised instead of
# the product: issue numbers ("issue 13", "goal 6", "defect 3"), numbered
# rounds of work ("fifth round", "round 5"), helper names ("helper hot5") or
# work sessions ("this session", "third session"). Docs and comments say what
# the code does and why; the history of the work is in git log.
#
# Round trips, rounds of a test's loop, "the other way round" and Kafka or
# goka sessions ("the session ended", "a new session") are not matched. A line
# that must keep a matching phrase goes in lint-words.allow beside this
# script, as "path<TAB>fixed text of the line" (the text is a substring).
#
# Only files tracked by git are read (so .git, build output and the peers'
# target/ folders are not), minus vendored or third-party folders, binary
# files, this script and its allow file.
set -euo pipefail

root=$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel)
cd "$root"
allow=deploy/local/lint-words.allow

ordinal='first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|[0-9]+(st|nd|rd|th)|nth'
patterns=(
	'\b[Ii]ssues? #?[0-9]+\b'
	'\b([Gg]oals?|[Dd]efects?) [0-9]+\b'
	"\\b(${ordinal}|this|that|earlier|previous|next|last|later) rounds?\\b"
	'\b[Rr]ounds? [0-9]+\b'
	'\b[Hh]elpers? [a-z]+[0-9]+\b'
	'\b[Hh]elpers? (hot|read|steps|score|sketch|mem|peer|gate|friend|serve)[a-z]*\b'
	"\\b(${ordinal}|this|that|earlier|previous|next|last|later|another) (work )?sessions?\\b"
	'\bsession (of work|notes?)\b'
)
args=()
for p in "${patterns[@]}"; do args+=(-e "$p"); done

# "the next round trip", "the last session's" of a goka/Kafka session are
# filtered below by what follows or surrounds the phrase.
hits=$(git grep -nIP "${args[@]}" -- . \
	':!vendor/' ':!third_party/' ':!**/vendor/' ':!**/target/' \
	':!deploy/local/lint-words.sh' ":!$allow" 2>/dev/null |
	grep -vP '\b(this|that|earlier|previous|next|last|later|'"$ordinal"') round[- ]trips?\b' || true)

bad=""
while IFS= read -r line; do
	[[ -z $line ]] && continue
	path=${line%%:*}
	text=${line#*:}
	text=${text#*:}
	ok=0
	if [[ -f $allow ]]; then
		while IFS=$'\t' read -r apath atext; do
			[[ -z $apath || $apath == \#* ]] && continue
			if [[ $apath == "$path" && $text == *"$atext"* ]]; then
				ok=1
				break
			fi
		done <"$allow"
	fi
	((ok)) || bad+="$line"$'\n'
done <<<"$hits"

if [[ -n $bad ]]; then
	echo "lint-words: speak of the product, not of issues, rounds, helpers or sessions:" >&2
	printf '%s' "$bad" >&2
	exit 1
fi
