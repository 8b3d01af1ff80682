package sqlpart

import "github.com/cortexhq/cortex"

// SkillEvents is the condition of a skill event listing or summary: the
// event filters, the skill as typed — names are the stored names it stands
// for (store.MatchSkillNames); with none the typed name itself — and the
// plugin.
func SkillEvents(f cortex.EventFilter, skill string, names []string, plugin string) Where {
	w := Event(f)
	switch {
	case skill == "":
	case len(names) == 0:
		w.Add("skill_name = ?", skill)
	default:
		w.In("skill_name", names)
	}
	if plugin != "" {
		w.Add("skill_plugin = ?", plugin)
	}
	return w
}

// ToolEvents is the condition of a tool call listing.
func ToolEvents(p cortex.ToolEventParams) Where {
	w := Event(p.EventFilter)
	if p.ToolName != "" {
		w.Add("tool_name = ?", p.ToolName)
	}
	if p.MCPServer != "" {
		w.Add("mcp_server = ?", p.MCPServer)
	}
	if p.MCPTool != "" {
		w.Add("mcp_tool = ?", p.MCPTool)
	}
	if p.OnlyMCP {
		w.Add("mcp_server IS NOT NULL")
	}
	if p.ErrorsOnly {
		w.Add("(is_error = 1 OR status = 'error')")
	}
	return w
}

// HookEvents is the condition of a hook event listing: Hook matches
// hook_name or hook_event exactly.
func HookEvents(p cortex.HookEventParams) Where {
	w := Event(p.EventFilter)
	if p.Hook != "" {
		w.Add("(hook_name = ? OR hook_event = ?)", p.Hook, p.Hook)
	}
	if p.HookEvent != "" {
		w.Add("hook_event = ?", p.HookEvent)
	}
	if p.HookSource != "" {
		w.Add("hook_source = ?", p.HookSource)
	}
	if p.Status != "" {
		w.Add("status = ?", p.Status)
	}
	if p.EvidenceKind != "" {
		w.Add("evidence_kind = ?", p.EvidenceKind)
	}
	return w
}
