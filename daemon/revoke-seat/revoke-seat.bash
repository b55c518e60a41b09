# bash completion for revoke-seat(8)                       -*- shell-script -*-
# Installed as bash-completion's completions/revoke-seat.

_revoke_seat()
{
	local cur prev
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	case $prev in
	-c | --config)
		if declare -F _filedir >/dev/null; then
			_filedir
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		return
		;;
	-h | --help | -V | --version | -l | --list)
		return
		;;
	esac
	COMPREPLY=($(compgen -W '-c --config -n --dry-run -l --list -h --help -V --version' -- "$cur"))
}
complete -F _revoke_seat revoke-seat
