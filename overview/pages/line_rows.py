"""The overview's rows as HTML: one compiled string template per row, not a template
engine's lookup per value.

Each UpdateLine is words built once per data version and minute (overview.pages.lines);
its row is written here once per line and kept with it, so a view joins kept rows. Every
value is escaped as Django's autoescape does (django.utils.html.escape).
"""

from __future__ import annotations

from collections.abc import Sequence

from django.utils.html import escape

from overview.pages.lines import UpdateLine

_GROUP = (
    '\n      <tr class="group"><th scope="rowgroup" colspan="{colspan}">{release} '
    '<span class="muted">{release_version}</span>{frozen}</th></tr>'
)
_FROZEN = (
    ' <span class="badge badge-frozen"><span class="badge-icon" aria-hidden="true">❄</span>'
    ' frozen</span> <span class="frozen-reason">{reason}</span>'
)
_ROW = (
    '\n      <tr class="line badge-row-{badge}">'
    '\n        <th scope="row" class="update" data-label="Update"><a href="{url}">{package}</a>'
    ' <span class="version">{version}</span>{needs}</th>{release_cell}'
    '\n        <td class="phased" data-label="Phased"><span class="pct"><span class="bar"'
    ' aria-hidden="true"><span class="w{percentage}"></span></span><span class="pct-num">'
    "{percentage_words}</span></span>{exposure}{notes}</td>"
    '\n        <td data-label="State"><span class="badge badge-{badge}" title="{badge_title}">'
    '<span class="badge-icon" aria-hidden="true">{badge_icon}</span> {badge_label}</span></td>'
    '\n        <td class="next-step" data-label="Next step"><span{next_title}>{next_words}</span>'
    "{scheduled}</td>"
    '\n        <td class="problems num" data-label="Problems">{problems}</td>'
    '\n        <td class="verdict" data-label="Verdict"><span class="verdict verdict-{verdict_kind}"'
    "{verdict_title}>{verdict_label}</span>{verdict_detail}</td>"
    "\n      </tr>"
)
# The verdicts whose detail is said on the line, not only in its title.
_DETAIL_SHOWN = ("too-little", "overridden", "halted-no-rise")


def _group_html(line: UpdateLine, colspan: int) -> str:
    frozen = (
        _FROZEN.format(reason=escape(line.release_frozen_reason)) if line.release_frozen else ""
    )
    return _GROUP.format(
        colspan=colspan,
        release=escape(line.release),
        release_version=escape(line.release_version),
        frozen=frozen,
    )


def row_html(line: UpdateLine, *, grouped: bool) -> str:
    """One update's row: the same markup templates/overview/_update_lines.html described."""
    scheduled = ""
    if line.scheduled:
        first = line.scheduled[0]
        more = (
            f' <span class="muted">and {line.scheduled_more} more</span>'
            if line.scheduled_more
            else ""
        )
        scheduled = (
            f'<small class="scheduled">scheduled: <time datetime="{escape(first.when_iso)}">'
            f"{escape(first.what)}, {escape(first.when)}</time>{more}</small>"
        )
    verdict = line.verdict
    return _ROW.format(
        badge=escape(line.badge),
        url=escape(line.url),
        package=escape(line.package),
        version=escape(line.version),
        needs=f'<small class="needs">{escape(line.needs)}</small>' if line.needs else "",
        release_cell=""
        if grouped
        else f'\n        <td data-label="Release">{escape(line.release)}</td>',
        percentage=int(line.percentage),
        percentage_words=escape(line.percentage_words),
        exposure=(
            '<small class="muted exposure" title="The share of machines running it, as far as'
            f' it is known">{escape(line.exposure)} running it</small>'
        )
        if line.exposure
        else "",
        notes="".join(f'<small class="source-note">{escape(note)}</small>' for note in line.notes),
        badge_title=escape(line.badge_title),
        badge_icon=escape(line.badge_icon),
        badge_label=escape(line.badge_label),
        next_title=f' title="{escape(line.next_title)}"' if line.next_title else "",
        next_words=escape(line.next_words),
        scheduled=scheduled,
        problems=f'<a href="{escape(line.url)}#problems">{int(line.problems)}</a>'
        if line.problems
        else '<span class="muted">0</span>',
        verdict_kind=escape(verdict.kind),
        verdict_title=f' title="{escape(verdict.detail)}"' if verdict.detail else "",
        verdict_label=escape(verdict.label),
        verdict_detail=f'<small class="muted verdict-detail">: {escape(verdict.detail)}</small>'
        if verdict.kind in _DETAIL_SHOWN
        else "",
    )


_EMPTY = '\n      <tr><td colspan="{}" class="empty">No update matches these filters.</td></tr>'


def rows_html(lines: Sequence[UpdateLine], *, grouped: bool, colspan: int) -> str:
    """The table's body rows: a release heading where a group of lines starts (when the
    lines are grouped by release), then each line's row; a row that says so when there is
    no line."""
    if not lines:
        return _EMPTY.format(colspan)
    parts = []
    previous = None
    for line in lines:
        if grouped and line.release != previous:
            parts.append(_group_html(line, colspan))
            previous = line.release
        row = line.rows.get(grouped)
        if row is None:
            row = line.rows[grouped] = row_html(line, grouped=grouped)
        parts.append(row)
    return "".join(parts)
