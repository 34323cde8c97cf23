"""The user's side of a conversation: a message becomes a stored user message with its
environment details, and wakes the agents it mentions (else the responder). The palette's and
the code actions' requests that start a turn come in here too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

import protocol

from ..roster.summons import Summons, started_together
from ..errors import BadRequest
from ..modes import Mode
from ..plan.machine import PLAN_REPLY_FOLLOWS, PLAN_SWITCHED_TO_ACT
from ..prompt import environment_details
from ..state import StoredMessage
from ..state.store import new_id
from .configuration import Configuration
from .conversations import Conversations
from .runtimes import Runtimes
from .switcher import Switcher
from .task import Task
from .touched import KEY as TOUCHED, mentioned_files

if TYPE_CHECKING:
    from protocol import ChatSendParams, ChatSendResult

    from .hookbook import HookBook
    from .planner import Planner
    from .todo_list import TodoList


class Intake:
    def __init__(
        self,
        config: Configuration,
        conversations: Conversations,
        switcher: Switcher,
        runtimes: Runtimes,
        planner: Callable[[], Planner],
        todos: TodoList,
        hooks: HookBook,
    ):
        self.config = config
        self.conversations = conversations
        self.switcher = switcher
        self.runtimes = runtimes
        self.hooks = hooks
        self.planner = planner
        self.todos = todos

    def responder(self, cid: str) -> str:
        return self.conversations.responder(cid, self.config.agents)

    async def send(self, params: ChatSendParams, files: Sequence[str] = ()) -> ChatSendResult:
        """`files`: what the message is about besides the files it mentions (a code action's
        selection's): touched by the conversation (agent/touched.py)."""
        text = params.text
        if not text.strip():
            raise BadRequest("text: must not be empty")
        if params.owner is not None and self.config.agent(params.owner) is None:
            raise BadRequest(f"owner: unknown agent: {params.owner}")
        if params.conversation_id is not None:
            self.conversations.make_current(self.conversations.chosen(params.conversation_id), params.owner)
        from ..roster import Chain, parse_user_message

        cid = self.conversations.current
        typed, command = text, self.command(text)
        if command is not None:
            text = command
        added = await self.prompt_hooks(cid, typed)
        if added:
            text = f"{text}\n\n{added}"
        composed = parse_user_message(text, self.config.agents, self.config.settings.members)
        # the mentioned agents, in parallel, each with the whole message; none: the responder;
        # a message made only of mentions starts nothing
        targets = [] if composed.empty else (composed.agents or [self.responder(cid)])
        # a plan_mode_respond that waits for this answer (asked in PLAN: ACT now means the user switched)
        self.answer_waiting_call(cid, PLAN_REPLY_FOLLOWS if self.switcher.phase == "plan" else f"{PLAN_SWITCHED_TO_ACT} {PLAN_REPLY_FOLLOWS}")
        mentions = [protocol.Mention(raw=m.raw, kind=m.kind, name=m.name) for m in composed.mentions]
        extra: dict = {"typed": typed, "mentions": [m.wire() for m in mentions]} if mentions else {}
        if command is not None or added:
            extra["typed"] = typed
        touched = list(dict.fromkeys([*files, *mentioned_files(text, self.config.workspace)]))
        if touched:
            extra[TOUCHED] = touched
        lead = targets[0] if targets else self.responder(cid)
        message = self.add_user_message(cid, composed.text if targets else text, self.switcher.task_for(lead), **extra)
        self.config.host.publish(protocol.MessageUpdate(conversation_id=cid, role="user", text=typed))
        chain = Chain.start(targets)
        for agent in targets:
            others = [a for a in targets if a != agent]
            await self.runtimes.wake(cid, agent, Summons(chain, note=started_together(agent, others) if others else None))
        return protocol.ChatSendResult(
            conversation_id=cid, message_id=message.id, text=message.text, dispatched=targets, mentions=mentions
        )

    async def prompt_hooks(self, cid: str, typed: str) -> str:
        """UserPromptSubmit hooks: one that blocks refuses the message (the user sees why); what
        the others print is added to it for the model."""
        task = self.switcher.task_for(self.responder(cid), cid)
        runs = await self.hooks.fire("UserPromptSubmit", conversation_id=cid, agent=task.agent, mode=task.mode.slug, phase=task.phase, prompt=typed)
        for done in runs:
            if done.blocks:
                raise BadRequest(f"text: refused by a UserPromptSubmit hook: {done.reason or done.command}")
        return "\n\n".join(c for c in (await self.hooks.take_context(), *(done.context for done in runs)) if c)

    def command(self, text: str) -> str | None:
        """A slash command's text for the model (prompt/commands.py), its mode and phase switched
        to first as the user's; None when the message is none."""
        typed = self.config.commands.typed(text)
        if typed is None:
            return None
        command, arguments = typed
        body = command.expand(arguments)
        if not body.strip():
            raise BadRequest(f"text: the command /{command.name} ({command.path}) has no text to send")
        if command.mode is not None:
            if self.config.modes.get(command.mode) is None:
                raise BadRequest(f"text: the command /{command.name} ({command.path}) switches to mode '{command.mode}', which does not exist")
            self.switcher.switch_mode(command.mode, by="user")
        if command.phase is not None:
            self.switcher.set_phase(command.phase, by="user")
        return body

    async def tell(self, cid: str, agent: str, text: str) -> None:
        """Something the user did outside the chat (a plan decided from the palette), told to the
        agent as a user message of the conversation, and the agent's turn started."""
        self.add_user_message(cid, text, self.switcher.task_for(agent, cid), source="plan")
        self.config.host.publish(protocol.MessageUpdate(conversation_id=cid, agent=agent, role="system", text=text))
        await self.runtimes.wake(cid, agent)

    def answer_waiting_call(self, cid: str, text: str) -> bool:
        """plan_mode_respond's result is written when the user answers (a message, or a switch
        to ACT), so that it can say which. Such a call is the only one an ended turn leaves
        without a result."""
        return not self.runtimes.busy(cid) and self.conversations.answer_waiting_calls(cid, text)

    async def user_set_phase(self, phase: str) -> None:
        """The user's flip. To ACT while plan_mode_respond waits for an answer: the turn goes on in
        ACT, the model told that the user switched."""
        self.switcher.set_phase(phase, by="user")
        cid = self.conversations.current
        if phase == "act" and self.answer_waiting_call(cid, PLAN_SWITCHED_TO_ACT):
            await self.runtimes.wake(cid, self.responder(cid))

    async def plan_selection(self, quoted, goal: str | None) -> None:
        """"Plan a change here": planning starts with the selection's file as scope, and the
        selection (numbered lines) is the first message of the plan."""
        from ..plan.machine import PlanStateError

        cid = self.conversations.current
        agent = self.responder(cid)
        goal = goal.strip() if goal and goal.strip() else f"A change in {quoted.rel}"
        try:
            self.planner().enter(agent, cid, goal, [quoted.rel], by="user")
        except PlanStateError as exc:
            raise BadRequest(str(exc)) from None
        text = (
            f"Plan a change here: {goal}\n\n{quoted.text}\n\nPlan mode is on, scoped to {quoted.rel}: explore it "
            "with read-only tools, then present the plan with plan_exit."
        )
        await self.send(protocol.ChatSendParams(text=text), files=[quoted.rel])

    async def start_in_mode(self, mode: str, text: str, files: Sequence[str] = ()) -> None:
        """A code action's turn: the user's switch to `mode`, then `text` in the current
        conversation; `files`: those of the selection it sends."""
        if self.config.modes.get(mode) is None:
            raise BadRequest(f"mode: Invalid mode: {mode}")
        self.switcher.switch_mode(mode, by="user")
        await self.send(protocol.ChatSendParams(text=text), files=files)

    def environment(self, mode: Mode, phase: str, agent: str) -> str:
        """environment_details for the agent's next user message: its plan and its todos too."""
        from ..plan.todos import as_text

        return environment_details(
            mode, phase, self.config.workspace.root, plan=self.planner().brief(agent), todos=as_text(self.todos.todos(agent))
        )

    def add_user_message(self, cid: str, text: str, task: Task, **metadata) -> StoredMessage:
        """A user message, with the environment_details block the model gets with it."""
        env = self.environment(task.mode, task.phase, task.agent)
        return self.conversations.add_message(StoredMessage(new_id("msg-"), cid, "user", text, None, {"environmentDetails": env, **metadata}))
