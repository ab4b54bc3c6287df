"""The preview's HTML index: one self-contained page (inline CSS, no script, no network)
linking each subset's contact sheet by a relative path, with a table of the scenes shown."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

from rose_gen.check.preview.sheet import Band
from rose_gen.check.preview.text import value_text

STYLE = """
body{font:15px/1.45 system-ui,"DejaVu Sans",sans-serif;color:#14181e;margin:24px auto;max-width:1200px;padding:0 16px}
h1{font-size:1.4rem}h2{font-size:1.15rem;margin-top:2rem;border-top:1px solid #d2d6dc;padding-top:1rem}
table{border-collapse:collapse;margin:.5rem 0 1rem}td,th{border:1px solid #d2d6dc;padding:3px 8px;text-align:left}
th{background:#f2f4f7}td.n{text-align:right;font-variant-numeric:tabular-nums}
img{max-width:100%;border:1px solid #d2d6dc}.muted{color:#5f6670}code{font-size:.9em}
"""


@dataclass(frozen=True)
class SubsetSheet:
    """One subset's sheet: its file name (relative to the index), scenes in the release, bands drawn."""

    subset: str
    file: str
    scenes_total: int
    bands: Sequence[Band]


def _pair_key(pair: Mapping[str, object]) -> str:
    for key in ("pair_key", "undirected_pair_key", "unicode_key"):
        if key in pair:
            return value_text(pair[key])
    return ""


def render_index(release: str, sheets: Sequence[SubsetSheet]) -> str:
    """The index page as text (same inputs, same bytes)."""
    out = ["<!doctype html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>Preview of {escape(release)}</title><style>{STYLE}</style></head><body>",
           f"<h1>Preview of <code>{escape(release)}</code></h1>",
           '<p class="muted">Contact sheets made by <code>rose-gen preview</code> from the release\'s rows and '
           "images only: base image with the exception cells framed in magenta, the cue image as a model sees "
           "it, the majority tile and the most and least similar exception tiles magnified (nearest neighbour; "
           "the factor is on each sheet) with SSIM and changed share against the median majority cell "
           "(rose-audit's measure).</p>", "<ul>"]
    out += [f'<li><a href="#{escape(s.subset)}">{escape(s.subset)}</a>: {len(s.bands)} of {s.scenes_total} '
            f'scenes · <a href="{escape(s.file)}">{escape(s.file)}</a></li>' for s in sheets]
    out.append("</ul>")
    for s in sheets:
        out.append(f'<h2 id="{escape(s.subset)}">{escape(s.subset)}</h2>')
        out.append("<table><tr><th>scene</th><th>split</th><th>grid</th><th>cell</th><th>exceptions</th>"
                   "<th>max SSIM</th><th>min changed</th><th>preset</th><th>pair</th></tr>")
        for band in s.bands:
            v = band.scene
            ssim = max((c.ssim for c in band.checks), default=float("nan"))
            changed = min((c.changed_fraction for c in band.checks), default=float("nan"))
            out.append(f"<tr><td>{escape(v.scene_id)}</td><td>{escape(v.split)}</td><td>{v.rows}×{v.cols}</td>"
                       f'<td class="n">{v.cell_size}</td><td class="n">{len(v.targets)}</td>'
                       f'<td class="n">{ssim:.3f}</td><td class="n">{100 * changed:.1f} %</td>'
                       f"<td>{escape(v.preset)}</td><td>{escape(_pair_key(dict(v.pair)))}</td></tr>")
        out.append("</table>")
        out.append(f'<p><a href="{escape(s.file)}"><img src="{escape(s.file)}" alt="contact sheet of '
                   f'{escape(s.subset)}" loading="lazy"></a></p>')
    out.append("</body></html>")
    return "\n".join(out) + "\n"
