# Shared by the CLI's shell tests (cli_test.sh, video_test.sh): counters and the
# expect_ok / expect_error checks. Sourced; needs $work (where out.txt and err.txt go).
passed=0 failed=0

ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }

# expect_ok NAME CMD...: exit 0
expect_ok() {
  local name=$1; shift
  if "$@" >"$work/out.txt" 2>"$work/err.txt"; then ok; else bad "$name: exit $? — $(cat "$work/err.txt")"; fi
}

# expect_error NAME REGEX CMD...: non-zero exit, stderr matches REGEX, no crash (exit < 128)
# A command given --backend cuda: it runs where a GPU is usable; elsewhere it fails,
# without crashing, naming CUDA.
expect_ok_or_cuda_error() {
  local name=$1; shift
  "$@" >"$work/out.txt" 2>"$work/err.txt"
  local rc=$?
  if [ $rc -eq 0 ]; then ok; return; fi
  if [ $rc -ge 128 ]; then bad "$name: crashed (exit $rc)"; return; fi
  grep -q "CUDA" "$work/err.txt" && ok || bad "$name: failed without naming CUDA: $(cat "$work/err.txt")"
}
# The same for --backend vulkan: runs where a Vulkan device is usable; elsewhere one
# line naming Vulkan, no crash.
expect_ok_or_vulkan_error() {
  local name=$1; shift
  "$@" >"$work/out.txt" 2>"$work/err.txt"
  local rc=$?
  if [ $rc -eq 0 ]; then ok; return; fi
  if [ $rc -ge 128 ]; then bad "$name: crashed (exit $rc)"; return; fi
  [ "$(wc -l <"$work/err.txt")" -eq 1 ] && grep -q "Vulkan" "$work/err.txt" && ok || bad "$name: failed without one line naming Vulkan: $(cat "$work/err.txt")"
}
expect_error() {
  local name=$1 regex=$2; shift 2
  "$@" >"$work/out.txt" 2>"$work/err.txt"
  local rc=$?
  if [ $rc -eq 0 ]; then bad "$name: exited 0"; return; fi
  if [ $rc -ge 128 ]; then bad "$name: crashed (exit $rc)"; return; fi
  if ! grep -Eq -e "$regex" "$work/err.txt"; then bad "$name: stderr does not match /$regex/: $(cat "$work/err.txt")"; return; fi
  ok
}
