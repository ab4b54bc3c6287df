"""Regenerate assets_manifest/fonts.json from the installed Debian CJK font packages.

    .venv/bin/python -m assets_manifest.build.build_fonts

Reads the candidate faces declared below, records each face's names, weight, sha256,
package and licence, drops faces that render the sample characters like an earlier face
(Mono variants) and faces that draw non-mainland forms, and writes the manifest sorted,
without timestamps. A missing candidate file stops with one line naming its package.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fontTools.ttLib import TTFont

from assets_manifest import manifest_path, sha256_file
from assets_manifest.build.unihan import tgh_chars
from rose_gen.fonts import FontFace, check_glyph, dedupe_faces

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
        bad = [(c, check_glyph(face, c, SMALLEST_CELL).reason()) for c in SMOKE_CHARS]
        bad = [b for b in bad if b[1]]
        if bad:
            excluded.append({"name": face.name, "reason": f"fails glyph checks: {bad}"})
            continue
        kept.append(face.to_json())
    packages = sorted({f["package"] for f in kept})
    licences = {p: {**LICENCES[p], "copyright_file": f"/usr/share/doc/{p}/copyright", "url": UPSTREAM[p],
                     "package_version": debian_version(p)} for p in packages}
    return {"schema": 1, "faces": kept, "excluded": sorted(excluded, key=lambda e: e["name"]),
            "licences": licences}


def main() -> None:
    data = build()
    out = manifest_path("fonts")
    out.write_text(json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {out}: {len(data['faces'])} faces, {len(data['excluded'])} excluded")


if __name__ == "__main__":
    main()
