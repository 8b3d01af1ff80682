// Package claim reads what an agent's own prose claims: that a tool or
// server is unavailable, or that a call failed (the MCP lens holds such a
// claim against the evidence: a server that answered); that it got
// something wrong ("you're right", "my mistake", in many languages: the
// friction lens takes it as the user's correction confirmed); that it asks
// the user a question (a "no" after it is an answer, not a correction); and
// that the work is done (a report that it is broken, after it, is a
// correction). The store keeps each assistant row's reading (Kinds, with
// Version) so the lenses read only the rows that claim something.
//
// A reading is coarse on purpose: it says which kinds of phrase a text
// holds anywhere. Whether a sentence also names the server or tool at hand
// is decided by the lens, which knows the subject.
package claim

import (
	"hash/fnv"
	"regexp"
	"strings"

	"github.com/cortexhq/cortex/phrase"
)

// Kinds is a set of claim kinds, stored as an integer (0: no claim).
type Kinds uint8

// The kinds of claim.
const (
	// Unavailable: a tool, server or resource is said to be unavailable,
	// missing, not connected or not accessible.
	Unavailable Kinds = 1 << iota
	// Failure: a call is said to have failed, errored or timed out.
	Failure
	// Admission: the agent acknowledges a mistake or that the user is
	// right ("you're right", "my mistake", "I misunderstood", "抱歉").
	Admission
	// Asks: the text ends asking the user something (its last line holds
	// a question).
	Asks
	// Completion: the agent says the work is done ("Done.", "I've fixed
	// …", "should now work").
	Completion
	// Agreement: the agent grants the user a point ("good catch", "fair
	// point") — weaker than an admission: agents say it of suggestions too.
	Agreement
	// Noted: the agent's own reasoning (a thinking row) reads the user's
	// message as pushback — "the user is pointing out that I …", "the
	// user says it still fails", "I misunderstood".
	Noted
)

// Tool is the kinds about tools (what the MCP lens reads); Dialogue the
// kinds about the exchange with the user (what the friction lens reads).
const (
	Tool     = Unavailable | Failure
	Dialogue = Admission | Asks | Completion | Agreement | Noted
	// Concession is the kinds in which the agent concedes the user's point
	// (what the friction lens's candidate sessions are found by).
	Concession = Admission | Agreement | Noted
)

// The roles of rows that carry claims (a logs row's role, as stored):
// the agent's prose and its reasoning.
const (
	RoleProse     = "assistant"
	RoleReasoning = "thinking"
)

// Applies reports whether rows of a role carry claims.
func Applies(role string) bool { return role == RoleProse || role == RoleReasoning }

// Of reads the claims of a row of role: Read for the agent's prose,
// ReadThinking for its reasoning, nothing for other rows.
func Of(role, text string) Kinds {
	switch role {
	case RoleProse:
		return Read(text)
	case RoleReasoning:
		return ReadThinking(text)
	}
	return 0
}

// noted is how an agent's reasoning reads the user pushing back: the user
// as subject of a verb of disputing, correcting or being unhappy, the
// user reporting a result still broken, the agent's own admission. (The
// agents reason in English whatever language the user writes.)
var noted = regexp.MustCompile(`(?i)\bthe user(?:'s| is| was| has| had)? ` +
	`(?:(?:is |was |has been |seems |seems to be )?(?:right|correct)\b|` +
	`(?:is |was )?(?:questioning|challenging|disputing|pushing back|correcting|frustrated|annoyed|upset|unhappy|dissatisfied|` +
	`complaining|not happy|confused by|disappointed|irritated|angry)|` +
	`(?:points?|pointed|is pointing) out|corrected me|(?:rejected|interrupted|stopped) (?:my|the|this)|` +
	`(?:doesn't|does not|didn't|did not) (?:want|like|ask)|wants me to (?:stop|revert|undo|roll back|go back|remove what|redo|start over)|` +
	`(?:says|said|is saying|reports|is reporting|mentions|notes|noted|tells me|is telling me|sees|is seeing)(?: that)? ` +
	`(?:it|this|that|the \w+|there|we|i|my \w+)(?: \w+)? (?:still|is still|are still|doesn't|does not|didn't|did not|isn't|is not|aren't|` +
	`won't|can't|cannot|failed|fails|broke|is broken|are broken|isn't working|is not working|is wrong|was wrong|missed|forgot))` +
	`|\bthe user (?:is )?(?:saying|says|seeing|sees|noticing|notices|reporting|reports|mentioning|mentions|telling me|tells me)\b` +
	`[^.!?\n]{0,160}\b(?:still|doesn't work|does not work|isn't working|is not working|not working|broken|wrong|incorrect|` +
	`missing|fails|failing|failed)\b` +
	`|\bi (?:made a mistake|was wrong|misunderstood|misread|overlooked|got (?:it|that|this) wrong|jumped ahead)\b`)

// ReadThinking returns the kinds of claim an agent's reasoning holds:
// Noted when it reads the user's message as pushback.
func ReadThinking(text string) Kinds {
	if noted.MatchString(text) {
		return Noted
	}
	return 0
}

// Has reports whether k holds every kind of o.
func (k Kinds) Has(o Kinds) bool { return k&o == o && o != 0 }

// Phrases of each kind, matched in normalized text (package phrase).
var (
	unavailable = phrase.NewSet(
		"is unavailable", "are unavailable", "is not available", "isn't available", "are not available",
		"aren't available", "not available in this", "is not accessible", "isn't accessible", "doesn't exist",
		"does not exist", "don't have access to", "do not have access to", "no access to", "is not connected",
		"isn't connected", "are not connected", "is not installed", "isn't installed", "is not configured",
		"isn't configured", "is not loaded", "isn't loaded", "cannot access", "can't access", "unable to access",
	)
	failure = phrase.NewSet(
		"returned an error", "returned error", "failed with an error", "failed with error", "threw an error",
		"errored", "errored out", "timed out", "call failed", "is failing", "keeps failing", "did not work",
		"didn't work", "failed to respond", "no response from",
	)
	// An agent conceding: in English, and in the languages package voice
	// reads (written on word boundaries; Chinese, Japanese and Korean in
	// admittedCJK).
	admission = phrase.NewSet(
		"you're right", "you are right", "you're absolutely right", "you are absolutely right", "you're completely right",
		"you're correct", "you are correct", "you're absolutely correct", "my mistake", "my bad", "my apologies", "i apologize", "i apologise", "apologies for", "sorry about that",
		"sorry for the", "sorry, i", "sorry - i", "i was wrong", "i misunderstood", "i misread", "i made a mistake",
		"i made an error", "that was a mistake", "that was my mistake", "i should have", "i shouldn't have",
		"i should not have", "i overlooked", "i jumped ahead", "i got that wrong", "i got it wrong", "let me revert", "i'll revert", "let me undo", "i'll undo",
		"i introduced", "i broke",
		"tienes razón", "tiene razón", "tienes toda la razón", "disculpa", "disculpe", "perdón", "lo siento", "mi error",
		"me equivoqué", "você tem razão", "tem razão", "desculpe", "desculpa", "peço desculpas", "meu erro", "me enganei",
		"vous avez raison", "tu as raison", "désolé", "mon erreur", "je me suis trompé", "du hast recht", "sie haben recht",
		"entschuldigung", "entschuldige", "mein fehler", "tut mir leid", "ich habe mich geirrt", "вы правы", "ты прав",
		"извините", "прошу прощения", "моя ошибка", "я ошибся", "простите", "hai ragione", "ha ragione", "scusa",
		"scusate", "mi scuso", "errore mio", "mi sono sbagliato",
	)
	agreement = phrase.NewSet("good catch", "great catch", "nice catch", "you caught", "fair point", "good point",
		"valid point", "great point", "good call", "fair enough", "buena observación", "bom ponto", "bonne remarque",
		"guter punkt", "хорошее замечание", "buona osservazione")
	completion = phrase.NewSet(
		"done", "all done", "i've fixed", "i have fixed", "i've updated", "i have updated", "i've implemented",
		"i have implemented", "i've added", "i have added", "i've created", "i've changed", "i've made", "i've removed",
		"i've refactored", "i've completed", "i've resolved", "i've applied", "i've written", "i've moved", "i've renamed",
		"i fixed", "i updated", "i implemented", "i added", "i created", "i changed", "i removed", "i refactored", "i resolved",
		"is now", "are now", "now works", "now passes", "should now", "should work now", "successfully", "all tests pass",
		"tests pass", "fixed", "has been updated", "has been fixed", "has been added", "has been implemented",
		"have been updated", "have been fixed", "have been added", "completed", "is complete", "is ready", "are ready",
		"listo", "ya funciona", "he corregido", "he actualizado", "pronto", "corrigi", "atualizei", "terminé", "j'ai corrigé",
		"erledigt", "fertig", "ich habe behoben", "готово", "исправил", "fatto", "ho corretto", "ho aggiornato",
	)
)

// admittedCJK are concessions in languages without word boundaries
// (matched as substrings).
var admittedCJK = []string{"你说得对", "您说得对", "你說得對", "您說得對", "抱歉", "对不起", "對不起", "我的错", "我的錯",
	"是我的疏忽", "我搞错", "我搞錯", "我理解错", "我理解錯", "おっしゃる通り", "ご指摘の通り", "ご指摘ありがとう", "申し訳",
	"すみません", "失礼しました", "私のミス", "私の誤り", "間違えました", "맞습니다", "맞아요", "죄송합니다", "죄송해요",
	"제 실수", "제가 잘못", "지적해 주셔서"}

// agreedCJK are agreements in those languages ("good point").
var agreedCJK = []string{"好问题", "好問題", "说得好", "說得好", "良い指摘", "いい指摘", "좋은 지적"}

// completedCJK are completions in those languages.
var completedCJK = []string{"已经修复", "已修复", "已經修復", "完成了", "已完成", "修正しました", "完了しました", "対応しました",
	"완료했습니다", "완료되었습니다", "수정했습니다"}

// logicVersion is bumped when how the phrases are applied changes (the
// phrases themselves are hashed into Version).
const logicVersion = 3

// Version identifies the rules a stored reading was made with: the phrases
// of every kind and the logic version. A reading of another version is
// read again.
var Version = func() int {
	h := fnv.New32a()
	for _, s := range []*phrase.Set{unavailable, failure, admission, completion, agreement} {
		h.Write([]byte(strings.Join(s.Phrases(), "\x00") + "\x01"))
	}
	h.Write([]byte(strings.Join(admittedCJK, "\x00") + "\x01" + strings.Join(completedCJK, "\x00") + "\x01" +
		strings.Join(agreedCJK, "\x00") + "\x01" + noted.String() + "\x01"))
	h.Write([]byte{logicVersion})
	return int(h.Sum32()&0x7fffffff) | 1 // never 0: 0 is "not read"
}()

// Phrases returns the phrases of one kind (nil for none or several).
func Phrases(k Kinds) *phrase.Set {
	switch k {
	case Unavailable:
		return unavailable
	case Failure:
		return failure
	}
	return nil
}

// Read returns the kinds of claim text holds.
func Read(text string) Kinds {
	if text == "" {
		return 0
	}
	k := ReadNormalized(phrase.Normalize(text))
	if asks(text) {
		k |= Asks
	}
	return k
}

// ReadNormalized is Read of text already normalized by phrase.Normalize,
// but for Asks (which reads the lines of the text as written).
func ReadNormalized(norm string) Kinds {
	var k Kinds
	if len(unavailable.FindNormalized(norm)) > 0 {
		k |= Unavailable
	}
	if len(failure.FindNormalized(norm)) > 0 {
		k |= Failure
	}
	if len(admission.FindNormalized(norm)) > 0 || containsAny(norm, admittedCJK) {
		k |= Admission
	}
	if len(completion.FindNormalized(norm)) > 0 || containsAny(norm, completedCJK) {
		k |= Completion
	}
	if len(agreement.FindNormalized(norm)) > 0 || containsAny(norm, agreedCJK) {
		k |= Agreement
	}
	return k
}

func containsAny(s string, subs []string) bool {
	if s == "" || !hasWide(s) {
		return false
	}
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// hasWide reports whether s has a rune of three or more bytes (every
// Chinese, Japanese or Korean one).
func hasWide(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0xe0 {
			return true
		}
	}
	return false
}

// asks reports whether the text ends with a question (half- or
// full-width question mark, closing quotes, brackets and emphasis aside):
// the agent hands the turn back asking.
func asks(text string) bool {
	text = strings.TrimRight(text, " \t\r\n*_`\"')]")
	return strings.HasSuffix(text, "?") || strings.HasSuffix(text, "？")
}
