"""The steward's tools as the model sees them, and the one wrapper every call goes through.

Schemas are generated from the flow config: a setter's parameters come from the agent's
validator signature (or from its slots), its description from the validator's docstring — how
to prepare the argument, never when to call (the engine decides when). ``confirm_pending``,
``reject_pending``, ``correct_slot`` and ``decline_slot`` are the steward's own. Executors are
never offered to the model.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

from pipecat.adapters.llm.schemas.function_schema import FunctionSchema
from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.services.llm_service import FunctionCallParams, LLMService

from pipecat_steward.core.procedures import describe_tool
from pipecat_steward.core.slots import CompiledFlow
from pipecat_steward.pipecat.client_messages import send_client_messages
from pipecat_steward.runtime.arguments import function_params, setter_params, steward_params
from pipecat_steward.runtime.dispatch import ToolFn
from pipecat_steward.runtime.session import StewardSession

__all__ = ["StewardTools"]


class StewardTools:
    """The steward-managed tool schemas of a flow and their call wrapper."""

    def __init__(self, session: StewardSession, extra: Iterable[FunctionSchema] = ()) -> None:
        self.session = session
        flow, tools = session.agent.flow, session.agent.tools
        self.schemas: dict[str, FunctionSchema] = {
            name: _setter_schema(flow, name, tools.get(name)) for name in flow.setters
        }
        self.schemas.update(_steward_schemas(flow))
        for name, (description, props, required) in session.tool_specs().items():
            self.schemas[name] = FunctionSchema(name, description, props, required)
        self.agent_schemas = {
            name: _agent_schema(session, name) for name in session.agent.llm_tools
        }
        self.extra = list(extra)
        # The schemas shown for each set of offered names (the same few sets recur every turn).
        self._shown: dict[frozenset[str], list[FunctionSchema]] = {}
        # The tool set ``offer`` put on a context last: what it was made for, it, its schemas.
        self._offered: tuple[tuple[object, ...], ToolsSchema, list[FunctionSchema]] | None = None
        self.on_call: Callable[[str, dict[str, Any]], None] | None = None

    def tools_for(self, visible: frozenset[str]) -> ToolsSchema:
        """The full tool set for one inference: visible steward tools plus the app's own.

        None at all once another worker took the call over (the session is stale).
        """
        if self.session.conflict is not None:
            return ToolsSchema(standard_tools=[])
        offered = self.session.offered(visible)
        shown = self._shown.get(offered)
        if shown is None:
            every = {**self.schemas, **self.agent_schemas}
            shown = self._shown[offered] = [s for name, s in every.items() if name in offered]
        return ToolsSchema(standard_tools=[*shown, *self.extra])

    def offer(self, context: LLMContext, visible: frozenset[str]) -> None:
        """Set ``tools_for(visible)`` on ``context`` for its next inference.

        A set this put there before stays when it was made for the same offer and is still
        there as it was made: an inference whose offer did not change sets nothing.
        """
        made_for = (self.session.conflict is None, self.session.offered(visible), *self.extra)
        if self._offered is not None:
            last_made_for, last, schemas = self._offered
            # Still there, and nobody changed it in place: the offer is set already.
            if (
                last_made_for == made_for
                and context.tools is last
                and last.standard_tools == schemas
            ):
                return
        tools = self.tools_for(visible)
        context.set_tools(tools)
        self._offered = (made_for, tools, list(tools.standard_tools))

    def register(self, llm: LLMService) -> None:
        """Register the one wrapper as the handler of every steward and agent tool on ``llm``.

        It also answers names nobody registered (pipecat's catch-all): such a call is refused
        with the current directive, as a steward tool that is not visible now is.
        """
        for name in [*self.schemas, *self.agent_schemas, None]:
            llm.register_function(name, self._handle)

    async def _handle(self, params: FunctionCallParams) -> None:
        """Every tool call enters through ``StewardSession.handle_tool``; checklist status follows.

        The conversation events wait: the result brings an inference of its own, whose
        completion sends them.
        """
        call = await self.session.handle_tool(
            params.function_name, dict(params.arguments), params.tool_call_id
        )
        await send_client_messages(params.llm, self.session.take_status(events=False))
        await params.result_callback(dict(call.result))


def _setter_schema(flow: CompiledFlow, name: str, fn: ToolFn | None) -> FunctionSchema:
    params = setter_params(flow, name, fn)
    if fn is not None:
        return _from_function(name, fn)
    slots = [flow.slot[s] for _, s in flow.setters[name]]
    hints = "; ".join(s.config.hint for s in slots if s.config.hint)
    description = f"Record {', '.join(s.label.replace('_', ' ') for s in slots)}." + (
        f" {hints}." if hints else ""
    )
    return FunctionSchema(name, description, dict(params.properties), list(params.required))


def _agent_schema(session: StewardSession, name: str) -> FunctionSchema:
    """An agent tool's schema; its description advertises open prerequisite titles."""
    schema = _from_function(name, session.agent.tools[name])
    procs = session.agent.procedures
    if procs is None:
        return schema
    description = describe_tool(procs, name, schema.description)
    return FunctionSchema(name, description, schema.properties, schema.required)


def _from_function(name: str, fn: ToolFn) -> FunctionSchema:
    params = function_params(fn)
    description = inspect.getdoc(fn) or f"Record {name}."
    return FunctionSchema(name, description, dict(params.properties), list(params.required))


_STEWARD_DESCRIPTIONS = {
    "confirm_pending": "Confirm the values that were just read back to the caller.",
    "reject_pending": "Discard the values that were just read back to the caller.",
    "correct_slot": "Change an answer the caller gave earlier. `slot` names the answer; `value` is "
    "the new value, prepared the way that answer's setter expects it.",
    "decline_slot": "Record that the caller will not give this information. `slot` names it.",
}


def _steward_schemas(flow: CompiledFlow) -> dict[str, FunctionSchema]:
    return {
        name: FunctionSchema(
            name, _STEWARD_DESCRIPTIONS[name], dict(params.properties), list(params.required)
        )
        for name, params in steward_params(flow).items()
    }
