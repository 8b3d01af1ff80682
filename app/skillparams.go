package app

// The parameters of the skill lifecycle actions (see params.go for the
// conventions: a short jsonschema description for the MCP tools, the
// whole documentation in doc).

// SkillVersionsParams are the parameters of skill_versions.
type SkillVersionsParams struct {
	ScopeParams
	Skill string `json:"skill" jsonschema:"required: skill or plugin:skill" doc:"required: the skill (plugin:skill, or a name matching skill or plugin:skill)"`
	Diff  bool   `json:"diff,omitempty" jsonschema:"also the diff (last two, or from/to)" doc:"also the unified diff between the last two versions (or from → to)"`
	From  string `json:"from,omitempty" jsonschema:"hash prefix or vN" doc:"diff from this version: a hash prefix (4+ hex digits) or v1, v2 …"`
	To    string `json:"to,omitempty" jsonschema:"as from (newest)" doc:"diff to this version (default: the newest)"`
}

// SkillHealthParams are the parameters of skill_health.
type SkillHealthParams struct {
	ScopeParams
	Skill string `json:"skill,omitempty" doc:"only this skill (default: every skill, worst first)"`
	Limit int    `json:"limit,omitempty" jsonschema:"20, max 200" doc:"maximum skills (default 20, max 200)"`
}

// SkillCompareParams are the parameters of skill_compare.
type SkillCompareParams struct {
	ScopeParams
	Skill  string `json:"skill" jsonschema:"required" doc:"required: the skill"`
	Before string `json:"before,omitempty" jsonschema:"version or date (second-newest)" doc:"the before side: a version (hash prefix or vN) or a date (runs before it); default the second-newest version"`
	After  string `json:"after,omitempty" jsonschema:"version or date (newest)" doc:"the after side: a version or a date (runs from it on); default the newest version"`
}

// SkillProposeParams are the parameters of skill_propose.
type SkillProposeParams struct {
	ScopeParams
	Skill string `json:"skill" jsonschema:"required" doc:"required: the skill"`
	File  string `json:"file,omitempty" jsonschema:"a SKILL.md (default: found)" doc:"the SKILL.md to change (default: found from the paths the transcripts show, the plugin caches and the agents' skill folders); remote callers may name only a file called SKILL.md"`
	LLM   bool   `json:"llm,omitempty" doc:"ask the guarded LLM runner for the proposal (local CLI only); accepted only if it applies cleanly and is small"`
	Write bool   `json:"write,omitempty" doc:"write the proposal to the file (local CLI only)"`
	Model string `json:"model,omitempty" doc:"model for llm (default: the configured one)"`
}

// SkillEvalsParams are the parameters of skill_evals.
type SkillEvalsParams struct {
	ScopeParams
	Skill string `json:"skill" jsonschema:"required" doc:"required: the skill"`
	Out   string `json:"out,omitempty" doc:"write DIR/evals/evals.json (and trigger_evals.json, provenance.json); local CLI only"`
}
