"""Command rules: a command line split into the simple commands it runs, each matched against globs.

A mode's `command` group may carry rules, `[command, {allow: [<glob>], deny: [<glob>]}]`. A command
line passes when every simple command in it matches no deny glob and, when there is an allow
list, one allow glob. "Simple command" is the shell's word: a program and its arguments. The
line is read by bashlex, a port of bash's own parser, so the parts are found the way a shell
finds them: chains (`&&`, `||`, `;`, `&`, newlines), pipes, subshells `( … )` and groups
`{ …; }`, `if`/`for`/`while`/`until`, and the commands inside `$( … )`, backquotes and `<( … )`
wherever they stand (an argument, a double-quoted word, an assignment, a redirection's target).

Each simple command is its words joined by single spaces, quotes removed as the shell removes
them; environment prefixes (`FOO=1 npm test` is `npm test`) and redirections (`2>&1`,
`> out.txt`, `<<< text`) are not words. Some commands run other commands, and both are checked:
the string of `sh -c`/`bash -c` (and dash, zsh, ksh, mksh, ash), of `eval`, of a `trap` action
and of an `alias` value is read as a command line of its own, and what follows `exec`,
`command`, `builtin`, `nohup` and `env` (past their options, read as their own getopt reads them:
`env -iu NAME cmd`, `env --un=NAME cmd`, `env - A-B=1 cmd`) is a simple command too. So
`sh -c 'rm -rf build'` is the simple commands `sh -c rm -rf build` and `rm -rf build`.

The line is split as /bin/sh splits it: its blanks are space and tab, its one line break "\\n".
What Python's str methods also take for blanks or line breaks (a no-break space, \\v, \\f, \\r,
\\x1c-\\x1f, \\x85, \\u2028…) is a character of a word to the shell, so `\\xa0#; rm x` is the
commands `\\xa0#` and `rm x`, not a comment (bashlex agrees with the shell here).

What cannot be checked is refused, with the reason: a syntax error; a line over MAX_LINE
characters; what bashlex does not read (`case`, `select`, `coproc`, `time`, `[[ … ]]`,
`$(( … ))`); a function definition; a command whose name is computed when it runs (`$CMD`,
`$(which rm)`, `r?`, `{rm,-rf}`); a command inside `${ … }` or inside a here-document (the
parser keeps those as text); `env -S STRING`, which env splits into a command by rules of its own
(`\\_`, `${VAR}`, `#`…), and an env option the checker does not know; a NUL character. And where
bash or bashlex and /bin/sh (which runs the command; dash on Debian) read a line differently, so
the parts one sees are not those the other runs: `&>` (dash reads `&` then `>`), `$'…'` and
`$"…"` quoting, `exec`'s options (dash has none), `X+=1` or `é=1` before a command (a command to
sh, an assignment to bashlex), a file descriptor written with other digits than 0-9 (`٣>f`).

A glob is matched against a whole simple command: `*` matches any text, spaces and `/` included;
`\\*` is a star itself and `\\\\` a backslash; every other character stands for itself (`?`,
`[` and `]` occur in commands too often to be wildcards). So `git log*` matches `git log --oneline` and `git logx` too (write `git log` and
`git log *` to stop at a word), and `npm test` matches `npm test` only.

Deny rules match the commands as written: `/bin/rm -rf build` is not `rm -rf build`, and any
program may run others (`find -exec`, `xargs`, `python -c`, `make`). They are a guard rail; an
allow list is the rule to rely on, since whatever it does not name is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence

#: The longest command line read, in characters; a longer one is refused. bashlex is pure Python:
#: a line of this length takes up to ~0.3 s to read (5,000 one-letter commands: 0.2 s).
MAX_LINE = 10_000

#: How deep command lines inside command lines (`sh -c "sh -c '…'"`) are read.
MAX_DEPTH = 4

#: Shells whose `-c STRING` is a command line of its own.
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash"})

#: Commands that run the rest of their words as a command, past their options (see _runs).
RUNNERS = frozenset({"exec", "command", "builtin", "nohup", "env"})

#: The shell's blanks; its one line break is "\n". str.strip(), split() and splitlines() know many
#: more (a no-break space, \v, \f, \r, \x1c…): to the shell, characters of a word.
BLANKS = " \t"

#: GNU env's short options, and which take a value (the rest of the word, else the next word).
_ENV_FLAGS = frozenset("i0v")
_ENV_WITH_VALUE = frozenset("uCaS")
#: GNU env's long options: whether a value follows (required: `=value` or the next word; optional:
#: `=value` only; none). getopt takes any unambiguous abbreviation (`--un` is `--unset`).
_ENV_LONG = {
    "ignore-environment": "none",
    "null": "none",
    "unset": "required",
    "chdir": "required",
    "argv0": "required",  # coreutils 9.5 and later
    "split-string": "required",
    "block-signal": "optional",
    "default-signal": "optional",
    "ignore-signal": "optional",
    "list-signal-handling": "none",
    "debug": "none",
    "help": "none",
    "version": "none",
}
_ENV_S = "env -S splits its string by rules of its own, which the checker does not read"

#: bashlex's names of what it does not read, as a user writes them.
_NOT_READ = {
    "arithmetic for": "for (( … ))",
    "select command": "select",
    "case command": "case … esac",
    "case clause": "case … esac",
    "pattern list": "case … esac",
    "pattern": "case … esac",
    "coproc": "coproc",
    "arithmetic command": "(( … ))",
    "cond command": "[[ … ]]",
    "time command": "time",
    "arithmetic expansion": "$(( … ))",
    "arithmetic substitution": "$[ … ]",
}

#: An assignment as the shell reads one: an ASCII name, then `=` (sh has no `+=`).
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
#: A command name the shell would still expand: a glob or a brace expansion (a quoted newline
#: inside `[ ]` too: hence DOTALL).
_PATTERN_NAME = re.compile(r"[*?]|\[.*\]|\{.*(,|\.\.).*\}", re.DOTALL)
#: Digits as bashlex reads a file descriptor: any Unicode digit.
_DIGITS = re.compile(r"\d+")
_DIGITS_AT_END = re.compile(r"\d+$")


class CannotCheck(Exception):
    """The command line cannot be split into the commands it runs; the message says why."""


def simple_commands(command_line: str) -> tuple[str, ...]:
    """Every simple command the line runs, in order of appearance (a command before those of its
    substitutions), each normalised to its words joined by single spaces. Raises CannotCheck.

    A line of assignments only (`X=1`), of blanks or of comments runs no command: the result is empty.
    """
    found = _split(command_line)
    if isinstance(found, str):
        raise CannotCheck(found)
    return found


@lru_cache(maxsize=64)
def _split(command_line: str) -> tuple[str, ...] | str:
    """The simple commands, or why there are none to be had (cached: the gate reads a line, the
    auto-approval reads it again)."""
    try:
        return tuple(_read(command_line, 0))
    except CannotCheck as exc:
        return str(exc)
    except RecursionError:
        return "it nests too deeply"


def _read(line: str, depth: int) -> list[str]:
    if len(line) > MAX_LINE:
        raise CannotCheck(f"it is {len(line):,} characters long; at most {MAX_LINE:,} are read")
    if depth > MAX_DEPTH:
        raise CannotCheck(f"it runs command lines inside command lines more than {MAX_DEPTH} deep")
    if "\0" in line:  # never reaches the shell whole: a C string ends there
        raise CannotCheck("it holds a NUL character, where the shell's copy of it would end")
    if all(not text.strip(BLANKS) or text.lstrip(BLANKS).startswith("#") for text in line.split("\n")):
        return []  # blanks and comments, as the shell reads them (bashlex fails on these)
    import bashlex  # here, not at the top: reading its grammar takes ~0.1 s, paid by the first check only

    try:
        trees = bashlex.parse(line)
    except bashlex.errors.ParsingError as exc:
        raise CannotCheck(f"syntax error: {exc.message} at character {exc.position}") from None
    except NotImplementedError as exc:
        raise CannotCheck(f"it uses {_construct(exc)}, which the checker does not read") from None
    except RecursionError:
        raise
    except Exception as exc:  # bashlex fails on some input it does not expect (a line of a comment only)
        raise CannotCheck(f"the parser could not read it ({type(exc).__name__})") from None
    reader = _Reader(line, depth)
    for tree in trees:
        reader.visit(tree)
    return reader.commands


def _construct(exc: NotImplementedError) -> str:
    text = str(exc)
    match = re.match(r"type = \{([^}]*)\}", text)
    name = match.group(1) if match else text
    return repr(_NOT_READ.get(name, name))


class _Reader:
    """Walks bashlex's tree of one command line and collects its simple commands."""

    def __init__(self, source: str, depth: int):
        self.source = source
        self.depth = depth
        self.commands: list[str] = []

    def visit(self, node: Any) -> None:
        kind = node.kind
        if kind in ("list", "pipeline", "if", "for", "while", "until"):
            for part in node.parts:
                self.visit(part)
        elif kind == "compound":  # ( … ), { …; }, and the bodies of the above
            for part in node.list:
                self.visit(part)
            for redirect in getattr(node, "redirects", ()):
                self.visit(redirect)
        elif kind in ("operator", "pipe", "reservedword", "tilde"):
            pass
        elif kind == "command":
            self.command(node)
        elif kind in ("word", "assignment"):
            for part in node.parts:
                self.visit(part)
        elif kind in ("commandsubstitution", "processsubstitution"):
            self.visit(node.command)
        elif kind == "parameter":
            self.parameter(node)
        elif kind == "redirect":
            self.redirect(node)
        elif kind == "heredoc":
            if "$(" in node.value or "`" in node.value:
                raise CannotCheck("a command inside a here-document cannot be checked")
        elif kind == "function":
            raise CannotCheck(f"it defines a function ({node.name.word}), and what a function runs is not checked")
        else:
            raise CannotCheck(f"the parser returned a part the checker does not know ({kind})")

    def command(self, node: Any) -> None:
        for part in node.parts:
            if part.kind == "assignment" and not _ASSIGNMENT.match(self.source, part.pos[0]):
                word = self.source[part.pos[0] : part.pos[1]]  # bashlex takes a name of any letters, and +=
                raise CannotCheck(f"'{word}' is a command to /bin/sh, not an assignment (its names are A-Z, a-z, 0-9 and _)")
        words = [part for part in node.parts if part.kind == "word"]  # not the prefixes, not the redirections
        if words:
            self.simple(words)
        for part in node.parts:  # the commands of its substitutions, its prefixes' and redirections' too
            self.visit(part)

    def simple(self, words: list[Any]) -> None:
        """The simple command of these word nodes, then the commands it runs (see the module's notes)."""
        name = words[0]
        texts = [self.text(word) for word in words]
        if any(p.kind in ("parameter", "commandsubstitution", "processsubstitution") for p in name.parts) or (
            _PATTERN_NAME.search(texts[0])
        ):
            raise CannotCheck(f"the name of the command '{texts[0]}' is computed when it runs")
        self.commands.append(" ".join(texts))
        program, args = texts[0].rsplit("/", 1)[-1], texts[1:]
        if program in SHELLS:
            script = _shell_script(args)
            if script is not None:
                self.commands += _read(script, self.depth + 1)
        elif program == "eval":
            self.commands += _read(" ".join(args), self.depth + 1)
            if args[:1] == ["--"]:  # bash ends eval's options there; dash would run a command named --
                self.commands += _read(" ".join(args[1:]), self.depth + 1)
        elif program == "trap":
            action = next((arg for arg in args if arg not in ("--", "-l", "-p")), "-")
            if action != "-":
                self.commands += _read(action, self.depth + 1)
        elif program == "alias":
            for arg in args:
                if "=" in arg:
                    self.commands += _read(arg.split("=", 1)[1], self.depth + 1)
        elif program in RUNNERS:
            rest = _runs(program, args)
            if rest:
                self.simple(words[len(words) - len(rest) :])

    def text(self, word: Any) -> str:
        """A word as the shell passes it on: quotes removed, escapes resolved; its expansions and
        substitutions (bashlex's parts) as written. (bashlex's own `word` gets some quoting wrong:
        'it'\\''s', "a"'b'"c".)"""
        source = self.source
        verbatim = sorted(part.pos for part in word.parts if part.kind != "tilde")
        out: list[str] = []
        quote = ""
        i, end = word.pos
        while i < end:
            char, after = source[i], source[i + 1 : i + 2]
            if not quote and char == "$" and after in ("'", '"'):
                raise _read_differently(after)
            while verbatim and verbatim[0][0] < i:  # a part that began inside an escape (`\\$x`) is none
                verbatim.pop(0)
            if verbatim and verbatim[0][0] == i:
                start, stop = verbatim.pop(0)
                out.append(source[start:stop])
                i = stop
            elif quote == "'":
                if char == "'":
                    quote = ""
                else:
                    out.append(char)
                i += 1
            elif char == "\\" and (not quote or after in ("$", "`", '"', "\\", "\n")):
                out.append("" if after == "\n" else after)  # backslash-newline joins lines
                i += 2
            elif char == quote:
                quote = ""
                i += 1
            elif not quote and char in ("'", '"'):
                quote = char
                i += 1
            else:
                out.append(char)
                i += 1
        return "".join(out)

    def parameter(self, node: Any) -> None:
        value = getattr(node, "value", "") or ""
        start, end = node.pos
        quote = self.source[end : end + 1]
        if not value and self.source[start:end] == "$" and quote in ("'", '"'):  # in any word, assignments too
            raise _read_differently(quote)
        if any(mark in value for mark in ("$(", "`", "<(", ">(")):
            raise CannotCheck(f"a command inside ${{{value}}} cannot be checked")

    def redirect(self, node: Any) -> None:
        if node.type in ("&>", "&>>"):
            raise CannotCheck(
                f"bash and /bin/sh read '{node.type}' differently (sh: '&' then '>'): write '> file 2>&1'"
            )
        start, end = node.pos  # a file descriptor: bashlex takes any Unicode digit (٣) for one, sh 0-9 only
        if isinstance(getattr(node, "input", None), int):  # `2>`
            _ascii_digits(_DIGITS.match(self.source, start))
        if isinstance(node.output, int):  # `>&2`
            _ascii_digits(_DIGITS_AT_END.search(self.source, start, end))
        if hasattr(node.output, "kind"):  # a word; else a file descriptor (`2>&1`) or `-` (`>&-`)
            self.visit(node.output)
        if getattr(node, "heredoc", None) is not None:
            self.visit(node.heredoc)


def _read_differently(quote: str) -> CannotCheck:
    """$'…' is one string to bash; to dash, `$` then a quoted string: what follows may run."""
    return CannotCheck(f"bash and /bin/sh read ${quote}…{quote} quoting differently: quote with '…' or \"…\"")


def _ascii_digits(fd: re.Match[str] | None) -> None:
    if fd is None:  # not where bashlex said: the checker cannot tell what the shell reads
        raise CannotCheck("the parser placed a file descriptor where there is none")
    if not fd.group().isascii():
        raise CannotCheck(f"'{fd.group()}' is a word to /bin/sh, not a file descriptor (its digits are 0-9)")


def _runs(program: str, args: list[str]) -> list[str]:
    """The command a runner runs: its words after its options. Only env has options that take a
    value (see _env_command). exec's options are bash's (`exec -a NAME cmd`); dash has none and
    runs a program named -a: refused."""
    if program == "env":
        return _env_command(args)
    if program == "exec" and args and args[0].startswith("-") and args[0] != "-":
        raise CannotCheck(f"bash and /bin/sh read exec's options differently (sh runs a program '{args[0]}')")
    for i, arg in enumerate(args):
        if arg == "--":
            return args[i + 1 :]
        if not arg.startswith("-") or arg == "-":
            return args[i:]
    return []


def _env_command(args: list[str]) -> list[str]:
    """The command GNU env runs, its options read as its getopt reads them: a value glued
    (`-uNAME`, `--unset=NAME`) or the next word (`-u NAME`, `-iu NAME`, `--un NAME`); then a `-`
    (an empty environment) and its NAME=VALUE words: any word with a `=` in it.
    -S/--split-string is refused: env splits its string into a command by rules of its own."""
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "-":
        arg = args[i]
        i += 1
        if arg == "--":
            break
        if arg.startswith("--"):
            name, eq, _ = arg[2:].partition("=")
            option = _env_long(name)
            if option == "split-string":
                raise CannotCheck(_ENV_S)
            if _ENV_LONG[option] == "required" and not eq:
                i += 1  # its value is the next word
            continue
        for after, letter in enumerate(arg[1:], start=2):  # a cluster: -iu NAME, -iuNAME
            if letter in _ENV_WITH_VALUE:
                if letter == "S":
                    raise CannotCheck(_ENV_S)
                if after == len(arg):  # else the rest of the word is the value
                    i += 1
                break
            if letter not in _ENV_FLAGS:
                raise CannotCheck(f"env's option -{letter} is not one the checker knows")
    if i < len(args) and args[i] == "-":
        i += 1
    while i < len(args) and "=" in args[i]:
        i += 1
    return args[i:]


def _env_long(name: str) -> str:
    """env's long option that `--name` stands for: itself, or the one option it abbreviates."""
    if name in _ENV_LONG:
        return name
    found = [option for option in _ENV_LONG if option.startswith(name)]
    if len(found) != 1:  # none, or ambiguous: env fails, but another env may know it
        raise CannotCheck(f"env's option --{name} is not one the checker knows")
    return found[0]


def _shell_script(args: list[str]) -> str | None:
    """The STRING of `sh [options] -c STRING [name [args…]]`, None when the shell runs no -c string."""
    with_value = {"--rcfile", "--init-file"}
    dash_c = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        if arg in with_value:
            i += 2
        elif arg.startswith("--"):
            i += 1
        elif len(arg) > 1 and arg[0] in "-+":
            letters = arg[1:]
            dash_c = dash_c or "c" in letters
            i += 1 + letters.count("o") + letters.count("O")  # -o NAME, -O NAME
        else:
            break
    return args[i] if dash_c and i < len(args) else None


# ------------------------------------------------------------------ the rules


@lru_cache(maxsize=256)
def _glob(pattern: str) -> re.Pattern[str]:
    parts = re.split(r"(\\[\\*]|\*)", pattern)
    return re.compile("".join(".*" if p == "*" else re.escape(p[1] if p in ("\\*", "\\\\") else p) for p in parts), re.DOTALL)


def glob_of(command: str) -> str:
    """A glob that matches `command` only (its `*` and `\\` escaped)."""
    return command.replace("\\", "\\\\").replace("*", "\\*")


def matches(command: str, glob: str) -> bool:
    """Whether a simple command matches a glob: `*` is any text, `\\*` a star and `\\\\` a
    backslash, the rest stands for itself."""
    return _glob(glob).fullmatch(command) is not None


def _first_match(command: str, globs: Sequence[str]) -> str | None:
    return next((glob for glob in globs if matches(command, glob)), None)


@dataclass(frozen=True)
class Refusal:
    """Why a command line breaks a mode's rules."""

    #: The simple command refused (None when the line cannot be checked).
    command: str | None = None
    #: The deny glob it matches (None: it matches no allow glob, or the line cannot be checked).
    deny: str | None = None
    #: The allow globs it matches none of.
    allow: tuple[str, ...] = ()
    #: Why the line cannot be checked.
    reason: str | None = None

    def message(self, mode: str) -> str:
        head = f"Command refused by mode '{mode}': "
        if self.reason is not None:
            return head + f"cannot check the command line ({self.reason}); only commands that can be checked may run."
        command = _clip(self.command or "")
        if self.deny is not None:
            return head + f"'{command}' matches deny rule '{self.deny}'."
        if not self.allow:
            return head + f"'{command}' matches none of the allowed commands (the mode allows none)."
        return head + f"'{command}' matches none of the allowed commands: " + ", ".join(f"'{g}'" for g in self.allow) + "."


def check_command(command_line: str, allow: Sequence[str] | None, deny: Sequence[str]) -> Refusal | None:
    """None when every simple command of the line matches no deny glob and, if `allow` is not None,
    one allow glob; else the refusal (a command matching a deny glob is named first: deny wins)."""
    try:
        commands = simple_commands(command_line)
    except CannotCheck as exc:
        return Refusal(reason=str(exc))
    for command in commands:
        rule = _first_match(command, deny)
        if rule is not None:
            return Refusal(command, deny=rule)
    if allow is not None:
        for command in commands:
            if _first_match(command, allow) is None:
                return Refusal(command, allow=tuple(allow))
    return None


def every_command_matches(command_line: str, globs: Sequence[str]) -> bool:
    """True only if the line can be checked, runs at least one command, and each of its simple
    commands matches one of the globs (for auto-approving commands by glob)."""
    try:
        commands = simple_commands(command_line)
    except CannotCheck:
        return False
    return bool(commands) and all(_first_match(command, globs) is not None for command in commands)


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
