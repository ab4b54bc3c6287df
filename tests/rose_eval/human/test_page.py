"""The rose-human page in headless Chromium: a scripted person answers, reloads, comes back after a
restart, and the file scores in rose-eval exactly as the person intended; no response carries
ground truth; the page logs no error and requests nothing from outside."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import expect

from rose_eval.cli.eval import main as rose_eval_main
from tests.browser import PageWatch
from tests.rose_eval.human.conftest import open_session, release_test_rows

SUBSETS = ("CH", "PEDIT")  # 2 test scenes each: 20 items, small glyph cells and large pixel-art cells
NEXT = '#task[data-ready="true"]:not([data-item-id="{}"]), #finished:not([hidden])'


@dataclass
class Person:
    """A scripted annotator: right on most items, deliberately wrong on every third."""

    rows: dict
    answered: int = 0

    def plan(self, item_id: str) -> tuple[list[tuple[int, int]], int | None, bool]:
        """(cells to leave marked, count to type or None, whether the answer is meant to pass)."""
        row = self.rows[item_id]
        right = self.answered % 3 != 1
        gold = [tuple(int(v[1:]) for v in label.split(",")) for label in row["ground_truth_clicks"]]
        mode = row["task_mode"]
        if mode == "COUNT":
            return [], row["ground_truth_count"] + (0 if right else 1), right
        cells = list(gold)
        if not right:
            spare = next((r, c) for r in range(1, row["rows"] + 1) for c in range(1, row["cols"] + 1)
                         if f"R{r},C{c}" not in row["all_target_cells"])
            cells = cells[1:] + [spare] if cells and mode == "CLICK" else cells + [spare]
        count = len(cells) if mode == "CLICK_COUNT" else None
        if mode == "CLICK_COUNT" and not right and self.answered % 2:
            cells, count = list(gold), len(gold) + 2  # clicks right, submitted number wrong
        return cells, count, right


def expected_text(mode: str, cells: list[tuple[int, int]], count: int | None) -> str:
    clicks = [f"CLICK(R{r},C{c})" for r, c in sorted(cells)]
    if mode == "COUNT":
        return f"COUNT({count})"
    return "; ".join(clicks + (["DONE"] if mode == "CLICK" else [f"SUBMIT({count})"]))


def click_cell(page, r: int, c: int) -> None:
    task = page.locator("#task")
    rows, cols = int(task.get_attribute("data-rows")), int(task.get_attribute("data-cols"))
    box = page.locator("#grid-image").bounding_box()
    page.locator("#grid-image").click(position={"x": (c - 0.5) * box["width"] / cols,
                                                "y": (r - 0.5) * box["height"] / rows})


def marked_cells(page) -> list[str]:
    return sorted(page.locator("#marks rect").evaluate_all("els => els.map(e => e.dataset.cell)"))


def answer_one(page, person: Person, intended: dict, item_id: str) -> None:
    row = person.rows[item_id]
    cells, count, right = person.plan(item_id)
    k = person.answered
    if k % 4 == 0:  # a stray click, undone with the key
        click_cell(page, row["rows"], row["cols"])
        page.keyboard.press("u")
    for r, c in cells:
        click_cell(page, r, c)
    if cells and k % 5 == 2:  # a second click removes a mark
        click_cell(page, *cells[-1])
        assert f"R{cells[-1][0]},C{cells[-1][1]}" not in marked_cells(page)
        click_cell(page, *cells[-1])
    assert marked_cells(page) == sorted(f"R{r},C{c}" for r, c in cells)
    if count is not None:
        if k % 2:
            page.keyboard.type(str(count))  # digits typed anywhere go to the count box
        else:
            page.locator("#count").fill(str(count))
    if k % 3 == 2:
        page.locator("#submit").click()
    else:
        page.keyboard.press("Enter")
    intended[item_id] = (expected_text(row["task_mode"], cells, count), right)
    person.answered += 1
    page.wait_for_selector(NEXT.format(item_id))


def open_page(browser, url: str) -> tuple[object, PageWatch]:
    context = browser.new_context(viewport={"width": 1280, "height": 1200})
    watch = PageWatch(context.new_page()).attach()
    watch.page.goto(url)
    watch.page.wait_for_selector(NEXT.format(""))
    watch.page.keyboard.press("f")  # fit the image to the window: every cell is on screen
    return context, watch


def current(page) -> str:
    return page.locator("#task").get_attribute("data-item-id")


def test_a_scripted_person_answers_reloads_resumes_and_scores_as_intended(
        mini_release: Path, tmp_path: Path, browser, start_server) -> None:
    out = tmp_path / "human.jsonl"
    rows = release_test_rows(mini_release)
    person = Person(rows)
    intended: dict[str, tuple[str, bool]] = {}
    watches: list[PageWatch] = []

    server = start_server(open_session(mini_release, out, subsets=SUBSETS))
    total = server.session.state()["total"]
    assert total == 20
    context, watch = open_page(browser, server.url)
    watches.append(watch)
    page = watch.page

    skipped = current(page)
    page.keyboard.press("s")  # skip the first item: it comes back after all the others
    page.wait_for_selector(NEXT.format(skipped))
    expect(page.locator("#progress-text")).to_have_text("0 of 20 done · 1 skipped")
    for _ in range(6):
        answer_one(page, person, intended, current(page))
        watch.drain()

    # mid-item reload: marks are dropped, the same item is shown again, progress kept
    item_id = current(page)
    cells, _, _ = person.plan(item_id)
    click_cell(page, 1, 1)
    watch.drain()
    page.reload()
    page.wait_for_selector(NEXT.format(""))
    assert current(page) == item_id and marked_cells(page) == []
    expect(page.locator("#progress-text")).to_have_text(re.compile(r"^6 of 20 done"))
    for _ in range(5):
        answer_one(page, person, intended, current(page))
        watch.drain()
    context.close()

    # the person closes everything; rose-human is started again on the same file
    server.shutdown()
    server.server_close()
    server.session.close()
    server = start_server(open_session(mini_release, out, subsets=SUBSETS))
    context, watch = open_page(browser, server.url)
    watches.append(watch)
    page = watch.page
    expect(page.locator("#progress-text")).to_have_text("11 of 20 done")
    assert current(page) == skipped  # the skip lasted one session
    while page.locator("#finished").is_hidden():
        answer_one(page, person, intended, current(page))
        watch.drain()
    expect(page.locator("#progress-text")).to_have_text("20 of 20 done")
    context.close()

    # the file: one row per item, byte-exact formal answers, the time taken
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert sorted(r["item_id"] for r in written) == sorted(intended)
    for r in written:
        assert r["raw_text"] == intended[r["item_id"]][0]
        assert r["model"] == "human:tester" and r["error"] is None and 0 < r["seconds"] < 120
    assert {True, False} == {right for _, right in intended.values()}

    # rose-eval scores it exactly as intended
    assert rose_eval_main(["--dataset_root", str(mini_release), "--split", "test", "--predictions", str(out),
                           "--out_dir", str(tmp_path / "eval"), "--allow_partial", "--n_boot", "200"]) == 0
    scored = {json.loads(line)["item_id"]: json.loads(line)
              for line in (tmp_path / "eval" / "per_item_eval.jsonl").read_text(encoding="utf-8").splitlines()}
    assert {i: s["pass"] for i, s in scored.items()} == {i: int(right) for i, (_, right) in intended.items()}

    # nothing the page received carries ground truth; the page was clean
    prompt_global = rows[skipped]["prompt_global"]
    needles = {"ground_truth", "target_cells", '"answer"', "region_case", "difficulty", "region_params"}
    for item_id in intended:
        row = rows[item_id]
        needles |= {s for s in [row["answer"], *row["all_target_cells"]] if s not in prompt_global}
    texts = [s for w in watches for s in w.seen if not s.body.startswith(b"\x89PNG")]
    assert sum(s.url.endswith("/api/submit") for s in texts) == 20  # every reply was read and scanned
    leaks = [(s.url, n) for s in texts for n in needles if n.encode() in s.body]
    assert leaks == []
    for w in watches:
        assert w.problems == []
