package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/cortexhq/cortex"
)

// OpenAIConfig configures an OpenAI-compatible chat-completions endpoint
// ([llm.openai]): a local llama.cpp server, Ollama, vLLM, LM Studio.
type OpenAIConfig struct {
	// BaseURL is the API root, e.g. http://127.0.0.1:8080/v1 (llama.cpp)
	// or http://127.0.0.1:11434/v1 (Ollama); /chat/completions is added.
	BaseURL string `toml:"base_url" json:"base_url"`
	// Model is the model name the server expects.
	Model string `toml:"model" json:"model"`
	// APIKeyEnv names the environment variable holding the API key (the
	// key itself never lives in the configuration); "" sends none.
	APIKeyEnv string `toml:"api_key_env" json:"api_key_env,omitempty"`
	// AllowRemote permits a host other than this machine: evidence from
	// transcripts then leaves it.
	AllowRemote bool `toml:"allow_remote" json:"allow_remote,omitempty"`
	// Temperature is sent when set (0 = the server's default).
	Temperature float64 `toml:"temperature" json:"temperature,omitempty"`
}

// DefaultOpenAIBaseURL is a llama.cpp server on its default port.
const DefaultOpenAIBaseURL = "http://127.0.0.1:8080/v1"

// maxOpenAIResponse bounds the response body read.
const maxOpenAIResponse = 16 << 20

// OpenAI runs prompts through an OpenAI-compatible /chat/completions
// endpoint (one user message, no tools, not streamed). It implements
// [Provider].
type OpenAI struct {
	cfg      OpenAIConfig
	endpoint string
	client   *http.Client
}

var _ Provider = (*OpenAI)(nil)

// NewOpenAI returns the provider for cfg. A base URL that is not http(s),
// or that names another machine without allow_remote, is refused.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	cfg.BaseURL = strings.TrimRight(strings.TrimSpace(cfg.BaseURL), "/")
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultOpenAIBaseURL
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, cortex.Errorf(cortex.CodeInvalid, "[llm.openai] base_url %q is not an http(s) URL", cfg.BaseURL)
	}
	if u.User != nil {
		return nil, cortex.Errorf(cortex.CodeInvalid, "[llm.openai] base_url may not hold credentials (use api_key_env)")
	}
	if !cfg.AllowRemote && !loopback(u.Hostname()) {
		return nil, cortex.Errorf(cortex.CodeInvalid,
			"[llm.openai] base_url %s is not on this machine; set allow_remote = true to send evidence there", u.Host)
	}
	cfg.Model = strings.TrimSpace(cfg.Model)
	if cfg.Model == "" || !geminiValidModel(cfg.Model) {
		return nil, cortex.Errorf(cortex.CodeInvalid, "[llm.openai] model %q is not a model name", cfg.Model)
	}
	return &OpenAI{cfg: cfg, endpoint: cfg.BaseURL + "/chat/completions", client: &http.Client{}}, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Name returns "openai".
func (o *OpenAI) Name() string { return "openai" }

// Program returns the endpoint (for the audit).
func (o *OpenAI) Program() string { return o.endpoint }

// Model returns the model asked.
func (o *OpenAI) Model() string { return o.cfg.Model }

type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	Stream      bool          `json:"stream"`
	Temperature float64       `json:"temperature,omitempty"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatResponse struct {
	Choices []struct {
		Message      chatMessage `json:"message"`
		FinishReason string      `json:"finish_reason"`
	} `json:"choices"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Run posts the prompt as one user message and returns the first choice's
// message. The request ends with ctx.
func (o *OpenAI) Run(ctx context.Context, prompt string, stream io.Writer) (string, error) {
	body, err := json.Marshal(chatRequest{Model: o.cfg.Model, Messages: []chatMessage{{Role: "user", Content: prompt}},
		Temperature: o.cfg.Temperature})
	if err != nil {
		return "", cortex.WrapError(cortex.CodeInternal, err, "encode the request")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.endpoint, bytes.NewReader(body))
	if err != nil {
		return "", cortex.WrapError(cortex.CodeInternal, err, "build the request")
	}
	req.Header.Set("Content-Type", "application/json")
	if o.cfg.APIKeyEnv != "" {
		if key := os.Getenv(o.cfg.APIKeyEnv); key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
	}
	res, err := o.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return "", programContextError("openai", ctx.Err())
		}
		return "", cortex.WrapError(cortex.CodeUnavailable, err, "the endpoint %s did not answer", o.endpoint)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxOpenAIResponse+1))
	if err != nil {
		if ctx.Err() != nil {
			return "", programContextError("openai", ctx.Err())
		}
		return "", cortex.WrapError(cortex.CodeUnavailable, err, "read the answer of %s", o.endpoint)
	}
	if len(raw) > maxOpenAIResponse {
		return "", cortex.Errorf(cortex.CodeUnavailable, "the answer of %s is larger than %d MiB", o.endpoint, maxOpenAIResponse>>20)
	}
	var cr chatResponse
	jerr := json.Unmarshal(raw, &cr)
	if res.StatusCode != http.StatusOK {
		msg := strings.TrimSpace(string(raw))
		if jerr == nil && cr.Error != nil {
			msg = cr.Error.Message
		}
		return "", cortex.Errorf(cortex.CodeUnavailable, "the endpoint answered HTTP %d: %s", res.StatusCode,
			cortex.CutUTF8(oneLineText(msg), 300))
	}
	if jerr != nil {
		return "", cortex.WrapError(cortex.CodeUnavailable, jerr, "the endpoint's answer is not a chat completion")
	}
	if len(cr.Choices) == 0 || strings.TrimSpace(cr.Choices[0].Message.Content) == "" {
		return "", cortex.Errorf(cortex.CodeUnavailable, "the endpoint answered no message")
	}
	answer := cr.Choices[0].Message.Content
	if stream != nil {
		_, _ = io.WriteString(stream, answer)
	}
	return answer, nil
}

func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }

// errUnknownProvider lists the providers.
var errUnknownProvider = errors.New("supported: gemini, claude, codex, openai")

// Providers are the provider names [llm] provider and
// [llm.actions.<name>] provider accept.
func Providers() []string { return []string{"gemini", "claude", "codex", "openai"} }

// NewProvider builds the named provider from the configuration, with
// model (when not "") replacing the configured model.
func NewProvider(c Config, name, model string) (Provider, error) {
	set := func(m *string) {
		if model != "" {
			*m = model
		}
	}
	switch name {
	case "", "gemini":
		set(&c.Gemini.Model)
		return NewGemini(c.Gemini)
	case "claude":
		set(&c.Claude.Model)
		return NewClaude(c.Claude)
	case "codex":
		set(&c.Codex.Model)
		return NewCodex(c.Codex)
	case "openai":
		set(&c.OpenAI.Model)
		return NewOpenAI(c.OpenAI)
	}
	return nil, cortex.Errorf(cortex.CodeInvalid, "[llm] provider %q is not supported (%v)", name, errUnknownProvider)
}

// ProviderFor returns the provider name an action uses: its
// [llm.actions.<name>] provider, else [llm] provider.
func (c Config) ProviderFor(action string) string {
	if a, ok := c.Actions[action]; ok && a.Provider != "" {
		return a.Provider
	}
	return c.Provider
}

// ModelFor returns the model an action asks for ("" = the provider's
// configured one): its [llm.actions.<name>] model.
func (c Config) ModelFor(action string) string {
	return c.Actions[action].Model
}
