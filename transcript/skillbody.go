package transcript

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/cortexhq/cortex"
)

// minInteriorArgs is the shortest argument string replaced inside a skill
// body (a $ARGUMENTS placeholder in the middle of the text): shorter ones
// ("work", "main") occur in bodies by themselves.
const minInteriorArgs = 16

// argumentsTrailer starts the paragraph Claude Code appends to a skill
// body that has no $ARGUMENTS placeholder.
const argumentsTrailer = "\n\nARGUMENTS: "

// SkillBody returns the body of a skill document as a version is hashed
// from it: what the author wrote, without what the harness or the user
// added on the way in. It drops a "Base directory for this skill:" header
// line, the YAML front matter (Claude Code never shows it to the model, so
// it cannot be told apart across agents), the arguments the run passed (an
// "ARGUMENTS: …" last paragraph, arguments ending the body where a
// trailing $ARGUMENTS placeholder stood, and — for arguments of at least
// 16 bytes — the same text inside the body, put back as $ARGUMENTS; args
// cut to MaxSkillField match as a prefix starting a line), line
// ends (CRLF) and trailing white space of every line, and blank lines at
// either end. args is what the run passed ("" when unknown).
func SkillBody(text, args string) string {
	t := strings.ReplaceAll(text, "\r\n", "\n")
	t = strings.TrimLeft(t, " \t\n")
	if strings.HasPrefix(t, skillBodyHeader) {
		_, t, _ = strings.Cut(t, "\n")
	}
	t = stripFrontMatter(strings.TrimLeft(t, " \t\n"))
	if i := strings.LastIndex(t, argumentsTrailer); i >= 0 {
		t = t[:i]
	}
	t = strings.TrimRight(t, " \t\n")
	if a := strings.TrimSpace(strings.ReplaceAll(args, "\r\n", "\n")); a != "" {
		switch i := strings.Index(t, a); {
		case strings.HasSuffix(t, a):
			t = strings.TrimRight(t[:len(t)-len(a)], " \t\n")
		case i > 0 && t[i-1] == '\n' && len(a) >= MaxSkillField-4:
			// Arguments stored cut to MaxSkillField, starting a line: what
			// follows them is the rest of the arguments.
			t = strings.TrimRight(t[:i], " \t\n")
		}
		if len(a) >= minInteriorArgs {
			t = strings.ReplaceAll(t, a, "$ARGUMENTS")
		}
	}
	lines := strings.Split(t, "\n")
	for i, l := range lines {
		// A stray carriage return ends a line as white space does (left
		// in, "\r \n" would become a CRLF once the space is cut).
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n")
}

// stripFrontMatter drops a leading YAML front matter block (--- … ---).
func stripFrontMatter(t string) string {
	if _, rest, ok := FrontMatter(t); ok {
		return rest
	}
	return t
}

// FrontMatter splits a SKILL.md into its YAML front matter (without the
// --- fences) and the rest. ok is false when the text has none.
func FrontMatter(t string) (front, rest string, ok bool) {
	if !strings.HasPrefix(t, "---\n") && !strings.HasPrefix(t, "---\r\n") {
		return "", t, false
	}
	_, body, _ := strings.Cut(t, "\n")
	for off := 0; off < len(body); {
		line, _, _ := strings.Cut(body[off:], "\n")
		if strings.TrimRight(line, " \t\r") == "---" {
			end := off + len(line)
			if end < len(body) {
				end++
			}
			return body[:off], body[end:], true
		}
		next := strings.IndexByte(body[off:], '\n')
		if next < 0 {
			break
		}
		off += next + 1
	}
	return "", t, false
}

// SkillVersion is the version of a skill body: the hex SHA-256 of the body
// as SkillBody returns it.
func SkillVersion(body string) string {
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:])
}

// readRange matches the line range of a SKILL.md read: sed -n 'a,bp', or
// head -n N / head -N.
var (
	sedRange  = regexp.MustCompile(`sed -n ['"]?(\d+),(\d+)p['"]?`)
	headLines = regexp.MustCompile(`^(?:cd \S+ &&\s*)?head(?: -n ?(\d+)| -(\d+))?\s`)
)

// SkillReadRange returns the lines of a SKILL.md that a read command (one
// SkillRead accepts) prints: from and to, 1-based and inclusive, with to =
// 0 when it prints to the end of the file (cat, bat, less, head without a
// count prints 10 lines).
func SkillReadRange(command string) (from, to int) {
	c := strings.TrimSpace(command)
	if m := sedRange.FindStringSubmatch(c); m != nil {
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		return max(a, 1), b
	}
	if m := headLines.FindStringSubmatch(c); m != nil {
		n := 10
		for _, g := range m[1:] {
			if g != "" {
				n, _ = strconv.Atoi(g)
			}
		}
		return 1, n
	}
	return 1, 0
}

// ReadComplete reports whether a read of lines [from, to] (to = 0: to the
// end) that printed n lines shows the file to its end.
func ReadComplete(from, to, n int) bool {
	return to == 0 || n < to-from+1
}

// ShellCommandJSON returns the command line of a shell tool call's stored
// arguments (arguments_json: {"cmd": …}, {"command": …} or
// {"command": ["bash", "-lc", …]}).
func ShellCommandJSON(args string) string {
	var p fastjson.Parser
	v, err := p.Parse(args)
	if err != nil {
		return ""
	}
	return shellCommand(v)
}

// InvokedSkillText returns the content of skill name in a Claude
// invoked_skills attachment record (the body re-injected after
// compaction), bounded to max bytes.
func InvokedSkillText(raw []byte, name string, max int) (string, bool) {
	var p fastjson.Parser
	v, err := p.ParseBytes(raw)
	if err != nil {
		return "", false
	}
	a := v.Get("attachment")
	if str(a, "type") != "invoked_skills" {
		return "", false
	}
	for _, sk := range arr(a.Get("skills")) {
		n, plugin, ok := NormalizeSkill(str(sk, "name"), "")
		if !ok {
			continue
		}
		_, part, _ := strings.Cut(name, ":")
		if n == name || plugin != "" && n == plugin+":"+part || n == part {
			c := strings.TrimSpace(str(sk, "content"))
			return cortex.CutUTF8(clean(c), max), c != ""
		}
	}
	return "", false
}

// IsSkillBodyRecord reports whether a Claude record injects a skill body
// ("Base directory for this skill:"): the body a typed skill command
// brings, as opposed to a custom command's expansion.
func IsSkillBodyRecord(raw []byte) bool {
	var p fastjson.Parser
	v, err := p.ParseBytes(raw)
	if err != nil {
		return false
	}
	msg := v.Get("message")
	if msg == nil {
		return false
	}
	return strings.HasPrefix(strings.TrimLeft(claudeUserText(msg), " \t\r\n"), skillBodyHeader)
}
