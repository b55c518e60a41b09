# bench/holders.bash: what the bench/ scripts share; sourced, not run.
# The script sets $work (its scratch directory) and $holders (bench-holders)
# and defines die() before it calls these.
#
# start_holders TARGET N FDS [bench-holders options...]: bench-holders (our
# child, which forks the holders with PR_SET_PDEATHSIG) makes N holders of
# TARGET with FDS descriptors each; returns once it says ready (120 s at
# most). stop_holders: ends them by pid, each one bench-holders wrote, then
# bench-holders; the scripts call it on every exit too.
# Figures: median and maxof (numbers on stdin), ms NS, ratio A B.

hpid="" ctl=""

stop_holders() {
	if [ -n "$ctl" ]; then exec {ctl}>&-; ctl=""; fi
	if [ -n "$hpid" ]; then
		if [ -f "$work/pids" ]; then
			while read -r p; do kill -KILL "$p" 2>/dev/null || true; done <"$work/pids"
		fi
		kill -KILL "$hpid" 2>/dev/null || true
		wait "$hpid" 2>/dev/null || true
		hpid=""
	fi
	rm -f "$work/pids" "$work/ctl" "$work/ready"
}

start_holders() {
	local t=$1 n=$2 m=$3
	shift 3
	mkfifo "$work/ctl"
	"$holders" --target "$t" --procs "$n" --fds "$m" --pidfile "$work/pids" "$@" \
		<"$work/ctl" >"$work/ready" &
	hpid=$!
	exec {ctl}>"$work/ctl"
	for _ in $(seq 1 2400); do
		grep -q '^ready' "$work/ready" 2>/dev/null && return 0
		kill -0 "$hpid" 2>/dev/null || die "bench-holders failed"
		sleep 0.05
	done
	die "holders not ready after 120 s"
}

median() { sort -n | awk '{a[NR] = $1} END {if (NR == 0) print 0; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
maxof() { sort -n | tail -n 1; }
ms() { awk -v n="$1" 'BEGIN {printf "%.1f", n / 1e6}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}'; }
