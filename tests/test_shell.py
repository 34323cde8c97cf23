"""Command rules: the command line split into its simple commands (a table), the globs, and the
rules in the gate of a mode that has them."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import call_tool, running
from memory_host import MemoryHost
from server.tools.shell import (
    MAX_LINE,
    CannotCheck,
    Refusal,
    check_command,
    every_command_matches,
    matches,
    simple_commands,
)

# the line, the simple commands it runs (in order: a command before those of its substitutions)
SPLITS = [
    # one command; quotes removed the way the shell removes them, words joined by single spaces
    ("npm test", ["npm test"]),
    ("  npm   test  ", ["npm test"]),
    ("git commit -m 'fix: the thing'", ["git commit -m fix: the thing"]),
    ('git commit -m "say \\"hi\\""', ['git commit -m say "hi"']),
    ("echo 'it'\\''s'", ["echo it's"]),
    ("echo a\\ b c\\\\d", ["echo a b c\\d"]),
    ('"npm" t"es"\'t\'', ["npm test"]),
    ('echo "a"\'b\'"c" "\\a" "\\$HOME"', ["echo abc \\a $HOME"]),
    ("r\\m -rf build", ["rm -rf build"]),
    ("echo '$(rm -rf /)' \"\\$(rm -rf /)\"", ["echo $(rm -rf /) $(rm -rf /)"]),  # quoted: not run
    ('git commit -m "two\nlines"', ["git commit -m two\nlines"]),
    ("git log --oneline # $(rm -rf /) is a comment", ["git log --oneline"]),
    # chains, pipes, background, newlines
    ("git log && rm -rf build", ["git log", "rm -rf build"]),
    ("make || echo failed; echo done", ["make", "echo failed", "echo done"]),
    ("git log | grep fix | head -n 3", ["git log", "grep fix", "head -n 3"]),
    ("npm run serve & npm test", ["npm run serve", "npm test"]),
    ("git status\n\ngit diff", ["git status", "git diff"]),
    ("! git diff --quiet", ["git diff --quiet"]),
    # subshells, groups, if/for/while
    ("(cd web && npm test) || { echo failed; exit 1; }", ["cd web", "npm test", "echo failed", "exit 1"]),
    ("if test -f x; then rm x; else touch x; fi", ["test -f x", "rm x", "touch x"]),
    ("for f in *.py; do python $f; done", ["python $f"]),
    ("while read line; do echo $line; done < list.txt", ["read line", "echo $line"]),
    ("[ -f x ] && rm x", ["[ -f x ]", "rm x"]),
    ("[ a && rm -rf / ]", ["[ a", "rm -rf / ]"]),  # as sh reads it: && ends the [ command
    # command substitutions, nested, in arguments, double quotes, assignments, redirections
    ("echo $(git rev-parse HEAD)", ["echo $(git rev-parse HEAD)", "git rev-parse HEAD"]),
    ('echo "$(rm -rf /)"', ["echo $(rm -rf /)", "rm -rf /"]),
    ('echo "$(echo "$(rm -rf /)")"', ["echo $(echo \"$(rm -rf /)\")", "echo $(rm -rf /)", "rm -rf /"]),
    ("echo `rm -rf /`", ["echo `rm -rf /`", "rm -rf /"]),
    ('echo "`whoami`"', ["echo `whoami`", "whoami"]),
    ("git log --author=$(whoami)", ["git log --author=$(whoami)", "whoami"]),
    ("diff <(ls a) <(ls b)", ["diff <(ls a) <(ls b)", "ls a", "ls b"]),
    ("VERSION=$(cat VERSION) make", ["make", "cat VERSION"]),
    ("ls > $(rm x)", ["ls", "rm x"]),
    ("for f in $(ls); do echo $f; done", ["ls", "echo $f"]),
    # redirections are not words
    ("npm test 2>&1", ["npm test"]),
    ("npm test > out.txt", ["npm test"]),
    ("npm test >> log.txt 2> err.txt < /dev/null", ["npm test"]),
    ("npm test 2>&- <&3 >&2", ["npm test"]),
    ("cat <<-EOF\n\thello\n\tEOF", ["cat"]),
    ("npm test > out.txt --verbose", ["npm test --verbose"]),
    ("cat <<< 'hello'", ["cat"]),
    ("cat <<EOF\nhello\nEOF", ["cat"]),
    ("{ git log; git status; } > report.txt", ["git log", "git status"]),
    # environment prefixes are not words either
    ("FOO=1 npm test", ["npm test"]),
    ('FOO=1 BAR="a b" npm test', ["npm test"]),
    ("npm test FOO=1", ["npm test FOO=1"]),  # after the name: an argument
    ("X=1", []),
    ("X=$(rm -rf /)", ["rm -rf /"]),
    # nothing to run
    ("", []),
    ("   \n ", []),
    ("# only a comment", []),
    # commands that run command lines, or commands: both are checked
    ("sh -c 'rm -rf build'", ["sh -c rm -rf build", "rm -rf build"]),
    ("bash -ec 'git log; rm x' name arg", ["bash -ec git log; rm x name arg", "git log", "rm x"]),
    ("/bin/sh -o pipefail -c 'a | b'", ["/bin/sh -o pipefail -c a | b", "a", "b"]),
    ("sh script.sh -c x", ["sh script.sh -c x"]),  # -c after the script is the script's
    ('eval "rm -rf build"', ["eval rm -rf build", "rm -rf build"]),
    ("trap 'rm -rf build' EXIT", ["trap rm -rf build EXIT", "rm -rf build"]),
    ("alias ll='ls -l'", ["alias ll=ls -l", "ls -l"]),
    ("exec rm -rf build", ["exec rm -rf build", "rm -rf build"]),
    ("nohup env -i FOO=1 rm -rf build", ["nohup env -i FOO=1 rm -rf build", "env -i FOO=1 rm -rf build", "rm -rf build"]),
    ("command -v git", ["command -v git", "git"]),
    ("sh -c \"sh -c 'rm x'\"", ["sh -c sh -c 'rm x'", "sh -c rm x", "rm x"]),
]


@pytest.mark.parametrize("line, commands", SPLITS, ids=[repr(line)[:60] for line, _ in SPLITS])
def test_simple_commands(line, commands):
    assert simple_commands(line) == tuple(commands)


# the line, a fragment of why it cannot be checked
REFUSED = [
    ("echo (", "syntax error: unexpected token '\\n' at character 6"),
    ("git log &&", "syntax error: unexpected EOF at character 10"),
    ('echo "unclosed', "syntax error"),
    ("echo $(rm x", "syntax error"),
    ("x" * (MAX_LINE + 1), "it is 10,001 characters long; at most 10,000 are read"),
    ("f() { rm -rf /; }; f", "it defines a function (f), and what a function runs is not checked"),
    ("echo $((1 + 2))", "it uses '$(( … ))', which the checker does not read"),
    ("[[ -f x ]] && rm x", "syntax error: unexpected token '-f' at character 3"),  # bashlex does not read [[ ]]
    ("select x in a b; do rm $x; done", "it uses 'select', which the checker does not read"),
    ("case $x in a) rm y;; esac", "it uses 'case … esac', which the checker does not read"),
    ("time npm test", "it uses 'time', which the checker does not read"),
    ("$CMD -rf /", "the name of the command '$CMD' is computed when it runs"),
    ("$(which rm) -rf /", "the name of the command '$(which rm)' is computed when it runs"),
    ("/bin/r? -rf /", "the name of the command '/bin/r?' is computed when it runs"),
    ("{rm,-rf,/}", "the name of the command '{rm,-rf,/}' is computed when it runs"),
    ("nohup $CMD", "the name of the command '$CMD' is computed when it runs"),
    ('sh -c "$SCRIPT"', "the name of the command '$SCRIPT' is computed when it runs"),
    ("echo ${X:-$(rm -rf /)}", "a command inside ${X:-$(rm -rf /)} cannot be checked"),
    ("cat <<EOF\n$(rm -rf /)\nEOF", "a command inside a here-document cannot be checked"),
    # what bash and /bin/sh (dash) read differently: the parts would not be those that run
    ("echo $'\\'; rm -rf /; echo \\''", "bash and /bin/sh read $'…' quoting differently"),
    # dash runs `rm -rf build` here, where bash sees one assignment
    ("X=$'\\'; rm -rf build; Y='\\'", "bash and /bin/sh read $'…' quoting differently"),
    ('echo $"hello"', "bash and /bin/sh read $\"…\" quoting differently"),
    ("ls &> out rm -rf /", "bash and /bin/sh read '&>' differently (sh: '&' then '>'): write '> file 2>&1'"),
    ("eval eval eval eval eval eval ls", "it runs command lines inside command lines more than 4 deep"),
    ("(" * 3000 + "ls" + ")" * 3000, "it nests too deeply"),
]


@pytest.mark.parametrize("line, reason", REFUSED, ids=[repr(line)[:60] for line, _ in REFUSED])
def test_what_cannot_be_checked_is_refused_with_the_reason(line, reason):
    with pytest.raises(CannotCheck) as refused:
        simple_commands(line)
    assert reason in str(refused.value)


# glob, simple command, whether it matches
GLOBS = [
    ("npm test", "npm test", True),
    ("npm test", "npm test --watch", False),
    ("npm test", "npm tes", False),
    ("git log*", "git log", True),
    ("git log*", "git log --oneline -n 3", True),
    ("git log*", "git logx", True),  # a glob is text: write 'git log' and 'git log *' to stop at a word
    ("git log *", "git logx", False),
    ("git log*", "git status", False),
    ("rm -rf *", "rm -rf build", True),
    ("rm -rf *", "rm -rf /", True),
    ("rm -rf *", "rm -r -f build", False),  # as written: deny rules are a guard rail
    ("*/rm *", "/bin/rm x", True),
    ("git * --force", "git push origin main --force", True),
    ("cat *", "cat a\nb", True),  # * spans newlines too
    ("curl https://x.test/?a=1", "curl https://x.test/?a=1", True),  # ? [ ] stand for themselves
    ("curl https://x.test/?a=1", "curl https://x.test/Xa=1", False),
    ("[ *", "[ -f x ]", True),
    ("grep [ab]", "grep a", False),
    ("NPM TEST", "npm test", False),  # case matters
]


@pytest.mark.parametrize("glob, command, expected", GLOBS)
def test_globs(glob, command, expected):
    assert matches(command, glob) is expected


ASK_ALLOW = ("git log*", "git diff*", "npm test")
ASK_DENY = ("rm -rf *",)

# line, allow, deny, the refusal (None: it passes)
RULES = [
    ("git log --oneline", ASK_ALLOW, ASK_DENY, None),
    ("git log | grep fix", ASK_ALLOW, ASK_DENY, Refusal("grep fix", allow=ASK_ALLOW)),  # every part must pass
    ("git log && npm test", ASK_ALLOW, ASK_DENY, None),
    ("npm install", ASK_ALLOW, ASK_DENY, Refusal("npm install", allow=ASK_ALLOW)),
    ("git log && rm -rf build", ASK_ALLOW, ASK_DENY, Refusal("rm -rf build", deny="rm -rf *")),
    ("npm test && echo $(rm -rf /)", ASK_ALLOW, ASK_DENY, Refusal("rm -rf /", deny="rm -rf *")),
    ("FOO=1 npm test", ASK_ALLOW, ASK_DENY, None),
    ("npm test 2>&1 > out.txt", ASK_ALLOW, ASK_DENY, None),
    # deny wins over allow: named first, wherever it stands
    ("rm -rf build", ("rm *",), ("rm -rf *",), Refusal("rm -rf build", deny="rm -rf *")),
    ("npm install; rm -rf build", ASK_ALLOW, ASK_DENY, Refusal("rm -rf build", deny="rm -rf *")),
    # no allow list: every command, the deny list still applies
    ("npm install && make", None, ASK_DENY, None),
    ("sh -c 'rm -rf build'", None, ASK_DENY, Refusal("rm -rf build", deny="rm -rf *")),
    ("cd /tmp; eval 'rm -rf x'", None, ASK_DENY, Refusal("rm -rf x", deny="rm -rf *")),
    # an empty allow list: nothing
    ("git log", (), (), Refusal("git log", allow=())),
    # what cannot be checked
    ("echo (", None, ASK_DENY, Refusal(reason="syntax error: unexpected token '\\n' at character 6")),
    # nothing to run: nothing breaks a rule
    ("X=1", ASK_ALLOW, ASK_DENY, None),
]


@pytest.mark.parametrize("line, allow, deny, refusal", RULES)
def test_rules(line, allow, deny, refusal):
    assert check_command(line, allow, deny) == refusal


MESSAGES = [
    (Refusal("rm -rf build", deny="rm -rf *"), "Command refused by mode 'ask': 'rm -rf build' matches deny rule 'rm -rf *'."),
    (
        Refusal("npm install", allow=("git log*", "git diff*")),
        "Command refused by mode 'ask': 'npm install' matches none of the allowed commands: 'git log*', 'git diff*'.",
    ),
    (Refusal("git log", allow=()), "Command refused by mode 'ask': 'git log' matches none of the allowed commands (the mode allows none)."),
    (
        Refusal(reason="syntax error: unexpected token '\\n' at character 6"),
        "Command refused by mode 'ask': cannot check the command line (syntax error: unexpected token '\\n' at character 6); "
        "only commands that can be checked may run.",
    ),
    (
        Refusal("echo " + "x" * 300, allow=("git log*",)),
        "Command refused by mode 'ask': '" + "echo " + "x" * 195 + "…' matches none of the allowed commands: 'git log*'.",
    ),
]


@pytest.mark.parametrize("refusal, text", MESSAGES)
def test_the_refusal_names_the_command_the_mode_and_the_rule(refusal, text):
    assert refusal.message("ask") == text


# for auto-approval: line, globs, whether every command of it matches one
AUTO = [
    ("npm test", ["npm test", "pytest*"], True),
    ("pytest -q tests/ && npm test", ["npm test", "pytest*"], True),
    ("npm test && rm -rf build", ["npm test", "pytest*"], False),
    ("npm test $(rm -rf build)", ["npm test*"], False),
    ("npm test (", ["npm test*"], False),  # cannot be checked: not approved
    ("X=1", ["*"], False),  # runs nothing: nothing to approve
    ("", ["*"], False),
    ("npm test", [], False),
]


@pytest.mark.parametrize("line, globs, expected", AUTO)
def test_every_command_matches(line, globs, expected):
    assert every_command_matches(line, globs) is expected


# ================================================================ split as /bin/sh splits

#: What Python's str.strip(), split() and splitlines() take for a blank or a line break (and two
#: invisible characters), and /bin/sh for a character of a word: its blanks are space and tab, its
#: one line break "\n".
NOT_BLANKS = [c for c in map(chr, range(0x3001)) if c.isspace() and c not in " \t\n"] + ["\u200b", "\ufeff"]
#: Globs that approve every command the hostile lines show, but rm.
SHOWN = ("echo *", "env *", "exec *")
#: Programs sh may run where the parser sees none (an assignment, a file descriptor, exec's option):
#: put on PATH by the test that runs the lines, each removes x.
TRAPS = ("X+=1", "é=1", "٣", "-a", "-la")
ENV_S = "env -S splits its string by rules of its own, which the checker does not read"
EXEC = "bash and /bin/sh read exec's options differently"

# the line, as the checker reads it: its simple commands, or a fragment of why it cannot be checked.
# Each runs `rm x` (or a TRAP) in /bin/sh (dash) or bash: see the test that runs them.
HOSTILE = [
    # a character Python takes for a blank or a line break is a word's to sh: `#` there starts no comment
    *[(f"{c}#; rm x", (f"{c}#", "rm x")) for c in NOT_BLANKS],
    *[(f"echo a{c}#; rm x", (f"echo a{c}#", "rm x")) for c in ("\xa0", "\v", "\f", "\r", "\x1c", "\x85", "\u2028", "\u3000")],
    ("echo ok\n\xa0# a comment?\nrm x", ("echo ok", "\xa0# a comment?", "rm x")),
    # a bracket across a line break (a regex's `.` stops at it) is a pattern all the same: [<newline>r]m is rm
    ('["\n"r]m x', "the name of the command '[\nr]m' is computed when it runs"),
    # env -S: a command line split by env's rules (\\_, ${VAR}, #…), glued, separate, long, abbreviated, in a cluster
    ("env -S'rm x'", ENV_S),
    ("env -S 'rm x'", ENV_S),
    ("env --split-string='rm x'", ENV_S),
    ("env --split-string 'rm x'", ENV_S),
    ("env --sp='rm x'", ENV_S),
    ("env -iS'rm x'", ENV_S),
    ("env -vS 'rm x'", ENV_S),
    ("sh -c \"env -S'rm x'\"", ENV_S),
    # env's options as getopt reads them: a value glued, or the next word after a cluster or an abbreviation
    ("env -iu X rm x", ("env -iu X rm x", "rm x")),
    ("env -vu X rm x", ("env -vu X rm x", "rm x")),
    ("env -iC . rm x", ("env -iC . rm x", "rm x")),
    ("env --un X rm x", ("env --un X rm x", "rm x")),
    ("env --ch . rm x", ("env --ch . rm x", "rm x")),
    # env's `-` (an empty environment), before and after --, and its NAME=VALUE: any word with a `=`
    ("env - rm x", ("env - rm x", "rm x")),
    ("env -i - rm x", ("env -i - rm x", "rm x")),
    ("env -- - rm x", ("env -- - rm x", "rm x")),
    ("env -- X=1 rm x", ("env -- X=1 rm x", "rm x")),
    ("env a-b=1 rm x", ("env a-b=1 rm x", "rm x")),
    ("env 1=2 rm x", ("env 1=2 rm x", "rm x")),
    ("env =x rm x", ("env =x rm x", "rm x")),
    ("env 'a b=1' rm x", ("env a b=1 rm x", "rm x")),
    # what the parser takes for an assignment or a file descriptor, sh for a command's name
    ("X+=1 echo hi", "'X+=1' is a command to /bin/sh, not an assignment"),
    ("é=1 echo hi", "'é=1' is a command to /bin/sh, not an assignment"),
    ("echo hi; ٣>out echo hi", "'٣' is a word to /bin/sh, not a file descriptor"),
    # exec's options are bash's; dash runs a program named -a
    ("exec -a NAME echo hi", EXEC),
    ("exec -la NAME rm x", EXEC),
]


def _reading(line: str) -> tuple[str, ...] | str:
    try:
        return simple_commands(line)
    except CannotCheck as exc:
        return str(exc)


@pytest.mark.parametrize("line, reading", HOSTILE, ids=[repr(line)[:40] for line, _ in HOSTILE])
def test_shell_split_a_command_sh_runs_is_never_hidden(line, reading):
    if isinstance(reading, tuple):
        assert simple_commands(line) == reading
    else:
        assert reading in _reading(line)
    assert check_command(line, None, ["rm *"]) is not None  # deny wins, or the line cannot be checked
    assert check_command(line, SHOWN, ["rm *"]) is not None
    assert every_command_matches(line, SHOWN) is False  # never auto-approved


@pytest.mark.parametrize("line", [line for line, _ in HOSTILE], ids=[repr(line)[:40] for line, _ in HOSTILE])
def test_shell_split_the_hostile_lines_do_run_a_hidden_command(line, tmp_path):
    """Each row is real: dash (/bin/sh on Debian), or bash where it differs, removes x."""
    import os
    import shutil
    import subprocess

    shells = [shell for shell in ("dash", "bash") if shutil.which(shell)]
    if "dash" not in shells:
        pytest.skip("the rows are dash's reading of the lines")
    traps = tmp_path / "traps"
    traps.mkdir()
    for name in TRAPS:
        (traps / name).write_text("#!/bin/sh\nrm -f x\n")
        (traps / name).chmod(0o755)
    removed_by = []
    for shell in shells:
        work = tmp_path / shell
        work.mkdir()
        (work / "x").touch()
        (work / "rm").touch()  # for the pattern [<newline>r]m to match
        path = f"{traps}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"
        subprocess.run([shell, "-c", line], cwd=work, env={**os.environ, "PATH": path}, capture_output=True, timeout=10)
        if not (work / "x").exists():
            removed_by.append(shell)
    assert removed_by


# the line, its simple commands: lines the shell and the checker read alike, as before
ORDINARY = [
    # blanks and comments as sh reads them: space and tab, up to "\n"
    (" #; rm x", ()),
    ("\t# a comment\n  \n\t# another", ()),
    ("echo a #; rm x", ("echo a",)),
    ("echo a\t#\trm x", ("echo a",)),
    ("# a comment\u2028rm x\xa0", ()),  # the comment runs to "\n"
    ("# a comment\rrm x\nrm y", ("rm y",)),
    ("echo a\rrm x", ("echo a\rrm x",)),  # a word's character
    ("echo a\u2028rm x", ("echo a\u2028rm x",)),
    ("git commit -m 'caf\xe9 na\xefve'", ("git commit -m caf\xe9 na\xefve",)),
    ("X=1 _y2=2 echo hi", ("echo hi",)),
    ("echo hi 2>/dev/null 1>&2", ("echo hi",)),
    ("echo a\r\necho b\r\n", ("echo a\r", "echo b\r")),
    # runners: the command after the options, values glued or not
    ("env -uVAR rm x", ("env -uVAR rm x", "rm x")),
    ("env -u VAR rm x", ("env -u VAR rm x", "rm x")),
    ("env --unset=VAR rm x", ("env --unset=VAR rm x", "rm x")),
    ("env --unset VAR rm x", ("env --unset VAR rm x", "rm x")),
    ("env -C. rm x", ("env -C. rm x", "rm x")),
    ("env --chdir=. rm x", ("env --chdir=. rm x", "rm x")),
    ("env -i -- rm x", ("env -i -- rm x", "rm x")),
    ("env -iuX rm x", ("env -iuX rm x", "rm x")),
    ("env -u -- rm x", ("env -u -- rm x", "rm x")),  # -u's value is the next word, whatever it is
    ("env -i FOO=1 BAR= rm x", ("env -i FOO=1 BAR= rm x", "rm x")),
    ("env --block-signal rm x", ("env --block-signal rm x", "rm x")),  # its value is glued or none
    ("env --ignore-signal=INT --debug rm x", ("env --ignore-signal=INT --debug rm x", "rm x")),
    ("env -- -i rm x", ("env -- -i rm x", "-i rm x")),  # after --, a command named -i
    ("env", ("env",)),
    ("exec rm x", ("exec rm x", "rm x")),
    ("command -p rm x", ("command -p rm x", "rm x")),
    ("command -- rm x", ("command -- rm x", "rm x")),
    ("nohup -- rm x", ("nohup -- rm x", "rm x")),
    ("builtin rm x", ("builtin rm x", "rm x")),
]


@pytest.mark.parametrize("line, commands", ORDINARY, ids=[repr(line)[:40] for line, _ in ORDINARY])
def test_shell_split_ordinary_lines_as_before(line, commands):
    assert simple_commands(line) == commands


# the line, a fragment of why it cannot be checked
NOT_READ = [
    ("rm x\x00", "it holds a NUL character"),
    ("env -P /bin rm x", "env's option -P is not one the checker knows"),
    ("env --i rm x", "env's option --i is not one the checker knows"),  # ambiguous: env fails
    ("env --frobnicate rm x", "env's option --frobnicate is not one the checker knows"),
    ("exec -- rm x", EXEC),
]


@pytest.mark.parametrize("line, reason", NOT_READ, ids=[repr(line)[:40] for line, _ in NOT_READ])
def test_shell_split_what_is_not_read_is_refused(line, reason):
    assert reason in _reading(line)
    assert check_command(line, None, []) == Refusal(reason=_reading(line))
    assert every_command_matches(line, ["*"]) is False


# ================================================================ in the gate

RULED_MODES = """customModes:
  - slug: review
    name: Review
    roleDefinition: You review.
    groups:
      - read
      - [command, {allow: ["git log*", "echo *", "touch *"], deny: ["rm -rf *", "touch secret*"]}]
  - slug: careful
    name: Careful
    roleDefinition: You are careful.
    groups:
      - [command, {deny: ["rm -rf *"]}]
"""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".modus").mkdir(parents=True)
    (root / ".modus" / "modes.yaml").write_text(RULED_MODES)
    (root / "build").mkdir()
    return root


# mode, command, the refusal's text (None: it runs, after approval)
GATE = [
    ("review", "touch made", None),
    ("review", "echo hi && touch made", None),
    ("review", "touch made && touch secret.txt", "Command refused by mode 'review': 'touch secret.txt' matches deny rule 'touch secret*'."),
    (
        "review",
        "touch made; ls",
        "Command refused by mode 'review': 'ls' matches none of the allowed commands: 'git log*', 'echo *', 'touch *'.",
    ),
    (
        "review",
        "touch made $(",
        "Command refused by mode 'review': cannot check the command line (syntax error: unexpected EOF while looking for "
        "matching ')' at character 13); only commands that can be checked may run.",
    ),
    ("careful", "touch made", None),
    ("careful", "touch made; rm -rf build", "Command refused by mode 'careful': 'rm -rf build' matches deny rule 'rm -rf *'."),
    ("careful", "sh -c 'rm -rf build'", "Command refused by mode 'careful': 'rm -rf build' matches deny rule 'rm -rf *'."),
    # built-in modes have no rules: every command runs (after approval), unparsed
    ("code", "touch made; f() { :; }", None),
]


@pytest.mark.parametrize("mode, command, refusal", GATE)
async def test_command_rules_in_the_gate(workspace, mode, command, refusal):
    host = MemoryHost()
    async with running(workspace, host=host) as session:
        session.switch_mode(mode, by="user")
        result = await call_tool(session, "execute_command", command=command)
    if refusal is None:
        assert result.error is None, result.text
        assert [a.tool for a in host.approvals] == ["execute_command"]
        assert (workspace / "made").exists()
        return
    assert result.error is not None and result.error.type == "ToolNotAllowed"
    assert result.text == refusal
    assert host.approvals == []  # refused before any approval is asked
    assert not (workspace / "made").exists() and (workspace / "build").exists()


async def test_a_refused_command_in_plan_phase_is_refused_by_the_phase_first(workspace):
    async with running(workspace) as session:
        session.switch_mode("careful", by="user")
        session.switcher.phase = "plan"
        result = await call_tool(session, "execute_command", command="rm -rf build")
    assert result.error.type == "PlanModeBlocked"
