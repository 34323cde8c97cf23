"""@-mentions (SPEC §5, seed 002): the composer's parser for a user's message, the default
responder, and the stricter parser for an agent's finished turn. Every example of SPEC §5 and
of seed 002 is a row here (marked `seed:` / `spec:`)."""

from __future__ import annotations

import pytest

from protocol import AgentConfig, Member
from server.roster import Refusal, default_responder, parse_agent_prose, parse_user_message
from server.roster.mentions import AMBIGUOUS, TOO_MANY


def agents(*names: str) -> list[AgentConfig]:
    """Agents in configuration order; a name ending in `~` is a subordinate."""
    return [AgentConfig(name=n.rstrip("~"), top_level=not n.endswith("~")) for n in names]


def members(*handles: str) -> list[Member]:
    return [Member(handle=h, name=h.title()) for h in handles]


TEAM = agents("alice", "bob", "architect")
PEOPLE = members("sam", "kim")

# ------------------------------------------------------------------ the composer

# (id, text, agents, members, text the agents see, agents started, [(raw, kind, name)], empty)
COMPOSER = [
    # seed 002: mentioning an agent
    ("seed: one agent", "@alice fix the login bug", TEAM, PEOPLE,
     "fix the login bug", ["alice"], [("@alice", "agent", "alice")], False),
    ("seed: @arch reaches architect", "@arch draw the modules", TEAM, PEOPLE,
     "draw the modules", ["architect"], [("@arch", "agent", "architect")], False),
    ("seed: @Alice reaches alice", "@Alice fix it", TEAM, PEOPLE,
     "fix it", ["alice"], [("@Alice", "agent", "alice")], False),
    ("seed: shared prefix, the first configured wins", "@arch go", agents("archivist", "architect"), [],
     "go", ["archivist"], [("@arch", "agent", "archivist")], False),
    ("seed: shared prefix, the order decides", "@arch go", agents("architect", "archivist"), [],
     "go", ["architect"], [("@arch", "agent", "architect")], False),
    ("seed: the full name when names overlap", "@architect go", agents("archivist", "architect"), [],
     "go", ["architect"], [("@architect", "agent", "architect")], False),
    ("seed: @code-reviewer is the token code", "@code-reviewer look", agents("code", "code-reviewer"), [],
     "-reviewer look", ["code"], [("@code", "agent", "code")], False),
    ("seed: @code-reviewer is code, prefix to another agent", "@code-reviewer look", agents("coder", "code-reviewer"), [],
     "-reviewer look", ["coder"], [("@code", "agent", "coder")], False),
    ("@code-reviewer reaching code-reviewer takes its words along", "@code-reviewer look", agents("code-reviewer"), [],
     "look", ["code-reviewer"], [("@code-reviewer", "agent", "code-reviewer")], False),
    ("seed: @my agent is the token my", "@my agent fix", agents("mybot"), [],
     "agent fix", ["mybot"], [("@my", "agent", "mybot")], False),
    ("seed: only mentions starts nothing", "@alice", TEAM, PEOPLE,
     "", [], [("@alice", "agent", "alice")], True),
    ("seed: two agents, each with the whole message",
     "@alice refactor the auth module. @bob write tests for it.", TEAM, PEOPLE,
     "refactor the auth module. write tests for it.", ["alice", "bob"],
     [("@alice", "agent", "alice"), ("@bob", "agent", "bob")], False),
    ("seed: a human by handle", "@sam can you review this", TEAM, PEOPLE,
     "can you review this", [], [("@sam", "human", "sam")], False),
    ("seed: a human by prefix, case ignored", "@SA can you review this", TEAM, PEOPLE,
     "can you review this", [], [("@SA", "human", "sam")], False),
    ("seed: an agent's prefix beats a human's exact handle", "@sam go", agents("samantha"), PEOPLE,
     "go", ["samantha"], [("@sam", "agent", "samantha")], False),
    # the rest of the composer's rules
    ("agent and human", "@arch @sam plan the release", TEAM, PEOPLE,
     "plan the release", ["architect"], [("@arch", "agent", "architect"), ("@sam", "human", "sam")], False),
    ("exact before prefix", "@bob go", agents("bobby", "bob"), [],
     "go", ["bob"], [("@bob", "agent", "bob")], False),
    ("names differing in case: the exact spelling", "@Bob go", agents("bob", "Bob"), [],
     "go", ["Bob"], [("@Bob", "agent", "Bob")], False),
    ("names differing in case: else the first configured", "@BOB go", agents("bob", "Bob"), [],
     "go", ["bob"], [("@BOB", "agent", "bob")], False),
    ("no mention", "fix the login bug", TEAM, PEOPLE, "fix the login bug", [], [], False),
    ("an unmatched token stays", "@nobody fix it", TEAM, PEOPLE, "@nobody fix it", [], [], False),
    ("dedup, first spelling, in order of first appearance", "@bob @alice @Bob go @alice", TEAM, PEOPLE,
     "go", ["bob", "alice"], [("@bob", "agent", "bob"), ("@alice", "agent", "alice")], False),
    ("glued to a word: an e-mail address", "mail sam@host.com now", agents("host"), PEOPLE,
     "mail sam@host.com now", [], [], False),
    ("glued: pkg/@scope, node@20", "pkg/@scope on node@20", agents("scope", "20"), [],
     "pkg/@scope on node@20", [], [], False),
    ("in backticks: not a mention, not rewritten", "use `@app.route` here @bob", agents("app-builder", "bob"), [],
     "use `@app.route` here", ["bob"], [("@bob", "agent", "bob")], False),
    ("in a fence: not a mention, not rewritten", "@bob see\n```py\n@app.route\n```", agents("app-builder", "bob"), [],
     "see\n```py\n@app.route\n```", ["bob"], [("@bob", "agent", "bob")], False),
    ("after an unclosed fence: code", "@bob see\n~~~\n@alice", TEAM, [],
     "see\n~~~\n@alice", ["bob"], [("@bob", "agent", "bob")], False),
    ("a mention in code only: the default responder", "`@alice`", TEAM, [], "`@alice`", [], [], False),
    # stripping and tidying
    ("vocative comma", "@alice, fix it", TEAM, [], "fix it", ["alice"], [("@alice", "agent", "alice")], False),
    ("vocative colon after two", "@alice @bob: fix it", TEAM, [],
     "fix it", ["alice", "bob"], [("@alice", "agent", "alice"), ("@bob", "agent", "bob")], False),
    ("mid-sentence comma", "Hey @alice, fix it", TEAM, [], "Hey, fix it", ["alice"], [("@alice", "agent", "alice")], False),
    ("before a full stop", "thanks @alice.", TEAM, [], "thanks.", ["alice"], [("@alice", "agent", "alice")], False),
    ("in the middle", "please @alice fix it", TEAM, [], "please fix it", ["alice"], [("@alice", "agent", "alice")], False),
    ("at the end", "fix it @alice", TEAM, [], "fix it", ["alice"], [("@alice", "agent", "alice")], False),
    ("in brackets and bold", "ask (@alice) and **@bob** now", TEAM, [],
     "ask and now", ["alice", "bob"], [("@alice", "agent", "alice"), ("@bob", "agent", "bob")], False),
    ("a line of mentions goes", "fix the bug\n@alice @bob\n\nthanks", TEAM, [],
     "fix the bug\n\nthanks", ["alice", "bob"], [("@alice", "agent", "alice"), ("@bob", "agent", "bob")], False),
    ("a mention's line end", "@alice\nfix the bug @bob\nnow", TEAM, [],
     "fix the bug\nnow", ["alice", "bob"], [("@alice", "agent", "alice"), ("@bob", "agent", "bob")], False),
    ("only mentions and punctuation", "@alice @bob ?", TEAM, [], "?", [],
     [("@alice", "agent", "alice"), ("@bob", "agent", "bob")], True),
    ("only a human mention starts nothing", "@sam", TEAM, PEOPLE, "", [], [("@sam", "human", "sam")], True),
    ("blank", "   ", TEAM, [], "   ", [], [], True),
    ("without mentions the text is kept as it is", "  indented\n", TEAM, [], "  indented\n", [], [], False),
    ("an indented mention takes its indentation along", "  @alice fix it\n    code", TEAM, [],
     "fix it\n    code", ["alice"], [("@alice", "agent", "alice")], False),
    ("the lines after a mention line keep their indentation", "@bob\n    indented code", TEAM, [],
     "    indented code", ["bob"], [("@bob", "agent", "bob")], False),
    ("no agent configured: humans still found", "@kim hi", [], PEOPLE, "hi", [], [("@kim", "human", "kim")], False),
    ("unicode words", "@élise répare", agents("élise"), [], "répare", ["élise"], [("@élise", "agent", "élise")], False),
]


@pytest.mark.parametrize(
    ("text", "roster", "people", "seen", "started", "mentions", "empty"),
    [row[1:] for row in COMPOSER],
    ids=[row[0] for row in COMPOSER],
)
def test_composer(text, roster, people, seen, started, mentions, empty):
    composed = parse_user_message(text, roster, people)
    assert composed.text == seen
    assert composed.agents == started
    assert [(m.raw, m.kind, m.name) for m in composed.mentions] == mentions
    assert composed.empty is empty


def test_the_code_of_a_message_reaches_the_agent_byte_for_byte():
    code = "```py\n    @app.route('/')\n  def  index():  \n```"
    composed = parse_user_message(f"@bob   review:\n{code}", agents("app", "bob"), [])
    assert composed.agents == ["bob"]
    assert composed.text == f"review:\n{code}"


# ------------------------------------------------------------------ the default responder

# (id, last speaker, owner, agents, responder)
RESPONDER = [
    ("seed: the last agent that spoke", "bob", "alice", TEAM, "bob"),
    ("seed: else the owner", None, "architect", TEAM, "architect"),
    ("seed: else the first top-level agent", None, None, agents("helper~", "lead", "other"), "lead"),
    ("spec: else the first agent", None, None, agents("helper~", "other~"), "helper"),
    ("seed: a space with one agent: that agent", None, None, agents("solo~"), "solo"),
    ("seed: a space with one agent, an owner no longer configured", None, "gone", agents("solo"), "solo"),
    ("a last speaker no longer configured", "gone", "alice", TEAM, "alice"),
    ("no agent at all", "bob", "alice", [], None),
]


@pytest.mark.parametrize(("last", "owner", "roster", "expected"), [r[1:] for r in RESPONDER], ids=[r[0] for r in RESPONDER])
def test_default_responder(last, owner, roster, expected):
    assert default_responder(last, owner, roster) == expected


# ------------------------------------------------------------------ an agent's prose

CREW = agents("alice", "bob", "carol", "dave", "erin", "frank", "architect")

# (id, text, agents, writer, targets, [(refused mention, reason)])
PROSE = [
    ("spec: a mention wakes", "Done. @bob please write the tests.", CREW, "alice", ["bob"], []),
    ("seed: no prefix from an agent", "@arch should look", CREW, "alice", [], []),
    ("seed: the exact name", "@architect should look", CREW, "alice", ["architect"], []),
    ("seed: a name matching two agents reaches no one", "@alice look", agents("Alice", "alice", "bob"), "bob",
     [], [("@alice", AMBIGUOUS)]),
    ("seed: @Override in backticks", "Keep the `@Override` on run()", agents("override"), "alice", [], []),
    ("seed: pip install foo@1.2", "Run `pip install foo@1.2` and pip install foo@1.2", agents("1"), "alice", [], []),
    ("seed: sam@host.com", "Mail sam@host.com", agents("host", "sam"), "alice", [], []),
    ("seed: pkg/@scope", "See pkg/@scope", agents("scope"), "alice", [], []),
    ("seed: node@20", "Needs node@20", agents("20"), "alice", [], []),
    ("seed: hyphens are kept", "@code-reviewer take a look", agents("code", "code-reviewer"), "alice",
     ["code-reviewer"], []),
    ("seed: six teammates listed, three woken",
     "Thanks @bob, @carol, @dave, @erin, @frank and @architect!", CREW, "alice",
     ["bob", "carol", "dave"], [("@erin", TOO_MANY), ("@frank", TOO_MANY), ("@architect", TOO_MANY)]),
    ("seed: a self-mention is ignored", "@alice will finish, @bob review", CREW, "alice", ["bob"], []),
    ("spec: an unresolved name is silent", "@nobody and @bob", CREW, "alice", ["bob"], []),
    ("seed: an unclosed fence voids the rest", "@bob first\n```\n@carol\nno end", CREW, "alice", ["bob"], []),
    # fences
    ("``` fence with an info string", "```python\n@carol\n```\n@bob", CREW, "alice", ["bob"], []),
    ("~~~ fence", "~~~\n@carol\n~~~\n@bob", CREW, "alice", ["bob"], []),
    ("fence indented 3 spaces", "   ```\n@carol\n   ```\n@bob", CREW, "alice", ["bob"], []),
    ("4 spaces: not a fence", "    ```\n@carol", CREW, "alice", ["carol"], []),
    ("a shorter fence does not close", "````\n```\n@carol\n````\n@bob", CREW, "alice", ["bob"], []),
    ("~~~ does not close ```", "```\n~~~\n@carol\n```\n@bob", CREW, "alice", ["bob"], []),
    ("a backtick in a ``` info string: no fence", "``` a`b\n@carol", CREW, "alice", ["carol"], []),
    ("an unclosed ~~~ fence", "@bob\n~~~sh\n@carol", CREW, "alice", ["bob"], []),
    ("crlf fences", "```\r\n@carol\r\n```\r\n@bob", CREW, "alice", ["bob"], []),
    # inline code
    ("single backticks", "`@carol` and @bob", CREW, "alice", ["bob"], []),
    ("double backticks around a backtick", "``@carol ` still code`` and @bob", CREW, "alice", ["bob"], []),
    ("an unmatched backtick is text", "a ` @carol and @bob", CREW, "alice", ["carol", "bob"], []),
    ("a code span stays in its paragraph", "`x\n\n@carol `y`", CREW, "alice", ["carol"], []),
    ("a code span across a line", "`x\n@carol` @bob", CREW, "alice", ["bob"], []),
    # tokens
    ("trailing punctuation", "@bob. @carol, @dave:", CREW, "alice", ["bob", "carol", "dave"], []),
    ("a trailing hyphen", "@bob- yes", CREW, "alice", ["bob"], []),
    ("hyphenated, then a full stop", "ask @code-reviewer.", agents("code-reviewer"), "alice", ["code-reviewer"], []),
    ("a path is not a mention", "install @types/node", agents("types"), "alice", [], []),
    ("a file name is not a mention", "open @bob.py", CREW, "alice", [], []),
    ("brackets and bold", "(@bob) and **@carol**", CREW, "alice", ["bob", "carol"], []),
    ("case ignored on the whole token", "@BOB and @Carol", CREW, "alice", ["bob", "carol"], []),
    ("repeated names count once", "@bob @Bob @bob @carol", CREW, "alice", ["bob", "carol"], []),
    ("the limit counts agents, not mentions", "@bob @bob @carol @self @dave @erin @erin",
     agents("bob", "carol", "dave", "erin", "self"), "self", ["bob", "carol", "dave"], [("@erin", TOO_MANY)]),
    ("an ambiguous name takes no slot", "@Bob @carol @dave @erin @frank", agents("bob", "Bob", "carol", "dave", "erin", "frank"),
     "alice", ["carol", "dave", "erin"], [("@Bob", AMBIGUOUS), ("@frank", TOO_MANY)]),
    ("an ambiguous name refused once", "@bob @BOB", agents("bob", "Bob"), "alice", [], [("@bob", AMBIGUOUS)]),
    ("no prose", "", CREW, "alice", [], []),
]


@pytest.mark.parametrize(("text", "roster", "writer", "targets", "refused"), [r[1:] for r in PROSE], ids=[r[0] for r in PROSE])
def test_agent_prose(text, roster, writer, targets, refused):
    prose = parse_agent_prose(text, roster, writer)
    assert prose.targets == targets
    assert prose.refusals == [Refusal(mention, reason) for mention, reason in refused]
