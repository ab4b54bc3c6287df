"""Regenerate assets_manifest/fonts.json from the installed CJK font packages.

    .venv/bin/python -m assets_manifest.build.build_fonts

Debian pool (``faces``): reads the candidate faces declared below, records each face's names,
weight, sha256, package and licence, drops faces that render the sample characters like an
earlier face (Mono variants) and faces that draw non-mainland forms.

pip pool (``pip_faces``): Noto Sans CJK SC (face index 2) of the variable font in the PyPI
package ``manimgx-fonts-cjk``, at the explicit weights of :data:`PIP_WEIGHTS` (the font's
default instance is Thin). Each instance is compared with the Debian static face of the same
weight (ink ratio and mean grey-level difference on the sample characters; ``pip_pool``).

The manifest is written sorted, without timestamps. A missing candidate file (or PyPI
package) stops with one line naming the package to install.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
from fontTools.ttLib import TTFont

from assets_manifest import manifest_path, sha256_file
from assets_manifest.build.unihan import tgh_chars
from rose_gen.assets.fonts import FontFace, check_glyph, dedupe_faces, face_fingerprint, font_path
from rose_gen.core.errors import AssetError

NOTO = "/usr/share/fonts/opentype/noto"
TT = "/usr/share/fonts/truetype"
NOTO_SANS = ("Thin", "Light", "DemiLight", "Regular", "Medium", "Bold", "Black")
NOTO_SERIF = ("ExtraLight", "Light", "Regular", "Medium", "SemiBold", "Bold", "Black")

# (file, face index, Debian package, script form). Order = manifest order = dedupe priority.
CANDIDATES: tuple[tuple[str, int, str, str], ...] = (
    *((f"{NOTO}/NotoSansCJK-{w}.ttc", 2, "fonts-noto-cjk" if w in ("Regular", "Bold") else "fonts-noto-cjk-extra",
       "mainland") for w in NOTO_SANS),
    *((f"{NOTO}/NotoSerifCJK-{w}.ttc", 2, "fonts-noto-cjk" if w in ("Regular", "Bold") else "fonts-noto-cjk-extra",
       "mainland") for w in NOTO_SERIF),
    (f"{NOTO}/NotoSansCJK-Regular.ttc", 7, "fonts-noto-cjk", "mainland"),  # Mono SC: a duplicate
    (f"{TT}/wqy/wqy-zenhei.ttc", 0, "fonts-wqy-zenhei", "mainland"),
    (f"{TT}/wqy/wqy-zenhei.ttc", 1, "fonts-wqy-zenhei", "mainland"),
    (f"{TT}/wqy/wqy-zenhei.ttc", 2, "fonts-wqy-zenhei", "mainland"),
    (f"{TT}/wqy/wqy-microhei.ttc", 0, "fonts-wqy-microhei", "mainland"),
    (f"{TT}/wqy/wqy-microhei.ttc", 1, "fonts-wqy-microhei", "mainland"),
    (f"{TT}/arphic/ukai.ttc", 0, "fonts-arphic-ukai", "mainland"),
    (f"{TT}/arphic/uming.ttc", 0, "fonts-arphic-uming", "mainland"),
    (f"{TT}/arphic-gkai00mp/gkai00mp.ttf", 0, "fonts-arphic-gkai00mp", "mainland"),
    (f"{TT}/arphic-gbsn00lp/gbsn00lp.ttf", 0, "fonts-arphic-gbsn00lp", "mainland"),
    *((f"{TT}/lxgw-wenkai/LXGWWenKai-{w}.ttf", 0, "fonts-lxgw-wenkai", "mainland") for w in ("Light", "Regular", "Bold")),
    *((f"{TT}/lxgw-wenkai/LXGWWenKaiMono-{w}.ttf", 0, "fonts-lxgw-wenkai", "mainland")
      for w in ("Light", "Regular", "Bold")),
    (f"{TT}/smiley-sans/SmileySans-Oblique.ttf", 0, "fonts-smiley-sans", "mainland"),
    (f"{TT}/cns11643/TW-Kai-98_1.ttf", 0, "fonts-cns11643-kai", "taiwan"),
    (f"{TT}/cns11643/TW-Sung-98_1.ttf", 0, "fonts-cns11643-sung", "taiwan"),
)

# Licence of each package, as read from /usr/share/doc/<package>/copyright.
LICENCES: dict[str, dict[str, str]] = {
    "fonts-noto-cjk": {"licence": "OFL-1.1", "copyright": "2010-2012, Google Corporation"},
    "fonts-noto-cjk-extra": {"licence": "OFL-1.1", "copyright": "2010-2012, Google Corporation"},
    "fonts-wqy-zenhei": {"licence": "GPL-2 with font embedding exception (and M+ FONTS licence for parts)",
                         "copyright": "2007-2009, Qianqian Fang and The WenQuanYi Project Board of Trustees"},
    "fonts-wqy-microhei": {"licence": "Apache-2.0 or GPL-3+ with font exception",
                           "copyright": "2008-2009, The WenQuanYi Project Board of Trustees"},
    "fonts-arphic-ukai": {"licence": "Arphic Public License", "copyright": "1999 Arphic Technology Co., Ltd."},
    "fonts-arphic-uming": {"licence": "Arphic Public License", "copyright": "1999 Arphic Technology Co., Ltd."},
    "fonts-arphic-gkai00mp": {"licence": "Arphic Public License", "copyright": "1999 Arphic Technology Co., Ltd."},
    "fonts-arphic-gbsn00lp": {"licence": "Arphic Public License", "copyright": "1999 Arphic Technology Co., Ltd."},
    "fonts-lxgw-wenkai": {"licence": "OFL-1.1", "copyright": "LXGW (https://github.com/lxgw/LxgwWenKai)"},
    "fonts-smiley-sans": {"licence": "OFL-1.1", "copyright": "2022, atelierAnchor <https://atelier-anchor.com>"},
    "fonts-cns11643-kai": {"licence": "see copyright file", "copyright": "CNS 11643 font project"},
    "fonts-cns11643-sung": {"licence": "see copyright file", "copyright": "CNS 11643 font project"},
}

# Upstream of each package (the copyright file's Source field or its upstream line).
UPSTREAM: dict[str, str] = {
    "fonts-noto-cjk": "https://github.com/googlefonts/noto-cjk",
    "fonts-noto-cjk-extra": "https://github.com/googlefonts/noto-cjk",
    "fonts-wqy-zenhei": "http://wenq.org/",
    "fonts-wqy-microhei": "http://wenq.org/",
    "fonts-arphic-ukai": "http://www.freedesktop.org/wiki/Software/CJKUnifonts",
    "fonts-arphic-uming": "http://www.freedesktop.org/wiki/Software/CJKUnifonts",
    "fonts-arphic-gkai00mp": "http://www.arphic.com.tw/",
    "fonts-arphic-gbsn00lp": "http://www.arphic.com.tw/",
    "fonts-lxgw-wenkai": "https://github.com/lxgw/LxgwWenKai",
    "fonts-smiley-sans": "https://github.com/atelier-anchor/smiley-sans",
}

# pip pool: (PyPI distribution, file relative to its import package, face index, named instances).
PIP_PACKAGE = "manimgx-fonts-cjk"
PIP_FILE = "manimgx_fonts_cjk/NotoSansCJK-VF.otf.ttc"
PIP_FACE_INDEX = 2  # Noto Sans CJK SC
PIP_WEIGHTS = (("Light", 300), ("Regular", 400), ("Medium", 500), ("Bold", 700), ("Black", 900))
PIP_LICENCE = {"licence": "OFL-1.1",
               "copyright": "2014-2021 Adobe (http://www.adobe.com/), with Reserved Font Name 'Source'",
               "url": "https://github.com/googlefonts/noto-cjk",
               "copyright_file": "manimgx_fonts_cjk-<version>.dist-info/licenses/LICENSE"}

# Every face must draw all of these (checked at the smallest cell size).
SMOKE_CHARS = "未末己已土士人入干于戊戌免兔"
SMALLEST_CELL = 42


def _names(file: str, index: int) -> tuple[str, str, str, int]:
    with TTFont(file, fontNumber=index, lazy=True) as tt:
        name = tt["name"]
        family = name.getDebugName(16) or name.getDebugName(1)
        style = name.getDebugName(17) or name.getDebugName(2)
        return name.getDebugName(6), family, style, int(tt["OS/2"].usWeightClass)


def debian_version(package: str) -> str:
    """Installed version of a Debian package (dpkg-query), recorded next to its checksums."""
    done = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True, check=False)
    if done.returncode != 0 or not done.stdout:
        sys.exit(f"Debian package {package} is not installed: apt-get install {package}")
    return done.stdout.strip()


def candidate_faces() -> list[FontFace]:
    """The declared candidates as faces (one line and exit if a file is missing)."""
    faces = []
    for file, index, package, form in CANDIDATES:
        if not Path(file).is_file():
            sys.exit(f"font file {file} is missing: apt-get install {package}")
        ps, family, style, weight = _names(file, index)
        faces.append(FontFace(name=ps, family=family, style=style, weight=weight, script_form=form, file=file,
                              face_index=index, sha256=sha256_file(file), package=package,
                              licence=LICENCES[package]["licence"]))
    return faces


def pip_version(package: str) -> str:
    """Installed version of a PyPI distribution; one line and exit if it is absent."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        sys.exit(f"PyPI package {package} is not installed: pip install {package} "
                 "(or pip install 'rose-toolkit[pipfonts]')")


def pip_faces() -> list[FontFace]:
    """The pip pool: one face per explicit weight of the variable Noto Sans CJK SC."""
    version = pip_version(PIP_PACKAGE)
    probe = FontFace(name="probe", family="", style="", weight=0, script_form="mainland", file=PIP_FILE,
                     face_index=PIP_FACE_INDEX, sha256="", package=PIP_PACKAGE, licence="", installer="pip")
    try:
        path = str(font_path(probe))
    except AssetError:
        sys.exit(f"{PIP_FILE} not found in PyPI package {PIP_PACKAGE} {version}: pip install --force-reinstall "
                 f"{PIP_PACKAGE}")
    _, family, _, _ = _names(path, PIP_FACE_INDEX)
    prefix = "NotoSansCJKsc-VF"
    return [FontFace(name=f"{prefix}-{style}", family=family, style=style, weight=weight, script_form="mainland",
                     file=PIP_FILE, face_index=PIP_FACE_INDEX, sha256=sha256_file(path), package=PIP_PACKAGE,
                     licence=PIP_LICENCE["licence"], variation_weight=float(weight), installer="pip")
            for style, weight in PIP_WEIGHTS]


def compare_with_debian(face: FontFace, debian: FontFace, chars: list[str]) -> dict:
    """Ink ratio and mean absolute grey-level difference of ``face`` vs ``debian`` on ``chars``."""
    ours = face_fingerprint(face, chars).astype(np.float64)
    theirs = face_fingerprint(debian, chars).astype(np.float64)
    return {"debian_face": debian.name, "ink_ratio": round(float(ours.sum() / theirs.sum()), 4),
            "mean_abs_diff": round(float(np.abs(ours - theirs).mean()), 3)}


def smoke_failures(face: FontFace) -> list[tuple[str, str]]:
    """(character, reason) for every smoke character that fails the glyph checks in ``face``."""
    bad = [(c, check_glyph(face, c, SMALLEST_CELL).reason()) for c in SMOKE_CHARS]
    return [b for b in bad if b[1]]


def build() -> dict:
    """The fonts manifest as a dict."""
    faces = candidate_faces()
    excluded = [{"name": f.name, "reason": f"{f.script_form} character forms, not mainland"}
                for f in faces if f.script_form != "mainland"]
    mainland = [f for f in faces if f.script_form == "mainland"]
    sample = [c for c, _ in tgh_chars()[:3500:25]]
    duplicates = dedupe_faces(mainland, sample)
    excluded += [{"name": n, "reason": f"renders like {twin}"} for n, twin in sorted(duplicates.items())]
    kept = []
    for face in mainland:
        if face.name in duplicates:
            continue
        bad = smoke_failures(face)
        if bad:
            excluded.append({"name": face.name, "reason": f"fails glyph checks: {bad}"})
            continue
        kept.append(face.to_json())
    packages = sorted({f["package"] for f in kept})
    licences = {p: {**LICENCES[p], "copyright_file": f"/usr/share/doc/{p}/copyright", "url": UPSTREAM[p],
                     "package_version": debian_version(p)} for p in packages}
    by_name = {f.name: f for f in mainland}
    pip_kept, compared = [], {}
    for face in pip_faces():
        bad = smoke_failures(face)
        if bad:
            sys.exit(f"pip face {face.name} fails glyph checks {bad}: check PIP_WEIGHTS in {__file__}")
        pip_kept.append(face.to_json())
        compared[face.name] = compare_with_debian(face, by_name[f"NotoSansCJKsc-{face.style}"], sample)
    version = pip_version(PIP_PACKAGE)
    licences[PIP_PACKAGE] = {**PIP_LICENCE, "package_version": version,
                             "copyright_file": PIP_LICENCE["copyright_file"].replace("<version>", version)}
    pip_pool = {"package": PIP_PACKAGE, "file": PIP_FILE, "face_index": PIP_FACE_INDEX,
                "note": "variable font; default instance is Thin, so every face sets its weight explicitly",
                "vs_debian": compared}
    return {"schema": 1, "faces": kept, "excluded": sorted(excluded, key=lambda e: e["name"]),
            "licences": licences, "pip_faces": pip_kept, "pip_pool": pip_pool}


def main() -> None:
    data = build()
    out = manifest_path("fonts")
    out.write_text(json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {out}: {len(data['faces'])} Debian faces, {len(data['excluded'])} excluded, "
          f"{len(data['pip_faces'])} pip faces")


if __name__ == "__main__":
    main()
