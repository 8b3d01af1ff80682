package redact

import (
	"bytes"
	"strings"
)

// rules lists the built-in rules. Anchors of a fold rule are lower case.
func rules() []rule {
	return []rule{
		{name: "aws-access-key-id",
			anchors: []string{"AKIA", "ASIA", "AGPA", "AROA", "AIDA", "ANPA", "ANVA", "AIPA"},
			match:   token{tail: isUpperDigit, min: 16, max: 16}.match},
		{name: "github-token",
			anchors: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"},
			match:   token{tail: isAlnum, min: 36, max: 255}.match},
		{name: "github-fine-grained-pat",
			anchors: []string{"github_pat_"},
			match:   token{tail: isWord, min: 22, max: 255}.match},
		{name: "anthropic-api-key",
			anchors: []string{"sk-ant-"},
			match:   token{tail: isBase64URL, min: 20, max: 512}.match},
		// Generic sk- keys (OpenAI sk-..., sk-proj-...). The tail must contain a
		// digit so that long hyphenated words such as sk-learn-... survive.
		{name: "openai-api-key",
			anchors: []string{"sk-"},
			match:   token{tail: isBase64URL, min: 20, max: 512, digit: true}.match},
		{name: "google-api-key",
			anchors: []string{"AIza"},
			match:   token{tail: isBase64URL, min: 35, max: 35}.match},
		{name: "slack-token",
			anchors: []string{"xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-"},
			match:   token{tail: isAlnumDash, min: 10, max: 255}.match},
		{name: "gitlab-pat",
			anchors: []string{"glpat-"},
			match:   token{tail: isBase64URL, min: 20, max: 255}.match},
		{name: "stripe-secret-key",
			anchors: []string{"sk_live_", "rk_live_", "sk_test_", "rk_test_", "sk_prod_", "rk_prod_"},
			match:   token{tail: isAlnum, min: 16, max: 255}.match},
		{name: "npm-token",
			anchors: []string{"npm_"},
			match:   token{tail: isAlnum, min: 36, max: 36}.match},
		{name: "jwt",
			anchors: []string{"eyJ"},
			match:   matchJWT},
		{name: "bearer-token", fold: true,
			anchors: []string{"bearer"},
			match:   matchBearer},
		{name: "basic-auth", fold: true,
			anchors: []string{"authorization"},
			match:   matchBasicAuth},
		// A key ends with one of these words; anything may precede it, so
		// DATABASE_PASSWORD, client_secret and refresh_token all match.
		{name: "credential-assignment", fold: true,
			anchors: []string{
				"password", "passwd", "pwd", "secret", "token", "passphrase",
				"apikey", "api_key", "api-key",
				"secret_key", "secretkey", "secret-key", "secret_access_key",
				"private_key", "privatekey", "private-key",
			},
			match: matchAssignment},
		// Any other *key-named value (STRIPE_KEY=…, AccountKey=…,
		// DD_API_KEY=…) is redacted when it looks random: "key" names
		// plenty of harmless settings.
		{name: "key-assignment", fold: true,
			anchors: []string{"key"},
			match:   matchKeyAssignment},
		// A random-looking token right after a secret's name in prose or
		// a command ("the AWS secret access key is …", "auth token …").
		{name: "secret-in-prose", fold: true,
			anchors: []string{"secret", "token", "key", "password", "passphrase", "credential"},
			match:   matchProse},
		{name: "google-oauth-client-secret",
			anchors: []string{"GOCSPX-"},
			match:   token{tail: isBase64URL, min: 24, max: 40}.match},
		{name: "mailgun-api-key",
			anchors: []string{"key-"},
			match:   token{tail: isHex, min: 32, max: 32}.match},
		{name: "docker-hub-pat",
			anchors: []string{"dckr_pat_"},
			match:   token{tail: isBase64URL, min: 20, max: 64}.match},
		{name: "telegram-bot-token",
			anchors: []string{":AA"},
			match:   matchTelegram},
		{name: "azure-sas-signature", fold: true,
			anchors: []string{"sig="},
			match:   matchSASSignature},
		// Passwords on command lines: curl -u user:pass, mysql -pPASS,
		// docker login -p PASS.
		{name: "command-line-password", fold: true,
			anchors: []string{"curl ", "mysql ", "mysqldump ", "mariadb ", " login "},
			match:   matchCommandPassword},
		{name: "url-password",
			anchors: []string{"://"},
			match:   matchURLPassword},
		{name: "private-key-block",
			anchors: []string{"-----BEGIN"},
			match:   matchPrivateKey},
	}
}

// Length limits that keep matching linear on hostile input.
const (
	maxJWTSegment = 8192
	maxHeaderCred = 4096  // bearer and basic credentials
	maxURLPart    = 512   // user:password@host in a URL
	maxKeyBlock   = 32768 // distance from BEGIN to END of a private key
)

// minValue is the shortest assignment value that is redacted: password=ab
// is left alone, password=abc is not.
const minValue = 3

// Byte classes. None of them contains '"' or '\\', which keeps every
// match that is built from them inside one JSON string.

func isUpperDigit(c byte) bool { return 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }
func isAlnum(c byte) bool      { return isUpperDigit(c) || 'a' <= c && c <= 'z' }
func isWord(c byte) bool       { return isAlnum(c) || c == '_' }
func isAlnumDash(c byte) bool  { return isAlnum(c) || c == '-' }
func isBase64URL(c byte) bool  { return isWord(c) || c == '-' }
func isBase64(c byte) bool     { return isAlnum(c) || c == '+' || c == '/' || c == '=' }
func isUpperSpace(c byte) bool { return 'A' <= c && c <= 'Z' || c == ' ' }

// isBearerCred is RFC 6750 b64token.
func isBearerCred(c byte) bool { return isBase64URL(c) || strings.IndexByte("._~+/=", c) >= 0 }

// isUserinfo is RFC 3986 userinfo plus '@' for unencoded passwords such as
// p@ss.
func isUserinfo(c byte) bool { return isAlnum(c) || strings.IndexByte("._~%!$&()*+,;=:@-", c) >= 0 }

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// isTokenByte is a byte of a token in prose: base64, base64url, dots.
func isTokenByte(c byte) bool { return isBase64URL(c) || c == '+' || c == '/' || c == '=' || c == '.' }

// isUnquoted is a byte of an unquoted assignment value: anything but
// whitespace, controls, quotes, backslashes and , ; } & ( ) [.
func isUnquoted(c byte) bool {
	return c > ' ' && c != 0x7f && strings.IndexByte("\"'`\\,;}&()[", c) < 0
}

// isDoubleQuoted is a byte of a "quoted" value in a JSON string: the value
// ends at the closing quote or at any escape sequence.
func isDoubleQuoted(c byte) bool { return c >= ' ' && c != 0x7f && c != '"' && c != '\\' }

func isSingleQuoted(c byte) bool { return isDoubleQuoted(c) && c != '\'' }

// run returns the end of the run of bytes in a class that starts at src[i],
// looking at no more than limit bytes.
func run(src []byte, i int, in func(byte) bool, limit int) int {
	end := min(len(src), i+limit)
	for i < end && in(src[i]) {
		i++
	}
	return i
}

// startsEscape reports whether src[i] is a backslash that starts an escape
// sequence, that is, one not itself escaped by a preceding backslash.
func startsEscape(src []byte, i int) bool {
	n := 0
	for i >= 0 && src[i] == '\\' {
		n++
		i--
	}
	return n%2 == 1
}

// afterEscape reports whether src[:i] ends with an escape sequence such as
// \n or \u00e9. In raw JSON "\nAKIA..." the key starts a line even though
// the byte before it is the letter n.
func afterEscape(src []byte, i int) bool {
	return i >= 2 && startsEscape(src, i-2) ||
		i >= 6 && src[i-5] == 'u' && startsEscape(src, i-6)
}

// boundaryBefore reports whether a token may start at src[i]: it must not
// continue a word.
func boundaryBefore(src []byte, i int) bool {
	return i == 0 || !isWord(src[i-1]) || afterEscape(src, i)
}

func hasDigit(b []byte) bool {
	for _, c := range b {
		if '0' <= c && c <= '9' {
			return true
		}
	}
	return false
}

func hasPrefixFold(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && bytes.EqualFold(b[:len(prefix)], []byte(prefix))
}

func skipSpaces(src []byte, i int) int {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	return i
}

// quoteAt returns the quote that starts at src[i]: `"`, `'`, an escaped
// quote `\"` (JSON inside a JSON string), `\\\"` (one level deeper, as in
// a JSON document inside tool arguments) and so on, or "".
func quoteAt(src []byte, i int) string {
	switch {
	case i >= len(src):
	case src[i] == '"', src[i] == '\'':
		return string(src[i])
	case src[i] == '\\':
		j := i
		for j < len(src) && j-i < 16 && src[j] == '\\' {
			j++
		}
		if j < len(src) && src[j] == '"' && (j-i)%2 == 1 {
			return escapedQuotes[j-i]
		}
	}
	return ""
}

// escapedQuotes[n] is a quote escaped by n backslashes (without
// allocating in quoteAt).
var escapedQuotes = func() (q [17]string) {
	for n := range q {
		q[n] = strings.Repeat(`\`, n) + `"`
	}
	return q
}()

// token matches a fixed prefix (the anchor) followed by a tail of min to max
// bytes from a class, not glued to a surrounding word.
type token struct {
	tail     func(byte) bool
	min, max int
	digit    bool // the tail must contain a digit
}

func (t token) match(src []byte, at, end int) (int, int, bool) {
	if !boundaryBefore(src, at) {
		return 0, 0, false
	}
	e := run(src, end, t.tail, t.max+1)
	if n := e - end; n < t.min || n > t.max || e < len(src) && isAlnum(src[e]) {
		return 0, 0, false
	}
	if t.digit && !hasDigit(src[end:e]) {
		return 0, 0, false
	}
	return at, e, true
}

// matchJWT matches three dot-separated base64url segments of at least 10
// bytes, the first starting with eyJ (base64 of `{"`). Base64 image data
// contains no dots and is never taken for a JWT.
func matchJWT(src []byte, at, _ int) (int, int, bool) {
	if !boundaryBefore(src, at) {
		return 0, 0, false
	}
	e := at
	for seg := 0; seg < 3; seg++ {
		if seg > 0 {
			if e >= len(src) || src[e] != '.' {
				return 0, 0, false
			}
			e++
		}
		next := run(src, e, isBase64URL, maxJWTSegment+1)
		if n := next - e; n < 10 || n > maxJWTSegment {
			return 0, 0, false
		}
		e = next
	}
	return at, e, true
}

// matchBearer matches "Bearer <credential>" and redacts only the
// credential. Credentials shorter than 20 bytes must contain a digit, so
// prose such as "Bearer authentication" or "bearer of bad news" is kept.
func matchBearer(src []byte, at, end int) (int, int, bool) {
	if !boundaryBefore(src, at) {
		return 0, 0, false
	}
	s := skipSpaces(src, end)
	if s == end {
		return 0, 0, false
	}
	e := run(src, s, isBearerCred, maxHeaderCred+1)
	n := e - s
	if n < 8 || n > maxHeaderCred || n < 20 && !hasDigit(src[s:e]) {
		return 0, 0, false
	}
	return s, e, true
}

// matchBasicAuth matches "Authorization: Basic <base64>" (also as a JSON or
// quoted key) and redacts the base64 credentials.
func matchBasicAuth(src []byte, at, end int) (int, int, bool) {
	i, _, ok := afterSeparator(src, end)
	if !ok {
		return 0, 0, false
	}
	i += len(quoteAt(src, i))
	if !hasPrefixFold(src[i:], "basic") {
		return 0, 0, false
	}
	s := skipSpaces(src, i+len("basic"))
	e := run(src, s, isBase64, maxHeaderCred+1)
	if n := e - s; s == i+len("basic") || n < 8 || n > maxHeaderCred {
		return 0, 0, false
	}
	return s, e, true
}

// afterSeparator parses what follows a key at src[i]: an optional closing
// quote, spaces, one of ':', '=', ':=' or '=>' and spaces. It returns the
// index after that and whether the key was closed by a bare '"', which
// means it is a JSON object key.
func afterSeparator(src []byte, i int) (next int, jsonKey bool, ok bool) {
	q := quoteAt(src, i)
	i = skipSpaces(src, i+len(q))
	if i >= len(src) {
		return 0, false, false
	}
	switch src[i] {
	case ':':
		i++
		if i < len(src) && src[i] == '=' {
			i++
		}
	case '=':
		i++
		if i < len(src) && src[i] == '=' {
			return 0, false, false // a comparison, not an assignment
		}
		if i < len(src) && src[i] == '>' {
			i++
		}
	default:
		return 0, false, false
	}
	return skipSpaces(src, i), q == `"`, true
}

// matchAssignment matches key=value and key: value for credential keys and
// redacts the value. It understands plain text (password=x, PASSWORD: x,
// export API_KEY="x"), JSON ({"password":"x"}) and JSON-escaped text inside a
// JSON string (\"password\": \"x\", password=x\nnext).
func matchAssignment(src []byte, at, end int) (int, int, bool) {
	i, jsonKey, ok := afterSeparator(src, end)
	if !ok {
		return 0, 0, false
	}
	q := quoteAt(src, i)
	s := i + len(q)
	var e int
	switch {
	case jsonKey:
		// {"password": "x"}: only a JSON string value is redacted; numbers,
		// literals, objects and arrays are left alone (they cannot be
		// replaced by the unquoted marker).
		if q != `"` {
			return 0, 0, false
		}
		e = run(src, s, isDoubleQuoted, len(src))
	case q == `"`:
		// password="x" in plain text, or {"a":"password=","b":1} where the
		// quote closes a JSON string. After a closing quote valid JSON has
		// only whitespace, ',', ':', ']' or '}', so demanding a closing quote
		// and a first byte other than ':' rules the second case out.
		e = run(src, s, isUnquoted, len(src))
		if e >= len(src) || src[e] != '"' || e > s && src[s] == ':' {
			return 0, 0, false
		}
	case len(q) > 1:
		// An escaped quote (JSON inside a JSON string, at any depth): the
		// value ends at the next escape.
		e = run(src, s, isDoubleQuoted, len(src))
	case q == `'`:
		e = run(src, s, isSingleQuoted, len(src))
	default:
		e = unquotedEnd(src, s)
		if e < len(src) && (src[e] == '(' || src[e] == '[') {
			return 0, 0, false // code: password = getpass.getpass(), key = os.environ["KEY"]
		}
	}
	if !plausibleSecret(src[s:e], src[at:end]) {
		return 0, 0, false
	}
	return s, e, true
}

// unquotedEnd returns the end of an unquoted value starting at src[s]. An
// '&' ends it only where a query parameter follows (password=x&user=y);
// otherwise it is part of the value (password=p&ss).
func unquotedEnd(src []byte, s int) int {
	e := run(src, s, isUnquoted, len(src))
	for n := ampAt(src, e); n > 0 && !paramFollows(src, e+n); n = ampAt(src, e) {
		e = run(src, e+n, isUnquoted, len(src))
	}
	return e
}

// ampAt returns the length of an '&' at src[i]: 1, or that of its JSON
// escape \u0026 at any nesting depth (\\u0026 …); 0 when there is none.
func ampAt(src []byte, i int) int {
	if i < len(src) && src[i] == '&' {
		return 1
	}
	j := i
	for j < len(src) && src[j] == '\\' && j-i < 8 {
		j++
	}
	if j > i && j+5 <= len(src) && src[j] == 'u' && string(src[j+1:j+5]) == "0026" {
		return j + 5 - i
	}
	return 0
}

// ampBefore reports whether src[:i] ends with '&' or '?', or the JSON
// escape of '&'.
func ampBefore(src []byte, i int) bool {
	if i > 0 && (src[i-1] == '&' || src[i-1] == '?') {
		return true
	}
	return i >= 6 && string(src[i-5:i]) == "u0026" && src[i-6] == '\\'
}

// paramFollows reports whether src[i:] starts with name= (a query
// parameter or another assignment).
func paramFollows(src []byte, i int) bool {
	j := run(src, i, func(c byte) bool { return isWord(c) || c == '.' || c == '-' || c == '[' || c == ']' }, 64)
	return j > i && j < len(src) && src[j] == '='
}

// matchKeyAssignment redacts the value of a *key-named setting
// (STRIPE_KEY=…, AccountKey=…) when it looks random.
func matchKeyAssignment(src []byte, at, end int) (int, int, bool) {
	if end < len(src) && isAlnum(src[end]) {
		return 0, 0, false // keyboard, keys, keyword…
	}
	s, e, ok := matchAssignment(src, at, end)
	if !ok || !randomLooking(src[s:e], 12) {
		return 0, 0, false
	}
	return s, e, true
}

// randomLooking reports whether v looks like generated key material: at
// least min bytes, letters and digits mixed (or long), and a high Shannon
// entropy for its length.
func randomLooking(v []byte, min int) bool {
	if len(v) < min || len(v) > 4096 {
		return false
	}
	var letters, digits bool
	for _, c := range v {
		switch {
		case '0' <= c && c <= '9':
			digits = true
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			letters = true
		case c == ' ':
			return false // words, not a key
		}
	}
	if !letters || !digits {
		return false // identifiers (process.env.SESSION_SECRET), words
	}
	switch v[0] {
	case '/', '~', '.':
		return false // a path: /etc/ssh/ssh_host_ed25519_key
	}
	if seg, hex, words := segments(v); seg < 16 || hex && words >= 2 {
		// A name built of parts (setup-go-Linux-x64-1.22.4-d5ec2e1f, a
		// UUID), or one ending in a content digest
		// (setup-uv-1-x86_64-unknown-linux-gnu-0.7.13-<sha256>).
		return false
	}
	floor := 3.0
	if len(v) >= 32 {
		floor = 3.3
	}
	return shannon(v) >= floor
}

// segments reads v as runs between - _ . / separators: the length of the
// longest, whether that one is all hex digits, and how many runs are words
// of three or more letters. Generated key material has a long run; names
// assembled from parts do not, or are words plus a digest.
func segments(v []byte) (longest int, hex bool, words int) {
	start := 0
	for i := 0; i <= len(v); i++ {
		if i < len(v) && v[i] != '-' && v[i] != '_' && v[i] != '.' && v[i] != '/' {
			continue
		}
		seg := v[start:i]
		if len(seg) > longest {
			longest, hex = len(seg), run(seg, 0, isHex, len(seg)) == len(seg)
		}
		if len(seg) >= 3 && run(seg, 0, func(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }, len(seg)) == len(seg) {
			words++
		}
		start = i + 1
	}
	return longest, hex, words
}

// matchProse redacts a random-looking token following a secret's name in
// prose or on a command line, past up to four short words: "the AWS secret
// access key is …", "auth token …", "bot token: …".
func matchProse(src []byte, at, end int) (int, int, bool) {
	if end < len(src) && isAlnum(src[end]) {
		return 0, 0, false // tokenizer, keyboard, secretary…
	}
	i := end
	for words := 0; ; words++ {
		// (Assignments — name: value, name=value — are the assignment
		// rules', with their own judgement of what is a value.)
		i = skipFunc(src, i, func(c byte) bool { return c == ' ' })
		w := run(src, i, func(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }, 13)
		if words == 4 || w == i || w-i > 12 || w >= len(src) || src[w] != ' ' {
			break
		}
		i = w
	}
	if i == end || i-end > 64 {
		return 0, 0, false
	}
	e := run(src, i, isTokenByte, 257)
	for e > i && (src[e-1] == '.' || src[e-1] == '=' && e-i < 16) {
		e-- // a sentence's full stop
	}
	if e-i < 16 || e-i > 256 || e < len(src) && isAlnum(src[e]) || !randomLooking(src[i:e], 16) {
		return 0, 0, false
	}
	return i, e, true
}

func skipFunc(src []byte, i int, in func(byte) bool) int {
	for i < len(src) && in(src[i]) {
		i++
	}
	return i
}

// matchTelegram matches a Telegram bot token, <bot id>:AA<33 bytes>, at
// its ":AA".
func matchTelegram(src []byte, at, end int) (int, int, bool) {
	j := at
	for j > 0 && at-j < 17 && '0' <= src[j-1] && src[j-1] <= '9' {
		j--
	}
	// (In the Bot API's URLs the token follows "bot".)
	if at-j < 5 || !boundaryBefore(src, j) && !(j >= 3 && string(src[j-3:j]) == "bot") {
		return 0, 0, false
	}
	e := run(src, end, isBase64URL, 41)
	if n := e - end; n < 30 || n > 40 || e < len(src) && isAlnum(src[e]) {
		return 0, 0, false
	}
	return j, e, true
}

// matchSASSignature redacts the signature of an Azure shared access
// signature URL (…&sig=…).
func matchSASSignature(src []byte, at, end int) (int, int, bool) {
	if !ampBefore(src, at) {
		return 0, 0, false
	}
	e := run(src, end, func(c byte) bool { return isAlnum(c) || c == '%' || c == '+' || c == '/' || c == '=' }, 512)
	if e-end < 16 {
		return 0, 0, false
	}
	return end, e, true
}

// loginTools are the commands whose "login" takes a password flag.
var loginTools = []string{"docker", "podman", "nerdctl", "buildah", "helm registry", "oras", "skopeo"}

// matchCommandPassword redacts a password given on a command line: curl
// -u/--user user:PASS, mysql/mysqldump/mariadb -pPASS, and docker (podman,
// helm registry…) login -p/--password PASS.
func matchCommandPassword(src []byte, at, end int) (int, int, bool) {
	// The anchor says which command: curl, the mysql family, or login.
	kind := src[at] | 0x20
	if kind == ' ' {
		ok := false
		for _, t := range loginTools {
			if at >= len(t) && strings.EqualFold(string(src[at-len(t):at]), t) {
				ok = true
			}
		}
		if !ok {
			return 0, 0, false
		}
	} else if !boundaryBefore(src, at) {
		return 0, 0, false
	}
	// The command runs to the end of its line (a real or escaped newline),
	// its JSON string, or a shell separator.
	lineEnd := end
	for lineEnd < len(src) && lineEnd-end < 2048 {
		c := src[lineEnd]
		if c == '\n' || c == '"' || c == ';' || c == '|' || c == '\\' && lineEnd+1 < len(src) && src[lineEnd+1] == 'n' {
			break
		}
		lineEnd++
	}
	line := src[:lineEnd]
	for i := end - 1; i < lineEnd; i++ {
		if src[i] != ' ' && src[i] != '\t' {
			continue
		}
		f := i + 1
		switch {
		case kind == 'c':
			for _, flag := range []string{"-u ", "--user ", "--user=", "-u"} {
				if !hasPrefixFold(line[f:], flag) {
					continue
				}
				v := f + len(flag)
				v += len(quoteAt(line, v))
				e := run(line, v, func(c byte) bool { return c > ' ' && c != '"' && c != '\'' && c != '\\' }, 512)
				if colon := bytes.IndexByte(line[v:e], ':'); colon >= 0 && e-(v+colon+1) >= minValue && !markerAt(line, v+colon+1) {
					return v + colon + 1, e, true
				}
			}
		case kind == ' ':
			for _, flag := range []string{"-p ", "--password ", "--password="} {
				if hasPrefixFold(line[f:], flag) {
					v := f + len(flag)
					v += len(quoteAt(line, v))
					e := run(line, v, func(c byte) bool { return c > ' ' && c != '"' && c != '\'' && c != '\\' }, 512)
					if e-v >= minValue && !markerAt(line, v) {
						return v, e, true
					}
				}
			}
		default: // mysql family: -pPASS (attached; "-p name" prompts and names a database)
			if f+2 < lineEnd && line[f] == '-' && line[f+1] == 'p' && line[f+2] > ' ' && line[f+2] != '-' {
				e := run(line, f+2, func(c byte) bool { return c > ' ' && c != '"' && c != '\'' && c != '\\' }, 512)
				if e-(f+2) >= minValue && !markerAt(line, f+2) {
					return f + 2, e, true
				}
			}
		}
	}
	return 0, 0, false
}

// markerAt reports whether src[i:] starts with the redaction marker.
func markerAt(src []byte, i int) bool { return bytes.HasPrefix(src[i:], []byte(Marker)) }

// plausibleSecret rejects assignment values that are evidently not
// secrets. key is the key word the value is assigned to.
func plausibleSecret(v, key []byte) bool {
	if len(v) < minValue || string(v) == Marker {
		return false
	}
	if n := len(v) - len(key); n >= 0 && bytes.EqualFold(v[n:], key) && (n == 0 || v[n-1] == '.' || v[n-1] == '_') {
		return false // a variable: api_key=api_key, secret: process.env.SESSION_SECRET
	}
	switch v[0] {
	case '$', '{', '<', '[', '/':
		return false // $VAR, ${VAR}, {{ .Password }}, <your-token>, [PAD], /path/to/key.pem
	}
	if len(v) < 8 && isDigits(v) {
		return false // small numbers such as "token": "4096"
	}
	// Literals and type names (token: str, apiKey: string).
	for _, w := range [...]string{
		"null", "nil", "none", "undefined", "true", "false",
		"str", "string", "bytes", "int", "number", "bool", "boolean", "any", "object",
	} {
		if bytes.EqualFold(v, []byte(w)) {
			return false
		}
	}
	return true
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// matchURLPassword matches scheme://user:password@host at the "://" and
// redacts the password. The user may be empty (redis://:pw@host); a password
// may contain an unencoded '@' (the last '@' ends it).
func matchURLPassword(src []byte, at, end int) (int, int, bool) {
	if at == 0 || !isAlnum(src[at-1]) {
		return 0, 0, false
	}
	authority := src[end:run(src, end, isUserinfo, maxURLPart)]
	host := bytes.LastIndexByte(authority, '@')
	colon := bytes.IndexByte(authority, ':')
	if host < 0 || colon < 0 || colon+1 >= host {
		return 0, 0, false
	}
	return end + colon + 1, end + host, true
}

// matchPrivateKey matches a PEM private key from its BEGIN line to its END
// line. In raw JSON the line breaks are \n escapes, and the block must not
// leave the JSON string it starts in. Without an END line (a truncated key)
// it matches the BEGIN line and the base64 lines that follow.
func matchPrivateKey(src []byte, at, end int) (int, int, bool) {
	h := afterPEMLabel(src, end)
	if h < 0 {
		return 0, 0, false
	}
	window := src[h:min(len(src), h+maxKeyBlock)]
	if k := bytes.Index(window, []byte("-----END")); k >= 0 && !hasBareQuote(src[h:h+k]) {
		if e := afterPEMLabel(src, h+k+len("-----END")); e >= 0 {
			return at, e, true
		}
	}
	return at, pemBody(src, h), true
}

// afterPEMLabel parses " <LABEL>PRIVATE KEY-----" at src[i] and returns the
// index after it, or -1.
func afterPEMLabel(src []byte, i int) int {
	e := run(src, i, isUpperSpace, 64)
	label := string(src[i:e])
	if !strings.HasPrefix(label, " ") || !strings.HasSuffix(label, "PRIVATE KEY") ||
		!bytes.HasPrefix(src[e:], []byte("-----")) {
		return -1
	}
	return e + len("-----")
}

// hasBareQuote reports whether b, which starts outside any escape sequence,
// contains a '"' that is not escaped.
func hasBareQuote(b []byte) bool {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return true
		}
	}
	return false
}

// pemBody returns the end of the base64 lines starting at src[i]; line
// breaks may be real or escaped (\n, \r, \\n as in doubly encoded JSON).
func pemBody(src []byte, i int) int {
	for i < len(src) {
		switch c := src[i]; {
		case isBase64(c) || c == '\n' || c == '\r':
			i++
		case c == '\\' && i+1 < len(src) && strings.IndexByte(`nr\/`, src[i+1]) >= 0:
			i += 2
		default:
			return i
		}
	}
	return i
}
