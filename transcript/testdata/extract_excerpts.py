#!/usr/bin/env python3
"""Regenerates the excerpts in this folder from the real corpus.

Run from the transcript/testdata folder:
    python3 extract_excerpts.py [CORPUS_DIR]
CORPUS_DIR defaults to ../../../shared/corpus/real. Lines are copied byte for
byte; the few derived files say exactly what was changed (see README.md).
"""
import json
import os
import sys

CORPUS = sys.argv[1] if len(sys.argv) > 1 else os.path.join('..', '..', '..', 'shared', 'corpus', 'real')

# name -> (corpus path, [1-based line numbers])
LINES = {
    # Claude Code
    'claude/user_prompt.jsonl': ('claude/sniffly/tests/mock-data/-Users-chip-dev-ai-music/d3ad4cdc-5657-435d-98fa-0035d53e383d.jsonl', [112]),
    'claude/slash_command.jsonl': ('claude/claude-code-viewer/mock-global-claude-dir/projects/sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl', [2]),
    'claude/interrupt.jsonl': ('claude/entireio-skills/7c/daf836fa0f/1/raw_transcript', [130]),
    'claude/assistant_text.jsonl': ('claude/claude-code-log/-Users-dain-workspace-claude-code-log-sample/0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl', [12]),
    'claude/bash_error.jsonl': ('claude/claude-code-viewer/mock-global-claude-dir/projects/sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl', [331, 332]),
    'claude/skill_invocation.jsonl': ('claude/entireio-cli/0e/3fdc072c53/0/full.jsonl', [159, 160, 161]),
    'claude/skill_body_plugin.jsonl': ('claude/entireio-skills/a9/139b2b27ad/1/raw_transcript', [40]),
    'claude/tool_result_text_list.jsonl': ('claude/claude-code-viewer/mock-global-claude-dir/projects/sample-project/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl', [23]),
    'claude/thinking.jsonl': ('claude/claude-code-log/-Users-dain-workspace-claude-code-log-sample/fe869ecb-c176-478f-9734-7e4b8ef12cff.jsonl', [80]),
    'claude/empty_thinking_attribution.jsonl': ('claude/entireio-skills/49/82335ad847/1/raw_transcript', [21]),
    'claude/hook_success.jsonl': ('claude/entireio-skills/49/82335ad847/1/raw_transcript', [3]),
    'claude/hook_non_blocking_error.jsonl': ('claude/entireio-skills/ae/338bf9605e/0/raw_transcript', [284]),
    'claude/hook_cancelled.jsonl': ('claude/planetfall-seed-signalkit/18/e55e8a9e52/10/full.jsonl', [44]),
    'claude/hook_progress.jsonl': ('claude/claude-code-log/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl', [12]),
    'claude/stop_hook_summary.jsonl': ('claude/claude-code-log/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl', [16]),
    'claude/api_error.jsonl': ('claude/context-evaluator/01/fdffbe1223/0/full.jsonl', [13]),
    'claude/compact_boundary.jsonl': ('claude/entireio-cli/76/62d755ef9f/2/full.jsonl', [155]),
    'claude/invoked_skills.jsonl': ('claude/planetfall-seed-signalkit/84/da75cf4015/2/full.jsonl', [418]),
    'claude/queued_command.jsonl': ('claude/planetfall-seed-signalkit/84/da75cf4015/2/full.jsonl', [378]),
    'claude/agent_progress.jsonl': ('claude/entireio-cli/0e/3fdc072c53/0/full.jsonl', [367]),
    'claude/summary.jsonl': ('claude/claude-code-log/-Users-dain-workspace-claude-code-log-sample/4e27c414-a885-46a0-b5c8-d58e1417377d.jsonl', [1]),
    'claude/file_history_snapshot.jsonl': ('claude/claude-code-log/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl', [1]),
    'claude/permission_mode.jsonl': ('claude/entireio-skills/ae/338bf9605e/0/raw_transcript', [1]),
    'claude/last_prompt.jsonl': ('claude/entireio-skills/ae/338bf9605e/0/raw_transcript', [215]),
    'claude/ai_title.jsonl': ('claude/entireio-skills/7c/daf836fa0f/1/raw_transcript', [15]),
    'claude/turn_duration.jsonl': ('claude/claude-code-log/-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl', [114]),
    'claude/bash_progress.jsonl': ('claude/entireio-cli/0e/3fdc072c53/0/full.jsonl', [118]),
    'claude/mode.jsonl': ('claude/entireio-skills/31/a1d14a1bd2/0/raw_transcript', [2]),
    'claude/concatenated.jsonl': ('claude/entireio-cli/ee/cf21d297fe/0/full.jsonl', [300]),
    'claude/large_error_result.jsonl': ('claude/claude-code-log/-Users-dain-workspace-claude-code-log-sample/fe869ecb-c176-478f-9734-7e4b8ef12cff.jsonl', [30, 31]),
    'claude/medium_error_result.jsonl': ('claude/claude-code-log/-Users-dain-workspace-coderabbit-review-helper/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl', [45, 46]),
    'claude/large_tool_result.jsonl': ('claude/claude-code-log/-src-experiments-claude_p/29ccd257-68b1-427f-ae5f-6524b7cb6f20/subagents/agent-a2271d1.jsonl', [15, 18]),
    # Claude Code events (skills, tool calls, hooks)
    'claude/attribution_plugin.jsonl': ('claude/entireio-skills/7c/daf836fa0f/1/raw_transcript', [22]),
    'claude/attribution_bundled.jsonl': ('claude/planetfall-seed-signalkit/84/da75cf4015/2/full.jsonl', [274]),
    'claude/skill_tool_args.jsonl': ('claude/planetfall-seed-signalkit/84/da75cf4015/2/full.jsonl', [269]),
    'claude/slash_skill_body.jsonl': ('claude/entireio-cli/0e/3fdc072c53/0/full.jsonl', [505, 506]),
    'claude/multi_tool_use.jsonl': ('claude/context-evaluator/01/fdffbe1223/0/full.jsonl', [8, 9, 10, 11, 12]),
    'claude/mcp_tool_use.jsonl': ('claude/entireio-cli/0e/3fdc072c53/0/full.jsonl', [723, 726]),
    'claude/agent_progress_tool_use.jsonl': ('claude/entireio-cli/8c/fa910f8ef9/0/full.jsonl', [250]),
    'claude/hook_additional_context.jsonl': ('claude/claude-code-log/-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl', [3]),
    'claude/hook_system_message.jsonl': ('claude/planetfall-seed-signalkit/84/da75cf4015/2/full.jsonl', [5]),
    'claude/async_hook_response.jsonl': ('claude/entireio-skills/31/a1d14a1bd2/0/raw_transcript', [16]),
    # The user's voice and skill loads (user events, skill events)
    'claude/rejection_said.jsonl': ('claude/entireio-cli/0e/3fdc072c53/0/full.jsonl', [61]),
    'claude/rejection_reason.jsonl': ('claude/claude-code-log/-Users-dain-workspace-coderabbit-review-helper/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl', [15]),
    'claude/clarify.jsonl': ('claude/planetfall-seed-signalkit/8e/da3033e7b0/3/full.jsonl', [232]),
    'claude/interrupt_tool_use.jsonl': ('claude/entireio-cli/0e/3fdc072c53/0/full.jsonl', [164]),
    'claude/typed_prompt.jsonl': ('claude/planetfall-seed-signalkit/84/da75cf4015/2/full.jsonl', [7]),
    'claude/ide_selection_prompt.jsonl': ('claude/claude-code-log/-Users-dain-workspace-coderabbit-review-helper/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl', [3]),
    'claude/queued_task_notification.jsonl': ('claude/planetfall-seed-signalkit/8e/da3033e7b0/3/full.jsonl', [165]),
    'claude/slash_plugin_command.jsonl': ('claude/entireio-skills/7c/daf836fa0f/1/raw_transcript', [209, 210]),
    'codex/prompt_with_files.jsonl': ('codex/entireio-skills/ca/64320841af/0/raw_transcript', [45]),
    'codex/skill_read.jsonl': ('codex/agentv/3c/162d1d8ad4/1/full.jsonl', [70]),
    'codex/skill_read_plugin_cache.jsonl': ('codex/agentv/1f/4427577930/2/full.jsonl', [166]),
    'codex/skill_announced.jsonl': ('codex/entireio-skills/6c/fb81c05ca9/0/raw_transcript', [10, 11]),
    'claude/stop_hook_summary_multi.jsonl': ('claude/entireio-skills/7c/daf836fa0f/1/raw_transcript', [190]),
    # Codex
    'codex/rollout_0_58_head.jsonl': ('codex/codex-session-view/rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl', list(range(1, 14))),
    'codex/rollout_desktop_turn.jsonl': ('codex/entireio-skills/ca/64320841af/0/raw_transcript', list(range(4, 22))),
    'codex/developer_message.jsonl': ('codex/entireio-skills/01/da544acf74/0/raw_transcript', [8]),
    'codex/agents_md.jsonl': ('codex/entireio-skills/6c/fb81c05ca9/0/raw_transcript', [4]),
    'codex/skill_message.jsonl': ('codex/agentv/4f/7325a9ab13/0/full.jsonl', [104]),
    'codex/exit_json_nonzero.jsonl': ('codex/codex-session-view/rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl', [234, 235]),
    'codex/exit_process_nonzero.jsonl': ('codex/agentv/3c/162d1d8ad4/1/full.jsonl', [21, 22]),
    'codex/apply_patch_exit_zero.jsonl': ('codex/planetfall-seed-signalkit/07/d253ca52d8/0/full.jsonl', [314, 316]),
    'codex/apply_patch_verification_failed.jsonl': ('codex/planetfall-seed-signalkit/07/d253ca52d8/0/full.jsonl', [328, 329]),
    'codex/custom_tool_call.jsonl': ('codex/entireio-skills/ca/64320841af/0/raw_transcript', [70, 72, 73]),
    'codex/mcp_tool_call_end_error.jsonl': ('codex/planetfall-seed-signalkit/07/d253ca52d8/0/full.jsonl', [859]),
    'codex/reasoning_encrypted.jsonl': ('codex/agentv/1f/4427577930/2/full.jsonl', [8]),
    'codex/token_count.jsonl': ('codex/entireio-skills/6c/fb81c05ca9/0/raw_transcript', [8]),
    'codex/turn_aborted.jsonl': ('codex/agentv/3c/162d1d8ad4/1/full.jsonl', [597]),
    'codex/turn_aborted_event.jsonl': ('codex/entireio-skills/aa/e23a37ee3e/1/raw_transcript', [54]),
    'codex/memory_citation.jsonl': ('codex/entireio-skills/ca/64320841af/0/raw_transcript', [152, 153]),
    # Codex events (skills, tool calls)
    'codex/skill_message_0125.jsonl': ('codex/entireio-skills/aa/e23a37ee3e/1/raw_transcript', [8]),
    'codex/skill_message_0141.jsonl': ('codex/agentv/3c/162d1d8ad4/1/full.jsonl', [66]),
    'codex/skill_in_tool_output.jsonl': ('codex/planetfall-seed-signalkit/5b/ee34acb370/0/full.jsonl', [77]),
    'codex/namespaced_mcp_call.jsonl': ('codex/planetfall-seed-signalkit/47/c7e9ab56d1/0/full.jsonl', [152, 153, 154]),
    'codex/mcp_tool_call_end_ok.jsonl': ('codex/planetfall-seed-signalkit/47/c7e9ab56d1/0/full.jsonl', [119]),
}


def lines_of(path):
    with open(os.path.join(CORPUS, path), 'rb') as f:
        return f.read().split(b'\n')


def write(name, data):
    os.makedirs(os.path.dirname(name), exist_ok=True)
    with open(name, 'wb') as f:
        f.write(data)


def main():
    for name, (path, nums) in LINES.items():
        ls = lines_of(path)
        write(name, b''.join(ls[n - 1] + b'\n' for n in nums))

    # Derived: the typed prompt with an attached image (ca/64320841af lines
    # 44-45). The 62 KB base64 image_url of line 44 is replaced by a short
    # data URL; nothing else changes.
    ls = lines_of('codex/entireio-skills/ca/64320841af/0/raw_transcript')
    rec = json.loads(ls[43])
    for part in rec['payload']['content']:
        if part.get('type') == 'input_image':
            part['image_url'] = 'data:image/png;base64,REDACTED'
    write('codex/image_prompt.jsonl',
          json.dumps(rec, ensure_ascii=False, separators=(',', ':')).encode() + b'\n' + ls[44] + b'\n')

    # Derived: three agent_reasoning events and the reasoning item with the
    # same three summary parts (codex-session-view lines 264-268); the 70 KB
    # encrypted_content of line 268 is cut to its first 64 characters.
    ls = lines_of('codex/codex-session-view/rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl')
    rec = json.loads(ls[267])
    rec['payload']['encrypted_content'] = rec['payload']['encrypted_content'][:64]
    write('codex/reasoning_multi_summary.jsonl',
          b''.join(ls[n - 1] + b'\n' for n in range(264, 268)) +
          json.dumps(rec, ensure_ascii=False, separators=(',', ':')).encode() + b'\n')

    # Gemini legacy chat: a real file shrunk to five of its messages. Strings
    # longer than 400 characters are cut (shapes, ids, statuses unchanged).
    src = 'gemini/M-Gemini/chat_logs/session-2025-12-24T21-37-2ccb51c5.json'
    with open(os.path.join(CORPUS, src), encoding='utf-8') as f:
        doc = json.load(f)

    def cut(v):
        if isinstance(v, str) and len(v) > 400:
            return v[:400]
        if isinstance(v, list):
            return [cut(x) for x in v]
        if isinstance(v, dict):
            return {k: cut(x) for k, x in v.items()}
        return v

    keep = [0, 2, 4, 24, 25]
    doc['messages'] = [cut(doc['messages'][i]) for i in keep]
    write('gemini/legacy_chat.json', json.dumps(doc, ensure_ascii=False, indent=2).encode())

    # A whole (small) Entire copy of a Gemini chat: pretty-printed JSON named full.jsonl.
    with open(os.path.join(CORPUS, 'gemini/entireio-cli/b3/e18968a997/0/full.jsonl'), 'rb') as f:
        write('gemini/entire_full.jsonl', f.read())


if __name__ == '__main__':
    main()
