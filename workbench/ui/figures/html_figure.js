// Roofline Workbench: the script of an exported figure page. It reads the numbers from the
// page's JSON block and finds the marks by the attributes the SVG names them with; it adds
// tooltips, the key (hide or isolate a machine, an operation, a memory level), the table's
// sorting and row highlight, the "top N by time" cut of measured kernels, and zoom and pan.
// Texts are only ever set as text (textContent), never parsed as markup.
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var data = JSON.parse(document.getElementById("figure-data").textContent);
  var figure = document.getElementById("figure");
  var svg = figure.querySelector("svg");
  var tip = document.getElementById("tip");
  var table = document.getElementById("results");
  if (!svg) return;

  // the rows of points and measured kernels, as objects (texts looked up in "strings")
  ["points", "measured"].forEach(function (name) {
    Object.keys(data[name]).forEach(function (k) {
      var row = data[name][k], e = {};
      data.fields.forEach(function (f, i) {
        var v = row[i];
        if (f === "tip" || f === "lines") v = v.map(function (s) { return data.strings[s]; });
        else if (typeof v === "number" && /^(operation|machine|level|bound|verdict)$/.test(f)) v = data.strings[v];
        e[f] = v;
      });
      data[name][k] = e;
    });
  });
  data.roofs.concat(data.ridges).forEach(function (e) {
    e.tip = e.tip.map(function (s) { return data.strings[s]; });
  });
  var hidden = { hw: {}, op: {}, level: {} };
  var topSet = null; // null: every measured kernel shown
  var marks = Array.prototype.slice.call(svg.querySelectorAll(".rw-pt, .rw-ms, .rw-ridge, .rw-roof"));
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);

  // -- what each mark stands for ---------------------------------------------------------
  function pointsOf(keys) {  // ("op:hw op:hw …")
    return (keys || "").split(/\s+/).filter(Boolean).map(function (k) { return data.points[k]; })
      .filter(Boolean);
  }
  function entriesOf(el) {
    var c = el.getAttribute("class");
    if (c === "rw-pt") return pointsOf(el.getAttribute("data-pts"));  // (and see "spots")
    if (c === "rw-ms") { var m = data.measured[el.getAttribute("data-ms")]; return m ? [m] : []; }
    var hw = Number(el.getAttribute("data-hw"));
    var list = c === "rw-roof" ? data.roofs : data.ridges;
    for (var i = 0; i < list.length; i++) {
      var e = list[i];
      if (e.hw !== hw) continue;
      if (c === "rw-roof" ? (e.kind === el.getAttribute("data-kind") && e.name === el.getAttribute("data-name"))
                          : e.precision === el.getAttribute("data-precision")) return [e];
    }
    return [];
  }
  function shown(e, measuredKey) {
    if (hidden.hw[e.hw]) return false;
    if (e.op !== undefined && e.op !== null && hidden.op[e.op]) return false;
    if (e.level && hidden.level[e.level]) return false;
    if (measuredKey !== undefined && topSet && !topSet[measuredKey]) return false;
    return true;
  }
  var info = marks.map(function (el) {
    var entries = entriesOf(el);
    // (a point's marker shows while one of its own points does, not another's there)
    return { el: el, entries: entries, mine: entries };
  });
  // a point's marker tells its own points first, then the others drawn at its place
  var spots = {};
  info.forEach(function (it) {
    var spot = it.el.getAttribute("data-spot");
    if (spot !== null) (spots[spot] = spots[spot] || []).push(it);
  });
  Object.keys(spots).forEach(function (spot) {
    spots[spot].forEach(function (it) {
      spots[spot].forEach(function (other) { if (other !== it) it.entries = it.entries.concat(other.mine); });
    });
  });
  var parts = Array.prototype.map.call(svg.querySelectorAll(".rw-part, [data-kernel]"), function (el) {
    var kernel = el.getAttribute("data-kernel");  // (one measured kernel's alone)
    var fills = el.getAttribute("data-fills");  // (a text said for several, in their colours)
    return { el: el, of: kernel ? [{ ms: kernel }] : JSON.parse(el.getAttribute("data-of")),
             fills: fills ? JSON.parse(fills) : null };
  });

  // -- hit areas: a roof is a thin line and a ridge a small diamond; a wider invisible
  // twin on top takes the pointer for them ------------------------------------------------
  var layer = document.createElementNS(NS, "g");
  layer.setAttribute("class", "rw-layer");
  svg.appendChild(layer);
  function toRoot(el) {  // the element's own coordinates to the figure's
    var m = new DOMMatrix();
    for (var n = el; n && n !== svg; n = n.parentNode) {
      if (n.transform && n.transform.baseVal.numberOfItems) {
        var c = n.transform.baseVal.consolidate().matrix;
        m = new DOMMatrix([c.a, c.b, c.c, c.d, c.e, c.f]).multiply(m);
      }
    }
    return m;
  }
  function rootBox(el) {
    var b = el.getBBox();
    var m = toRoot(el);
    var xs = [], ys = [];
    [[b.x, b.y], [b.x + b.width, b.y], [b.x, b.y + b.height], [b.x + b.width, b.y + b.height]]
      .forEach(function (p) {
        var q = new DOMPoint(p[0], p[1]).matrixTransform(m);
        xs.push(q.x); ys.push(q.y);
      });
    var x0 = Math.min.apply(null, xs), y0 = Math.min.apply(null, ys);
    return { x: x0, y: y0, w: Math.max.apply(null, xs) - x0, h: Math.max.apply(null, ys) - y0 };
  }
  // (each twin right above its mark: the points drawn later stay above it)
  info.forEach(function (it) {
    var c = it.el.getAttribute("class");
    if (c !== "rw-roof" && c !== "rw-ridge") return;
    var hit = it.el.cloneNode(false);
    ["class", "data-hw", "data-kind", "data-name", "data-precision", "id"].forEach(function (a) { hit.removeAttribute(a); });
    hit.setAttribute("class", "rw-hit");
    hit.setAttribute("stroke", "transparent");
    hit.setAttribute("stroke-width", c === "rw-roof" ? "10" : "12");
    hit.setAttribute("stroke-dasharray", "none");
    hit.setAttribute("fill", c === "rw-roof" ? "none" : "transparent");
    it.el.parentNode.insertBefore(hit, it.el.nextSibling);
    it.hit = hit;
  });
  var ring = document.createElementNS(NS, "circle");
  ring.setAttribute("class", "rw-ring");
  ring.setAttribute("fill", "none");
  ring.setAttribute("stroke-width", "2.5");
  ring.setAttribute("display", "none");
  layer.appendChild(ring);
  var byNode = new Map();  // a mark or its twin → the mark
  info.forEach(function (it) { byNode.set(it.el, it); if (it.hit) byNode.set(it.hit, it); });
  function markOf(node) { return byNode.get(node) || null; }

  // -- tooltips ----------------------------------------------------------------------------
  var pinned = false;
  function showTip(it, clientX, clientY) {
    var entries = it.entries.filter(function (e) { return shown(e, it.el.getAttribute("data-ms") || undefined); });
    if (!entries.length) { hideTip(); return; }
    tip.textContent = "";
    var first = entries[0];
    first.tip.forEach(function (line, i) {
      var div = document.createElement("div");
      div.textContent = line;
      if (i === 0) div.className = "head";
      tip.appendChild(div);
    });
    if (first.lines && first.lines.length) {
      var h = document.createElement("div");
      h.className = "sub";
      h.textContent = "Derivation";
      tip.appendChild(h);
      first.lines.forEach(function (line) {
        var div = document.createElement("div");
        div.className = "formula";
        div.textContent = line;
        tip.appendChild(div);
      });
    }
    if (entries.length > 1) {
      var also = document.createElement("div");
      also.className = "sub";
      also.textContent = "Also here: " + entries.slice(1).map(function (e) { return e.operation + " on " + e.machine; }).join("; ");
      tip.appendChild(also);
    }
    tip.hidden = false;
    var box = figure.getBoundingClientRect();
    var x = clientX - box.left + 14, y = clientY - box.top + 14;
    var w = tip.offsetWidth, hgt = tip.offsetHeight;
    if (x + w > figure.clientWidth) x = Math.max(0, clientX - box.left - w - 14);
    if (clientY + 14 + hgt > window.innerHeight) y = Math.max(0, clientY - box.top - hgt - 14);
    // (and in the window, where the figure is wider than it or the page scrolled sideways)
    x = Math.max(-box.left, Math.min(x, window.innerWidth - box.left - w));
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }
  function hideTip() { tip.hidden = true; pinned = false; }

  // -- zoom and pan (the figure's viewBox) ------------------------------------------------
  var vb0 = svg.getAttribute("viewBox").split(/[\s,]+/).map(Number);
  var vb = vb0.slice();
  // zoomed, the plot's marks zoom within its frame, cut to it, while the frame, the axes,
  // the title and the legend stay put (drawn back by the zoom's inverse), the axes' numbers
  // and grid drawn anew for the range in view. F: the frame, and where 1 is on each axis and
  // how far a decade goes (page_marks.page_axes)
  var F = svg.getAttribute("data-axes").split(" ").map(Number);
  var inner = [layer], outer = [], run = null, named = "[class],[data-of],[data-kernel]";
  Array.prototype.slice.call(svg.querySelector("g").children).forEach(function (el) {
    var mine = el.matches(named) || !!el.querySelector(named);
    if (!run || run.mine !== mine) {
      run = document.createElementNS(NS, "g");
      run.mine = mine;
      el.parentNode.insertBefore(run, el);
      (mine ? inner : outer).push(run);
    }
    run.appendChild(el);
  });
  var win = document.createElementNS(NS, "rect"), clip = document.createElementNS(NS, "clipPath");
  clip.id = "rw-clip";
  clip.appendChild(win);
  svg.appendChild(clip);
  // each axis: its grid (groups of see-through lines across the plot, the decades' first)
  // and its numbers (the texts placed as its grid)
  var axes = [];
  outer.forEach(function (g) {
    g.querySelectorAll("g[stroke-opacity]").forEach(function (grid) {
      var p = grid.querySelector("polyline").points, i = p[0].x === p[1].x ? 0 : 1;
      var a = axes[i] = axes[i] || { i: i, grids: [], at: grid.getAttribute("transform"), m: toRoot(grid), made: [] };
      a.grids.push(grid);
      a.old = Array.prototype.slice.call(grid.children).concat(a.old || []);
    });
  });
  axes.forEach(function (a) {
    a.grids.sort(function (g, h) { return h.getAttribute("stroke-opacity") - g.getAttribute("stroke-opacity"); });
    outer.forEach(function (g) {
      g.querySelectorAll("text").forEach(function (t) {
        if (t.parentNode.getAttribute("transform") !== a.at) return;
        var b = t.getBBox();
        a.old.push(t);
        a.t = t;
        a.h = b.height;
        a.dy = t.getAttribute("y") - b.y - b.height / 2;
        a.right = Math.max(a.right || -Infinity, b.x + b.width);
      });
    });
  });
  var SUP = "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079";
  function number(i, m, d) {  // m × 10^d as the axis says it (LogAxis.format_value)
    if (i) {  // FLOP/s, with its prefix
      var p = Math.max(0, Math.min(6, Math.floor(d / 3)));
      return m * Math.pow(10, d - 3 * p) + " " + " kMGTPE"[p].trim() + "FLOP/s";
    }
    if (d >= -3 && d < 4) return String(+(m * Math.pow(10, d)).toPrecision(3));
    return (m > 1 ? m + "\u00d710" : "10") + String(d).replace(/./g, function (c) { return SUP["-0123456789".indexOf(c)]; });
  }
  function drawAxes(z) {
    axes.forEach(function (a) {
      var i = a.i, k = F[5 + 2 * i], kept = [], says = [];
      a.old.forEach(function (el) { if (z < 1) el.setAttribute("display", "none"); else el.removeAttribute("display"); });
      a.made.forEach(function (el) { el.remove(); });
      a.made = [];
      if (z === 1) return;
      function at(v) { return vb0[i] + (F[4 + 2 * i] + k * v - vb[i]) / z - a.m[i ? "f" : "e"]; }  // (in its group)
      var ends = [F[i], F[i + 2]].map(function (f) { return (vb[i] + (f - vb0[i]) * z - F[4 + 2 * i]) / k; });
      var lo = Math.min.apply(null, ends), hi = Math.max.apply(null, ends), span = hi - lo;
      for (var d = Math.floor(lo); d <= hi; d++) {
        for (var m = 1; m < 10; m++) {
          var v = d + Math.log10(m), p = at(v);
          if (v < lo || v > hi) continue;
          var grid = a.grids[m > 1 && a.grids[1] ? 1 : 0], line = grid.querySelector("polyline").cloneNode(false), q = line.points;
          line.setAttribute("points", i ? [q[0].x, p, q[1].x, p] : [p, q[0].y, p, q[1].y]);
          line.removeAttribute("display");
          grid.appendChild(line);
          a.made.push(line);
          // (numbered: the decades; 2 and 5 times them under 3 decades; every one under 1.3)
          var rank = m === 1 ? 0 : span < 3 && (m === 2 || m === 5) ? 1 : span < 1.3 ? 2 : -1;
          if (rank >= 0 && a.t) says.push([rank, v, p, m, d]);
        }
      }
      says.sort(function (x, y) { return x[0] - y[0] || x[1] - y[1]; });
      says.forEach(function (s) {  // each clear of those kept before it
        var t = a.t.cloneNode(false);
        t.textContent = number(i, s[3], s[4]);
        t.removeAttribute("display");
        t.setAttribute("text-anchor", i ? "end" : "middle");
        t.setAttribute(i ? "y" : "x", s[2] + (i ? a.dy : 0));
        if (i) t.setAttribute("x", a.right);
        a.t.parentNode.appendChild(t);
        var size = i ? a.h : t.getComputedTextLength();
        if (kept.every(function (o) { return Math.abs(o[0] - s[2]) >= (o[1] + size) / 2 + a.h * (i ? 0.15 : 0.6); })) {
          kept.push([s[2], size]);
          a.made.push(t);
        }
        else t.remove();
      });
    });
  }
  // the markers (points, measured kernels, ridges, samples, crossings, arrow heads) keep
  // their size on screen when zoomed, as in the app, so that points close together come
  // apart: each is scaled back about its place (its box's centre, or data-c where it is
  // drawn off it), which follows the zoom
  var dots = [];
  Array.prototype.forEach.call(svg.querySelectorAll(".rw-pt, .rw-ms, .rw-ridge, .rw-dot"), function (el) {
    var c = el.getAttribute("data-c"), x, y;
    if (c) {  // (in the figure's coordinates: to the marker's own, as an arrow's head is moved)
      c = c.split(",");
      var p = new DOMPoint(Number(c[0]), Number(c[1])).matrixTransform(toRoot(el).inverse());
      x = p.x; y = p.y;
    }
    else { var b = el.getBBox(); x = b.x + b.width / 2; y = b.y + b.height / 2; }
    dots.push({ el: el, x: x, y: y });
    var it = byNode.get(el);
    if (it && it.hit) dots.push({ el: it.hit, x: x, y: y });
  });
  var scale = 1;
  var own = svg.width.baseVal.value || vb0[2];  // (the figure's own width, CSS pixels)
  function setView() {  // (the view stays on the plot: zoomed out, it is the whole plot)
    var z = vb[2] / vb0[2], i;
    for (i = 0; i < 2; i++) vb[i] = Math.min(Math.max(vb[i], F[i] - (F[i] - vb0[i]) * z), F[i + 2] - (F[i + 2] - vb0[i]) * z);
    svg.setAttribute("viewBox", vb.join(" "));
    svg.classList.toggle("rw-zoomed", z < 1);
    var back = "matrix(" + [z, 0, 0, z, vb[0] - vb0[0] * z, vb[1] - vb0[1] * z] + ")";
    outer.forEach(function (g) { if (z < 1) g.setAttribute("transform", back); else g.removeAttribute("transform"); });
    inner.forEach(function (g) { if (z < 1) g.setAttribute("clip-path", "url(#rw-clip)"); else g.removeAttribute("clip-path"); });
    ["x", "y", "width", "height"].forEach(function (name, i) {
      win.setAttribute(name, i < 2 ? vb[i] + (F[i] - vb0[i]) * z : (F[i] - F[i - 2]) * z);
    });
    drawAxes(z);
    // (a figure shown smaller than its own size, on a phone, grows them with the zoom up to
    // their own size, and no further)
    var k = Math.min(1, vb[2] / vb0[2] * own / (svg.getBoundingClientRect().width || own));
    if (k === scale) return;
    scale = k;
    dots.forEach(function (d) {  // (d.base: its own transform, kept)
      if (k === 1) { if (d.base) d.el.setAttribute("transform", d.base); else d.el.removeAttribute("transform"); }
      else d.el.setAttribute("transform", "matrix(" + [k, 0, 0, k, d.x * (1 - k), d.y * (1 - k)].join(",") + ")" + (d.base ? " " + d.base : ""));
    });
  }
  window.addEventListener("resize", setView);
  function toSvg(clientX, clientY) {
    return new DOMPoint(clientX, clientY).matrixTransform(svg.getScreenCTM().inverse());
  }
  function zoomAt(clientX, clientY, f) {  // (f: the view's width, times)
    var p = toSvg(clientX, clientY);
    var w = Math.min(vb0[2], Math.max(vb0[2] / 50, vb[2] * f));
    f = w / vb[2];
    vb = [p.x - (p.x - vb[0]) * f, p.y - (p.y - vb[1]) * f, vb[2] * f, vb[3] * f];
    setView();
  }
  svg.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    // (a trackpad's pinch comes as the wheel with Ctrl, its deltaY 100 × ln of the pinch's
    // scale: the figure follows the fingers; a wheel's lines or pages as pixels)
    var dy = ev.deltaY * (ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? 800 : 1);
    zoomAt(ev.clientX, ev.clientY, Math.exp(Math.max(-1, Math.min(1, ev.ctrlKey ? dy / 100 : dy * 0.0015))));
  }, { passive: false });
  // two fingers on a touch screen pinch the figure about their middle (and drag it with it)
  var touches = new Map(), pinch = null;
  function spread() {
    var t = Array.from(touches.values());
    return { d: Math.hypot(t[0].x - t[1].x, t[0].y - t[1].y), x: (t[0].x + t[1].x) / 2, y: (t[0].y + t[1].y) / 2 };
  }
  svg.addEventListener("pointerdown", function (ev) {
    if (ev.pointerType === "touch") touches.set(ev.pointerId, { x: ev.clientX, y: ev.clientY });
    if (touches.size === 2) { pinch = spread(); drag = null; hideTip(); }
  });
  window.addEventListener("pointermove", function (ev) {
    if (!pinch || !touches.has(ev.pointerId)) return;
    touches.set(ev.pointerId, { x: ev.clientX, y: ev.clientY });
    var now = spread(), s = svg.getScreenCTM();
    vb[0] -= (now.x - pinch.x) / s.a;
    vb[1] -= (now.y - pinch.y) / s.d;
    if (now.d > 0 && pinch.d > 0) zoomAt(now.x, now.y, pinch.d / now.d);
    else setView();
    pinch = now;
  });
  ["pointerup", "pointercancel"].forEach(function (type) {
    window.addEventListener(type, function (ev) {
      touches.delete(ev.pointerId);
      if (touches.size < 2) pinch = null;
    });
  });
  var drag = null;
  svg.addEventListener("pointerdown", function (ev) {
    if (!pinch) drag = { x: ev.clientX, y: ev.clientY, vb: vb.slice(), moved: false };
  });
  window.addEventListener("pointermove", function (ev) {
    if (drag && !pinch && (drag.moved || Math.abs(ev.clientX - drag.x) + Math.abs(ev.clientY - drag.y) > 4)) {
      drag.moved = true;
      var s = svg.getScreenCTM();
      vb = [drag.vb[0] - (ev.clientX - drag.x) / s.a, drag.vb[1] - (ev.clientY - drag.y) / s.d, vb[2], vb[3]];
      setView();
      hideTip();
    }
  });
  window.addEventListener("pointerup", function () { setTimeout(function () { drag = null; }, 0); });
  document.getElementById("reset").addEventListener("click", function () { vb = vb0.slice(); setView(); });

  svg.addEventListener("pointermove", function (ev) {
    if (drag && drag.moved) return;
    var it = markOf(ev.target);
    if (it) { showTip(it, ev.clientX, ev.clientY); pinned = false; }
    else if (!pinned) hideTip();
  });
  svg.addEventListener("click", function (ev) {
    if (drag && drag.moved) return;
    var it = markOf(ev.target);
    if (it) { showTip(it, ev.clientX, ev.clientY); pinned = true; }
    else hideTip();
  });
  svg.addEventListener("pointerleave", function () { if (!pinned) hideTip(); });
  document.addEventListener("keydown", function (ev) { if (ev.key === "Escape" && !tip.hidden) hideTip(); });

  // -- hiding and isolating ---------------------------------------------------------------
  function apply() {
    info.forEach(function (it) {
      var key = it.el.getAttribute("data-ms") || undefined;
      var on = it.entries.length === 0 || it.mine.some(function (e) { return shown(e, key); });
      it.el.setAttribute("display", on ? "inline" : "none");
      if (it.hit) it.hit.setAttribute("display", on ? "inline" : "none");
    });
    // an operation's name on the chart (and its leader) goes with the last of its points
    var named = {};
    Object.keys(data.points).forEach(function (k) { if (shown(data.points[k])) named[data.points[k].op] = true; });
    Array.prototype.forEach.call(svg.querySelectorAll(".rw-label, .rw-leader"), function (t) {
      t.setAttribute("display", named[t.getAttribute("data-op")] ? "inline" : "none");
    });
    // a tag ("6, 7, 11") and its leader, with the last of the points of its operations
    Array.prototype.forEach.call(svg.querySelectorAll(".rw-tag"), function (t) {
      var on = t.getAttribute("data-ops").split(" ").some(function (op) { return named[op]; });
      t.setAttribute("display", on ? "inline" : "none");
    });
    // a sweep's path, a measured kernel's link and text, a roof's text: while one of theirs shows
    function whose(o) {  // (a list: all of them)
      if (Array.isArray(o)) return o.every(whose);
      return o.ms ? !!data.measured[o.ms] && shown(data.measured[o.ms], o.ms) : shown(o);
    }
    parts.forEach(function (p) {
      var first = p.of.findIndex(whose);
      p.el.setAttribute("display", first >= 0 ? "inline" : "none");
      if (p.fills && first >= 0) p.el.setAttribute("fill", p.fills[first]);  // (the first shown's colour)
    });
    rows.forEach(function (tr) {
      var pk = tr.getAttribute("data-pt"), mk = tr.getAttribute("data-ms");
      var e = pk ? data.points[pk] : data.measured[mk];
      tr.hidden = !(e && shown(e, mk || undefined));
    });
    keyButtons.forEach(function (b) { b.button.setAttribute("aria-pressed", hidden[b.kind][b.id] ? "false" : "true"); });
    // (and the figure's own legend: a hidden one's row struck through and dimmed)
    legendRows.forEach(function (r) { r.t.classList.toggle("rw-off", !!hidden[r.kind][r.id]); });
    hideTip();
    ring.setAttribute("display", "none");
  }
  var keyButtons = [], legendRows = [];
  var key = document.getElementById("key");
  function group(title, kind, items) {
    if (items.length < 1) return;
    var box = document.createElement("div");
    box.className = "group";
    var h = document.createElement("span");
    h.className = "title";
    h.textContent = title;
    box.appendChild(h);
    items.forEach(function (item) {
      var span = document.createElement("span");
      span.className = "item";
      var b = document.createElement("button");
      b.type = "button";
      b.className = "toggle";
      b.setAttribute("data-kind", kind);
      b.textContent = item.name;
      if (item.color) {
        var dot = document.createElement("i");
        dot.style.backgroundColor = item.color;
        b.insertBefore(dot, b.firstChild);
      }
      b.addEventListener("click", function () { toggle(kind, item.id); });
      var only = document.createElement("button");
      only.type = "button";
      only.className = "only";
      only.textContent = "only";
      only.title = "Show only " + item.name;
      only.addEventListener("click", function () { isolate(kind, item.id, items); });
      span.appendChild(b);
      span.appendChild(only);
      box.appendChild(span);
      keyButtons.push({ kind: kind, id: item.id, button: b });
    });
    key.appendChild(box);
  }
  function toggle(kind, id) { hidden[kind][id] = !hidden[kind][id]; apply(); }
  function isolate(kind, id, items) {
    var alone = items.every(function (o) { return (o.id === id) !== !!hidden[kind][o.id]; });
    items.forEach(function (o) { hidden[kind][o.id] = alone ? false : o.id !== id; });
    apply();
  }
  group("Machines", "hw", data.machines);
  group("Operations", "op", data.operations);
  group("Memory levels", "level", data.levels.map(function (l) { return { id: l, name: l }; }));
  key.hidden = false;
  // the figure's own legend: a machine's or an operation's row hides or shows it too
  Array.prototype.forEach.call(svg.querySelectorAll("text:not(.rw-label)"), function (t) {
    var text = t.textContent.trim();
    var hit = null;
    // (a machine's row of a figure may say its roofs' values after its name: "name: …")
    data.machines.forEach(function (m) {
      if (m.name === text || text.slice(0, m.name.length + 1) === m.name + ":") hit = ["hw", m.id];
    });
    data.operations.forEach(function (o) {
      if (o.name === text || text.slice(-(o.name.length + 3)) === " \u2014 " + o.name) hit = hit || ["op", o.id];
    });
    if (hit) {
      t.setAttribute("class", "rw-legend");
      t.addEventListener("click", function (ev) { ev.stopPropagation(); toggle(hit[0], hit[1]); });
      legendRows.push({ t: t, kind: hit[0], id: hit[1] });
    }
  });

  // -- the texts keep their size on screen when zoomed, as the markers do: each scaled back
  // about what it names, so that it stays beside it (a point's name about its marker, a
  // roof's value about its line, a text with a leader about the leader's far end, the
  // leader with it); the axes, the title and the legend are not zoomed
  function ownerOf(el) {  // (whose a text or a mark is, as the figure names it)
    var c = el.getAttribute("class") || "";
    if (/rw-label|rw-leader/.test(c)) return "op " + el.getAttribute("data-op");
    if (/rw-tag/.test(c)) return "ops " + el.getAttribute("data-ops");
    if (el.hasAttribute("data-kernel")) return "ms " + el.getAttribute("data-kernel");
    return el.hasAttribute("data-of") ? "of " + el.getAttribute("data-of") : null;
  }
  function toParent(el, p) { return new DOMPoint(p.x, p.y).matrixTransform(toRoot(el.parentNode).inverse()); }
  function keep(el, p) {  // (p in the figure's coordinates)
    var q = toParent(el, p);
    dots.push({ el: el, x: q.x, y: q.y, base: el.getAttribute("transform") });
  }
  function far(p, b) {  // how far the point p is from the box b
    return Math.hypot(Math.max(b.x - p.x, 0, p.x - b.x - b.w), Math.max(b.y - p.y, 0, p.y - b.y - b.h));
  }
  function pointAt(el, t, m) { var p = el.getPointAtLength(t); return new DOMPoint(p.x, p.y).matrixTransform(m); }
  var sampled = new Map();
  function placesOf(el) {  // a marker's centre, or points along a line (the figure's coordinates)
    if (sampled.has(el)) return sampled.get(el);
    var m = toRoot(el), out = [];
    if (/rw-pt|rw-ms|rw-ridge|rw-dot/.test(el.getAttribute("class") || "")) {
      var b = rootBox(el), c = el.getAttribute("data-c");
      out.push(c ? { x: Number(c.split(",")[0]), y: Number(c.split(",")[1]) } : { x: b.x + b.w / 2, y: b.y + b.h / 2 });
    }
    else if (el.getTotalLength) {
      var n = el.getTotalLength(), step = Math.max(2, n / 400);
      for (var t = 0; t < n + step; t += step) out.push(pointAt(el, Math.min(t, n), m));
    }
    sampled.set(el, out);
    return out;
  }
  var drawn = Array.prototype.slice.call(svg.querySelectorAll(".rw-pt, .rw-ms, .rw-ridge, .rw-roof, [data-of], [data-kernel]"))
    .filter(function (el) { return el.tagName !== "text"; });
  function namedBy(owner) {  // the marks a text of this owner names
    var kind = owner.slice(0, owner.indexOf(" ")), what = owner.slice(owner.indexOf(" ") + 1);
    var ops = kind === "op" || kind === "ops" ? what.split(" ") : [];
    var hws = [];
    if (kind === "of") JSON.stringify(JSON.parse(what)).replace(/\{"hw":(\d+),"level"/g, function (_, hw) { hws.push(hw); });
    return drawn.filter(function (el) {
      var c = el.getAttribute("class") || "";
      if (c === "rw-pt") return el.getAttribute("data-pts").split(" ").some(function (k) { return ops.indexOf(k.split(":")[0]) >= 0; });
      if (c === "rw-ms") return kind === "ms" && el.getAttribute("data-ms") === what;
      if (c === "rw-roof" || c === "rw-ridge") return hws.indexOf(el.getAttribute("data-hw")) >= 0;
      return ownerOf(el) === owner && !/rw-leader|rw-tag/.test(c);
    });
  }
  function union(boxes) {
    var x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    boxes.forEach(function (b) { x0 = Math.min(x0, b.x); y0 = Math.min(y0, b.y); x1 = Math.max(x1, b.x + b.w); y1 = Math.max(y1, b.y + b.h); });
    return { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
  }
  var blocks = new Map();  // a text's lines drawn together (one group, one owner)
  inner.forEach(function (r) { r.querySelectorAll("text").forEach(function (t) {
    var owner = ownerOf(t), g = t.parentNode;
    var key = owner ? owner : t;
    if (!blocks.has(g)) blocks.set(g, new Map());
    var mine = blocks.get(g);
    if (!mine.has(key)) mine.set(key, { owner: owner, texts: [] });
    mine.get(key).texts.push(t);
  }); });
  if (drawn.length) blocks.forEach(function (mine) {
    mine.forEach(function (block) {
      var box = union(block.texts.map(rootBox));
      var at = null, best = 3, leader = null;
      if (block.owner) {
        // the nearest of what it names (a text is placed without a leader only where that
        // is the nearest), or to the far end of its leader (a straight line of its own
        // that ends at its box)
        svg.querySelectorAll("path").forEach(function (el) {
          if (ownerOf(el) !== block.owner || !/^\s*M[^MLC]*L[^MLC]*$/.test(el.getAttribute("d"))) return;
          var m = toRoot(el), ends = [pointAt(el, 0, m), pointAt(el, el.getTotalLength(), m)];
          if (far(ends[0], box) > far(ends[1], box)) ends.reverse();
          if (far(ends[0], box) < best) { best = far(ends[0], box); at = ends[1]; leader = el; }
        });
        var end = at;
        best = end ? 15 : Infinity;
        namedBy(block.owner).forEach(function (el) {
          placesOf(el).forEach(function (p) {
            var d = end ? Math.hypot(p.x - end.x, p.y - end.y) : far(p, box);
            if (d < best) { best = d; at = p; }
          });
        });
      }
      at = at || { x: box.x + box.w / 2, y: box.y + box.h / 2 };
      block.texts.forEach(function (t) { keep(t, at); });
      if (leader) keep(leader, at);
    });
  });

  // -- the table: sorting, and the point of the row under the cursor ----------------------
  var columns = JSON.parse(table.getAttribute("data-fields"));
  var sortState = { col: -1, dir: 1 };
  function sortBy(col) {
    sortState.dir = sortState.col === col ? -sortState.dir : 1;
    sortState.col = col;
    var dir = sortState.dir;
    // (verdicts in their own order, not alphabetically: html_page.py's _VERDICT_ORDER)
    var field = columns[col] === "verdict" ? "verdict_order" : columns[col];
    var keyed = rows.map(function (tr, i) {
      var pk = tr.getAttribute("data-pt"), e = pk ? data.points[pk] : data.measured[tr.getAttribute("data-ms")];
      var v = e ? e[field] : null;
      // (a text as its cell says it: a measured kernel's tag and short name, not its signature)
      if (typeof v === "string") v = tr.cells[col].textContent;
      return { tr: tr, i: i, v: v === undefined || (typeof v === "number" && !isFinite(v)) ? null : v };
    });
    keyed.sort(function (a, b) {  // numbers by value, texts alphabetically (K2 before K10), blanks last
      var c;
      if (a.v === null || b.v === null) c = (a.v === null) - (b.v === null);
      else if (typeof a.v === "number" && typeof b.v === "number") c = dir * (a.v - b.v);
      else c = dir * String(a.v).localeCompare(String(b.v), undefined, { numeric: true });
      return c || a.i - b.i;
    });
    var body = table.tBodies[0];
    keyed.forEach(function (k) { body.appendChild(k.tr); });
    rows = keyed.map(function (k) { return k.tr; });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      if (i === col) th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
      else th.removeAttribute("aria-sort");
    });
  }
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
    th.addEventListener("click", function () { sortBy(i); });
    th.addEventListener("keydown", function (ev) { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); sortBy(i); } });
  });
  var byKey = new Map();  // "op:hw" or "measurement:hw" → its mark
  info.forEach(function (it) {
    var c = it.el.getAttribute("class");
    if (c === "rw-ms") byKey.set("ms " + it.el.getAttribute("data-ms"), it.el);
    if (c === "rw-pt") it.el.getAttribute("data-pts").split(" ").forEach(function (k) { byKey.set("pt " + k, it.el); });
  });
  function markOfRow(tr) {
    var pk = tr.getAttribute("data-pt"), mk = tr.getAttribute("data-ms");
    return byKey.get(pk ? "pt " + pk : "ms " + mk) || null;
  }
  table.tBodies[0].addEventListener("mouseover", function (ev) {
    var tr = ev.target.closest("tr");
    var el = tr && markOfRow(tr);
    rows.forEach(function (r) { r.classList.toggle("lit", r === tr); });
    if (!el || el.getAttribute("display") === "none") { ring.setAttribute("display", "none"); return; }
    var b = rootBox(el);
    ring.setAttribute("cx", b.x + b.w / 2);
    ring.setAttribute("cy", b.y + b.h / 2);
    // (its size on screen, zoomed too; its line keeps its width on screen, as every line does)
    ring.setAttribute("r", Math.max(b.w, b.h) / 2 + 5 * scale);
    ring.setAttribute("display", "inline");
  });
  table.tBodies[0].addEventListener("mouseleave", function () {
    ring.setAttribute("display", "none");
    rows.forEach(function (r) { r.classList.remove("lit"); });
  });

  // -- top N measured kernels by time ------------------------------------------------------
  var topInput = document.getElementById("topn");
  if (topInput) {
    var timed = Object.keys(data.measured).filter(function (k) { return data.measured[k].measured !== null; })
      .sort(function (a, b) { return data.measured[b].measured - data.measured[a].measured; });
    topInput.max = String(timed.length);
    topInput.value = String(timed.length);
    document.getElementById("topn-of").textContent = String(timed.length);
    topInput.parentNode.hidden = false;
    topInput.addEventListener("input", function () {
      var n = Math.floor(Number(topInput.value));
      if (!(n >= 1) || n >= timed.length) topSet = null;
      else {
        topSet = {};
        timed.slice(0, n).forEach(function (k) { topSet[k] = true; });
      }
      apply();
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll(".hint, #reset"), function (el) { el.hidden = false; });
  document.documentElement.classList.add("live");
  apply();
})();
