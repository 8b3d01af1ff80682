package dashboard

import (
	"bytes"
	"html/template"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// md renders assistant Markdown with goldmark's safe defaults: raw HTML
// in the text is dropped (never passed through), and links whose URL is
// dangerous (javascript:, vbscript:, data: other than images) lose their
// target. Transcript text is untrusted; this is the only place it becomes
// HTML other than through html/template's escaping.
var md = goldmark.New(goldmark.WithExtensions(extension.GFM))

// maxMarkdownBytes bounds the text rendered as Markdown; longer text is
// shown as plain text.
const maxMarkdownBytes = 64 << 10

func markdown(s string) template.HTML {
	if len(s) > maxMarkdownBytes {
		return template.HTML(`<pre class="text">` + template.HTMLEscapeString(s) + `</pre>`)
	}
	var buf bytes.Buffer
	if err := md.Convert([]byte(s), &buf); err != nil {
		return template.HTML(`<pre class="text">` + template.HTMLEscapeString(s) + `</pre>`)
	}
	return template.HTML(buf.String())
}
