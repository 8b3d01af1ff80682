package voice

import "strings"

// The other languages' vocabulary: the same classes, smaller — negations
// and contradictions, the second person with a failure verb, a result
// still broken, stop and undo words, reminders and acceptances — from
// each language's grammar, not from any transcript. Where a language has
// no word boundaries (Chinese, Japanese) or glues endings to stems
// (Korean), a class is a set of substrings (c); elsewhere words on
// boundaries (b). The agent's acknowledgement in its next turn (package
// claim) covers what these miss, in any language.

// c is an alternation matched anywhere (no word boundaries), its first
// group the match.
func c(alts ...string) *pattern { return compileAlts(`(`+strings.Join(alts, "|")+`)`, alts) }

// vocab is one class of one language: its category, whether it opens a
// message, whether it is matched without word boundaries, and its
// alternatives.
type vocab struct {
	category string
	lang     string
	opener   bool
	cjk      bool
	alts     []string
}

// otherRules compiles the classes of the other languages, one pattern per
// category and kind (opener or not, with or without word boundaries):
// the prefilter indexes at most 64 patterns.
func otherRules(vs []vocab) []rule {
	type key struct {
		category    string
		opener, cjk bool
	}
	var order []key
	alts := map[key][]string{}
	langs := map[key][]string{}
	for _, v := range vs {
		k := key{v.category, v.opener, v.cjk}
		if _, ok := alts[k]; !ok {
			order = append(order, k)
		}
		alts[k] = append(alts[k], v.alts...)
		langs[k] = append(langs[k], v.lang)
	}
	out := make([]rule, 0, len(order))
	for _, k := range order {
		r := rule{category: k.category, lang: strings.Join(langs[k], ","), opener: k.opener}
		switch {
		case k.cjk && k.opener:
			r.expr = compileAlts(`^(`+strings.Join(alts[k], "|")+`)`, alts[k])
		case k.cjk:
			r.expr = c(alts[k]...)
		default:
			r.expr = b(alts[k]...)
		}
		out = append(out, r)
	}
	return out
}

var other = []vocab{
	// Spanish.
	{Negation, "es", true, false, []string{`^(?:no|nop|incorrecto|mal|falso)`}},
	{Correction, "es", false, false, []string{
		`eso no es`, `no es (?:lo que|eso|así|asi|correcto|verdad)`, `no era (?:eso|lo que)`, `(?:está|esta|estás|estas) (?:mal|equivocad[oa])`,
		`te (?:equivocaste|olvidaste|saltaste)`, `(?:olvidaste|rompiste|borraste|ignoraste|eliminaste)`, `se te (?:olvidó|olvido|pasó|paso)`,
		`no (?:hiciste|has hecho|seguiste|leíste|leiste|probaste|corregiste|arreglaste|entendiste)`, `quise decir`, `me refería|me referia`,
		`no funciona`, `sigue (?:sin|fallando|igual|dando|mal|roto|apareciendo|saliendo|sin funcionar)`, `(?:todavía|todavia|aún|aun) (?:no|falla|sale|aparece|da)`,
		`persiste`, `(?:el|la) mism[oa] (?:error|problema|fallo)`, `no (?:cambió|cambio) nada`, `nada (?:cambió|cambio)`, `(?:está|esta) roto`, `se rompió|se rompio`,
	}},
	{Stop, "es", false, false, []string{`^para$`, `para ya`, `detente`, `basta`, `deja de`, `no hace falta`, `no es necesario`, `olvídalo|olvidalo`, `cancela`}},
	{Revert, "es", false, false, []string{`deshaz|deshacer|revierte|revertir|restaura|vuelve atrás|vuelve atras|vuelve a como estaba|déjalo como estaba|dejalo como estaba`}},
	{Reminder, "es", false, false, []string{`ya te (?:dije|pedí|pedi)`, `como te dije`, `te dije que`, `(?:cuántas|cuantas) veces`}},
	{Acceptance, "es", true, false, []string{`^(?:gracias|perfecto|genial|vale|de acuerdo|bien|excelente|sí|listo|continúa|continua|dale)`}},

	// Portuguese.
	{Negation, "pt", true, false, []string{`^(?:não|nao|errado|incorreto)`}},
	{Correction, "pt", false, false, []string{
		`não é (?:isso|o que|assim|correto|verdade)|nao e (?:isso|o que|assim)`, `não era (?:isso|o que)`, `(?:está|esta|tá|ta) errado`,
		`(?:você |voce )?(?:esqueceu|quebrou|apagou|ignorou|removeu)`, `se esqueceu`,
		`(?:você|voce) não (?:fez|seguiu|leu|testou|corrigiu|entendeu)`, `quis dizer`,
		`não (?:funciona|funcionou)|nao (?:funciona|funcionou)`, `continua (?:com|dando|o mesmo|a mesma|igual|sem|falhando|quebrado|aparecendo)`,
		`ainda (?:não|nao|dá|da|está|esta|aparece|falha)`, `persiste`, `(?:o|a) mesm[oa] (?:erro|problema|falha)`, `nada mudou`, `não mudou nada|nao mudou nada`,
		`(?:está|esta) quebrado`,
	}},
	{Stop, "pt", false, false, []string{`pare`, `para de`, `chega`, `não precisa|nao precisa`, `não é necessário|nao e necessario`, `esquece`, `cancela`}},
	{Revert, "pt", false, false, []string{`desfaça|desfaca|desfazer|desfaz|reverta|reverter|restaure|volte atrás|volte atras|volte como estava|deixe como estava`}},
	{Reminder, "pt", false, false, []string{`já (?:te )?disse|ja (?:te )?disse`, `como (?:eu )?disse`, `eu te disse`, `quantas vezes`}},
	{Acceptance, "pt", true, false, []string{`^(?:obrigad[oa]|perfeito|ótimo|otimo|beleza|sim|legal|valeu|show|certo|continua|pode)`}},

	// French.
	{Negation, "fr", true, false, []string{`^(?:non|faux|incorrect|pas du tout)`}},
	{Correction, "fr", false, false, []string{
		`c'est faux`, `ce n'est pas (?:ce que|ça|ca|correct|bon|juste|ce qu)`, `pas ça|pas ca`,
		`(?:tu as|t'as|vous avez) (?:oublié|oublie|cassé|casse|supprimé|supprime|ignoré|ignore|mal compris)`, `tu t'es trompé|vous vous êtes trompé`,
		`(?:tu n'as|vous n'avez) pas`, `je voulais dire`,
		`ne (?:marche|fonctionne) (?:pas|toujours pas|plus)`, `ça ne marche pas|ca ne marche pas`, `toujours (?:pas|le même|la même|cassé|en erreur)`,
		`encore (?:une erreur|cassé|le même|la même)`, `persiste`, `la même erreur|la meme erreur`, `rien n'a changé|rien n'a change`, `c'est cassé|c'est casse`,
	}},
	{Stop, "fr", false, false, []string{`arrête|arrete|arrêtez|arretez`, `^stop`, `pas besoin`, `inutile`, `laisse tomber`, `annule`}},
	{Revert, "fr", false, false, []string{`reviens en arrière|reviens en arriere|revenir en arrière`, `remets (?:comme|le|la|les)`, `restaure`, `défais|defais`, `annule (?:les|tes|ça|ca|tout)`}},
	{Reminder, "fr", false, false, []string{`je t'ai (?:déjà |deja )?dit`, `je vous ai (?:déjà |deja )?dit`, `comme je (?:l'ai )?dit`, `combien de fois`}},
	{Acceptance, "fr", true, false, []string{`^(?:merci|parfait|super|génial|genial|oui|d'accord|très bien|tres bien|nickel|continue)`}},

	// German.
	{Negation, "de", true, false, []string{`^(?:nein|nee|falsch|stimmt nicht)`}},
	{Correction, "de", false, false, []string{
		`das ist (?:falsch|nicht (?:richtig|korrekt|das|was))`, `nicht das`, `nicht so`,
		`(?:du|sie) (?:hast|haben) (?:\pL+ ){0,3}(?:vergessen|übersehen|ubersehen|ignoriert|kaputt gemacht|gelöscht|geloscht|falsch verstanden)`,
		`das war nicht`, `ich meinte`, `ich (?:sagte|habe (?:doch )?gesagt)`,
		`funktioniert (?:immer noch |noch |leider )?nicht`, `geht (?:immer noch |noch )?nicht`, `klappt (?:immer noch |noch )?nicht`,
		`immer noch`, `noch immer`, `(?:derselbe|der gleiche|gleiche|selbe) fehler`, `nichts (?:hat sich )?geändert|nichts (?:hat sich )?geandert`, `kaputt`,
	}},
	{Stop, "de", false, false, []string{`hör auf|hoer auf|aufhören|aufhoeren`, `stopp`, `^halt`, `nicht nötig|nicht notig|unnötig|unnotig`, `lass (?:es|das)`, `abbrechen`, `vergiss es`}},
	{Revert, "de", false, false, []string{`rückgängig|rueckgaengig|ruckgangig`, `zurücksetzen|zurucksetzen`, `zurückrollen`, `wiederherstellen`}},
	{Reminder, "de", false, false, []string{`wie (?:ich )?(?:schon |bereits )?gesagt`, `ich hab(?:e)? (?:dir |ihnen )?(?:doch |schon |bereits )?gesagt`, `wie oft`}},
	{Acceptance, "de", true, false, []string{`^(?:danke|perfekt|super|gut|ja|passt|prima|weiter|klasse|toll|genau)`}},

	// Italian.
	{Negation, "it", true, false, []string{`^(?:no|sbagliato|errato)`}},
	{Correction, "it", false, false, []string{
		`non è (?:quello|questo|così|cosi|corretto|giusto)|non e (?:quello|questo)`, `è sbagliato|e sbagliato`,
		`hai (?:dimenticato|sbagliato|rotto|cancellato|ignorato|frainteso)`, `non hai (?:fatto|seguito|letto|testato|corretto|capito)`, `intendevo`,
		`non funziona`, `ancora (?:non|lo stesso|errore|rotto)`, `continua a (?:dare|fallire|non)`, `persiste`, `lo stesso errore`,
		`non è cambiato niente|non e cambiato niente|nulla è cambiato`, `è rotto|e rotto`,
	}},
	{Stop, "it", false, false, []string{`fermati`, `basta`, `smetti`, `non serve`, `non è necessario|non e necessario`, `lascia stare`, `annulla`}},
	{Revert, "it", false, false, []string{`ripristina`, `torna indietro`, `rimetti (?:come|com'era)`, `annulla (?:le|tutte|questo|tutto)`}},
	{Reminder, "it", false, false, []string{`te l'ho (?:già |gia )?detto`, `come ho detto`, `ho detto`, `quante volte`}},
	{Acceptance, "it", true, false, []string{`^(?:grazie|perfetto|ottimo|sì|va bene|bene|continua)`}},

	// Russian.
	{Negation, "ru", true, false, []string{`^(?:нет|неа|неправильно|неверно)`}},
	{Correction, "ru", false, false, []string{
		`не так`, `неправильно`, `неверно`, `не то`,
		`(?:ты|вы) (?:забыл|забыли|пропустил|пропустили|сломал|сломали|удалил|удалили|проигнорировал|ошибся|ошиблись|не понял|не поняли)`,
		`я (?:имел в виду|сказал|просил)`,
		`не работает`, `(?:всё|все) (?:ещё|еще) (?:не|ошибка)`, `(?:всё|все) равно (?:не|ошибка)`, `по-прежнему`, `опять (?:ошибка|не)`, `снова (?:ошибка|не)`,
		`та же (?:ошибка|проблема)`, `ничего не (?:изменилось|поменялось)`, `сломал`,
	}},
	{Stop, "ru", false, false, []string{`стоп`, `остановись`, `хватит`, `прекрати`, `не надо`, `не нужно`, `отмена`}},
	{Revert, "ru", false, false, []string{`откати`, `верни (?:как было|обратно|назад)`, `отмени (?:изменения|это|всё|все)`, `восстанови`}},
	{Reminder, "ru", false, false, []string{`я же (?:сказал|говорил|просил)`, `я (?:уже )?говорил`, `сколько раз`}},
	{Acceptance, "ru", true, false, []string{`^(?:спасибо|отлично|хорошо|да|супер|круто|продолжай|ок)`}},

	// Chinese (simplified and traditional).
	{Negation, "zh", true, true, []string{`不对`, `不對`, `不是`, `错了`, `錯了`, `不行`, `不要`, `别`, `別`, `没有`, `沒有`, `不`}},
	{Correction, "zh", false, true, []string{
		`你(?:忘了|忘记|忘記|漏了|遗漏|遺漏|搞错|搞錯|弄错|弄錯|没有|沒有|没|沒|删了|刪了|删除了|刪除了|改错|改錯|误解|誤解|理解错|理解錯|破坏|破壞|又)`,
		`不是我(?:要|想要|说|說)的`, `我(?:说的|說的|要的|的意思)是`, `错了`, `錯了`, `不对`, `不對`, `不正确`, `不正確`,
		`还是(?:不行|报错|不能|没|一样|有问题|失败|不对)`, `還是(?:不行|報錯|不能|沒|一樣|有問題|失敗|不對)`, `依然`, `仍然`, `又(?:报错|報錯|出错|出錯|失败|失敗|坏了|壞了)`,
		`同样的(?:错误|问题)`, `同樣的(?:錯誤|問題)`, `没(?:有)?(?:变化|變化|效果|用)`, `沒(?:有)?(?:變化|效果|用)`, `不起作用`, `坏了`, `壞了`,
	}},
	{Report, "zh", false, true, []string{`报错`, `報錯`, `失败`, `失敗`, `打不开`, `打不開`, `没反应`, `沒反應`, `不能用`, `不工作`, `出错`, `出錯`, `有问题`, `有問題`}},
	{Stop, "zh", false, true, []string{`停下`, `停止`, `停一下`, `别(?:再)?(?:做|改|动|跑|弄)`, `別(?:再)?(?:做|改|動|跑|弄)`, `不用了`, `不需要`, `算了`, `取消`}},
	{Revert, "zh", false, true, []string{`撤销`, `撤銷`, `回滚`, `回滾`, `还原`, `還原`, `恢复原`, `恢復原`, `改回`, `退回`}},
	{Reminder, "zh", false, true, []string{`我(?:已经|已經)?(?:说过|說過|告诉过你|告訴過你)`, `跟你说过`, `跟你說過`, `说了多少次`, `說了多少次`}},
	{Acceptance, "zh", true, true, []string{`好的`, `谢谢`, `謝謝`, `没问题`, `沒問題`, `没关系`, `沒關係`, `不错`, `不錯`, `不客气`, `不客氣`, `完美`, `继续`, `繼續`, `好`, `行`, `对`, `對`}},

	// Japanese.
	{Negation, "ja", true, true, []string{`いや`, `いいえ`, `違う`, `ちがう`, `違います`, `そうじゃない`, `そうではない`, `だめ`, `ダメ`}},
	{Correction, "ja", false, true, []string{
		`間違って(?:る|います|いる|いた)`, `間違えて`, `間違えた`, `忘れてる`, `忘れている`, `忘れてます`, `抜けて`, `漏れて`, `そうじゃなく`, `そうではなく`, `じゃなくて`, `ではなくて`,
		`勝手に`, `壊した`, `まだ(?:エラー|動かない|直って|同じ|表示され|失敗)`, `直ってない`, `直っていない`,
		`変わってない`, `変わっていない`, `変わらない`, `同じエラー`, `壊れ(?:た|てる|ている)`,
	}},
	{Report, "ja", false, true, []string{`動かない`, `動きません`, `動作しない`, `うまくいかない`, `うまく行かない`, `エラーが(?:出|発生)`, `エラーになる`, `失敗(?:する|した|します)`, `表示されない`, `反映されない`}},
	{Stop, "ja", false, true, []string{`やめて`, `止めて`, `ストップ`, `中止`, `待って`, `いらない`, `不要`, `必要ない`, `しなくていい`}},
	{Revert, "ja", false, true, []string{`元に戻して`, `戻して`, `元通り`, `取り消して`, `リバート`}},
	{Reminder, "ja", false, true, []string{`言ったでしょ`, `言いましたよね`, `忘れないで`, `何度も`, `前にも言った`, `さっき言った`}},
	{Acceptance, "ja", true, true, []string{`ありがとう`, `いいね`, `完璧`, `了解`, `続けて`, `お願いします`, `いいです`, `よろしく`}},

	// Korean.
	{Negation, "ko", true, true, []string{`아니`, `아뇨`, `틀렸`, `잘못`}},
	{Correction, "ko", false, true, []string{
		`틀렸`, `잘못(?:됐|되었|했|한|된)`, `그게 아니`, `그거 아니`, `말고`, `잊어버렸`, `잊었`, `빠뜨렸`, `빠졌`, `놓쳤`, `무시했`,
		`삭제했`, `지웠`, `망가뜨렸`, `이해를 못`, `(?:제가|내가) 말한`,
		`여전히`, `아직도`, `계속 (?:에러|오류|안)`, `(?:똑같은|같은) (?:에러|오류|문제)`, `깨졌`, `변화가 없`, `바뀐 게 없`, `안 바뀌`,
	}},
	{Report, "ko", false, true, []string{`안 ?돼`, `안 ?되`, `작동(?:하지|을 안|이 안)`, `동작(?:하지|을 안|이 안)`, `(?:에러|오류)가 (?:나|발생)`, `실패(?:해|했|합)`, `고장`}},
	{Stop, "ko", false, true, []string{`멈춰`, `그만`, `중지`, `하지 ?마`, `하지 ?말`, `필요 없`, `취소`}},
	{Revert, "ko", false, true, []string{`되돌려`, `원래대로`, `원상복구`, `복구해`, `롤백`}},
	{Reminder, "ko", false, true, []string{`말했잖아`, `말했지`, `몇 번`, `이미 말`, `내가 (?:말한|명시한|요청한|얘기한)`, `제가 (?:말씀드린|요청한|명시한)`}},
	// Taking something out again.
	{Removal, "zh", false, true, []string{`删掉`, `去掉`, `刪掉`, `拿掉`, `删除这`, `刪除這`, `删除那`}},
	{Removal, "ja", false, true, []string{`削除して`, `消して`, `外して`, `取って`, `取り除いて`}},
	{Removal, "ko", false, true, []string{`제거해`, `삭제해`, `지워`, `빼줘`, `빼 주`}},
	{Removal, "es", false, false, []string{`quita (?:eso|esto|el|la|los|las)`, `elimina (?:eso|esto|el|la|los|las)`, `borra (?:eso|esto|el|la|los|las)`}},
	{Removal, "pt", false, false, []string{`remova (?:isso|isto|o|a|os|as)`, `tira (?:isso|isto|o|a|os|as)`, `apaga (?:isso|isto|o|a|os|as)`}},
	{Removal, "fr", false, false, []string{`enlève (?:ça|ca|le|la|les|ce|cette)`, `supprime (?:ça|ca|le|la|les|ce|cette)`, `retire (?:ça|ca|le|la|les|ce|cette)`}},
	{Removal, "de", false, false, []string{`entferne (?:das|den|die|diese|diesen)`, `lösch (?:das|den|die|diese)`, `nimm (?:das|den|die) raus`}},
	{Removal, "ru", false, false, []string{`удали (?:это|эт)`, `убери (?:это|эт)`}},
	{Removal, "it", false, false, []string{`rimuovi (?:il|la|lo|i|gli|le|questo|quello)`, `togli (?:il|la|lo|i|gli|le|questo|quello)`}},
	// Pointing to a simpler way ("just put it in …"): a challenge the
	// dialogue decides.
	{Challenge, "zh", false, true, []string{`直接(?:放|用|写|寫|改|加|删|刪)`, `就行`, `就可以`, `只要`, `只需`}},
	{Challenge, "ja", false, true, []string{`直接`, `だけで(?:いい|良い|十分)`}},
	{Challenge, "ko", false, true, []string{`그냥 `}},
	{Challenge, "es", false, false, []string{`simplemente`, `basta con`}},
	{Challenge, "pt", false, false, []string{`é só`, `basta`}},
	{Challenge, "fr", false, false, []string{`il suffit`, `simplement`}},
	{Challenge, "de", false, false, []string{`einfach`, `reicht`}},
	{Challenge, "ru", false, false, []string{`просто`}},
	{Challenge, "it", false, false, []string{`basta`, `semplicemente`}},
	{Acceptance, "ko", true, true, []string{`감사`, `고마워`, `좋아`, `좋습니다`, `좋네요`, `완벽`, `계속`, `네`, `응`, `오케이`}},
}
