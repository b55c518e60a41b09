#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The bash completion (tools/revoke/revoke.bash, or the file named by
# REVOKE_COMPLETION): it loads, registers _revoke for revoke, offers every
# option and column that `revoke --help` lists, the values of --engine and
# --discovery, files, and directories only after --mount/--umount. Each case
# runs once in a bare bash and once with bash-completion's helpers loaded.
# Run by tests/run-tests with REVOKE_BUILDDIR set; prints one PASS/FAIL line per check.
. "$(dirname "$0")/cli-common.bash"
cli_runs completion

comp=${REVOKE_COMPLETION:-$(dirname "$0")/../tools/revoke/revoke.bash}
bc=/usr/share/bash-completion/bash_completion

# complete_words MODE WORD...: COMPREPLY, one per line, sorted, for the command
# line WORD... with the cursor at the end of the last word (as bash splits it:
# "--engine=p" is the three words --engine = p). MODE: bare or bc.
complete_words() {
	local mode=$1
	shift
	bash --norc --noprofile -c '
		mode=$1 bc=$2 comp=$3
		shift 3
		if [ "$mode" = bc ]; then
			. "$bc" || exit 3
		fi
		. "$comp" || exit 4
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		_revoke
		printf "%s\n" "${COMPREPLY[@]}"' _ "$mode" "$bc" "$comp" "$@" | sed '/^$/d' | sort
}

# expect NAME MODE "EXPECTED (sorted, one per line)" WORD...
expect() {
	local name=$1 mode=$2 want=$3 got
	shift 3
	got=$(complete_words "$mode" "$@")
	if [ "$got" = "$want" ]; then
		pass "completion.$mode.$name"
	else
		fail "completion.$mode.$name" "for '$*' got [$(echo $got)], expected [$(echo $want)]"
	fi
}

lines() { printf '%s\n' "$@" | sort; }

help=$("$R" --help)
# Every option of --help: the lines that start with ' -x,' or '     --name'.
help_opts=$(grep -E '^ +-' <<<"$help" | grep -oE -- '(^| )--?[A-Za-z][A-Za-z-]*' | tr -d ' ' | sort -u)
help_cols=$(sed -n '/^Available output columns:/,/^$/p' <<<"$help" | awk 'NR > 1 && NF { print $1 }' | sort)

mkdir "$tmp/adir" "$tmp/amount"
touch "$tmp/afile" "$tmp/b file"

modes=(bare bc)
if [ ! -r "$bc" ]; then
	skip completion.bc "bash-completion is not installed ($bc missing)"
	modes=(bare)
fi

for mode in "${modes[@]}"; do
	reg=$(bash --norc --noprofile -c '[ "$1" = bare ] || . "$2"; . "$3" && complete -p revoke' _ "$mode" "$bc" "$comp" 2>&1)
	if [ "$reg" = "complete -F _revoke revoke" ]; then
		pass "completion.$mode.loads"
	else
		fail "completion.$mode.loads" "complete -p revoke printed: $reg"
	fi

	offered=$(complete_words "$mode" revoke -)
	missing=$(comm -23 <(echo "$help_opts") <(echo "$offered"))
	if [ -z "$help_opts" ]; then
		fail "completion.$mode.options" "found no option in revoke --help"
	elif [ -n "$missing" ]; then
		fail "completion.$mode.options" "not offered: $(echo $missing)"
	else
		pass "completion.$mode.options"
	fi
	extra=$(comm -13 <(echo "$help_opts") <(echo "$offered") | grep -vx -- --)
	if [ -n "$extra" ]; then
		fail "completion.$mode.no-unknown-options" "offered but not in --help: $(echo $extra)"
	else
		pass "completion.$mode.no-unknown-options"
	fi

	cols=$(complete_words "$mode" revoke -o '')
	if [ -n "$help_cols" ] && [ "$cols" = "$help_cols" ]; then
		pass "completion.$mode.columns"
	else
		fail "completion.$mode.columns" "offered [$(echo $cols)], --help lists [$(echo $help_cols)]"
	fi

	expect long-prefix "$mode" "$(lines --list)" revoke --li
	expect no-prefix "$mode" "$(lines --no-follow --no-hangup --no-submounts --noheadings)" revoke --no
	expect engine "$mode" "$(lines auto ptrace syscall)" revoke --engine ''
	expect engine-eq "$mode" "$(lines ptrace)" revoke --engine = p
	expect discovery "$mode" "$(lines bpf)" revoke -l --discovery b
	expect timeout "$mode" "" revoke -t ''
	expect column-list "$mode" "$(lines PID,COMMAND)" revoke -o PID,CO
	expect column-plus "$mode" "$(lines +START +STATE +STOPPED_NS)" revoke --output +ST
	expect column-lower "$mode" "$(lines INODE)" revoke -o ino
	expect files "$mode" "$(lines "$tmp/adir" "$tmp/afile" "$tmp/amount")" revoke -l "$tmp/a"
	expect file-space "$mode" "$(lines "$tmp/b file")" revoke "$tmp/b"
	expect umount-dirs "$mode" "$(lines "$tmp/adir" "$tmp/amount")" revoke --umount "$tmp/a"
	expect mount-dirs "$mode" "$(lines "$tmp/adir" "$tmp/amount")" revoke -lm "$tmp/a"
	expect after-dashdash "$mode" "" revoke -- --li
done
