package redact

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// Fake credentials in the right formats, assembled at run time so that
// secret scanners do not flag this file.
var (
	fakeAWS       = "AKIA" + "IOSFODNN7EXAMPLE"
	fakeAWSTemp   = "ASIA" + "Y34FZKBOKMUTVV7A"
	fakeGitHub    = "ghp_" + strings.Repeat("x1Y2z3", 6)
	fakeGitHubPAT = "github_pat_" + "11ABCDEFG0123456789_" + strings.Repeat("abcXYZ789", 6)
	fakeAnthropic = "sk-ant-api03-" + strings.Repeat("Ab3_Cd4-Ef5", 8) + "-AA"
	fakeOpenAI    = "sk-proj-" + strings.Repeat("Ab3Cd4Ef5Gh6_", 6)
	fakeOpenAIOld = "sk-" + strings.Repeat("T3BlbkFJ", 6)
	fakeGoogle    = "AIza" + "SyA-" + strings.Repeat("x1Y2z3", 5) + "a"
	fakeSlack     = "xoxb-" + "123456789012-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx"
	fakeGitLab    = "glpat-" + "xY1_zW2-vU3tS4rQ5pO6"
	fakeStripe    = "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc"
	fakeNPM       = "npm_" + strings.Repeat("aB3dE5", 6)
	fakeJWT       = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + "." +
		"eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ" + "." +
		"SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	fakePEMBody = "MIIEowIBAAKCAQEA1b2c3d4e5f6g7h8i9j0kLmNoPqRsTuVwXyZ+/abcdefghij\n" +
		"KLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/ABCDEFGHIJ==\n"
	fakePEM = "-----BEGIN RSA " + "PRIVATE KEY-----\n" + fakePEMBody + "-----END RSA " + "PRIVATE KEY-----"
)

// jsonEscape returns s as the inside of a JSON string, the way it appears in
// a raw transcript line.
func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

type testCase struct {
	rule string // the rule that must redact in (empty for negatives)
	in   string
	want string // empty: the same as in
}

// cases returns the table of positives (rule set) and negatives.
func cases() []testCase {
	red := Marker
	return []testCase{
		// aws-access-key-id
		{"aws-access-key-id", "aws_access_key_id = " + fakeAWS, "aws_access_key_id = " + red},
		{"aws-access-key-id", `{"type":"user","message":{"role":"user","content":"keys:\n` + fakeAWS + `\n` + fakeAWSTemp + `"}}`,
			`{"type":"user","message":{"role":"user","content":"keys:\n` + red + `\n` + red + `"}}`},
		{"", fakeAWS[:19], ""},                         // 15 characters after AKIA
		{"", fakeAWS + "X", ""},                        // 17
		{"", "X" + fakeAWS, ""},                        // glued to a word
		{"", "AKIA" + "iosfodnn7example", ""},          // lower case
		{"", "AKIA" + "IOSFODNN7EXAMPLEabc", ""},       // inside a longer base64 run
		{"", "README AIDA ANVA: AKIA is a prefix", ""}, // prefixes alone
		{"", "AROA" + "ROLE_ID_NOT_A_KEY", ""},         // wrong shape

		// github-token, github-fine-grained-pat
		{"github-token", "export GH=" + fakeGitHub, "export GH=" + red},
		{"github-token", "git clone https://" + fakeGitHub + "@github.com/org/repo", "git clone https://" + red + "@github.com/org/repo"},
		{"github-token", `{"command":"curl -H \"Authorization: token ` + fakeGitHub + `\" https://api.github.com"}`,
			`{"command":"curl -H \"Authorization: token ` + red + `\" https://api.github.com"}`},
		{"", "ghp_" + "short123", ""},
		{"", "ghx_" + strings.Repeat("x1Y2z3", 6), ""},
		{"", "my" + fakeGitHub, ""},
		{"github-fine-grained-pat", "token " + fakeGitHubPAT + " works", "token " + red + " works"},
		{"", "github_pat_" + "tooShort", ""},

		// anthropic-api-key, openai-api-key
		{"anthropic-api-key", `{"type":"user","message":{"role":"user","content":"my key is ` + fakeAnthropic + `, please use it"}}`,
			`{"type":"user","message":{"role":"user","content":"my key is ` + red + `, please use it"}}`},
		{"anthropic-api-key", "ANTHROPIC_API_KEY=" + fakeAnthropic + "\n", "ANTHROPIC_API_KEY=" + red + "\n"},
		{"", "sk-ant-" + "api03-short", ""},
		{"openai-api-key", "client = OpenAI(api_key='" + fakeOpenAI + "')", "client = OpenAI(api_key='" + red + "')"},
		{"openai-api-key", "key: " + fakeOpenAIOld, "key: " + red},
		{"", "pip install sk-learn", ""},
		{"", "we use sk-learn-contrib-extras-package here", ""}, // long, but no digit
		{"", "run the task-runner-0123456789abcdefghij", ""},    // sk- inside a word
		{"", "sk-" + "Ab3Cd4Ef5", ""},                           // tail shorter than 20

		// google-api-key, slack-token, gitlab-pat, stripe-secret-key, npm-token
		{"google-api-key", `"apiKey: ` + fakeGoogle + `"`, `"apiKey: ` + red + `"`},
		{"", "AIza" + strings.Repeat("x1Y2z3", 5), ""}, // 30 instead of 35
		{"slack-token", "SLACK_BOT=" + fakeSlack, "SLACK_BOT=" + red},
		{"", "xoxb-" + "short", ""},
		{"", "xoxz-" + "123456789012-1234567890123", ""},
		{"gitlab-pat", "glab auth login --token " + fakeGitLab, "glab auth login --token " + red},
		{"", "glpat-" + "short", ""},
		{"stripe-secret-key", "stripe.api_key = " + fakeStripe, "stripe.api_key = " + red},
		// Test-mode keys read real test data and can be abused: secret too.
		{"stripe-secret-key", "sk_" + "test_" + "4eC39HqLyjWDarjtT1zdp7dc", red},
		{"npm-token", "//registry.npmjs.org/:_authToken " + fakeNPM, "//registry.npmjs.org/:_authToken " + red},
		{"", "npm_config_cache=/tmp/npm", ""},
		{"", fakeNPM + "X", ""},

		// jwt
		{"jwt", "id_token " + fakeJWT + " expires", "id_token " + red + " expires"},
		{"jwt", `{"type":"response_item","payload":{"output":"cookie: session=` + fakeJWT + `; Path=/"}}`,
			`{"type":"response_item","payload":{"output":"cookie: session=` + red + `; Path=/"}}`},
		{"", "eyJhbGciOiJIUzI1NiJ9 is a base64 header", ""},
		{"", "eyJhbGciOiJIUzI1NiJ9.eyJ.short", ""},
		{"", "XeyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3.SflKxwRJSMeKKF2QT4fw", ""}, // glued to a word

		// bearer-token
		{"bearer-token", "Authorization: Bearer abcdef123456", "Authorization: Bearer " + red},
		{"bearer-token", "authorization: bearer " + fakeJWT, "authorization: bearer " + red},
		{"bearer-token", `{"type":"response_item","payload":{"type":"function_call","arguments":"{\"command\":[\"bash\",\"-lc\",\"curl -H \\\"Authorization: Bearer tok_8f3a9b2c1d7e\\\" https://api.example.com\"]}"}}`,
			`{"type":"response_item","payload":{"type":"function_call","arguments":"{\"command\":[\"bash\",\"-lc\",\"curl -H \\\"Authorization: Bearer ` + red + `\\\" https://api.example.com\"]}"}}`},
		{"bearer-token", "BEARER " + strings.Repeat("abcdefghij", 3), "BEARER " + red}, // long enough without digits
		{"bearer-token", `{"headers":{"Authorization":"Bearer abc123def456"}}`, `{"headers":{"Authorization":"Bearer ` + red + `"}}`},
		{"", "Bearer of bad news", ""},
		{"", "the bearer token is passed in a header", ""},
		{"", "Use Bearer authentication for the API", ""},
		{"", `curl -H "Authorization: Bearer $TOKEN"`, ""},
		{"", `"token_type": "Bearer", "expires_in": 3600`, ""},

		// basic-auth
		{"basic-auth", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic " + red},
		{"basic-auth", `{"headers":{"Authorization":"Basic dXNlcjpwYXNzd29yZA=="}}`, `{"headers":{"Authorization":"Basic ` + red + `"}}`},
		{"", "Basic usage: cortex ingest <dir>", ""},
		{"", "Authorization: Basic realm", ""},

		// credential-assignment: plain text
		{"credential-assignment", "password=hunter2", "password=" + red},
		{"credential-assignment", "PASSWORD: hunter2", "PASSWORD: " + red},
		{"credential-assignment", `export API_KEY="abc123def"`, `export API_KEY="` + red + `"`},
		{"credential-assignment", "db:\n  password: 'p@ss w0rd'\n", "db:\n  password: '" + red + "'\n"},
		{"credential-assignment", `token := "abcdef0123"`, `token := "` + red + `"`},
		{"credential-assignment", "client_secret=abc123xyz&grant_type=client_credentials", "client_secret=" + red + "&grant_type=client_credentials"},
		{"credential-assignment", "connect(user=bob, password=abcd1234)", "connect(user=bob, password=" + red + ")"},
		{"credential-assignment", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = " + red},
		{"credential-assignment", "SECRET_KEY=django-insecure-abc", "SECRET_KEY=" + red},
		{"credential-assignment", "token: 123456789", "token: " + red}, // 8+ digits
		{"credential-assignment", "password=abc", "password=" + red},   // 3 bytes is the minimum
		{"credential-assignment", "{'privateKey' => 'k3y-material'}", "{'privateKey' => '" + red + "'}"},
		// credential-assignment: raw JSON
		{"credential-assignment", `{"password":"hunter2"}`, `{"password":"` + red + `"}`},
		{"credential-assignment", `{"api_key": "abc"}`, `{"api_key": "` + red + `"}`},
		{"credential-assignment", `{"refresh_token":"1//0gAbC-dEf","access_token":"ya29.a0AfH6","auth_token":"at-5f2e"}`,
			`{"refresh_token":"` + red + `","access_token":"` + red + `","auth_token":"` + red + `"}`},
		{"credential-assignment", `{"password":"with space and \"quote\""}`, `{"password":"` + red + `\"quote\""}`},
		// credential-assignment: JSON-escaped text inside a JSON string
		{"credential-assignment", `{"type":"user","message":{"role":"user","content":"config: {\"password\": \"hunter2\"}"}}`,
			`{"type":"user","message":{"role":"user","content":"config: {\"password\": \"` + red + `\"}"}}`},
		{"credential-assignment", `{"content":"password=hunter2\nnext"}`, `{"content":"password=` + red + `\nnext"}`},
		{"credential-assignment", `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":"$ cat .env\nDATABASE_HOST=db\nDATABASE_PASSWORD=s3cr3t-pw!\nSTRIPE_API_KEY='k_abc123'\nDEBUG=true\n"}]}}`,
			`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":"$ cat .env\nDATABASE_HOST=db\nDATABASE_PASSWORD=` + red + `\nSTRIPE_API_KEY='` + red + `'\nDEBUG=true\n"}]}}`},
		// credential-assignment: decisions about what is not a secret
		{"", "token count: 123", ""},
		{"", `{"type":"token_count","info":{"total_token_usage":{"input_tokens":51234,"output_tokens":2048}}}`, ""},
		{"", `{"max_tokens": 4096, "token": "4096", "tokens": "abcdef"}`, ""}, // digits under 8 are not secrets
		{"", "token=1234567", ""},
		{"", "the password field is required", ""},
		{"", "Password is incorrect, try again", ""},
		{"", `{"password": ""}`, ""},
		{"", "password: " + red, ""},
		{"", "password=ab", ""},
		{"", `{"password": null, "secret": true, "token": 12345678, "api_key": {"type": "string"}}`, ""},
		{"", "password = getpass.getpass()", ""},
		{"", "password=$DB_PASSWORD token: ${{ secrets.GITHUB_TOKEN }} api_key={api_key} token=<your-token>", ""},
		{"", "PWD=/home/dev/project\nOLDPWD=/home/dev", ""},
		{"", "if password == expected:", ""},
		{"", `api_key = os.environ["OPENAI_API_KEY"]; OpenAI(api_key=api_key); password=config.password`, ""},
		{"", "secret: process.env.SESSION_SECRET, token = self.token", ""},
		{"", "def embed(self, token: str, api_key: Optional[str] = None) -> None:", ""},
		{"", `tokenizer.add_special_tokens({'pad_token': '[PAD]'})`, ""},
		{"", "password_hash=abcdef tokenizer=cl100k secret_name=prod", ""},
		{"", `{"a":"password=","b":"value with spaces"}`, ""},
		{"", `{"token=":"abcdef","x":1}`, ""},

		// url-password
		{"url-password", "DATABASE_URL=postgres://app:s3cr3tpw@db:5432/app", "DATABASE_URL=postgres://app:" + red + "@db:5432/app"},
		{"url-password", `{"url":"redis://:hunter2@localhost:6379/0"}`, `{"url":"redis://:` + red + `@localhost:6379/0"}`},
		{"url-password", "https://user:p@ss@host/x", "https://user:" + red + "@host/x"},
		{"", "git@github.com:cortexhq/cortex.git", ""},
		{"", "ssh://git@github.com/org/repo and https://host:8080/path@v2", ""},
		{"", "mailto:dev@example.com or dev@example.com", ""},
		{"", "https://example.com/users/a:b@c", ""},

		// key-assignment: *key-named values that look random; settings
		// that do not are kept.
		{"key-assignment", "STRIPE_KEY=" + "q8Zr2LmX0pVb7TnC4yWd9KfE", "STRIPE_KEY=" + red},
		{"key-assignment", "DefaultEndpointsProtocol=https;AccountKey=" + "a9F3kL0mQ2xZ7vB5nC8dR1tY6wE4uI0o==;EndpointSuffix=x",
			"DefaultEndpointsProtocol=https;AccountKey=" + red + ";EndpointSuffix=x"},
		{"", "sort_key=created_at", ""},
		{"", "primary_key = id", ""},
		{"", "keyboard=qwertz1234567890", ""},
		{"", `{"key": "src/components/App.tsx"}`, ""},
		{"", "cache key 1 of 2", ""},

		// secret-in-prose
		{"secret-in-prose", "the AWS secret access key is " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCY3XAMPLEKEY" + " for ci",
			"the AWS secret access key is " + red + " for ci"},
		{"secret-in-prose", "Twilio auth token " + "0f3a9c2b7d4e1f6a8b5c3d2e1f0a9b8c" + ".", "Twilio auth token " + red + "."},
		{"", "the secret sauce is patience and persistence", ""},
		{"", "token counts for the session were 12345 and 67890", ""},
		{"", "tokenizer vocabulary abcdefghijklmnop1234", ""},

		// google-oauth-client-secret, mailgun-api-key, docker-hub-pat,
		// telegram-bot-token, azure-sas-signature
		{"google-oauth-client-secret", "client secret GOCSPX-" + "aB3dE5fG7hI9jK1lM3nO5pQ7rS9t", "client secret " + red},
		{"mailgun-api-key", "mailgun: key-" + "0123456789abcdef0123456789abcdef", "mailgun: " + red},
		{"", "the key-value store", ""},
		{"docker-hub-pat", "docker hub dckr_pat_" + "aB3dE5fG7hI9jK1lM3nO5pQ7rS9t", "docker hub " + red},
		{"telegram-bot-token", "https://api.telegram.org/bot123456789:AA" + "Hx3b5c7d9f1g3h5j7k9m1n3p5q7r9s1t3", "https://api.telegram.org/bot" + red},
		{"", "12:30:AA meeting", ""},
		{"azure-sas-signature", "https://a.blob.core.windows.net/c?sv=2022-11-02&sig=" + "aB3dE5fG7hI9jK1lM3nO5pQ%2B7rS9t%3D",
			"https://a.blob.core.windows.net/c?sv=2022-11-02&sig=" + red},
		{"", "design=simple&sig=short", ""},

		// command-line-password
		{"command-line-password", "curl -u admin:" + "S3cretPassw0rd" + " https://api.test", "curl -u admin:" + red + " https://api.test"},
		{"command-line-password", `{"command":"curl --user 'deploy:` + "Pa55w0rdX" + `' -X GET x"}`, `{"command":"curl --user 'deploy:` + red + `' -X GET x"}`},
		{"command-line-password", "mysql -u root -p" + "Hunter2Pass" + " prod", "mysql -u root -p" + red + " prod"},
		{"command-line-password", "docker login -u bot -p " + "Tok3nValue9" + " reg.test", "docker login -u bot -p " + red + " reg.test"},
		{"", "mysql -u root -p prod", ""},
		{"", "curl -u admin https://x", ""},
		{"", "docker login --password-stdin reg", ""},
		{"", "please login -p now", ""},

		// password values with '&'
		{"credential-assignment", "password=p&" + "ssW0rd!x", "password=" + red},
		{"credential-assignment", "https://x.test/login?password=" + "Abc123xyz" + "&user=bob", "https://x.test/login?password=" + red + "&user=bob"},

		// private-key-block
		{"private-key-block", "key:\n" + fakePEM + "\ndone", "key:\n" + red + "\ndone"},
		{"private-key-block", `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"` + jsonEscape(fakePEM+"\n") + `"}]}}`,
			`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"` + red + `\n"}]}}`},
		{"private-key-block", "-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAAAAB", red},
		{"private-key-block", `{"content":"` + jsonEscape("$ head -3 id_rsa\n-----BEGIN RSA "+"PRIVATE KEY-----\n"+fakePEMBody) + `","is_error":false}`,
			`{"content":"$ head -3 id_rsa\n` + red + `","is_error":false}`},
		{"private-key-block", `{"a":"-----BEGIN EC ` + `PRIVATE KEY-----\nMHcCAQEEIIrY","b":"x\n-----END EC ` + `PRIVATE KEY-----"}`,
			`{"a":"` + red + `","b":"x\n-----END EC ` + `PRIVATE KEY-----"}`}, // never across JSON strings
		{"", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----", ""},
		{"", "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa\n", ""},

		// Identifiers that are not secrets.
		{"", "session 550e8400-e29b-41d4-a716-446655440000 at commit 3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a", ""},
		{"", `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + fakeImage() + `"}}`, ""},
		{"", "![shot](data:image/png;base64," + fakeImage() + ")", ""},
	}
}

// fakeImage is base64 image data with secret-looking fragments inside it.
func fakeImage() string {
	img := make([]byte, 3000)
	for i := range img {
		img[i] = byte(i * 7919 % 251)
	}
	b64 := base64.StdEncoding.EncodeToString(img)
	return "iVBORw0KGgo" + b64[:1000] + fakeAWS + b64[1000:2000] + "eyJhbGciOiJIUzI1NiJ9" + b64[2000:3000] +
		"eyJhbGciOiJIUzI1NiJ9" + "AIza" + b64[3000:]
}

// positiveJSONLines are the positive cases that are JSON documents.
var positiveJSONLines = func() []string {
	var out []string
	for _, c := range cases() {
		if c.rule != "" && json.Valid([]byte(c.in)) {
			out = append(out, c.in)
		}
	}
	return out
}()

// only returns a Redactor with just the named rule.
func only(t testing.TB, name string) *Redactor {
	t.Helper()
	for _, ru := range rules() {
		if ru.name == name {
			return build([]rule{ru})
		}
	}
	t.Fatalf("no rule %q", name)
	return nil
}

func TestRules(t *testing.T) {
	r := New()
	tested := map[string]bool{}
	for _, c := range cases() {
		tested[c.rule] = true
	}
	names := r.Rules()
	for _, name := range names {
		// Gitleaks' rules come with their own tests (gitleaks'
		// cmd/generate); the secret corpus covers a sample of them here.
		if !tested[name] && !strings.HasPrefix(name, "gitleaks:") {
			t.Errorf("rule %q has no positive test case", name)
		}
	}
	if len(slices.Compact(slices.Sorted(slices.Values(names)))) != len(names) {
		t.Errorf("duplicate rule names: %v", names)
	}
}

func TestRedact(t *testing.T) {
	r := New()
	for _, c := range cases() {
		want := c.want
		if want == "" {
			want = c.in
		}
		got, n := r.String(c.in)
		if got != want {
			t.Errorf("String(%q)\n got %q\nwant %q", c.in, got, want)
		}
		if wantN := strings.Count(want, Marker) - strings.Count(c.in, Marker); n != wantN {
			t.Errorf("String(%q) count = %d, want %d", c.in, n, wantN)
		}
		if b, _ := r.Bytes([]byte(c.in)); string(b) != got {
			t.Errorf("Bytes(%q) = %q, String gave %q", c.in, b, got)
		}
		if c.rule != "" {
			// The named rule alone must redact the secret.
			if got, _ := only(t, c.rule).String(c.in); got != want {
				t.Errorf("rule %s alone on %q\n got %q\nwant %q", c.rule, c.in, got, want)
			}
		}
		if json.Valid([]byte(c.in)) && !json.Valid([]byte(got)) {
			t.Errorf("redacting valid JSON %q gave invalid JSON %q", c.in, got)
		}
		if again, n := r.String(got); again != got || n != 0 {
			t.Errorf("second pass over %q changed it to %q (%d)", got, again, n)
		}
	}
}

func TestNoMatchDoesNotAllocate(t *testing.T) {
	r := New()
	src := syntheticTranscript(64 << 10)
	var out []byte
	if allocs := testing.AllocsPerRun(10, func() { out, _ = r.Bytes(src) }); allocs != 0 {
		t.Errorf("Bytes allocated %v times", allocs)
	}
	if &out[0] != &src[0] || len(out) != len(src) {
		t.Error("Bytes did not return src itself")
	}
	s := string(src)
	if allocs := testing.AllocsPerRun(10, func() { r.String(s) }); allocs != 0 {
		t.Errorf("String allocated %v times", allocs)
	}
}

func TestBytesDoesNotModifyInput(t *testing.T) {
	in := []byte("password=hunter2 and " + fakeGitHub)
	orig := string(in)
	out, n := New().Bytes(in)
	if string(in) != orig || n != 2 || string(out) != "password="+Marker+" and "+Marker {
		t.Errorf("Bytes = %q, %d; input now %q", out, n, in)
	}
}

func TestMergesOverlappingMatches(t *testing.T) {
	// The assignment, the anthropic and the generic sk- rule all match; the
	// result has one marker and counts one replacement.
	got, n := New().String("api_key=" + fakeAnthropic)
	if got != "api_key="+Marker || n != 1 {
		t.Errorf("got %q, %d", got, n)
	}
	// A private key as an assignment value: the block wins over the
	// space-delimited value.
	got, n = New().String("private_key = " + fakePEM + "\n")
	if got != "private_key = "+Marker+"\n" || n != 1 {
		t.Errorf("got %q, %d", got, n)
	}
}

func TestSyntheticCorpusHasNoMatches(t *testing.T) {
	data := syntheticTranscript(1 << 20)
	if out, n := New().Bytes(data); n != 0 {
		t.Errorf("%d false positives, first at %q", n, out[max(0, strings.Index(string(out), Marker)-80):][:160])
	}
	data = syntheticWithSecrets(1 << 20)
	out, n := New().Bytes(data)
	if n == 0 {
		t.Error("no secrets found in syntheticWithSecrets")
	}
	for i, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !json.Valid([]byte(l)) {
			t.Fatalf("line %d is not valid JSON after redaction: %q", i, l)
		}
	}
}

// TestHostileInputStaysFast guards against quadratic behavior: runs of
// anchors that each start a long candidate match.
func TestHostileInputStaysFast(t *testing.T) {
	r := New()
	for _, unit := range []string{
		"eyJ", "sk-", "sk-ant-", "xoxb-", "ghp_", "AKIA", "password=", `token="`, `"token":"`, "token: a",
		"-----BEGIN RSA PRIVATE KEY-----", "https://a:b", "Bearer ", "authorization: basic ", `\n`, `\\`,
	} {
		in := strings.Repeat(unit, (256<<10)/len(unit))
		start := time.Now()
		r.String(in)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%d KB of %q took %v", len(in)>>10, unit, d)
		}
	}
}

func TestOpaque(t *testing.T) {
	body := "MIIEowIBAAKCAQEAx4Ff3kL9mQ2rT7vZ1wB8nC5dY0pE6uI3oA9sD2fG4hJ7kL1z"
	for in, want := range map[string]string{
		"broken line: " + body + " end":          "broken line: " + Marker + " end",
		"password=hunter22 and " + body:          "password=" + Marker + " and " + Marker,
		"plain text with a path /usr/local/bin":  "plain text with a path /usr/local/bin",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	} {
		if got := string(New().Opaque([]byte(in))); got != want {
			t.Errorf("Opaque(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestKeyNamedValuesThatAreNotSecrets: values of key-named settings found
// redacted on real transcripts by an earlier version of the entropy rules.
func TestKeyNamedValuesThatAreNotSecrets(t *testing.T) {
	for _, in := range []string{
		"#HostKey /etc/ssh/ssh_host_ed25519_key",
		`msg="deleted cache: &{ID:6 Key:setup-go-Linux-x64-ubuntu24-go-1.22.4-d5ec2e1f Version:6e88}"`,
		"cache saved with the key: uv-Linux-x86_64-3.12-b1c2d3e4f5a6",
	} {
		if got, n := New().String(in); n != 0 {
			t.Errorf("%q redacted: %q", in, got)
		}
	}
}

func TestDigestNamesAreNotSecrets(t *testing.T) {
	in := "cache saved with the key: setup-uv-1-x86_64-unknown-linux-gnu-0.7.13-f6c65b29c82e498115b3dc436b3a85fc046536dc8aedf03c6c5055c9fd414a51"
	if got, n := New().String(in); n != 0 {
		t.Errorf("redacted: %q", got)
	}
}
