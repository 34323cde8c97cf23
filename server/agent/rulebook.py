"""The rules a conversation's prompt tells (prompt/rules.py): the workspace's and the user's
rule files, those of the agent's mode, the conditional ones its touched files woke
(agent/touched.py), less those the settings disable (`rulesDisabled`); and `modus/rules/list`.

A task keeps the rules it was built with; the switcher builds a new one when `applying` answers
otherwise (a rule file changed, a file was touched, another conversation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import anyio

from ..errors import BadRequest
from ..modes import Mode
from ..prompt.rules import RuleFile
from .configuration import Configuration
from .touched import TouchedFiles

if TYPE_CHECKING:
    from protocol import RulesListParams, RulesListResult

    from ..state import StateStore


class RuleBook:
    def __init__(
        self,
        config: Configuration,
        touched: TouchedFiles,
        store: StateStore,
        current: Callable[[], str],
        responder: Callable[[str], str],
        mode_of: Callable[[str], Mode],
    ):
        self.config = config
        self.touched = touched
        self.store = store
        self.current = current
        self.responder = responder
        self.mode_of = mode_of
        #: (mode, conversation) → its rules, while nothing they depend on changed (`stamp`)
        self.memo: dict[tuple[str, str], tuple[RuleFile, ...]] = {}
        self.stamp: tuple = ()

    def applying(self, slug: str, cid: str) -> tuple[RuleFile, ...]:
        """The rules in the prompt of mode `slug` in conversation `cid`, in order."""
        stamp = (self.config.generation, self.touched.version)  # new rule files, settings: a new generation
        if stamp != self.stamp:
            self.memo.clear()
            self.stamp = stamp
        found = self.memo.get((slug, cid))
        if found is None:
            rules = self.config.rules.applying(slug, self.touched.of(cid), self.config.settings.rules_disabled)
            found = self.memo[(slug, cid)] = rules
        return found

    async def listed(self, params: RulesListParams) -> RulesListResult:
        """`modus/rules/list`: every rule file, and whether the prompt of the agent (by default the
        conversation's responder) in the conversation (by default the current one) has it now."""
        import protocol
        from ..providers.tokens import TOKENIZER

        cid = params.conversation_id or self.current()
        if not self.store.conversation_exists(cid):
            raise BadRequest(f"conversationId: unknown conversation: {cid}")
        agent = params.agent or self.responder(cid)
        if self.config.agent(agent) is None:
            raise BadRequest(f"agent: unknown agent: {agent}")
        rules = self.config.rules
        listed = rules.listed(self.mode_of(agent).slug, self.touched.of(cid), self.config.settings.rules_disabled)
        tokenizer = await TOKENIZER.ready()
        tokens = await anyio.to_thread.run_sync(lambda: [tokenizer.count(rule.text) for rule, _ in listed])
        return protocol.RulesListResult(
            rules=[
                protocol.RuleInfo(
                    path=rule.rel,
                    format=rule.format,
                    scope=rule.scope,
                    modes=list(rule.modes) or None,
                    paths=list(rule.paths) if rule.scope == "paths" else None,
                    active=active,
                    tokens=count,
                )
                for (rule, active), count in zip(listed, tokens)
            ]
        )
