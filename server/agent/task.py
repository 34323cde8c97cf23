"""A task runs the agent loop for exactly one (mode, phase). One factory builds every task.

A task is never changed: switching mode or phase builds a new one and the old one is dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from protocol import Model, ModelsConfig, TaskInfo, TaskModel

from ..modes import HANDOFF_TOOLS, PHASE_ONLY, SKILL_TOOL, Mode
from ..prompt import PromptContext, SystemPrompt, build_prompt, params_schema
from ..providers import ModelClient, ModelLimits, ScriptCursor, ToolSchema, open_model
from ..state.records import new_id


@dataclass(frozen=True)
class Task:
    id: str
    agent: str
    mode: Mode
    phase: str
    model_config: Model
    model: ModelClient
    #: What the system prompt is made of; the prompt itself is built when first used.
    context: PromptContext
    #: Settings generation the task was built with; a settings change rebuilds tasks.
    generation: int

    @property
    def tools(self) -> frozenset[str]:
        """The tools enabled for this task."""
        return self.context.tools

    @cached_property
    def prompt(self) -> SystemPrompt:
        return build_prompt(self.context)

    @cached_property
    def tool_schemas(self) -> tuple[ToolSchema, ...]:
        """The enabled tools as the model is told of them, in the registry's order; then one per
        tool of the MCP servers the mode may use (a native call of one is use_mcp_tool's)."""
        schemas = [ToolSchema(t.name, t.description, params_schema(t.params)) for t in self.context.docs]
        if "use_mcp_tool" in self.tools:
            for server in self.context.mcp:
                for tool in server.tools:
                    what = f"(The tool '{tool.name}' of the MCP server '{server.name}'.)"
                    schemas.append(ToolSchema(tool.native, f"{tool.description}\n{what}" if tool.description else what, tool.schema))
        return tuple(schemas)

    def info(self) -> TaskInfo:
        c = self.model_config
        return TaskInfo(
            id=self.id,
            mode=self.mode.slug,
            phase=self.phase,
            model=TaskModel(
                provider=c.provider,
                model=c.model,
                reasoning_effort=c.reasoning_effort,
                thinking_budget_tokens=c.thinking_budget_tokens,
                max_tokens=c.max_tokens,
            ),
        )


class ToolDocs(Sequence):
    """The documentation of the tools of these names, in the registry's order: looked up when
    first read (the tool registry loads with the first prompt built, not at start-up)."""

    def __init__(self, names: frozenset[str]):
        self.names = names

    @cached_property
    def specs(self) -> tuple:
        from ..tools import specs

        return tuple(specs(self.names))

    def __getitem__(self, index):
        return self.specs[index]

    def __len__(self) -> int:
        return len(self.specs)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ToolDocs) and other.names == self.names

    def __hash__(self) -> int:
        return hash(self.names)


def resolve_model(models: ModelsConfig, mode: str, phase: str, agent_model: Model | None = None) -> Model:
    """mode+phase → mode → phase → the agent's own → default; thinking budget capped below max tokens."""
    chosen: Model | None = None
    per_mode = models.modes.get(mode)
    if per_mode is not None:
        chosen = getattr(per_mode, phase)
        if chosen is None and per_mode.provider is not None:
            chosen = Model.model_validate(per_mode.model_dump(exclude={"plan", "act"}, exclude_none=True))
    chosen = chosen or getattr(models.phases, phase) or agent_model or models.default
    budget, limit = chosen.thinking_budget_tokens, chosen.max_tokens
    if budget is not None and limit is not None and budget >= limit:
        chosen = chosen.model_copy(update={"thinking_budget_tokens": max(limit - 1, 0)})
    return chosen


def enabled_tools(mode: Mode, phase: str, yolo: bool, handoffs: bool = False, skills: bool = False) -> frozenset[str]:
    """The names of the tools a task of this mode and phase has (yolo asks the user nothing;
    `handoffs`: there are other agents to hand work to; `skills`: the mode may use one)."""
    names = {name for name in mode.tools() if PHASE_ONLY.get(name, phase) == phase}
    if handoffs:
        names |= HANDOFF_TOOLS
    if skills and mode.group("read") is not None:
        names.add(SKILL_TOOL)
    if yolo:
        names.discard("ask_followup_question")
    return frozenset(names)


def build_task(
    *,
    context: PromptContext,
    agent_model: Model | None,
    models: ModelsConfig,
    cursor: ScriptCursor,
    generation: int,
    limits: ModelLimits,
) -> Task:
    """The one task factory: the model for (mode, phase, agent), the prompt and the tool set."""
    config = resolve_model(models, context.mode.slug, context.phase, agent_model)
    return Task(
        id=new_id("task-"),
        agent=context.agent,
        mode=context.mode,
        phase=context.phase,
        model_config=config,
        model=open_model(config, workspace=context.workspace, cursor=cursor, limits=limits),
        context=context,
        generation=generation,
    )
