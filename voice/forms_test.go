package voice

import (
	"slices"
	"testing"
)

// formCase is a message written for the test in the form a class covers
// (never copied from a transcript), the categories its reading must carry
// and those it must not.
type formCase struct {
	text string
	want []string
	not  []string
}

func checkForms(t *testing.T, name string, cases []formCase) {
	t.Helper()
	for _, c := range cases {
		r := Read(c.text, nil)
		for _, w := range c.want {
			if !r.Has(w) {
				t.Errorf("%s: Read(%q) = %v (phrases %q), lacks %s", name, c.text, r.Categories, r.Phrases, w)
			}
		}
		for _, n := range c.not {
			if r.Has(n) {
				t.Errorf("%s: Read(%q) = %v (phrases %q), must not carry %s", name, c.text, r.Categories, r.Phrases, n)
			}
		}
	}
}

// Each form of a correction the dialogue reading relies on (issue: "read
// the dialogue, not a phrase list"), with the acceptances, questions, new
// tasks and thanks that must stay out.
func TestFormClasses(t *testing.T) {
	forms := map[string][]formCase{
		"opens with a negation or contradiction": {
			{text: "no, the config lives in the home folder", want: []string{Negation}},
			{text: "nope. wrong file", want: []string{Negation}},
			{text: "No. Use the staging database.", want: []string{Negation}},
			{text: "not that function, the one below it", want: []string{Negation, Scope}},
			{text: "wrong, it should read from stdin", want: []string{Negation}},
			{text: "no worries, take your time", not: []string{Negation, Correction}},
			{text: "not sure yet, let me think", not: []string{Negation}},
			{text: "no idea why the build is slow, can you look?", not: []string{Negation}},
		},
		"contrast inside the message": {
			{text: "put the flag in the config file, not the environment", want: []string{Contrast}},
			{text: "use a map instead of the nested loops", want: []string{Contrast}},
			{text: "the order doesn't matter here", want: []string{Contrast}},
			{text: "there is no retry in that client", want: []string{Contrast}},
		},
		"second person with a failure verb": {
			{text: "you forgot the changelog", want: []string{Correction}},
			{text: "you missed two call sites", want: []string{Correction}},
			{text: "You broke the login page", want: []string{Correction}},
			{text: "you didn't run the migrations", want: []string{Correction}},
			{text: "you haven't updated the docs", want: []string{Correction}},
			{text: "you misunderstood the ticket", want: []string{Correction}},
			{text: "you ignored the lint rule", want: []string{Correction}},
			{text: "why did you delete the fixtures?", want: []string{Correction}},
			{text: "you listed merge commits, you should not", want: []string{Correction}},
			{text: "you should have asked first", want: []string{Correction}},
			{text: "you can run the tests now", not: []string{Correction}},
		},
		"it is wrong / not what was asked": {
			{text: "the format is wrong", want: []string{Correction}},
			{text: "that's not what I asked for", want: []string{Correction}},
			{text: "the totals are incorrect", want: []string{Correction}},
			{text: "i meant the other endpoint", want: []string{Correction}},
			{text: "I didn't ask you to rename it", want: []string{Correction}},
			{text: "i don't want a new dependency for this", want: []string{Correction}},
		},
		"the result is still broken": {
			{text: "it still fails", want: []string{Correction}},
			{text: "still getting the same error", want: []string{Correction}},
			{text: "nothing changed", want: []string{Correction}},
			{text: "the page does not load the styles still", want: []string{Correction}},
			{text: "now the build is broken", want: []string{Correction}},
			{text: "there's still a gap under the header", want: []string{Correction}},
			{text: "the error persists", want: []string{Correction}},
			{text: "it doesn't work", want: []string{Correction}},
		},
		"a report of a broken or missing result (the dialogue decides)": {
			{text: "the sidebar doesn't show up", want: []string{Report}},
			{text: "I don't see the button anywhere", want: []string{Report}},
			{text: "the page is blank", want: []string{Report}},
			{text: "Traceback (most recent call last): File app.py line 3", want: []string{Report}},
			{text: "sh: pnpm: command not found", want: []string{Report}},
			{text: "it's broken on the settings page", want: []string{Report}},
			{text: "that's still empty after a reload", want: []string{Report}},
			{text: "do I need to bump the version so it doesn't break users?", want: []string{Challenge}, not: []string{Report}},
		},
		"a complaint about the result": {
			{text: "meh", want: []string{Dissatisfied}},
			{text: "it's way too verbose", want: []string{Dissatisfied}},
			{text: "the header is kinda weird and too small", want: []string{Dissatisfied}},
			{text: "the blue is not dark enough", want: []string{Dissatisfied}},
			{text: "that doesn't look right", want: []string{Dissatisfied}},
			{text: "i don't like it", want: []string{Dissatisfied}},
			{text: "keep it super simple please", not: []string{Dissatisfied}},
			{text: "is the sidebar too wide?", want: []string{Challenge}, not: []string{Dissatisfied}},
		},
		"stop, undo, wrong target, reminder": {
			{text: "stop", want: []string{Stop}},
			{text: "no need to run the whole suite", want: []string{Stop}},
			{text: "we don't need to touch the CI config", want: []string{Stop}},
			{text: "I'll run it myself", want: []string{Stop}},
			{text: "revert that", want: []string{Revert}},
			{text: "put it back the way it was", want: []string{Revert}},
			{text: "wrong branch", want: []string{Scope}},
			{text: "as I said, only the api package", want: []string{Reminder}},
			{text: "I told you not to push", want: []string{Reminder}},
			{text: "the readme says to use make", want: []string{Reminder}},
		},
		"challenges the agent's answer concedes or not": {
			{text: "are you sure about that?", want: []string{Challenge}},
			{text: "why is the cache in its own folder?", want: []string{Challenge}},
			{text: "wait, does this run on every push?", want: []string{Challenge}},
			{text: "you could just reuse the existing helper", want: []string{Challenge}},
			{text: "how did the tests pass with this?", want: []string{Challenge}},
			{text: "I thought we agreed on tabs", want: []string{Correction}},
		},
		"taking out what the agent added (the dialogue decides)": {
			{text: "remove that line", want: []string{Removal}},
			{text: "can we drop the em dashes?", want: []string{Removal}},
			{text: "get rid of the debug logging", want: []string{Removal}},
		},
		"instructions are no verdict alone": {
			{text: "do not commit anything", want: []string{Instruction}, not: []string{Correction, Stop}},
			{text: "don't touch the generated files", want: []string{Instruction}, not: []string{Correction}},
		},
		"acceptances, thanks, questions and new tasks stay out": {
			{text: "thanks, looks good", want: []string{Acceptance}, not: []string{Correction, Negation, Dissatisfied}},
			{text: "perfect", want: []string{Acceptance}, not: []string{Correction}},
			{text: "yes, go ahead", want: []string{Acceptance}, not: []string{Correction}},
			{text: "no, that's fine", want: []string{Acceptance}, not: []string{Correction, Negation}},
			{text: "what does the retry flag do?", not: []string{Correction, Negation, Dissatisfied, Report}},
			{text: "now add a dark mode toggle to the settings page", not: []string{Correction, Negation, Dissatisfied, Report}},
			{text: "great work, commit and push", want: []string{Acceptance}, not: []string{Correction}},
		},
		"a wish said as a negation: a correction, unless the message opened with praise": {
			{text: "I don't want the tabs on the left", want: []string{Correction}},
			{text: "we don't need a cache for this", want: []string{Correction}},
			{text: "this looks great. I don't want the header blue though, let's try green", want: []string{Acceptance}, not: []string{Correction}},
			{text: "love it! we don't need the footer anymore", want: []string{Acceptance}, not: []string{Correction}},
			{text: "this looks good, but it's broken on mobile", want: []string{Acceptance, Report}},
			{text: "the menu looks nice. you broke the search though", want: []string{Acceptance, Correction}},
		},
	}
	for name, cases := range forms {
		checkForms(t, name, cases)
	}
}

// Negations, contradictions, stops and undo words in the other languages
// the vocabulary covers, written as people type to an agent; what these
// miss the agent's concession covers (package claim).
func TestFormLanguages(t *testing.T) {
	langs := map[string][]formCase{
		"zh (simplified)": {
			{text: "不对，应该用配置文件", want: []string{Negation}},
			{text: "你忘了更新文档", want: []string{Correction}},
			{text: "还是报错", want: []string{Correction}},
			{text: "不是我要的", want: []string{Correction}},
			{text: "停下，别再改了", want: []string{Stop}},
			{text: "撤销刚才的修改", want: []string{Revert}},
			{text: "我已经说过不要提交", want: []string{Reminder}},
			{text: "可以直接放在注释里", want: []string{Challenge}, not: []string{Acceptance}},
			{text: "把这段删掉", want: []string{Removal}},
			{text: "好的，谢谢", want: []string{Acceptance}, not: []string{Negation, Correction}},
			{text: "不过这个函数可以更短", not: []string{Negation}},
		},
		"zh (traditional)": {
			{text: "不對，是另一個檔案", want: []string{Negation}},
			{text: "還是不行", want: []string{Correction}},
			{text: "你沒有跑測試", want: []string{Correction}},
			{text: "撤銷這個改動", want: []string{Revert}},
			{text: "謝謝", want: []string{Acceptance}},
		},
		"ja": {
			{text: "違う、そのファイルじゃない", want: []string{Negation}},
			{text: "まだエラーが出ます", want: []string{Correction}},
			{text: "直っていない", want: []string{Correction}},
			{text: "勝手に変更しないで", want: []string{Correction}},
			{text: "やめて", want: []string{Stop}},
			{text: "元に戻して", want: []string{Revert}},
			{text: "動かない", want: []string{Report}},
			{text: "ありがとう", want: []string{Acceptance}, not: []string{Negation}},
		},
		"ko": {
			{text: "아니요, 그 파일 말고요", want: []string{Negation, Correction}},
			{text: "여전히 오류가 나요", want: []string{Correction}},
			{text: "잘못했어요", want: []string{Correction}},
			{text: "그만해", want: []string{Stop}},
			{text: "되돌려 주세요", want: []string{Revert}},
			{text: "내가 명시한 부분만 바꿔", want: []string{Reminder}},
			{text: "해당 부분은 제거해줘", want: []string{Removal}},
			{text: "감사합니다", want: []string{Acceptance}, not: []string{Negation}},
		},
		"es": {
			{text: "no, eso no es lo que pedí", want: []string{Negation, Correction}},
			{text: "sigue fallando", want: []string{Correction}},
			{text: "olvidaste el changelog", want: []string{Correction}},
			{text: "no funciona", want: []string{Correction}},
			{text: "detente", want: []string{Stop}},
			{text: "deshaz el último cambio", want: []string{Revert}},
			{text: "como te dije, solo el backend", want: []string{Reminder}},
			{text: "gracias, perfecto", want: []string{Acceptance}},
		},
		"pt": {
			{text: "não, está errado", want: []string{Negation, Correction}},
			{text: "o erro persiste", want: []string{Correction}},
			{text: "você esqueceu o teste", want: []string{Correction}},
			{text: "continua dando 403", want: []string{Correction}},
			{text: "pare", want: []string{Stop}},
			{text: "desfaça isso", want: []string{Revert}},
			{text: "obrigado", want: []string{Acceptance}},
		},
		"fr": {
			{text: "non, c'est faux", want: []string{Negation, Correction}},
			{text: "ça ne marche toujours pas", want: []string{Correction}},
			{text: "tu as oublié le fichier de config", want: []string{Correction}},
			{text: "arrête", want: []string{Stop}},
			{text: "reviens en arrière", want: []string{Revert}},
			{text: "je t'ai dit de ne pas pousser", want: []string{Reminder}},
			{text: "merci, parfait", want: []string{Acceptance}},
		},
		"de": {
			{text: "nein, das ist falsch", want: []string{Negation, Correction}},
			{text: "funktioniert immer noch nicht", want: []string{Correction}},
			{text: "du hast die Tests vergessen", want: []string{Correction}},
			{text: "hör auf", want: []string{Stop}},
			{text: "mach das rückgängig", want: []string{Revert}},
			{text: "wie gesagt, nur das Frontend", want: []string{Reminder}},
			{text: "danke, passt", want: []string{Acceptance}},
		},
		"it": {
			{text: "no, è sbagliato", want: []string{Negation, Correction}},
			{text: "non funziona ancora", want: []string{Correction}},
			{text: "hai dimenticato il test", want: []string{Correction}},
			{text: "fermati", want: []string{Stop}},
			{text: "ripristina il file", want: []string{Revert}},
			{text: "grazie", want: []string{Acceptance}},
		},
		"ru": {
			{text: "нет, не так", want: []string{Negation, Correction}},
			{text: "всё ещё не работает", want: []string{Correction}},
			{text: "ты забыл про тесты", want: []string{Correction}},
			{text: "стоп", want: []string{Stop}},
			{text: "откати изменения", want: []string{Revert}},
			{text: "я же сказал не трогать конфиг", want: []string{Reminder}},
			{text: "спасибо", want: []string{Acceptance}},
		},
	}
	for name, cases := range langs {
		checkForms(t, name, cases)
	}
}

func TestAsks(t *testing.T) {
	for text, want := range map[string]bool{
		"should I also bump the version?": true,
		"bump it. is that ok?":            true,
		"is it ok? bump it.":              false,
		"fix it":                          false,
		"这样可以吗？":                          true,
		"`what?` is the literal":          false,
	} {
		if got := Asks(text); got != want {
			t.Errorf("Asks(%q) = %v, want %v", text, got, want)
		}
	}
	if !slices.Contains(Categories(), Challenge) {
		t.Fatal("categories")
	}
}
