"""The logic_slm substrate: resolution ladder, prompt catalog, structured-output client, metering.

Resolve a stage once per session, then make structured calls through one client::

    table = load_builtin_table()
    stage = resolve_stage(table=table, stack=load_stack("openai"), overlay=agent_overlay)
    async with SLMClient(ledger=SQLiteLedger("usage.sqlite")) as client:
        result = await client.complete(stage, schema, system, user, timeout=4.0, scope="extraction")

Provider modules (``openai_compat``, ``google``, ``vertex``, ``bedrock``) are imported on first
use, so an SDK you do not use need not be installed.
"""

from pipecat_steward.slm.client import SLMClient
from pipecat_steward.slm.config import (
    SCOPES,
    AuxEntry,
    AuxEntryConfig,
    BedrockMode,
    Provider,
    SessionIdentity,
    SLMStage,
    StructuredMode,
)
from pipecat_steward.slm.manifests import (
    DEFINITIONS_DIR,
    STACKS_DIR,
    BuiltinTable,
    OwnerProvider,
    StackManifest,
    list_stacks,
    load_builtin_table,
    load_price_book,
    load_stack,
)
from pipecat_steward.slm.prompts import (
    DEFAULT_PROMPTS,
    compose_system,
    effective_prompts,
    schema_instruction,
)
from pipecat_steward.slm.resolution import Rung, parse_entry, resolve_stage
from pipecat_steward.slm.result import SLMResult, Usage
from pipecat_steward.slm.schemas import gemini_schema, strict_schema, validate_result

__all__ = [
    # configuration and the ladder
    "DEFINITIONS_DIR",
    "SCOPES",
    "STACKS_DIR",
    "AuxEntry",
    "AuxEntryConfig",
    "BedrockMode",
    "BuiltinTable",
    "OwnerProvider",
    "Provider",
    "Rung",
    "SLMStage",
    "SessionIdentity",
    "StackManifest",
    "StructuredMode",
    "list_stacks",
    "load_builtin_table",
    "load_price_book",
    "load_stack",
    "parse_entry",
    "resolve_stage",
    # prompts
    "DEFAULT_PROMPTS",
    "compose_system",
    "effective_prompts",
    "schema_instruction",
    # the client
    "SLMClient",
    "SLMResult",
    "Usage",
    # schemas
    "gemini_schema",
    "strict_schema",
    "validate_result",
]
