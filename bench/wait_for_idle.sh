# Sourced by the bench scripts. On a shared machine another process's load skews
# the medians (2-thread ones most): wait_for_idle waits until the CPUs have been
# under 10% busy for 2 s, up to WAIT_IDLE_S seconds (default: its argument, or 60),
# then warns if they never were.
wait_for_idle() {
  local limit=${WAIT_IDLE_S:-${1:-60}}
  local deadline=$((SECONDS + limit)) busy=100
  while ((SECONDS < deadline)); do
    local a b
    read -r _ a </proc/stat; sleep 2; read -r _ b </proc/stat
    busy=$(awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " "); t = 0
      for (i = 1; i <= 7; i++) t += y[i] - x[i]; print (t > 0 ? int(100 - 100 * (y[4] - x[4]) / t) : 0) }')
    ((busy < 10)) && return 0
  done
  ((limit > 0)) && echo "WARNING: CPUs still ${busy}% busy with other work; measuring anyway" >&2
  return 0
}
