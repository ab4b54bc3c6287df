"""A tiny HTML builder that escapes by construction, and the report's page shell.

Every ``str`` that reaches the page is escaped; only :class:`Html` values (markup this
package built: elements, matplotlib's SVG, data URIs it encoded) pass through as they
are. Model answers, prompts, item ids and model names are therefore always inert text.
The page carries a Content-Security-Policy that forbids scripts and every network
load, so even a mistake in the builder could not make the report fetch or run anything.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping

# No scripts, no fetches, no fonts or frames; images only from data: URIs, styles inline.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'none'; connect-src 'none'; font-src 'none'; "
    "frame-src 'none'; object-src 'none'; img-src data:; style-src 'unsafe-inline'; "
    "base-uri 'none'; form-action 'none'"
)


class Html(str):
    """Trusted markup: inserted as it is (everything else is escaped)."""

    __slots__ = ()


def escape(value: object) -> Html:
    """``value`` as escaped text (quotes included), or as is when it is already Html."""
    if isinstance(value, Html):
        return value
    return Html(html.escape(str(value), quote=True))


def render(children: object) -> Html:
    """Children (text, Html, numbers, nested iterables; None skipped) as markup."""
    if children is None:
        return Html("")
    if isinstance(children, str | int | float):
        return escape(children)
    return Html("".join(render(child) for child in children))  # type: ignore[union-attr]


def el(tag: str, *children: object, **attrs: object) -> Html:
    """``<tag attrs>children</tag>``; attribute names use ``_`` for ``-`` and ``class_``
    for ``class``; a True value writes the bare attribute, None/False omit it."""
    parts = [tag]
    for name, value in attrs.items():
        if value is None or value is False:
            continue
        key = name.rstrip("_").replace("_", "-")
        parts.append(key if value is True else f'{key}="{escape(value)}"')
    return Html(f"<{' '.join(parts)}>{render(children)}</{tag}>")


def void(tag: str, **attrs: object) -> Html:
    """A void element (``img``, ``meta``, ``br``) with escaped attributes."""
    return Html(el(tag, **attrs).removesuffix(f"</{tag}>"))


def table(header: Iterable[object], rows: Iterable[Iterable[object]], *,
          class_: str | None = None, caption: object = None) -> Html:
    """A table: one header row, then body rows (first cell of each a row header)."""
    head = el("tr", [el("th", cell, scope="col") for cell in header])
    body = [el("tr", [el("th" if i == 0 else "td", cell, scope="row" if i == 0 else None)
                      for i, cell in enumerate(row)]) for row in rows]
    return scroll(el("table", el("caption", caption) if caption is not None else None,
                     el("thead", head), el("tbody", body), class_=class_))


def scroll(content: Html) -> Html:
    """Wrap wide content so it scrolls sideways instead of overflowing the page."""
    return el("div", content, class_="scroll")


STYLE = """
:root { --ink: #1d2330; --muted: #5d6575; --line: #d8dce4; --soft: #f4f6f9; --accent: #2457a6; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 "DejaVu Sans", "Helvetica Neue", Arial, sans-serif;
       color: var(--ink); background: #fff; }
main { max-width: 1240px; margin: 0 auto; padding: 24px 28px 64px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 40px 0 8px; padding-top: 12px; border-top: 2px solid var(--line); }
h3 { font-size: 16px; margin: 22px 0 6px; }
p.lead { color: var(--muted); margin: 0 0 16px; }
nav.toc { font-size: 13px; color: var(--muted); margin: 8px 0 0; }
nav.toc a { color: var(--accent); text-decoration: none; margin-right: 14px; }
.finding { background: #fff6e0; border-left: 5px solid #e0a100; padding: 12px 16px; margin: 18px 0; }
.finding p { margin: 4px 0; }
.note { color: var(--muted); font-size: 13px; }
.ref { color: var(--muted); font-style: italic; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 8px 0 12px; font-size: 13px; }
caption { text-align: left; font-size: 13px; color: var(--muted); padding-bottom: 4px; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 7px; text-align: right;
         vertical-align: top; }
table.wide { font-size: 12px; }
table.wide th, table.wide td { padding: 3px 5px; }
table.defs td { text-align: left; max-width: 760px; }
thead th { background: var(--soft); font-weight: 600; }
tbody th { text-align: left; font-weight: 600; white-space: nowrap; }
td .pt { display: block; font-variant-numeric: tabular-nums; }
td .ci { display: block; color: var(--muted); font-size: 11px; white-space: nowrap; }
td .design { display: block; color: var(--muted); font-size: 10px; white-space: nowrap; }
td .soft { display: block; color: var(--muted); font-size: 11px; white-space: nowrap;
           margin-top: 2px; }
.figs { display: flex; flex-wrap: wrap; gap: 18px; align-items: flex-start; }
figure { margin: 0; }
figure svg { max-width: 100%; height: auto; }
figcaption { font-size: 12px; color: var(--muted); max-width: 440px; }
thead th:first-child { text-align: left; }
dl.defs dt { font-weight: 600; margin-top: 8px; }
dl.defs dd { margin: 2px 0 0 18px; color: var(--ink); }
.swatch { display: inline-block; width: 11px; height: 11px; margin-right: 6px;
          vertical-align: -1px; border: 1px solid rgba(0,0,0,.25); }
.gallery { display: grid; grid-template-columns: repeat(auto-fill, minmax(340px, 1fr)); gap: 18px; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 10px; background: #fff; }
.card img { width: 100%; height: auto; image-rendering: auto; border: 1px solid var(--line); }
.card h4 { margin: 0 0 6px; font-size: 13px; }
.card .tag { display: inline-block; font-size: 11px; padding: 1px 6px; border-radius: 9px;
             background: #fde2e1; color: #8a1c17; margin-left: 4px; }
.card pre { white-space: pre-wrap; word-break: break-word; background: var(--soft);
            padding: 6px 8px; margin: 4px 0; font-size: 12px; max-height: 220px; overflow: auto; }
.card .label { font-size: 11px; color: var(--muted); text-transform: uppercase; margin-top: 6px; }
.legend { font-size: 12px; color: var(--muted); margin: 6px 0 12px; }
.legend span { margin-right: 14px; }
"""


def page(title: str, body: Iterable[object], *, meta: Mapping[str, str] | None = None) -> bytes:
    """The whole document as UTF-8 bytes: CSP, inline style, the body markup."""
    head = [
        Html('<meta charset="utf-8">'),
        void("meta", http_equiv="Content-Security-Policy", content=CONTENT_SECURITY_POLICY),
        void("meta", name="viewport", content="width=device-width, initial-scale=1"),
        void("meta", name="referrer", content="no-referrer"),
        *(void("meta", name=k, content=v) for k, v in (meta or {}).items()),
        el("title", title),
        el("style", Html(STYLE)),
    ]
    doc = Html("<!DOCTYPE html>\n") + el("html", el("head", head), el("body", el("main", body)),
                                         lang="en")
    return (doc + "\n").encode("utf-8")
