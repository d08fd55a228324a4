// corruptgen gallery viewer: click a thumbnail to see the image beside its clean twin, their difference and the
// sample's json; arrow keys move along the columns (severity) and rows (corruptions); Esc closes.
// No network requests; every string from the build is set with textContent, never parsed as HTML.
(function () {
  "use strict";
  var block = document.getElementById("gallery-data");
  if (!block) return;
  var data = JSON.parse(block.textContent);
  var samples = data.samples;
  var grid = {}; // "row,col" -> sample ids by slot
  samples.forEach(function (s) {
    var at = s.row + "," + s.col;
    (grid[at] = grid[at] || [])[s.slot] = s.id;
  });
  var rows = data.rows.length, cols = data.columns.length;
  var gains = [1, 4, 16], gain = 1, current = null;

  function el(tag, attrs, parent) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (parent) parent.appendChild(node);
    return node;
  }
  function figure(parent, caption, cls) {
    var fig = el("figure", cls ? { "class": cls } : {}, parent);
    var box = cls ? el("div", { "class": "diff-stack", "id": "viewer-diff" }, fig) : fig;
    var img = el("img", { alt: caption }, box);
    var second = cls ? el("img", { alt: "" }, box) : null;
    el("figcaption", {}, fig).textContent = caption;
    return second ? [img, second] : img;
  }

  var viewer = el("div", { id: "viewer", "class": "viewer", role: "dialog", "aria-modal": "true", hidden: "" },
                  document.body);
  var bar = el("div", { "class": "viewer-bar" }, viewer);
  var title = el("span", { "class": "title", id: "viewer-title" }, bar);
  var gainButton = el("button", { type: "button", id: "viewer-gain" }, bar);
  var close = el("button", { type: "button", id: "viewer-close" }, bar);
  close.textContent = "close (Esc)";
  var images = el("div", { "class": "viewer-images" }, viewer);
  var image = figure(images, "sample");
  var clean = figure(images, "clean twin");
  var diff = figure(images, "difference |sample − clean|", "diff");
  var json = el("pre", { id: "viewer-json" }, viewer);
  el("p", { "class": "help" }, viewer).textContent =
    "← → along the columns (severity, Δv, ε) · ↑ ↓ along the corruptions · Esc closes";

  function setGain(g) {
    gain = g;
    gainButton.textContent = "difference ×" + g;
    document.getElementById("viewer-diff").style.filter = "brightness(" + g + ")";
  }
  function show(id) {
    var s = samples[id];
    if (!s) return;
    if (current !== null) {
      var old = document.querySelector('.thumb[data-id="' + current + '"]');
      if (old) old.classList.remove("current");
    }
    current = id;
    var thumb = document.querySelector('.thumb[data-id="' + id + '"]');
    if (thumb) { thumb.classList.add("current"); thumb.scrollIntoView({ block: "nearest", inline: "nearest" }); }
    var parts = [data.rows[s.row], data.columns[s.col], s.subset, s.key];
    if (s.frame !== null) parts.push("frame " + s.frame);
    if (s.meta && s.meta.label_name) parts.push(s.meta.label_name);
    if (s.predicted !== null && s.predicted !== undefined) {
      parts.push("predicted " + s.predicted + (s.correct === true ? " ✓" : s.correct === false ? " ✗" : ""));
    }
    title.textContent = parts.join(" · ");
    image.src = s.image;
    diff[0].src = s.clean || s.image;
    diff[1].src = s.image;
    if (s.clean) clean.src = s.clean; else clean.removeAttribute("src");
    clean.alt = s.clean ? "clean twin" : "no clean subset in this build";
    json.textContent = JSON.stringify(s.meta, null, 2);
    viewer.setAttribute("data-subset", s.subset);
    viewer.setAttribute("data-key", s.key);
    viewer.hidden = false;
  }
  function hide() {
    viewer.hidden = true;
  }
  function at(row, col, slot) {
    var ids = grid[row + "," + col];
    if (!ids) return null;
    for (var k = Math.min(slot, ids.length - 1); k >= 0; k--) if (ids[k] !== undefined) return ids[k];
    return null;
  }
  function move(dRow, dCol) {
    if (current === null) return;
    var s = samples[current], r = s.row + dRow, c = s.col + dCol;
    while (r >= 0 && r < rows && c >= 0 && c < cols) {
      var id = at(r, c, s.slot);
      if (id !== null) { show(id); return; }
      r += dRow; c += dCol;
    }
  }

  // small images (CIFAR's 32 px) are enlarged pixel by pixel, not blurred
  [image, clean, diff[0], diff[1]].forEach(function (img) {
    img.addEventListener("load", function () { img.classList.toggle("small", img.naturalWidth * 2 <= 320); });
  });
  setGain(1);
  gainButton.addEventListener("click", function () { setGain(gains[(gains.indexOf(gain) + 1) % gains.length]); });
  close.addEventListener("click", hide);
  viewer.addEventListener("click", function (e) { if (e.target === viewer) hide(); });
  document.addEventListener("click", function (e) {
    var a = e.target.closest ? e.target.closest("a.thumb") : null;
    if (!a || e.ctrlKey || e.metaKey || e.shiftKey) return;
    e.preventDefault();
    show(Number(a.getAttribute("data-id")));
  });
  document.addEventListener("keydown", function (e) {
    if (viewer.hidden) return;
    var moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    if (e.key === "Escape") { hide(); e.preventDefault(); }
    else if (moves[e.key]) { move(moves[e.key][0], moves[e.key][1]); e.preventDefault(); }
  });
})();
