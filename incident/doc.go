// Package incident is Cortex's incident engine: one pipeline, several
// lenses (abuse and skill today; MCP and hooks plug into the same seam).
//
// A lens supplies the candidates (skill events; user rows carrying an abuse
// term), the subject part of the grouping key, the signal detectors, the
// score and labels, and its own evidence. The engine does the rest:
//
//  1. Candidate scan: the newest CandidateCap (10,000) candidates of the
//     filters; more sets candidate_window_truncated (older candidates were
//     not scanned, and the oldest group may be partial). Lenses that read
//     the sessions their candidates touch whole (skill, friction) read at
//     most SessionCap (1,000) sessions, those of the newest candidates;
//     more sets the same flag.
//  2. Grouping: per key (agent, host, project, session and the lens
//     subject), candidates in time order are sessionized by gap: a
//     candidate more than window_minutes (default 10, 1..120) after the
//     previous one starts a new incident; a gap of exactly the window
//     stays. Gaps, unlike epoch-aligned buckets, never split a burst that
//     happens to straddle a bucket edge, and never merge two bursts just
//     because they share a bucket.
//  3. Detection, counting and scoring by the lens.
//  4. A stable id: a prefix ("inc-" abuse, "skill-inc-" skill) and the
//     first 32 hex digits (128 bits) of the SHA-256 of a canonical string
//     of the lens, the key fields (each length-prefixed) and the sorted
//     member identities (each member's instant and kind: a skill event, an
//     abuse anchor). Nothing else enters it: limits, filters, terms that
//     select the same rows, data outside the group, and re-indexing the
//     same files into a new store do not change an id.
//  5. Filters (incident_id, signals, min_score), a total order (score
//     descending, last seen descending, id) and a clamped limit.
//
// Investigations add bounded evidence bundles (every collection capped
// with a *_truncated flag, every text cut to max_bytes with a marker) and
// the deterministic findings of package findings.
//
// Signal phrases are matched with package phrase (case-insensitive, on
// word boundaries) and only in the right speaker's text: the skill lens
// reads corrections, scope confusion and ignored instructions only from
// rows the user typed, and tool failures from the structured outcome of
// tool calls (ai_mcp_events), never from phrases in tool output.
package incident
