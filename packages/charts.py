"""Percentage-over-time charts as server-rendered SVG. Plain Python, no Django.

The chart reads without JavaScript: a step line of the phased-update percentage, axis
labels in UTC, halts marked in red and pauses in amber, each marker with a <title> a
screen reader or a mouse can reach. Every piece of text is escaped here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from html import escape

WIDTH = 720
HEIGHT = 260
LEFT, RIGHT, TOP, BOTTOM = 56, 20, 16, 48

HALT = "halted"
PAUSE = "paused"


@dataclass(frozen=True)
class ChartPoint:
    at: datetime
    percentage: int
    kind: str = ""  # an event kind; HALT and PAUSE get markers
    label: str = ""


def _attr(value: object) -> str:
    return escape(str(value), quote=True)


def _tick_step(span: timedelta) -> timedelta:
    for step in (
        timedelta(hours=1),
        timedelta(hours=3),
        timedelta(hours=6),
        timedelta(hours=12),
        timedelta(days=1),
        timedelta(days=2),
        timedelta(days=7),
        timedelta(days=14),
        timedelta(days=30),
    ):
        if span / step <= 6:
            return step
    return timedelta(days=90)


def _time_ticks(start: datetime, end: datetime) -> list[datetime]:
    step = _tick_step(end - start)
    midnight = start.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    tick = midnight
    while tick < start:
        tick += step
    ticks = []
    while tick <= end:
        ticks.append(tick)
        tick += step
    return ticks


def _tick_label(moment: datetime, step: timedelta) -> str:
    moment = moment.astimezone(UTC)
    if step >= timedelta(days=1):
        return f"{moment.day} {moment:%b}"
    if moment.hour == 0:
        return f"{moment.day} {moment:%b}"
    return f"{moment:%H:%M}"


def percentage_chart(
    points: Sequence[ChartPoint],
    *,
    end: datetime,
    chart_id: str,
    title: str,
    description: str,
) -> str:
    """An SVG chart of the percentage over time, from the first point to `end`."""
    if not points:
        raise ValueError("a chart needs at least one point")
    ordered = sorted(points, key=lambda p: p.at)
    start = ordered[0].at
    end = max(end, ordered[-1].at, start + timedelta(hours=1))
    span = (end - start).total_seconds()
    plot_w = WIDTH - LEFT - RIGHT
    plot_h = HEIGHT - TOP - BOTTOM

    def x(moment: datetime) -> float:
        return round(LEFT + plot_w * (moment - start).total_seconds() / span, 1)

    def y(percentage: int) -> float:
        return round(TOP + plot_h * (1 - percentage / 100), 1)

    ident = _attr(chart_id)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}" role="img" class="phasing-chart" '
        f'aria-labelledby="{ident}-title {ident}-desc">',
        f'<title id="{ident}-title">{escape(title)}</title>',
        f'<desc id="{ident}-desc">{escape(description)}</desc>',
    ]
    # Horizontal grid and percentage axis.
    out.append('<g class="axis axis-y">')
    for value in (0, 25, 50, 75, 100):
        out.append(
            f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(value)}" y2="{y(value)}"/>'
            f'<text x="{LEFT - 8}" y="{y(value) + 4}" text-anchor="end">{value}%</text>'
        )
    out.append(
        f'<text class="axis-title" transform="translate(14 {TOP + plot_h / 2}) rotate(-90)" '
        f'text-anchor="middle">Phased-update percentage</text></g>'
    )
    # Time axis.
    step = _tick_step(end - start)
    out.append('<g class="axis axis-x">')
    out.append(f'<line class="baseline" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(0)}" y2="{y(0)}"/>')
    for tick in _time_ticks(start, end):
        out.append(
            f'<line class="tick" x1="{x(tick)}" x2="{x(tick)}" y1="{y(0)}" y2="{y(0) + 5}"/>'
            f'<text x="{x(tick)}" y="{y(0) + 18}" text-anchor="middle">'
            f"{escape(_tick_label(tick, step))}</text>"
        )
    out.append(
        f'<text class="axis-title" x="{LEFT + plot_w / 2}" y="{HEIGHT - 6}" '
        f'text-anchor="middle">Time (UTC), {escape(f"{start.astimezone(UTC):%d %b %Y}")} '
        f"to {escape(f'{end.astimezone(UTC):%d %b %Y}')}</text></g>"
    )
    # The percentage holds between events, so the line is a staircase.
    path = [f"M{x(ordered[0].at)},{y(ordered[0].percentage)}"]
    for previous, point in zip(ordered, ordered[1:], strict=False):
        path.append(f"H{x(point.at)}")
        if point.percentage != previous.percentage:
            path.append(f"V{y(point.percentage)}")
    path.append(f"H{x(end)}")
    out.append(f'<path class="line" d="{" ".join(path)}"/>')
    # Markers: every step as a dot, halts and pauses as labelled flags.
    out.append('<g class="points">')
    for point in ordered:
        css = "halt" if point.kind == HALT else "pause" if point.kind == PAUSE else "step"
        label = (
            point.label or f"{point.percentage}% at {point.at.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
        )
        cx, cy = x(point.at), y(point.percentage)
        if css == "step":
            out.append(
                f'<circle class="step" cx="{cx}" cy="{cy}" r="3"><title>{escape(label)}</title></circle>'
            )
            continue
        out.append(
            f'<g class="{css}"><title>{escape(label)}</title>'
            f'<line x1="{cx}" x2="{cx}" y1="{TOP}" y2="{y(0)}"/>'
            f'<circle cx="{cx}" cy="{cy}" r="5"/>'
            f'<text x="{cx + 4}" y="{TOP + 10}">{"halted" if css == "halt" else "paused"}</text></g>'
        )
    out.append("</g></svg>")
    return "".join(out)


def percentage_bar(percentage: int) -> str:
    """The percentage now, as a number and a bar (the bar is decoration: aria-hidden)."""
    value = max(0, min(100, int(percentage)))
    return (
        f'<span class="pct"><span class="pct-num">{value}%</span>'
        f'<span class="bar" aria-hidden="true"><span style="width: {value}%"></span></span></span>'
    )
