"""Percentage-over-time charts as server-rendered SVG. Plain Python, no Django.

The chart reads without JavaScript: a step line of the phased-update percentage, axis
labels in UTC, halts marked in red, pauses in amber and resumes in green, each marker
labelled on the chart (a second halt says so) and with a <title> a screen reader or a mouse
can reach. Labels near the right edge turn to the left of their marker, so none is cut off;
text is placed in em units from its anchor, so the page's stylesheet can enlarge it on a
phone without it running into the axes. Every piece of text is escaped here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from html import escape

WIDTH = 720
HEIGHT = 280
# Room for the axis labels at the phone stylesheet's size (22 user units).
LEFT, RIGHT, TOP, BOTTOM = 84, 24, 16, 58
# A label this close to the right edge is drawn to the left of its marker.
LABEL_ROOM = 150

HALT = "halted"
PAUSE = "paused"
RESUME = "resumed"
FLAGS = {HALT: "halt", PAUSE: "pause", RESUME: "resume"}
LEGEND = (("line", "percentage"), ("halt", "halt"), ("pause", "pause"), ("resume", "resume"))


@dataclass(frozen=True)
class ChartPoint:
    at: datetime
    percentage: int
    kind: str = ""  # an event kind; HALT, PAUSE and RESUME get labelled markers
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
            f'<text x="{LEFT - 8}" y="{y(value)}" dy=".35em" text-anchor="end">{value}%</text>'
        )
    out.append(
        f'<text class="axis-title" transform="translate(20 {TOP + plot_h / 2}) rotate(-90)" '
        f'text-anchor="middle">Phased percentage</text></g>'
    )
    # Time axis.
    step = _tick_step(end - start)
    out.append('<g class="axis axis-x">')
    out.append(f'<line class="baseline" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(0)}" y2="{y(0)}"/>')
    for tick in _time_ticks(start, end):
        # The last label would overhang the right edge if centred on its tick.
        anchor = "end" if x(tick) > WIDTH - RIGHT - 40 else "middle"
        out.append(
            f'<line class="tick" x1="{x(tick)}" x2="{x(tick)}" y1="{y(0)}" y2="{y(0) + 5}"/>'
            f'<text x="{x(tick)}" y="{y(0) + 6}" dy="1em" text-anchor="{anchor}">'
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
    # Markers: every step as a dot; halts, pauses and resumes as labelled flags, their
    # labels staggered over three rows so that a resume and a re-halt close together
    # both stay readable.
    out.append('<g class="points">')
    halts = 0
    flags = 0
    for point in ordered:
        css = FLAGS.get(point.kind, "step")
        label = (
            point.label or f"{point.percentage}% at {point.at.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
        )
        cx, cy = x(point.at), y(point.percentage)
        if css == "step":
            out.append(
                f'<circle class="step" cx="{cx}" cy="{cy}" r="3"><title>{escape(label)}</title></circle>'
            )
            continue
        if css == "halt":
            halts += 1
        words = "halted again" if css == "halt" and halts > 1 else point.kind
        if cx > WIDTH - RIGHT - LABEL_ROOM:
            text_x, anchor = cx - 5, "end"
        else:
            text_x, anchor = cx + 5, "start"
        out.append(
            f'<g class="{css}"><title>{escape(label)}</title>'
            f'<line x1="{cx}" x2="{cx}" y1="{TOP}" y2="{y(0)}"/>'
            f'<circle cx="{cx}" cy="{cy}" r="5"/>'
            f'<text x="{text_x}" y="{TOP}" dy="{1 + 1.2 * (flags % 3):.1f}em" '
            f'text-anchor="{anchor}">{escape(words)}</text></g>'
        )
        flags += 1
    out.append("</g></svg>")
    return "".join(out)


def legend(points: Sequence[ChartPoint]) -> str:
    """The chart's key, naming only the markers it draws (decoration: the chart's title,
    description and markers say the same to a screen reader)."""
    shown = {"line"} | {FLAGS[p.kind] for p in points if p.kind in FLAGS}
    keys = "".join(
        f'<li><span class="key key-{key}"></span> {words}</li>'
        for key, words in LEGEND
        if key in shown
    )
    return f'<div class="legend" aria-hidden="true"><ul>{keys}</ul></div>'


def percentage_bar(percentage: int) -> str:
    """The percentage now, as a number and a bar (the bar is decoration: aria-hidden)."""
    value = max(0, min(100, int(percentage)))
    return (
        f'<span class="pct"><span class="pct-num">{value}%</span>'
        # A class per whole percentage (static/css/phasing.css): the Content-Security-Policy
        # allows no inline style.
        f'<span class="bar" aria-hidden="true"><span class="w{value}"></span></span></span>'
    )
