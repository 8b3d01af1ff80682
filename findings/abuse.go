package findings

import "github.com/cortexhq/cortex/phrase"

// Abuse categories, in output order.
const (
	catToolTimeout = "tool_timeout"
	catAuth        = "auth_or_permission_failure"
	catStaleBinary = "stale_binary_or_version_drift"
	catTestFailure = "test_failure"
	catRuntime     = "docker_or_service_runtime_failure"
	catDBBusy      = "db_busy_or_performance_bottleneck"
	catCommand     = "command_failure"
	catUnclear     = "unclear_instruction_or_scope_drift"
)

// Abuse returns the rule set of the abuse lens: technical phrases in tool
// output, non-AI logs and tool-failure text (timeouts, auth, version
// drift, tests, runtime, database, commands), plus user-voiced scope and
// test complaints.
func Abuse() *Rules { return abuseRules }

var abuseRules = buildAbuse()

func buildAbuse() *Rules {
	cats := []category{
		{catToolTimeout, "Set an explicit timeout on the slow call and retry with backoff before escalating; report which call timed out."},
		{catAuth, "Verify credentials, token scopes and file/socket permissions before retrying; do not retry an auth failure unchanged."},
		{catStaleBinary, "Rebuild and redeploy so the binary, container and client versions match before debugging further."},
		{catTestFailure, "Reproduce the failing test in isolation and fix it before claiming the change works; show the passing run."},
		{catRuntime, "Inspect the container or service logs and resource limits and fix the crash or restart loop before retrying."},
		{catDBBusy, "Reduce write concurrency, retry on busy with bounded backoff, or widen the worker/connection budget."},
		{catCommand, "Confirm the command, its arguments and the working directory exist before running it; read the error before retrying."},
		{catUnclear, "Restate the goal and acceptance criteria and confirm scope with the user before continuing."},
		{CategoryUnknown, "No deterministic signature matched; review the transcript manually before changing anything."},
	}
	rules := []rule{
		{category: catToolTimeout, voices: voiceTool, phrases: phrase.NewSet(
			"timed out", "deadline exceeded", "context deadline exceeded", "timeout exceeded",
			"timeout expired", "request timeout", "gateway timeout", "read timeout", "etimedout",
		)},
		// No bare "401"/"403": the status must come with a word saying it is one.
		{category: catAuth, voices: voiceTool, phrases: phrase.NewSet(
			"401 unauthorized", "http 401", "status 401", "status code 401", "status: 401", "error 401",
			"403 forbidden", "http 403", "status 403", "status code 403", "status: 403", "error 403",
			"unauthorized", "forbidden", "permission denied", "access denied", "authentication failed",
			"authentication required", "invalid credentials", "invalid token", "token expired",
			"operation not permitted", "eacces", "password is required",
		)},
		{category: catStaleBinary, voices: voiceTool, phrases: phrase.NewSet(
			"version mismatch", "version drift", "version skew", "stale binary", "binary mismatch",
			"rebuild required", "needs to be rebuilt", "incompatible version", "out of date",
		)},
		{category: catTestFailure, voices: voiceTool, phrases: phrase.NewSet(
			"--- fail:", "test failed", "tests failed", "failing tests", "test failures",
			"assertion failed", "assertionerror", "test result: failed", "panicked at",
		)},
		// The user saying the tests still fail is the same category: one finding.
		{category: catTestFailure, voices: voiceUser, phrases: phrase.NewSet(
			"test still fails", "tests still fail", "test is still failing", "tests are still failing",
		)},
		{category: catRuntime, voices: voiceTool, phrases: phrase.NewSet(
			"oomkilled", "oom-killed", "out of memory", "container exited", "crashloopbackoff",
			"crashloop", "back-off restarting", "unhealthy", "segmentation fault", "core dumped",
			"cannot connect to the docker daemon", "connection refused", "main process exited",
			"entered failed state",
		)},
		{category: catDBBusy, voices: voiceTool, phrases: phrase.NewSet(
			"database is locked", "database busy", "sqlite_busy", "worker limit", "too many connections",
			"deadlock detected", "deadlock", "lock wait timeout", "timed out waiting for connection",
			"connection pool exhausted",
		)},
		{category: catCommand, voices: voiceTool, phrases: phrase.NewSet(
			"command not found", "no such file or directory", "executable file not found",
			"non-zero exit", "nonzero exit", "returned non-zero", "is not recognized as an internal or external command",
		), extra: nonZeroExit},
		{category: catUnclear, voices: voiceUser, phrases: phrase.NewSet(
			"that's not what i asked", "that is not what i asked", "not what i asked for",
			"that's not what i meant", "that is not what i meant", "going in circles",
			"wrong file", "you misunderstood", "i didn't ask you to", "i did not ask you to",
		)},
	}
	r := newRules("abuse", cats, rules)
	r.lensFactor = abuseFactor
	r.noAnchors = "no anchors captured"
	return r
}
