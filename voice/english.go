package voice

import "regexp"

// The English vocabulary, by class. Each class is a form a message takes
// when it answers an agent's work, written as general patterns — the
// second person with a failure verb, a negation or contradiction, a report
// that the result is broken, a complaint about the result — never a phrase
// taken from one transcript. Patterns run on one sentence of Normalize
// output (lower case, ASCII apostrophes, contractions restored), inside
// word boundaries; ^ anchors at the sentence's start.

// Verbs of the agent failing at something, after "you".
const failVerbs = `missed|forgot|forgotten|skipped|ignored|broke|broken|overwrote|overwritten|misunderstood|misread|` +
	`messed up|screwed up|hallucinated|made up|invented|got confused|confused|mixed up|left out|omitted|clobbered|wiped`

// Verbs of work the agent did not do, after "you didn't".
const workVerbs = `do|follow|read|run|test|check|update|fix|implement|use|commit|push|listen|change|finish|add|include|` +
	`remove|answer|address|look|call|create|save|write|build|try|handle|mention|understand|verify|apply|finish|complete|` +
	`touch|open|install|start|restart|rebuild|reload|refresh|consider|see|notice|catch|wait`

// Subjects of a report about the result: what the agent made, never the
// user ("i didn't run it yet" is not a broken result).
const subjects = `(?:it|this|that|they|these|those|everything|nothing|something|(?:the|my|your|our|its) \pL+(?: \pL+)?)`

// Adjectives of a result that is not right, after an intensifier ("kinda
// weird", "a little faded").
const badAdjectives = `weird|off|ugly|dull|boring|messy|cluttered|confusing|busy|faded|bland|generic|complicated|complex|` +
	`convoluted|verbose|wordy|vague|harsh|washed out|flat|awkward|clunky|janky|buggy|hacky|fragile|brittle|cramped|` +
	`crowded|blurry|repetitive|robotic|stiff|cheesy|cringe|overwhelming|intimidating|inconsistent|unclear|unreadable|` +
	`gross|bad|poor|sloppy|lazy|shallow|simplistic|slow|noisy|overdone|overkill|overcomplicated|overengineered`

// Adjectives of measure, a complaint only after "too" ("too small"; "super
// simple" is praise).
const measureAdjectives = `small|big|large|tiny|long|short|wide|narrow|thin|thick|bright|dark|loud|pale|bold|faint|` +
	`basic|simple|plain|specific|abstract|literal|technical|much|many|heavy|light|fast|early|late|strict|loose|formal|` +
	`casual|dense|sparse|high|low|close|far|deep|detailed|general`

// Words of a result that does not do what it should.
const resultVerbs = `work|working|run|build|compile|load|start|open|show|display|render|appear|change|stay|fit|pass|` +
	`exist|save|connect|respond|launch|update|match|help|fix|finish|install|deploy|trigger|fire|print|return|happen|apply`

var english = []rule{
	// Corrections: the agent did the wrong thing, misunderstood, or its
	// result does not do what it claimed.
	{category: Correction, lang: "en", expr: b(
		// Not what the user asked or meant.
		`(?:that's|that is|this is|it's|it is|its) not (?:really |exactly |quite )?what (?:i|we) (?:asked for|asked|meant|wanted|want|need|said|had in mind|expected)`,
		`not (?:really |exactly |quite )?what (?:i|we) (?:asked for|asked|meant|wanted|had in mind|expected)`,
		`(?:i|we) (?:didn't|did not|never) (?:ask|asked|tell|told|want|wanted|say|said|mean|meant|request|requested) (?:you )?(?:to|for|that|this|it|any|a|an|the)`,
		`who asked (?:you|for)`, `i meant`, `what i meant`,
		`i (?:was|am|'m) (?:talking|asking) about`,
		`i thought (?:you|we) (?:were|would|had|said|agreed|should|could|wanted)`,
		`i thought (?:it|this|that|the \pL+) (?:was|were|would|should|is|had|did)`,
		// It is wrong.
		`(?:that's|that is|this is|it's|it is|its|thats) (?:still |all |completely |totally )?(?:wrong|incorrect|not right|not correct|not true|backwards|the wrong|a mistake|not it|not how)`,
		`(?:that|this|it) (?:isn't|is not|wasn't|was not) (?:right|correct|true|what|how|it|the right|the correct|necessary|needed)`,
		`you(?:'re| are) (?:wrong|mistaken|confused|incorrect|not listening|not reading)`,
		subjects+` (?:is|are|was|were|looks|look|seems|seem) (?:still |now |also |all |completely |totally )?(?:wrong|incorrect|not correct|not right|backwards|inverted|reversed|swapped|messed up)`,
		`still$`, `(?:fix|do|handle|implement|solve|redo) (?:it|this|that|the \pL+ )?(?:properly|correctly|the right way|for real)`,
		`you got (?:it|this|that|the \pL+|\pL+) wrong`,
		// The second person with a failure verb.
		`you (?:also |just |completely |totally |clearly |again )?(?:`+failVerbs+`)`,
		`you(?:'ve| have) (?:`+failVerbs+`)`,
		`you (?:didn't|did not|haven't|have not|never|still haven't|still didn't|don't|do not|won't) (?:even |actually |really |properly |fully )?(?:`+workVerbs+`)`,
		`you (?:haven't|have not|still haven't|never) (?:\pL+ed|done|run|written|read|built|seen|made|taken|gone)`,
		`you were (?:supposed|meant|asked|told) to`, `you should(?:n't| not)? have`, `you shouldn't`, `you should not$`,
		`why (?:did|would|are|were|have|didn't|don't|haven't) you`, `why(?:'d| would) you`,
		`you (?:didn't|did not) need to`, `(?:it|that|this) (?:didn't|did not) need`,
		`but (?:that's|that is|it's|it is) actually`, `but (?:i|we) (?:said|asked|wanted|told you)`,
		// A negation opening a contradiction.
		`no,? (?:that|this|it)(?:'s| is| was| has| does| did)? (?:not|n't)`,
		`no,? (?:that|this|it) (?:isn't|wasn't|hasn't|doesn't|didn't)`,
		`no,? (?:that|this|it)(?:'s| is| was) (?:the )?(?:wrong|incorrect)`,
		`no,? i (?:said|meant|asked|wanted|want|told|need|mean)`,
		`no,? not (?:that|this|the|like|what|quite|yet|there|here|now)`,
		`no,? i (?:don't|do not|can't|cannot) (?:see|want|need|think)`,
		`no,? (?:set|use|put|change|keep|leave|make|revert|undo) (?:it|the|that|this|them|to)`,
		// The result still does not work, or broke.
		`(?:it|this|that|they|everything) still`, `still (?:not|broken|failing|fails|crashes|crashing|errors|erroring|the same|wrong|there|shows|showing|displays|displaying|getting|seeing|happening|hangs|hanging|stuck|empty|blank|missing|no|doesn't|does not|isn't|is not|can't|cannot|won't|didn't|did not)`,
		`there(?:'s| is| are) still`,
		`(?:same|the same|identical) (?:error|errors|issue|issues|problem|result|output|thing|bug|behavior|behaviour|message|failure|crash)`,
		`(?:is|are|was|were) (?:now |still |completely |totally )?(?:broken|failing|gone|wiped|corrupted|worse)`,
		`(?:now|again) (?:it|this|that|everything|nothing|the \pL+) (?:is|are|doesn't|does not|fails|breaks|crashes|shows|won't|can't)`,
		`(?:broke|broken|you broke) (?:it|this|that|everything|something|the \pL+)`,
		`nothing (?:changed|has changed|happened|happens|works|worked|shows|showed|renders|loads|is working)`,
		`(?:doesn't|does not|didn't|did not|don't|do not) (?:seem to )?(?:change|fix|solve|help|resolve) (?:anything|it|the|this|that|a thing)`,
		`(?:no|zero) (?:change|difference|effect) (?:at all)?`,
		`(?:isn't|is not|aren't|are not|wasn't|not) (?:fixed|resolved|solved) (?:yet)?`,
		subjects+` (?:really |actually |still |now )?(?:doesn't|does not|didn't|did not|won't|isn't|is not|wasn't|can't|cannot) (?:work|working|compile|build)`,
		`^(?:doesn't|does not|didn't|did not|still doesn't|still does not|still not|not) (?:work|working)`,
		`(?:error|issue|problem|bug|failure) (?:still )?persists`, `still persists`,
		`(?:that|this|it) (?:shouldn't|should not) (?:happen|be happening|be there|be here)`,
		`^fix your`,
	)},
	// A wish said as a negation ("I don't want the planet to be earth"):
	// a correction, unless the message opened by praising the result —
	// then it is the next wish.
	{category: Correction, lang: "en", wish: true, expr: b(
		`^(?:i|we) (?:don't|do not|didn't|did not) (?:really |actually )?(?:want|like|need) (?:this|that|it|these|those|a|an|the|to|you|any|all|so|such)`,
	)},
	// Stops: the user stops the work or calls it unneeded.
	{category: Stop, lang: "en", expr: b(
		`you can stop`, `(?:please |just |ok,? |okay,? )?stop (?:it|that|this|now|here|there|doing|working|what you|trying|running|the|please|everything|all)`,
		`^(?:please |ok,? |okay,? |just |no,? |wait,? )?stop,?$`, `^(?:stop|halt),`,
		`^(?:that's |this is |it's |its )?(?:unnecessary|not necessary|not needed|overkill)`,
		`no need (?:to|for)`, `there(?:'s| is) no need`,
		`^(?:(?:and|but|also|so|okay|ok|well),? )?(?:we|you|i) (?:don't|do not) (?:really |even )?need (?:to|the|a|an|all|any|it|this|that|those|these)`, `(?:you )?(?:don't|do not) need to (?:do|run|test|check) (?:that|this|it|anything)`,
		`(?:i'll|i will) (?:run|test) (?:it|them|that|this|those|the \pL+)`,
		`(?:i'll|i will|let me) (?:do|handle|check|fix|run|test) (?:it|them|that|this|those) myself`,
		`never ?mind`, `forget (?:it|that|about it)`, `don't bother`, `(?:that's|that is) enough`,
		`(?:cancel|abort) (?:that|it|this|the)`, `hold on`, `leave it(?: as it is| alone)?$`,
	)},
	// Undo requests.
	{category: Revert, lang: "en", expr: b(
		`revert`, `reverted`, `undo`, `un-do`, `roll ?back`, `put (?:it|that|them|everything) back`,
		`discard (?:the |your |these |those |all |any |my )?(?:changes|edits|work|commit)`,
		`start over`, `back to the drawing board`, `throw (?:it|that|this) away`,
		`restore (?:it|the|that|them) (?:to|back)`, `(?:change|set|turn|bring) (?:it|that|them|this) back`,
		`go back to (?:the |what |how )(?:previous|old|original|it was|before)`,
		`(?:reset|drop) (?:the|your|that|this) (?:changes|commit)`,
	)},
	// The wrong target.
	{category: Scope, lang: "en", expr: b(
		`wrong (?:repo|repository|branch|directory|dir|folder|file|project|checkout|worktree|source|path|environment|env|server|account|one|tool|command|skill|version|model|approach|url|endpoint|table|database|db|page|component|function|method|class|module|package|service|language|format)`,
		`source of truth`, `(?:stale|outdated|old) (?:data|copy|version|docs|information|info)`,
		`(?:the )?other (?:repo|repository|branch|checkout|worktree|folder|directory)`,
		`not (?:that|this) (?:repo|repository|branch|file|folder|directory|project|one|page|function|component)`,
		`(?:in|on|to) the wrong`,
	)},
	// An instruction the agent did not follow, repeated.
	{category: Reminder, lang: "en", expr: b(
		`i told you`, `i (?:already |just |explicitly |clearly )?(?:said|asked|told you|mentioned|specified) (?:to|not to|that|it|this|before|earlier|above)`,
		`as i (?:said|mentioned|asked|told you|explained)`, `like i (?:said|mentioned|asked)`,
		`^i (?:said|asked for) (?:the|a|an|to|not|that|it)`,
		`how many times`, `you keep`, `you kept`, `i (?:asked|told) you (?:to|not to)`,
		`^remember (?:that|to|i|we|the|our|their|what|it)`,
		`the (?:skill|instructions|instruction|docs|doc|readme|rules|rule|spec|prompt|plan|guidelines|guideline|guide|task|ticket|issue) (?:says|said|say)`,
		`\pL+\.md (?:says|said|states)`,
		`you (?:didn't|did not|don't|do not) (?:follow|read|respect|obey)`, `(?:again|once more),? (?:i|please|do not|don't)`,
	)},
	// Complaints about the result.
	{category: Dissatisfied, lang: "en", expr: b(
		`i hate (?:all of )?(?:this|that|those|it|them|these|how|the)`,
		`(?:this|that|the|it) (?:idea |approach |design )?sucks`,
		`(?:is|are|was|were|looks|look|feels|feel|sounds|sound|seems|seem|'s|a little|a bit|way|kinda|kind of|bit|much|still|now|getting) too \pL+`,
		`not \pL+ enough`,
		`(?:more|less|\pL+er) than (?:it used to be|it used to|it was|before)`,
		`(?:doesn't|does not|don't|do not|didn't|did not) (?:look|sound|feel|seem|read) (?:quite |very |really )?(?:right|good|great|like|nice|correct)`,
		`(?:looks|sounds|feels|seems|reads) (?:off|wrong|weird|strange|odd|bad|terrible|awful|broken|worse|ugly|dull|boring|generic|cluttered|messy)`,
		`(?:it|this|that)(?:'s| is| was| looks| feels) (?:a (?:little|bit) |kind of |kinda |really |so |very )?(?:worse|ugly|terrible|awful|horrible|confusing|boring|dull|messy|cluttered|weird|off|overcomplicated|over-engineered|overkill|bloated|unreadable)`,
		`(?:kinda|kind of|a little|a bit|a tad|too|way too|so|very|really|pretty|super|rather|still) (?:`+badAdjectives+`)`,
		`too (?:`+badAdjectives+`|`+measureAdjectives+`|\pL+(?:y|ed|ish|ive|ful|ous|al|ic|ble|ing))`,
		`too complicated`, `(?:super|very|so|really|pretty) confusing`, `i (?:don't|do not) get it`,
		`not really what`, `not (?:good|great|ideal|helpful)`, `i(?:'m| am) not (?:happy|satisfied|convinced|a fan)`,
		`(?:i|we) (?:really |still |just )?(?:don't|do not) (?:really |quite )?like`,
	)},
	// Interjections of distaste, opening a message.
	{category: Dissatisfied, lang: "en", opener: true, expr: b(`^(?:meh|ew|eww|ugh|yuck|blah|bleh|ugh+h)`)},
	// Standing instructions: not friction alone.
	{category: Instruction, lang: "en", expr: b(
		`(?:do not|don't|never|dont) (?:make any|make|implement|run|commit|push|change|touch|edit|create|add|write|open|start|do any|use|delete|remove|merge|deploy|install|modify|rewrite|refactor|rename|move|mention|include|call)(?: \pL+)?`,
		`without asking`, `before you (?:make|do|change|start)`, `i (?:don't|do not) want (?:a|any|you to|to)`,
		`(?:only|just) (?:do|change|touch|edit|fix) (?:the|this|that|what)`,
	)},
	// Openers that negate or contradict what came before: a correction
	// when they answer the agent's work, an answer when they answer its
	// question.
	{category: Negation, lang: "en", opener: true, expr: compile(
		`^(no|nope|nah|not|never|wrong|incorrect|well no|no no)(?:$|[^\pL\pN_'])`)},
	// Hedges opening a reply ("wait, …", "hmm", "actually …"): a challenge
	// the agent's answer confirms or not.
	{category: Challenge, lang: "en", opener: true, expr: compile(
		`^(actually|wait|hmm|hm|hmmm|uh|uhh|um|umm|eh|ehh|err|erm|hold on|well|but)(?:$|[^\pL\pN_'])`)},
	// A contrast inside the message ("…, not the file", "instead of",
	// "rather than"): what the agent did was not what was wanted, when it
	// answers the agent's work.
	{category: Contrast, lang: "en", expr: b(
		`\pL+, not (?:the|a|an|in|on|to|as|my|your|this|that|it|from|for|with|by|at|inside|into|\pL+ing)`,
		`instead of (?:the|a|an|using|doing|making|adding|writing|creating|putting|\pL+ing|it|that|this)`, `rather than`,
		`\pL+ (?:doesn't|does not|don't|do not) (?:matter|apply|belong|make sense)`,
		`there(?:'s| is| are| was| were) no (?:\pL+)`,
		`i (?:don't|do not) think (?:we|you|it|this|that|they) (?:need|should|is|are|was|were|has|have|will|would|can)`,
		`not (?:in|on|to|from|into) (?:the|a|an|my|your|this|that) \pL+`,
	)},
	// Questions that challenge what the agent did or said.
	{category: Challenge, lang: "en", expr: b(
		`(?:idk|i don't know|not sure|i'm not sure|i am not sure) (?:if|whether) (?:that's|that is|this is|it's|it is|these are|those are|thats) (?:the )?(?:right|correct|good|best|what)`,
		`(?:you )?(?:can|could) (?:just|simply)`, `just (?:use|put|do|call|add|make|run|set|pass|return|delete|remove|change|move|keep|write|import|reuse)`,
		`why not (?:just )?`, `simply (?:use|put|do|call|add|make|run|set)`,
		`(?:are|is|were|was) (?:we|you|it|this|that) (?:in|on|using|looking at|editing) the (?:right|correct|wrong|same) \pL+`,
		`how did (?:it|this|that|the \pL+|you|we)`, `i (?:also |actually |really )?thought (?:you|we|it|this|that|there|the \pL+)`,
		`i(?:'m| am) (?:a bit |a little |really |quite )?(?:worried|concerned|afraid|not comfortable|uneasy|not convinced) (?:that|about|this|it|by)`,
		`are you (?:sure|certain|confident|serious|kidding)`, `^i mean`, `^why would`, `^just \pL+`, `did you (?:even |actually |really |not )?(?:\pL+)`, `why do you`,
		`(?:why|how come) (?:is|are|does|do|did|would|was|were|isn't|aren't|doesn't|didn't|has|have|hasn't|haven't) (?:it|this|that|there|the|these|those|they|we|my|its|all|every)`,
		`how (?:could|can|would|is|does|did) (?:it|this|that|there|the) (?:still|be|have|not|work|happen)`,
		`what (?:happened|about) (?:to|the|with)`, `where (?:is|are|did) (?:the|my|it|that|this)`,
		`(?:isn't|shouldn't|wouldn't|doesn't|didn't|aren't) (?:it|this|that|there|we|you|the) (?:be|have|use|need|supposed|make|just)`,
		`(?:it|this|that|the \pL+) should (?:be|have|not|only|also|use|run|stay|show|work|look|say)`,
		`(?:it|this|that) (?:was|is) supposed to`, `what(?:'s| is) the point`,
	)},
	// Reports of a broken or missing result, without a sign that it is
	// the agent's doing (the dialogue decides).
	{category: Report, lang: "en", expr: b(
		subjects+` (?:still |now |just |also )?(?:doesn't|does not|didn't|did not|won't|can't|cannot|don't|do not) \pL+`,
		subjects+` (?:still |now |just |also )?(?:isn't|is not|wasn't|aren't|are not) (?:\pL+ly )?(?:`+resultVerbs+`|\pL+ing)`,
		subjects+` (?:is|are|was|were) (?:still |now |also )?(?:broken|missing|off|gone|blank|empty|frozen|stuck)`,
		`(?:is|are|was|were) still`,
		`(?:says|shows|prints|displays|reads) (?:again|still)`,
		`(?:i'm|i am|we're|we are) (?:still )?not (?:seeing|getting|finding|able to)`,
		`^(?:please )?fix (?:the|this|that|it|these|those|my|your|our)`,
		`no module named`,
		`but (?:it|this|that|the \pL+(?: \pL+)?) (?:says|shows|displays|prints|returns|gives|reads|lists)`,
		`^(?:doesn't|does not|didn't|did not|won't|isn't|can't) (?:\pL+ )?(?:`+resultVerbs+`)`,
		`(?:i|we) (?:can't|cannot|couldn't|don't|do not|didn't|did not) (?:see|find|get|open|hear|reach) (?:it|the|any|a|an|this|that|them|anything)`,
		`(?:is|are|was|were) (?:empty|blank|missing|gone|stuck|frozen|hanging|not there|wrong|off|broken|failing|dead)`,
		`(?:it|this|that|everything|something)'s (?:still |now |also |completely |totally )?(?:empty|blank|missing|gone|stuck|frozen|hanging|wrong|broken|failing|dead)`,
		`(?:it|this|that|the \pL+) (?:fails|failed|crashes|crashed|hangs|hung|errors|errored|breaks|freezes|froze|times out|timed out)`,
		`(?:i|we) (?:get|got|see|saw|am getting|am seeing|keep getting|are getting) (?:an? |the |this |that |these )?(?:\pL+ )?(?:error|errors|exception|crash|warning|failure|blank|404|500|timeout)`,
		// A failure pasted as it printed.
		`traceback \(most recent call last\)`, `(?:error|exception|fatal|panic):`, `command not found`, `no such file or directory`,
		`cannot find module`, `module not found`, `modulenotfounderror`, `is not defined`, `segmentation fault`, `npm err!`,
		`exited with (?:exit )?code [1-9]`, `exit code [1-9]`, `failed to (?:compile|build|load|start|connect|fetch|parse)`,
	)},
	// Taking something out again.
	{category: Removal, lang: "en", expr: b(
		`(?:remove|delete|drop|strip|cut|take out|get rid of|lose) (?:that|this|those|these|it|them|the|all the|all of the|every|each|any)`,
		`(?:can|could) (?:we|you) (?:remove|delete|drop|strip|cut|take out|get rid of) `,
	)},
	// Acceptances, thanks and go-aheads: not friction. (Praise of the
	// result, "this looks so good", is one too: see praise.)
	{category: Acceptance, lang: "en", opener: true, expr: compile(
		`^(ok|okay|k|kk|thanks|thank you|thx|ty|great|perfect|nice|awesome|excellent|cool|good|lgtm|looks good|sounds good|yes|yep|yeah|yup|sure|correct|exactly|right|works|it works|that works|done|go ahead|go for it|proceed|continue|keep going|carry on|ship it|love it|amazing|wonderful|fantastic|beautiful|brilliant|approved|agreed|got it|fine|alright|all right)(?:$|[^\pL\pN_']|!)`)},
}

// praise opens a message by praising the agent's result ("this looks so
// good", "love it"): a wish said as a negation after it is the next wish.
var praise = regexp.MustCompile(`^\s*(?:(?:wow|oh|ok|okay|yes|yeah)[, ]+)?(?:(?:this|that|it|these|those|everything|the \pL+)(?:'s| is| are| looks| look| seems| works| sounds| feels) (?:so |really |very |pretty |super |much |already )?(?:good|great|nice|amazing|awesome|perfect|beautiful|fantastic|wonderful|lovely|cool|gorgeous|better)|(?:i )?love (?:it|this|that|them)|(?:great|nice|awesome|amazing|perfect|beautiful|excellent|lovely) (?:work|job|stuff))(?:$|[^\pL\pN_'])`)

// acceptance suppresses corrections that are really agreement ("no,
// that's fine", "no worries").
var acceptance = b(
	`no,? (?:that's|that is|it's|it is|then it's|then its|this is) (?:fine|good|great|ok|okay|perfect|right|correct|alright|all right)`,
	`no (?:worries|problem|problems|rush|pressure)`, `not bad`, `nope,? (?:all )?good`, `no,? (?:all )?good`,
	`no,? (?:go ahead|proceed|continue|carry on|keep going)`, `no,? (?:that|it) works`,
)
