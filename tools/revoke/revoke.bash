# bash completion for revoke(1)                            -*- shell-script -*-
# Installed as bash-completion's completions/revoke (loaded on first use of
# the command). Works without bash-completion too (`source` it): its helpers
# are used when they are there. tests/cli/cli-completion.sh checks that every
# option and column of `revoke --help` is offered here.

_revoke_columns="PID NSPID USER UID COMMAND STOPPED_NS PATH TYPE FD FLAGS RANGE OFFSET
	OPEN_FLAGS CLOEXEC START END PROT SHARED STATE ERROR ERRNO DEV INODE"

_revoke()
{
	local cur prev words cword
	if declare -F _init_completion >/dev/null; then
		_init_completion -n =: || return
	else
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD - 1]}
	fi

	# --opt=value: bash splits at '=' (COMP_WORDBREAKS) unless told not to.
	if [[ $cur == --*=* ]]; then
		prev=${cur%%=*}
		cur=${cur#*=}
	elif [[ $cur == = && $prev == --* ]]; then
		cur=
	elif [[ $prev == = && $cword -ge 2 ]]; then
		prev=${words[cword - 2]}
	fi

	case $prev in
	-t | --timeout)
		return # seconds: nothing to offer
		;;
	--engine)
		COMPREPLY=($(compgen -W 'auto ptrace syscall' -- "$cur"))
		return
		;;
	--discovery)
		COMPREPLY=($(compgen -W 'auto proc bpf' -- "$cur"))
		return
		;;
	--uid)
		# Users by name (a number is taken too).
		COMPREPLY=($(compgen -u -- "$cur"))
		return
		;;
	--cgroup)
		# A cgroup2 directory: the cgroup2 mount's directories.
		local cg
		cg=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/self/mounts 2>/dev/null)
		if [[ $cur != /* && -n $cg ]]; then
			cur=$cg/$cur
		fi
		COMPREPLY=($(compgen -d -- "$cur"))
		return
		;;
	--description)
		# /proc/PID/fd/N: the pids, then their descriptors.
		if [[ $cur == /proc/[0-9]*/fd/* ]]; then
			local d=${cur%/*}
			COMPREPLY=($(compgen -W "$(cd "$d" 2>/dev/null && printf "$d/%s " [0-9]*)" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$(cd /proc && printf '/proc/%s/fd/ ' [0-9]*)" -- "$cur"))
			compopt -o nospace 2>/dev/null
		fi
		return
		;;
	--ns | --pid)
		# A process (--ns: whose view of the paths is meant): the pids of /proc.
		if declare -F _pids >/dev/null; then
			_pids
		else
			COMPREPLY=($(compgen -W "$(cd /proc && printf '%s ' [0-9]*)" -- "$cur"))
		fi
		return
		;;
	-o | --output)
		# A comma-separated list, optionally after '+' (added to the default).
		local head= item=$cur
		if [[ $cur == *,* ]]; then
			head=${cur%,*},
			item=${cur##*,}
		elif [[ $cur == +* ]]; then
			head=+
			item=${cur#+}
		fi
		local c
		COMPREPLY=()
		for c in $_revoke_columns; do
			[[ $c == "${item^^}"* ]] && COMPREPLY+=("$head$c")
		done
		[[ ${#COMPREPLY[@]} -eq 1 ]] && compopt -o nospace 2>/dev/null
		return
		;;
	esac

	local i mounts= dashdash=
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		--) dashdash=1 ;;
		-m | --mount | --umount) mounts=1 ;;
		-[!-]*m*) [[ ${words[i]} != -*[to]*m* ]] && mounts=1 ;; # -lm, not -t5m
		esac
	done

	if [[ -z $dashdash && $cur == -* ]]; then
		COMPREPLY=($(compgen -W '-l --list -b --best-effort -t --timeout -m --mount
			--umount --dry-run --no-submounts --ns --pid --uid --cgroup --description --recheck --no-follow --no-hangup --engine
			--discovery -J --json -r --raw -n --noheadings -o --output -q --quiet
			-h --help -V --version --' -- "$cur"))
		return
	fi

	# Operands: files; with --mount or --umount, directories (mount points).
	if declare -F _filedir >/dev/null; then
		if [[ -n $mounts ]]; then
			_filedir -d
		else
			_filedir
		fi
	else
		compopt -o filenames 2>/dev/null
		if [[ -n $mounts ]]; then
			mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		fi
	fi
} && complete -F _revoke revoke
