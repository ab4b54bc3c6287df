// rose-human page: show one item, let the person mark cells and type a count, send the answer.
// The server builds the formal answer; this page only sends cells, the count and the seconds taken.
"use strict";
(() => {
  const token = document.querySelector('meta[name="rose-token"]').content;
  const $ = (id) => document.getElementById(id);
  const SVG = "http://www.w3.org/2000/svg";
  const ZOOMS = [0.25, 0.33, 0.5, 0.67, 0.75, 1, 1.25, 1.5, 2, 3, 4];

  let item = null; // the current item as the server sent it
  let marked = new Map(); // "r,c" -> [r, c]
  let history = []; // [{cell, added}] for undo
  let zoom = 1;
  let fitted = false;
  let activeMs = 0; // visible time since the image appeared
  let since = null; // performance.now() when the current visible stretch began
  let busy = false;

  // ------------------------------------------------------------------ server

  async function call(path, body) {
    const init = { headers: { "X-Rose-Token": token }, cache: "no-store" };
    if (body !== undefined) {
      init.method = "POST";
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let res;
    try {
      res = await fetch(path, init);
    } catch (err) {
      return { ok: false, data: { error: "the server does not answer; is rose-human still running?" } };
    }
    return { ok: res.ok, data: await res.json() };
  }

  // ------------------------------------------------------------------ timer

  function timerStart() { if (since === null && !document.hidden) since = performance.now(); }
  function timerStop() { if (since !== null) { activeMs += performance.now() - since; since = null; } }
  function seconds() { timerStop(); const s = activeMs / 1000; timerStart(); return Math.round(s * 1000) / 1000; }
  document.addEventListener("visibilitychange", () => {
    if (document.hidden) timerStop();
    else if (item && $("grid-image").complete && $("grid-image").naturalWidth) timerStart();
  });

  // ------------------------------------------------------------------ drawing

  function label(cell) { return `R${cell[0]},C${cell[1]}`; }
  function sortedCells() {
    return [...marked.values()].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  }

  function drawMarks() {
    const g = $("marks");
    g.replaceChildren();
    for (const [r, c] of marked.values()) {
      const rect = document.createElementNS(SVG, "rect");
      rect.setAttribute("x", c - 1);
      rect.setAttribute("y", r - 1);
      rect.setAttribute("width", 1);
      rect.setAttribute("height", 1);
      rect.dataset.cell = label([r, c]);
      g.appendChild(rect);
    }
    const cells = sortedCells();
    const aid = item && item.task_mode === "COUNT" && cells.length ? " (a counting aid: only the count is sent)" : "";
    $("marked").textContent = `${cells.length} marked${cells.length ? ": " + cells.map(label).join(" ") : ""}${aid}`;
  }

  function drawGrid() {
    const g = $("grid-lines");
    g.replaceChildren();
    if (!item || !$("grid-toggle").checked) return;
    const line = (x1, y1, x2, y2) => {
      const l = document.createElementNS(SVG, "line");
      l.setAttribute("x1", x1); l.setAttribute("y1", y1); l.setAttribute("x2", x2); l.setAttribute("y2", y2);
      g.appendChild(l);
    };
    for (let r = 1; r < item.rows; r++) line(0, r, item.cols, r);
    for (let c = 1; c < item.cols; c++) line(c, 0, c, item.rows);
  }

  function applyZoom() {
    const img = $("grid-image");
    if (!img.naturalWidth) return;
    if (fitted) {
      const box = $("scroller");
      zoom = Math.min(1, (box.clientWidth - 2) / img.naturalWidth, (box.clientHeight - 2) / img.naturalHeight);
    }
    img.style.width = `${Math.round(img.naturalWidth * zoom)}px`;
    img.style.height = `${Math.round(img.naturalHeight * zoom)}px`;
    $("zoom-label").textContent = `${Math.round(zoom * 100)}%`;
  }

  function setZoom(step) {
    fitted = false;
    const i = ZOOMS.findIndex((z) => z >= zoom - 1e-6);
    const at = i < 0 ? ZOOMS.length - 1 : i;
    const next = step > 0 ? ZOOMS.find((z) => z > zoom + 1e-6) : [...ZOOMS].reverse().find((z) => z < zoom - 1e-6);
    zoom = next === undefined ? ZOOMS[at] : next;
    applyZoom();
  }

  function toggleFit() {
    fitted = !fitted;
    if (!fitted) zoom = 1;
    applyZoom();
  }

  // ------------------------------------------------------------------ state

  function render(state) {
    const done = state.done;
    $("progress-text").textContent =
      `${done} of ${state.total} done` + (state.skipped ? ` · ${state.skipped} skipped` : "");
    $("progress-bar").max = Math.max(1, state.total);
    $("progress-bar").value = done;
    $("item-id").textContent = state.item ? state.item.item_id : "";
    if (!state.item) {
      item = null;
      timerStop();
      $("task").hidden = true;
      $("finished").hidden = false;
      return;
    }
    $("finished").hidden = true;
    $("task").hidden = false;
    if (item && item.item_id === state.item.item_id) return;
    item = state.item;
    marked = new Map();
    history = [];
    activeMs = 0;
    since = null;
    $("prompt-global").textContent = item.prompt_global;
    $("prompt-local").textContent = item.prompt_local;
    $("count-label").hidden = !item.needs_count;
    $("count").value = "";
    $("message").textContent = "";
    $("overlay").setAttribute("viewBox", `0 0 ${item.cols} ${item.rows}`);
    $("task").dataset.itemId = item.item_id;
    $("task").dataset.mode = item.task_mode;
    $("task").dataset.rows = item.rows;
    $("task").dataset.cols = item.cols;
    $("task").dataset.ready = "false";
    const img = $("grid-image");
    img.removeAttribute("style");
    img.src = `${item.image_url}?token=${encodeURIComponent(token)}`;
    drawMarks();
    drawGrid();
  }

  $("grid-image").addEventListener("load", () => {
    applyZoom();
    timerStart();
    $("task").dataset.ready = "true";
  });
  $("grid-image").addEventListener("error", () => {
    $("message").textContent = "the image could not be loaded";
  });

  async function refresh() {
    const res = await call("/api/state");
    if (res.ok) render(res.data);
    else $("message").textContent = res.data.error;
  }

  // ------------------------------------------------------------------ actions

  function cellAt(event) {
    const box = $("grid-image").getBoundingClientRect();
    if (!item || box.width === 0) return null;
    const x = (event.clientX - box.left) / box.width;
    const y = (event.clientY - box.top) / box.height;
    if (x < 0 || y < 0 || x >= 1 || y >= 1) return null;
    return [Math.floor(y * item.rows) + 1, Math.floor(x * item.cols) + 1];
  }

  function toggle(cell, record = true) {
    const key = `${cell[0]},${cell[1]}`;
    const added = !marked.has(key);
    if (added) marked.set(key, cell);
    else marked.delete(key);
    if (record) history.push({ cell, added });
    drawMarks();
  }

  function undo() {
    const last = history.pop();
    if (last) toggle(last.cell, false);
  }

  async function submit() {
    if (!item || busy) return;
    let count = null;
    if (item.needs_count) {
      const text = $("count").value.trim();
      if (!/^[0-9]{1,4}$/.test(text)) {
        $("message").textContent = "type the count (a whole number) before submitting";
        $("count").focus();
        return;
      }
      count = parseInt(text, 10);
    }
    busy = true;
    const res = await call("/api/submit", { item_id: item.item_id, cells: sortedCells(), count, seconds: seconds() });
    busy = false;
    if (res.ok) render(res.data);
    else {
      $("message").textContent = res.data.error;
      if (res.data.state) render(res.data.state);
    }
  }

  async function skip() {
    if (!item || busy) return;
    busy = true;
    const res = await call("/api/skip", { item_id: item.item_id });
    busy = false;
    if (res.ok) render(res.data);
    else $("message").textContent = res.data.error;
  }

  $("stage").addEventListener("click", (event) => {
    const cell = cellAt(event);
    if (cell) toggle(cell);
  });
  $("stage").addEventListener("mousemove", (event) => {
    const cell = cellAt(event);
    const hover = $("hover");
    if (!cell) { hover.style.visibility = "hidden"; $("hover-cell").textContent = ""; return; }
    hover.setAttribute("x", cell[1] - 1);
    hover.setAttribute("y", cell[0] - 1);
    hover.style.visibility = "visible";
    $("hover-cell").textContent = label(cell);
  });
  $("stage").addEventListener("mouseleave", () => {
    $("hover").style.visibility = "hidden";
    $("hover-cell").textContent = "";
  });
  $("count").addEventListener("input", () => {
    const digits = $("count").value.replace(/[^0-9]/g, "").slice(0, 4);
    if (digits !== $("count").value) $("count").value = digits;
  });
  $("submit").addEventListener("click", submit);
  $("skip").addEventListener("click", skip);
  $("undo").addEventListener("click", undo);
  $("zoom-in").addEventListener("click", () => setZoom(1));
  $("zoom-out").addEventListener("click", () => setZoom(-1));
  $("zoom-fit").addEventListener("click", toggleFit);
  $("grid-toggle").addEventListener("change", drawGrid);
  window.addEventListener("resize", () => { if (fitted) applyZoom(); });

  document.addEventListener("keydown", (event) => {
    const target = event.target;
    if (target === $("count")) {
      if (event.key === "Enter") { event.preventDefault(); submit(); }
      else if (event.key === "Escape") target.blur();
      return;
    }
    if (target.tagName === "BUTTON" && (event.key === "Enter" || event.key === " ")) return;
    if (event.altKey) return;
    const key = event.key;
    if ((event.ctrlKey || event.metaKey) && key.toLowerCase() === "z") { event.preventDefault(); undo(); return; }
    if (event.ctrlKey || event.metaKey) return;
    if (key === "Enter") { event.preventDefault(); submit(); }
    else if (key === "s") skip();
    else if (key === "u") undo();
    else if (key === "+" || key === "=") setZoom(1);
    else if (key === "-") setZoom(-1);
    else if (key === "f") toggleFit();
    else if (key === "g") { $("grid-toggle").checked = !$("grid-toggle").checked; drawGrid(); }
    else if (/^[0-9]$/.test(key) && item && item.needs_count) {
      event.preventDefault();
      $("count").value = ($("count").value + key).slice(0, 4);
      $("count").focus();
    }
  });

  refresh();
})();
