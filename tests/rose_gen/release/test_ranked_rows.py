"""RankedRows: rows of drawn scenes once their subset's labels are ranked, in release order."""

from __future__ import annotations

from pathlib import Path

from rose_gen.release.config import load_config
from rose_gen.release.pipeline import import_plugins, scene_rows
from rose_gen.release.ranked_rows import RankedRows, hard_shares
from rose_gen.scene.plan import SubsetDraws, plan_subset
from rose_gen.sources import SOURCES
from tests.fixtures.latin_source import latin_overrides


def _drawn(tmp_path: Path, *extra: str):
    config = load_config([f"output_dir={tmp_path / 'x'}", "progress=false", *latin_overrides(scenes=4, dev=1),
                          *extra])
    import_plugins(config.plugins)
    plans = config.plans[:2]
    drawn = []
    for plan in plans:
        source = SOURCES.get(plan.source)
        draws = SubsetDraws.build(plan, config.seed, source)
        drawn += [draws.draw(k).scene for k in range(1, plan.n_scenes + 1)]
    planned = [s for plan in plans for s in plan_subset(plan, config.seed, SOURCES.get(plan.source))]
    return plans, drawn, planned


def test_ranked_subsets_give_their_rows_at_the_subsets_end_with_the_planned_labels(tmp_path) -> None:
    plans, drawn, planned = _drawn(tmp_path)
    assert all(p.difficulty.hard_share is not None for p in plans)
    out: list[tuple[int, object]] = []
    ranked = RankedRows(hard_shares(plans), lambda position, rows: out.append((position, rows)))
    first = plans[0].n_scenes
    for position, scene in enumerate(drawn):
        ranked.add(position, scene, (230, 0, 0))
        # nothing of a ranked subset comes out before the next subset starts
        assert len(out) == (first if position >= first else 0)
    ranked.close()
    assert [p for p, _ in out] == list(range(len(drawn)))
    assert [rows for _, rows in out] == [scene_rows(s) for s in planned]
    # the ranking changed some label: rows built from the unranked draws would differ
    assert any(a.difficulty != b.difficulty for a, b in zip(drawn, planned, strict=True))


def test_threshold_subsets_give_their_rows_at_once(tmp_path) -> None:
    plans, drawn, _ = _drawn(tmp_path, "difficulty.hard_share.glyph=null", "difficulty.hard_share.emoji_style=null")
    assert all(p.difficulty.hard_share is None for p in plans)
    out: list[int] = []
    ranked = RankedRows(hard_shares(plans), lambda position, rows: out.append(position))
    for position, scene in enumerate(drawn):
        ranked.add(position, scene, (230, 0, 0))
        assert out[-1] == position
    ranked.close()
    assert out == list(range(len(drawn)))
