"""The backtest's plot: how often each judge catches a rate regression, by its size.

Plain Python with matplotlib (the ``dev`` extra; imported only when a plot is asked for).
One line per judge and world: the share of rate regressions halted before 100 %, in bins
of the true rate ratio.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from overview.backtest.summary import SIZE_BINS, JudgeSummary


def catches_png(summaries: Mapping[str, Sequence[JudgeSummary]], path: str) -> None:
    """Write the plot to `path`: `summaries` maps a world's name to its judges' summaries."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [label for _, _, label in SIZE_BINS]
    figure, axes = plt.subplots(figsize=(7, 4), dpi=120)
    for world, judges in summaries.items():
        for summary in judges:
            shares = []
            for low, high, _ in SIZE_BINS:
                halted = [h for ratio, h in summary.by_ratio if low <= ratio < high]
                shares.append(100 * sum(halted) / len(halted) if halted else float("nan"))
            style = "-" if summary.judge == "sequential" else "--"
            axes.plot(labels, shares, style, marker="o", label=f"{summary.judge}, {world}")
    axes.set_ylim(0, 105)
    axes.set_ylabel("rate regressions halted before 100 % (%)")
    axes.set_xlabel("true crash-rate ratio, new ÷ previous version")
    axes.grid(alpha=0.3)
    axes.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
