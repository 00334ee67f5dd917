"""Run the real controller over scenarios with known truth, and say how well each judge did.

    manage.py phasing_backtest --scenarios FILE [--judge ubuntu|sequential|all] [--seed N]
                               [--output FILE.jsonl] [--uptake-estimate-factor F]
                               [--summary FILE.json] [--jobs N] [--world NAME]
                               [--plot FILE.png]

One JSON line per update and judge on --output (or standard output), the summary table on
standard error with a progress bar while it runs. A scenario file that cannot be run, an
unknown judge or a bad option exits with code 2 and says why.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from overview.backtest import runner, summary
from overview.backtest.realism import WorldSpecError
from overview.backtest.scenarios import ScenarioError, load
from packages.domain import policy


class Command(BaseCommand):
    help = "Backtest the controller's judges against scenarios with known truth."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--scenarios", required=True, help="the scenario file (JSON)")
        parser.add_argument("--judge", default="all", help="ubuntu, sequential or all")
        parser.add_argument("--seed", type=int, default=1, help="seed of the simulated machines")
        parser.add_argument("--output", help="write the JSON lines here (default: stdout)")
        parser.add_argument(
            "--uptake-estimate-factor",
            type=float,
            default=1.0,
            help="scale the judge's estimate of uptake time, to see what a wrong one does",
        )
        parser.add_argument("--summary", help="also write the summary as JSON here")
        parser.add_argument(
            "--plot", help="also draw catches against regression size here (PNG, matplotlib)"
        )
        parser.add_argument(
            "--world",
            default="tidy",
            help="the simulated world: tidy, realistic, or one registered with "
            "overview.backtest.realism.register (the scenario's world keys override it)",
        )
        parser.add_argument(
            "--jobs",
            type=int,
            default=min(2, os.cpu_count() or 1),
            help="judges run side by side in this many processes (default: 2 if the CPUs allow)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        judges = list(policy.JUDGES) if options["judge"] == "all" else [options["judge"]]
        if any(j not in policy.JUDGES for j in judges):
            raise CommandError(
                f"unknown judge {options['judge']!r}: use {', '.join(policy.JUDGES)} or all",
                returncode=2,
            )
        factor = options["uptake_estimate_factor"]
        if not 0 < factor < 100:
            raise CommandError("--uptake-estimate-factor is a number above 0", returncode=2)
        if options["jobs"] < 1:
            raise CommandError("--jobs is 1 or more", returncode=2)
        try:
            scenario = load(options["scenarios"])
            scenario.world_spec(options["world"])
        except (ScenarioError, WorldSpecError) as error:
            raise CommandError(str(error), returncode=2) from error

        began = time.monotonic()
        total = scenario.hours * len(judges)
        with tqdm(total=total, desc="backtest hours", unit=" h", file=sys.stderr) as bar:
            outcomes = runner.run(
                scenario,
                judges=judges,
                seed=options["seed"],
                progress=bar.update,
                uptake_estimate_factor=factor,
                jobs=options["jobs"],
                world=options["world"],
            )
        lines = "".join(json.dumps(o.line()) + "\n" for o in outcomes)
        if options["output"]:
            with open(options["output"], "w", encoding="utf-8") as file:
                file.write(lines)
        else:
            self.stdout.write(lines, ending="")

        summaries = [summary.summarise(scenario, outcomes, judge) for judge in judges]
        report = summary.table(summaries)
        checks: list[tuple[str, bool]] = []
        if len(summaries) == 2:
            by_judge = {s.judge: s for s in summaries}
            checks = summary.checks(by_judge[policy.SEQUENTIAL], by_judge[policy.UBUNTU])
            report += "\n\n" + "\n".join(
                f"[{'met' if ok else 'MISSED'}] {what}" for what, ok in checks
            )
        minutes = (time.monotonic() - began) / 60
        self.stderr.write(
            f"\n{len(scenario.updates)} updates × {scenario.hours} hours × {len(judges)} "
            f"judge(s) in {minutes:.1f} min\n\n{report}\n"
        )
        if options["plot"]:
            from overview.backtest.plot import catches_png

            catches_png({options["world"]: summaries}, options["plot"])
        if options["summary"]:
            with open(options["summary"], "w", encoding="utf-8") as file:
                json.dump(
                    {
                        "updates": len(scenario.updates),
                        "hours": scenario.hours,
                        "seed": options["seed"],
                        "uptake_estimate_factor": factor,
                        "world": options["world"],
                        "minutes": round(minutes, 1),
                        "judges": {
                            s.judge: {
                                "healthy": s.healthy,
                                "healthy_halted": s.healthy_halted,
                                "caught": {k: list(v) for k, v in s.caught.items()},
                                "large_busy_caught": list(s.large_busy_caught),
                                "caught_at_full": s.caught_at_full,
                                "median_machine_hours_before_halt": s.median_machine_hours_before_halt,
                                "machine_hours_on_bad_versions": s.machine_hours_on_bad_versions,
                                "insufficient": s.insufficient,
                                "large_busy_median_percentage": s.large_busy_median_percentage,
                                "large_busy_median_hours": s.large_busy_median_hours,
                                "healthy_hours_to_100": s.healthy_hours_to_100,
                                "halts_by_problem": dict(s.halts_by_problem),
                                "own_version_blamed": list(s.own_version_blamed),
                            }
                            for s in summaries
                        },
                        "checks": {what: ok for what, ok in checks},
                        "table": report,
                    },
                    file,
                    indent=2,
                )
