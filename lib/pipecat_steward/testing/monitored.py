"""Play a scenario through the real pipeline with the procedure monitor and extractor attached.

The pipeline path (``simulate.PipelinePlayer``) plus a small-LLM monitor and extractor that a
``ScriptedSLM`` answers. The scenario's first-turn ``verdict`` is set-up state (applied before
the call, like host seeding); every later ``verdict`` is ground truth handed to the oracle at
that turn, which the monitor must find through the SLM. Each trace gains ``slm_calls``,
``corrections`` and ``extracted``.
"""

from __future__ import annotations

from typing import Any

from pipecat_steward.core.redaction import redact_tree
from pipecat_steward.pipecat.extractor import EntityExtractor, attach_extractor
from pipecat_steward.pipecat.monitor import ProcedureMonitor, attach_monitor
from pipecat_steward.runtime.records import TurnRecord
from pipecat_steward.slm import SLMClient
from pipecat_steward.testing.player import play_scenario
from pipecat_steward.testing.scenario import ScenarioTurn, as_scenario
from pipecat_steward.testing.scripted_slm import Behaviour, ScriptedSLM, VerdictOracle
from pipecat_steward.testing.simulate import PipelinePlayer

__all__ = ["MonitoredPlayer", "run_scenario_monitored"]


class MonitoredPlayer(PipelinePlayer):
    """A pipeline player whose turns also wait for the monitor and the extractor.

    Attributes:
        monitor: The procedure monitor on the steward.
        extractor: The entity extractor, if attached.
        oracle: The scripted SLM's ground truth, fed each turn's verdict.
        slm: How the scripted SLM answers where a turn does not say.
    """

    monitor: ProcedureMonitor
    extractor: EntityExtractor | None = None
    oracle: VerdictOracle | None = None
    slm: Behaviour = "truth"

    def before(self, number: int, turn: ScenarioTurn) -> None:
        oracle = self.oracle
        if oracle is not None and turn.verdict is not None and number > 1:
            oracle.truth |= {*turn.verdict.satisfied, *turn.verdict.not_applicable}
        if oracle is not None:
            oracle.behaviour = turn.slm or self.slm
        setup = turn if number == 1 else turn.model_copy(update={"verdict": None})
        super().before(number, setup)

    async def settle(self) -> None:
        await super().settle()
        await self.monitor.drain()
        if self.extractor is not None:
            await self.extractor.drain()

    def trace(self, number: int, record: TurnRecord) -> dict[str, Any]:
        trace = super().trace(number, record)
        stats = self.monitor.stats
        trace["slm_calls"] = stats.by_turn.get(number, 0)
        trace["corrections"] = [c for c in stats.corrections if c["turn"] == number]
        trace["extracted"] = self.extractor.stats.by_turn.get(number, {}) if self.extractor else {}
        return redact_tree(trace, self.monitor.secrets.bound())


async def run_scenario_monitored(
    agent: Any,
    scenario: Any,
    slm: ScriptedSLM,
    *,
    oracle: VerdictOracle | None = None,
    ledger: Any = None,
    extract: bool = True,
) -> tuple[list[dict[str, Any]], Any, Any]:
    """Play a scenario like ``simulate.run_scenario`` with the monitor and extractor attached.

    The scenario's first-turn ``verdict`` is set-up state (applied before the call, like host
    seeding); every later ``verdict`` is ground truth handed to ``oracle`` at that turn, and the
    monitor must find it through the SLM. Each trace gains ``slm_calls``, ``corrections`` and
    ``extracted``. Also importable from ``scripted_slm``.

    Returns:
        ``(traces, monitor, extractor)``.
    """
    scenario = as_scenario(scenario)  # a scenario file's path, too
    player = await MonitoredPlayer.start(agent, scenario)
    player.oracle, player.slm = oracle, scenario.slm
    async with SLMClient(ledger=ledger) as client:
        player.monitor = attach_monitor(player.steward, player.llm, client, slm.stage())
        if extract:
            player.extractor = attach_extractor(player.steward, client, slm.stage())
        async with player.running():
            traces = await play_scenario(player, scenario)
        await player.monitor.aclose()
    return traces, player.monitor, player.extractor
