"""The user's side of a conversation: a message becomes a stored user message with its
environment details, and wakes the agents it mentions (else the responder). The palette's and
the code actions' requests that start a turn come in here too.

A message is first prepared (checked, its slash command expanded, the UserPromptSubmit hooks run,
its mentions read: nothing changed yet), then delivered (its command's mode and phase switched
to, stored, shown, its agents woken), at once or, while a turn of an agent it goes to runs, once
that turn has ended (agent/queue.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Protocol, Sequence

import protocol

from ..roster.summons import Summons, started_together
from ..errors import BadRequest
from ..modes import Mode
from ..plan.machine import PLAN_REPLY_FOLLOWS, PLAN_SWITCHED_TO_ACT
from ..prompt import environment_details
from ..state import StoredMessage
from ..state.records import image_id_of, new_id
from .configuration import Configuration
from .conversations import Conversations
from .runtimes import Runtimes
from .switcher import Switcher
from .task import Task
from .history import IMAGES
from .touched import KEY as TOUCHED, mentioned_files

if TYPE_CHECKING:
    from protocol import ChatSendParams, ChatSendResult

    from ..images import Image
    from .hookbook import HookBook
    from .planner import Planner
    from .queue import MessageQueue
    from .todo_list import TodoList


class People(Protocol):
    """The humans of a conversation beyond the configured members: a team space's, who writes a
    message there, and telling the ones a message mentions (agent/space.py, SpaceLink)."""

    def humans(self, configured: Sequence[Any]) -> list[Any]: ...

    def author(self, cid: str) -> str | None: ...

    def mentioned(self, cid: str, message_id: str, text: str, handles: Sequence[str]) -> None: ...


@dataclass
class Prepared:
    """A user's message, checked and composed, not in the conversation yet."""

    conversation_id: str
    id: str
    #: what the user typed (what the chat shows)
    typed: str
    #: what is stored, what the agents get (the command's text, the hooks' context, without mentions)
    text: str
    #: the agents that answer it (none: a message of mentions only)
    targets: list[str]
    mentions: list[protocol.Mention]
    metadata: dict = field(default_factory=dict)
    #: a slash command's mode and phase, switched to when the message goes in
    mode: str | None = None
    phase: str | None = None
    #: the images it carries (checked; stored when it goes in), and their `[{id, mimeType}]`
    images: list[Image] = field(default_factory=list)

    @property
    def image_refs(self) -> list[dict]:
        return [{"id": image_id_of(i.data), "mimeType": i.mime_type} for i in self.images]

    def result(self, queued: bool = False) -> ChatSendResult:
        return protocol.ChatSendResult(
            conversation_id=self.conversation_id, message_id=self.id, text=self.text, dispatched=self.targets,
            mentions=self.mentions, queued=queued or None,
        )


class Expanded(NamedTuple):
    """A slash command's text, and the mode and phase it switches to first."""

    text: str
    mode: str | None
    phase: str | None


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
        queue: MessageQueue,
        people: People,
    ):
        self.people = people
        self.queue = queue
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
        """`modus/chat/send`: the message goes in at once, or waits, queued, for the turn of an
        agent it goes to to end (agent/queue.py). `files`: what the message is about besides the
        files it mentions (a code action's selection's): touched by the conversation (agent/touched.py)."""
        message = await self.prepare(params, files)
        if self.queue.must_wait(message):
            self.queue.hold(message)
            return message.result(queued=True)
        return await self.deliver_now(message)

    async def deliver_now(self, message: Prepared) -> ChatSendResult:
        for agent, summons in self.deliver([message]):
            await self.runtimes.wake(message.conversation_id, agent, summons)
        return message.result()

    async def prepare(self, params: ChatSendParams, files: Sequence[str] = ()) -> Prepared:
        """The message checked and composed, its command expanded and the UserPromptSubmit hooks
        run (one that blocks refuses it): BadRequest naming the field, or what `deliver` takes.
        Nothing of the conversation changes but which one is current."""
        text = params.text
        images = []
        if params.images:
            from ..images import decode

            images = decode(params.images)
        if not text.strip() and not images:
            raise BadRequest("text: must not be empty")
        if params.owner is not None and self.config.agent(params.owner) is None:
            raise BadRequest(f"owner: unknown agent: {params.owner}")
        if params.conversation_id is not None:
            self.conversations.make_current(self.conversations.chosen(params.conversation_id), params.owner)
        from ..roster import parse_user_message

        cid = self.conversations.current
        typed, command = text, self.command(text)
        if command is not None:
            text = command.text
        added = await self.prompt_hooks(cid, typed, command)
        if added:
            text = f"{text}\n\n{added}"
        composed = parse_user_message(text, self.config.agents, self.people.humans(self.config.settings.members))
        # the mentioned agents, in parallel, each with the whole message; none: the responder;
        # a message made only of mentions starts nothing, nor does one to colleagues in a team space
        for_colleagues = not composed.agents and any(m.kind == "human" for m in composed.mentions) and self.people.author(cid) is not None
        targets = [] if (composed.empty and not images) or for_colleagues else (composed.agents or [self.responder(cid)])
        if images:
            self.refuse_images_unseen(cid, targets, command.mode if command else None, command.phase if command else None)
        mentions = [protocol.Mention(raw=m.raw, kind=m.kind, name=m.name) for m in composed.mentions]
        extra: dict = {"typed": typed, "mentions": [m.wire() for m in mentions]} if mentions else {}
        if command is not None or added:
            extra["typed"] = typed
        touched = list(dict.fromkeys([*files, *mentioned_files(text, self.config.workspace)]))
        if touched:
            extra[TOUCHED] = touched
        return Prepared(
            cid, new_id("msg-"), typed, composed.text if targets else text, targets, mentions, extra,
            command.mode if command else None, command.phase if command else None, images,
        )

    def refuse_images_unseen(self, cid: str, agents: Sequence[str], mode: str | None, phase: str | None) -> None:
        """A message with images goes only to models that see them: BadRequest on `images` naming
        the agent and its model otherwise, before anything is stored or asked."""
        from ..providers.catalog import model_id, vision_of
        from .task import resolve_model

        settings = self.config.settings
        for agent in agents:
            task = self.switcher.task_for(agent, cid)
            config = task.model_config
            if mode is not None or phase is not None:  # a slash command's switch comes first
                agent_config = self.config.agent(agent)
                config = resolve_model(settings.models, mode or task.mode.slug, phase or task.phase, agent_config.model if agent_config else None)
            if not vision_of(config):
                name = model_id(config) or config.provider
                raise BadRequest(
                    f"images: {agent}'s model ({config.provider} {name}) cannot see images, so the message was not sent: "
                    "choose a model with vision, or set `vision: true` in its Model setting if it has it"
                )

    def deliver(self, messages: Sequence[Prepared]) -> list[tuple[str, Summons]]:
        """The messages (of one conversation, in order) into the conversation: each command's
        mode and phase switched to, a plan_mode_respond that waits answered, each message stored
        and shown. One turn of each agent they go to answers them all: the agents to wake, and
        why. The environment_details block goes with the last (the others' would be stale at once)."""
        from ..roster import Chain

        wakes: dict[str, Summons] = {}
        for i, message in enumerate(messages):
            cid = message.conversation_id
            try:
                if message.mode is not None:
                    self.switcher.switch_mode(message.mode, by="user", conversation_id=cid)
                if message.phase is not None:
                    self.switcher.set_phase(message.phase, by="user", conversation_id=cid)
            except BadRequest as exc:  # its mode went away while it was queued: it goes in all the same
                self.config.host.show_message("warning", f"The command's switch of {message.typed.split()[0]} was not made: {exc}")
            # a plan_mode_respond that waits for this answer (asked in PLAN: ACT now means the user switched)
            self.answer_waiting_call(cid, PLAN_REPLY_FOLLOWS if self.switcher.phase == "plan" else f"{PLAN_SWITCHED_TO_ACT} {PLAN_REPLY_FOLLOWS}")
            lead = message.targets[0] if message.targets else self.responder(cid)
            task = self.switcher.task_for(lead, cid) if i == len(messages) - 1 else None
            refs = message.image_refs
            for image in message.images:  # each stored once, however often it is sent
                self.conversations.store.put_image(cid, image.mime_type, image.data)
            extra = {IMAGES: refs} if refs else {}
            author = self.people.author(cid)
            if author is not None:
                extra["member"] = author
            self.add_user_message(cid, message.text, task, message_id=message.id, **message.metadata, **extra)
            self.config.host.publish(
                protocol.MessageUpdate(
                    conversation_id=cid, role="user", text=message.typed, message_id=message.id, images=refs or None, member=author,
                )
            )
            humans = [m.name for m in message.mentions if m.kind == "human"]
            if humans:
                self.people.mentioned(cid, message.id, message.typed, humans)
            chain = Chain.start(message.targets)
            for agent in message.targets:
                others = [a for a in message.targets if a != agent]
                summons = Summons(chain, note=started_together(agent, others) if others else None)
                wakes[agent] = wakes[agent].then(summons) if agent in wakes else summons
        return list(wakes.items())

    async def prompt_hooks(self, cid: str, typed: str, command: Expanded | None = None) -> str:
        """UserPromptSubmit hooks: one that blocks refuses the message (the user sees why); what
        the others print is added to it for the model. They are told the mode and phase the
        message will run in (a command's, when it switches)."""
        task = self.switcher.task_for(self.responder(cid), cid)
        mode = command.mode if command and command.mode else task.mode.slug
        phase = command.phase if command and command.phase else task.phase
        runs = await self.hooks.fire("UserPromptSubmit", conversation_id=cid, agent=task.agent, mode=mode, phase=phase, prompt=typed)
        for done in runs:
            if done.blocks:
                raise BadRequest(f"text: refused by a UserPromptSubmit hook: {done.reason or done.command}")
        return "\n\n".join(c for c in (await self.hooks.take_context(), *(done.context for done in runs)) if c)

    def command(self, text: str) -> Expanded | None:
        """A slash command's text for the model (prompt/commands.py), and the mode and phase it
        switches to first, as the user's switch (when the message goes in); None when the
        message is none."""
        typed = self.config.commands.typed(text)
        if typed is None:
            return None
        command, arguments = typed
        body = command.expand(arguments)
        if not body.strip():
            raise BadRequest(f"text: the command /{command.name} ({command.path}) has no text to send")
        if command.mode is not None and self.config.modes.get(command.mode) is None:
            raise BadRequest(f"text: the command /{command.name} ({command.path}) switches to mode '{command.mode}', which does not exist")
        return Expanded(body, command.mode, command.phase)

    async def tell(self, cid: str, agent: str, text: str) -> None:
        """Something the user did outside the chat (a plan decided from the palette), told to the
        agent as a user message of the conversation, and the agent's turn started."""
        self.add_user_message(cid, text, self.switcher.task_for(agent, cid), source="plan")
        self.config.host.publish(protocol.MessageUpdate(conversation_id=cid, agent=agent, role="system", text=text))
        await self.runtimes.wake(cid, agent)

    def answer_waiting_call(self, cid: str, text: str) -> bool:
        """plan_mode_respond's result is written when the user answers (a message, or a switch
        to ACT), so that it can say which. Such a call is the only one an ended turn leaves
        without a result: while a turn is under way, the last reply's calls are that turn's."""
        return not self.runtimes.in_turn(cid) and self.conversations.answer_waiting_calls(cid, text)

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

    def add_user_message(self, cid: str, text: str, task: Task | None, message_id: str | None = None, **metadata) -> StoredMessage:
        """A user message, with the environment_details block the model gets with it (of the
        task's agent; none without a task)."""
        if task is not None:
            metadata = {"environmentDetails": self.environment(task.mode, task.phase, task.agent), **metadata}
        return self.conversations.add_message(StoredMessage(message_id or new_id("msg-"), cid, "user", text, None, metadata))
