"""rose_latin_example: a new ROSE subset from outside the package (a plug-in example).

ROSE-LatinConfusables: Latin look-alikes such as ``rn``/``m``, ``cl``/``d`` and ``O``/``0``
drawn black on white in DejaVu Sans. The drawing is the test fixture's
:class:`tests.fixtures.latin_source.LatinSource`; this package only declares the new
subset (its :class:`SourceInfo`) and ships the subset's config.

How a package plugs in, with no change to rose_gen:

1. Advertise the source in the ``rose_gen.sources`` entry-point group
   (``latin_confusables = rose_latin_example:SOURCE``); ``rose-gen`` discovers it.
2. Ship a config under ``conf/`` (see :data:`CONF_DIR`), and select it:
   ``rose-gen hydra.searchpath=[file://<CONF_DIR>] +rose_plugin=latin_confusables
   subsets=[latin_confusables] output_dir=...``.
"""

from __future__ import annotations

from pathlib import Path

from rose_gen.sources.base import SourceInfo
from tests.fixtures.latin_source import LatinSource

CONF_DIR = Path(__file__).resolve().parent / "conf"

INFO = SourceInfo(
    name="latin_confusables",
    subset="ROSE-LatinConfusables",
    id_prefix="LAT",
    primitive_type="LATIN_CONFUSABLE",
    item_seed_base=202800000000,
    layout_family="glyph_emoji",
)

SOURCE = LatinSource(INFO)
