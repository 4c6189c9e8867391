"""The whole ``agent.yaml`` as one pydantic model, section by section.

The loader validates a file against :class:`AgentConfig` (every shape error at once, each at
its config path); ``steward schema`` and ``docs/agent-yaml.md`` are generated from the same
models, so the reference cannot describe a file the loader would read differently.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from pipecat_steward.core.procedures.model import ProcedureConfig
from pipecat_steward.core.slots.config import FlowConfig
from pipecat_steward.core.transactions import IntentSpec, IntentTexts
from pipecat_steward.core.variables import VariableSpec
from pipecat_steward.slm.config import AuxEntry

__all__ = ["AgentConfig", "AuxConfig", "IntentConfig", "TopicConfig"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class IntentConfig(_Model):
    """One transaction the caller can ask for (``intents:``)."""

    name: str
    description: str = ""
    required: list[str]
    executor: str
    confirmation: str
    pre_validation: str | None = None
    domain: str | None = None
    cues: list[str] = Field(default_factory=lambda: [])
    ask: dict[str, str] = Field(default_factory=lambda: {})
    outputs: list[str] = Field(default_factory=lambda: [])
    done_say: str = "Done."
    failed_say: str = "I'm sorry, that didn't go through. Let me get a colleague to help."
    out_of_scope_say: str = "I'm sorry, that isn't something I can do for this request."
    check_failed_say: str = "I couldn't check that right now. Would you like me to try again?"
    resume_say: str = "Shall we go back to your earlier request to {intent}?"
    read_only: bool = False

    def texts(self) -> IntentTexts:
        """What is said for this intent."""
        return IntentTexts(
            self.name,
            self.description,
            dict(self.ask),
            self.done_say,
            self.failed_say,
            self.out_of_scope_say,
            self.check_failed_say,
            self.resume_say,
        )

    def spec(self) -> IntentSpec:
        return IntentSpec(
            self.name,
            tuple(self.required),
            self.executor,
            self.confirmation,
            pre_validation=self.pre_validation,
            domain=self.domain,
            cues=tuple(self.cues),
        )


class TopicConfig(_Model):
    """One more scope of procedures (a topic), beside the main prompt's."""

    prompt: str = ""
    procedure: ProcedureConfig | None = None


class AuxConfig(_Model):
    """Which small model (the logic_slm) the monitor and extractor use."""

    stack: str | None = None
    logic_slm: AuxEntry | None = None


class AgentConfig(_Model):
    """An agent folder's ``agent.yaml``."""

    name: str | None = None
    prompt: str = ""
    procedure: ProcedureConfig | None = None
    procedures: dict[str, TopicConfig] = Field(default_factory=lambda: {})
    variables: list[VariableSpec] = Field(default_factory=lambda: [])
    tools: list[str] = Field(default_factory=lambda: [])
    available_when: dict[str, str] = Field(default_factory=lambda: {})
    flow: FlowConfig | None = None
    intents: list[IntentConfig] | None = None
    aux: AuxConfig | None = None
