// Package findings derives deterministic findings from an incident
// evidence bundle: likely failure modes, contributing factors and open
// questions. Derivation is a pure function of the bundle — no database, no
// LLM, no clock, no randomness — so the same bundle always yields
// byte-identical findings.
//
// # Rule model
//
// A [Rules] value is one lens's rule set, built once from data and
// immutable afterwards. It holds an ordered table of categories (each with a
// prevention hint) and a list of rules. A rule names its category, a
// [phrase] set (case-insensitive, word-boundary aware, typographic
// apostrophes folded: "not found" never matches "not foundation"), the
// speakers whose text it may read, and optionally incident signals that
// support it. Several rules may share a category; they merge into one
// finding. Findings are emitted in the table's category order, never in
// rule or row order. Hints are fixed text from the table, never transcript
// text; skill hints name the incident's skill (quoted) so they can be
// applied to the skill document directly. A rule may add a small matcher
// for what a phrase cannot say (an exit code or status followed by a
// non-zero number; "exit code 0" is success). A finding's Why lists the
// matched phrases and signals, sorted, never transcript text.
//
// [ForLens] returns the rule set of the abuse and skill lenses and nil for
// any other lens; a nil *Rules is valid and derives only the
// lens-independent part (the unknown fallback, the generic factors and
// the open questions), so [Derive] answers for every lens. MCP and hook
// rule sets are added as data: a category table, phrase rules and signal
// rules, plus a lens factor.
//
// # Speaker awareness
//
// Every scanned row is classified once by its Role:
//
//   - user voice: rows with Role user (text the human typed). User-voiced
//     phrases such as "that's not what i asked" or "wrong repo" match only
//     these rows.
//   - tool voice: tool results, hook and system rows, non-AI log rows
//     (empty Role and empty Tool), and the error text of nearby tool
//     failures. Technical phrases such as "timed out" or "permission
//     denied" match only these.
//   - anything else — assistant prose, tool calls, thinking, injected
//     context such as skill bodies and AGENTS.md — is never matched, so an
//     assistant quoting the user or a skill body listing failure words
//     yields nothing.
//
// Rows are read from the signal anchors, transcript before and after,
// nearby user corrections, nearby logs and nearby errors, deduplicated by
// row id (the first occurrence wins). A tool failure's error text cites the
// failure's MCP event id in MCPEventIDs and its result and call log ids in
// EvidenceIDs. Evidence ids are sorted ascending and deduplicated.
//
// # Confidence
//
// Confidence is conservative and counts distinct pieces of evidence for the
// category: each matched row, each matched tool failure whose log ids are
// not already among the matched rows, and each supporting incident signal
// (one piece however many anchors it cites). 1 is low, 2 is medium, 3 or
// more is high. A category with no evidence id and no MCP event id is never
// emitted; when nothing matches, the single finding is "unknown" with low
// confidence and no evidence, and an open question asks for manual review.
//
// # Category order
//
// Abuse: tool_timeout, auth_or_permission_failure,
// stale_binary_or_version_drift, test_failure,
// docker_or_service_runtime_failure, db_busy_or_performance_bottleneck,
// command_failure, unclear_instruction_or_scope_drift, unknown.
//
// Skill: skill_scope_mismatch, missing_prerequisite_check,
// wrong_source_of_truth, overly_broad_research_loop, tool_policy_mismatch,
// missing_verification_step, ambiguous_skill_trigger,
// stale_or_conflicting_skill_instruction,
// assistant_overexplained_simple_answer, unknown.
//
// # Factors and open questions
//
// Factors come in a fixed order: the lens factor (abuse: elevated
// frustration from three or more anchors; skill: repeated activation from
// three or more skill events), an error burst (three or more nearby error
// logs), then failed tool calls (two or more). Open questions, also in a
// fixed order: no signature matched, only low-confidence findings, no
// anchors captured, no surrounding non-AI logs, and truncated evidence
// collections.
package findings
