"""The project's own backtest scenarios: a seeded generator of updates with known truth.

    python -m bench.scenarios [--updates 300] [--hours 120] [--seed 1] [--libraries 0] \
        > scenarios.json

Volumes span a few crashes a week to thousands a day; rate regressions of 1.2× to 10×;
new crash buckets from rare to frequent; healthy updates (some a little better than the
version they replace); machines installing with a lag of an hour to two days. Every draw
is log-uniform over its range, so no size is favoured. The judges never see these
numbers; `manage.py phasing_backtest` simulates machines from them.

`--libraries N` adds N library updates that hardly crash themselves but have dependents
(docs/backtest.md, "dependents"): a third whose dependents crash 1.2× to 10× as often
with the new version (a regression only the dependents show), a third whose dependent has
its own new version crashing more (the library is healthy), a third healthy with their
dependents unchanged; dependents' crashes from 20 to 3,000 a day.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys

RELEASES = ("resolute", "questing", "noble", "noble", "jammy", "jammy", "focal")
STEMS = (
    "glib ssl xml png curl gtk dbus mesa pulse audio net font print sqlite zstd ldap krb "
    "nss sane udev cups tiff jpeg ssh gnutls pam python-apt snapd gdm nautilus evince "
    "firefox thunderbird vim rsync tar grub shim apport ubuntu-drivers"
).split()


def log_uniform(rng: random.Random, low: float, high: float) -> float:
    return math.exp(rng.uniform(math.log(low), math.log(high)))


def update(rng: random.Random, n: int) -> dict:
    stem = rng.choice(STEMS)
    source = f"lib{stem}{n}" if rng.random() < 0.5 else f"{stem}{n}"
    machines = int(log_uniform(rng, 2_000, 2_000_000))
    crashes_per_day = log_uniform(rng, 0.4, 3_000)  # a few a week to thousands a day
    previous = crashes_per_day / machines
    truth = rng.random()
    ratio = 1.0
    buckets = []
    if truth < 0.15:
        ratio = rng.uniform(0.8, 1.0)  # a little better than before
    elif truth < 0.50:
        pass  # the same
    elif truth < 0.80:
        ratio = log_uniform(rng, 1.2, 10.0)
    else:
        # A crash that did not exist before, from rare to as frequent as all the others.
        share = log_uniform(rng, 0.01, 1.0)
        buckets.append(
            {
                "signature": f"{source}:crash_in_new_code",
                "crashes_per_machine_day": previous * share,
            }
        )
        if rng.random() < 0.3:
            ratio = log_uniform(rng, 1.2, 3.0)
    base = f"{rng.randint(1, 9)}.{rng.randint(0, 30)}"
    return {
        "id": f"u{n:04d}",
        "release": rng.choice(RELEASES),
        "source_package": source,
        "version": f"{base}-1ubuntu0.{n % 7 + 2}",
        "previous_version": f"{base}-1ubuntu0.{n % 7 + 1}",
        "machines": machines,
        "uptake_hours": round(log_uniform(rng, 1.0, 48.0), 2),
        "previous_crashes_per_machine_day": previous,
        "new_crashes_per_machine_day": previous * ratio,
        "new_buckets": buckets,
    }


def library(rng: random.Random, n: int) -> dict:
    stem = rng.choice(STEMS)
    machines = int(log_uniform(rng, 20_000, 2_000_000))
    own = log_uniform(rng, 0.4, 20) / machines  # the library's own crashes: a few a day
    dependents: dict = {
        "crashes_per_machine_day": log_uniform(rng, 20, 3_000) / machines,
    }
    kind = n % 3
    if kind == 0:
        dependents["ratio"] = round(log_uniform(rng, 1.2, 10.0), 3)
    elif kind == 1:
        dependents["own_update"] = {
            "version": "1.0-2",
            "ratio": round(log_uniform(rng, 1.2, 10.0), 3),
        }
    base = f"{rng.randint(1, 9)}.{rng.randint(0, 30)}"
    return {
        "id": f"lib{n:04d}",
        "release": rng.choice(RELEASES),
        "source_package": f"lib{stem}-dep{n}",
        "version": f"{base}-1ubuntu0.{n % 7 + 2}",
        "previous_version": f"{base}-1ubuntu0.{n % 7 + 1}",
        "machines": machines,
        "uptake_hours": round(log_uniform(rng, 1.0, 48.0), 2),
        "previous_crashes_per_machine_day": own,
        "new_crashes_per_machine_day": own,
        "dependents": dependents,
    }


def generate(*, updates: int, hours: int, seed: int, libraries: int = 0) -> dict:
    rng = random.Random(seed)
    generated = [update(rng, n) for n in range(updates)]
    # Drawn after the others, from a generator of their own: the same --updates give the
    # same updates with or without libraries.
    library_rng = random.Random(f"{seed}:libraries")
    generated += [library(library_rng, n) for n in range(libraries)]
    return {"start": "2026-01-05T00:00:00Z", "hours": hours, "updates": generated}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=300)
    parser.add_argument("--hours", type=int, default=120)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--libraries", type=int, default=0)
    args = parser.parse_args()
    json.dump(
        generate(updates=args.updates, hours=args.hours, seed=args.seed, libraries=args.libraries),
        sys.stdout,
        indent=1,
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
