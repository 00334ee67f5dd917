"""The percentage-over-time SVG chart: readable, labelled, escaped."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from xml.etree import ElementTree

import pytest

from packages.domain.charts import (
    HALT,
    LEFT,
    PAUSE,
    RESUME,
    RIGHT,
    WIDTH,
    ChartPoint,
    legend,
    percentage_chart,
)

SVG = "{http://www.w3.org/2000/svg}"
START = datetime(2026, 12, 1, 0, 0, tzinfo=UTC)


def _chart(points, **kwargs) -> ElementTree.Element:
    markup = percentage_chart(
        points,
        end=kwargs.pop("end", START + timedelta(days=2)),
        chart_id=kwargs.pop("chart_id", "chart-1"),
        title=kwargs.pop("title", "bash 5.2: percentage over time"),
        description=kwargs.pop("description", "From 10% to 30%, halted once."),
    )
    return ElementTree.fromstring(markup)


def test_it_has_a_title_and_description_for_screen_readers():
    svg = _chart([ChartPoint(START, 10)])

    assert svg.get("role") == "img"
    assert svg.get("aria-labelledby") == "chart-1-title chart-1-desc"
    assert svg.find(f"{SVG}title").text == "bash 5.2: percentage over time"
    assert svg.find(f"{SVG}desc").text == "From 10% to 30%, halted once."


def test_it_labels_both_axes():
    texts = [t.text for t in _chart([ChartPoint(START, 10)]).iter(f"{SVG}text")]

    assert {"0%", "25%", "50%", "75%", "100%"} <= set(texts)
    assert "Phased percentage" in texts
    assert any(t.startswith("Time (UTC)") for t in texts)
    assert "2 Dec" in texts


def test_the_line_is_a_staircase_that_holds_between_events():
    svg = _chart(
        [ChartPoint(START, 10), ChartPoint(START + timedelta(hours=6), 20)],
        end=START + timedelta(hours=12),
    )

    path = svg.find(f".//{SVG}path").get("d")
    # Starts at 10%, runs flat to the step, rises to 20%, runs flat to the end.
    assert path.startswith(f"M{LEFT:.1f},")
    commands = path.split()
    assert commands[1].startswith("H") and commands[2].startswith("V")
    assert commands[3] == f"H{WIDTH - RIGHT:.1f}"


def test_halts_and_pauses_are_marked_with_their_reasons():
    svg = _chart(
        [
            ChartPoint(START, 10),
            ChartPoint(START + timedelta(hours=6), 0, HALT, "halted by controller: new crash"),
            ChartPoint(START + timedelta(hours=9), 0, PAUSE, "paused by ada"),
        ]
    )

    halt = svg.find(f".//{SVG}g[@class='halt']")
    pause = svg.find(f".//{SVG}g[@class='pause']")
    assert halt.find(f"{SVG}title").text == "halted by controller: new crash"
    assert pause.find(f"{SVG}title").text == "paused by ada"


def test_every_text_is_escaped():
    markup = percentage_chart(
        [ChartPoint(START, 10, HALT, '<script>alert("x")</script>')],
        end=START + timedelta(hours=1),
        chart_id='x" onload="evil',
        title="<b>bash</b> & co",
        description="</desc><script>",
    )

    assert "<script>" not in markup and "<b>" not in markup
    assert 'onload="evil' not in markup
    ElementTree.fromstring(markup)  # still well-formed


def test_it_needs_a_point():
    with pytest.raises(ValueError, match="."):
        percentage_chart([], end=START, chart_id="c", title="t", description="d")


def _flag_labels(svg: ElementTree.Element) -> dict[str, list[ElementTree.Element]]:
    labels: dict[str, list[ElementTree.Element]] = {}
    for group in svg.iter(f"{SVG}g"):
        if group.get("class") in ("halt", "pause", "resume"):
            labels.setdefault(group.get("class"), []).append(group.find(f"{SVG}text"))
    return labels


def test_a_resume_and_a_second_halt_are_marked_and_labelled():
    svg = _chart(
        [
            ChartPoint(START, 10),
            ChartPoint(START + timedelta(hours=6), 0, HALT, "halted: new crash"),
            ChartPoint(START + timedelta(hours=8), 20, RESUME, "resumed by ada: overridden"),
            ChartPoint(START + timedelta(hours=9), 0, HALT, "halted: another crash"),
        ]
    )

    labels = _flag_labels(svg)
    assert [t.text for t in labels["halt"]] == ["halted", "halted again"]
    assert [t.text for t in labels["resume"]] == ["resumed"]
    # Close together, so each label has a row of its own.
    rows = {t.get("dy") for t in labels["halt"] + labels["resume"]}
    assert len(rows) == 3


def test_a_label_near_the_right_edge_turns_left_so_it_is_not_cut_off():
    end = START + timedelta(days=2)
    svg = _chart(
        [ChartPoint(START, 10), ChartPoint(end - timedelta(minutes=10), 0, HALT, "halted")],
        end=end,
    )

    early = _chart([ChartPoint(START, 10), ChartPoint(START + timedelta(hours=1), 0, HALT)])
    assert _flag_labels(svg)["halt"][0].get("text-anchor") == "end"
    assert float(_flag_labels(svg)["halt"][0].get("x")) < WIDTH - RIGHT
    assert _flag_labels(early)["halt"][0].get("text-anchor") == "start"
    # The last time label ends at its tick rather than overhanging the edge.
    ticks = [t for t in svg.iter(f"{SVG}text") if t.get("dy") == "1em"]
    assert ticks[-1].get("text-anchor") == "end"


def test_the_legend_lists_only_what_the_chart_shows():
    assert "halt" not in legend([ChartPoint(START, 10), ChartPoint(START, 20, "advanced")])
    key = legend([ChartPoint(START, 10), ChartPoint(START, 0, HALT), ChartPoint(START, 10, RESUME)])
    assert "key-halt" in key and "key-resume" in key and "key-pause" not in key
