// thinlab report.html / compare.html: draws the embedded JSON (crates/cli/src/report_html/)
// with uPlot. Every chart is a uPlot instance; the colour of a configuration is the same in
// every chart, and the keys above the charts show or hide it everywhere.
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('thinlab-data').textContent);
  var root = document.getElementById('report');
  // Colour-blind-safe first (Okabe & Ito), then tab10's remaining hues, then darker variants.
  var PALETTE = ['#0072B2', '#E69F00', '#009E73', '#D55E00', '#CC79A7', '#56B4E9', '#000000',
    '#F0E442', '#8c564b', '#7f7f7f', '#bcbd22', '#9467bd', '#17becf', '#d62728', '#1f3d7a',
    '#7a4d00', '#005c46', '#7a3600', '#7a4566', '#3b6e8c'];
  var DASH = [[], [8, 4], [2, 3], [12, 4, 2, 4]];
  var hidden = {};     // colour index -> true when hidden
  var charts = [];     // {u, colours: [colour index of series 1..]}
  var opts = { logx: false, tail: false };

  function colour(i) { return PALETTE[i % PALETTE.length]; }
  function el(tag, attrs, kids) {
    var e = document.createElement(tag);
    for (var k in (attrs || {})) {
      if (k === 'text') e.textContent = attrs[k];
      else if (k === 'class') e.className = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    (kids || []).forEach(function (c) { if (c) e.appendChild(c); });
    return e;
  }
  function add(parent, tag, attrs, kids) { var e = el(tag, attrs, kids); parent.appendChild(e); return e; }
  function fmt(v) {
    if (v == null || !isFinite(v)) return '-';
    var a = Math.abs(v);
    return a >= 100 ? v.toFixed(0) : a >= 1 ? v.toFixed(1) : a >= 0.001 ? v.toFixed(4) : v.toExponential(2);
  }
  function width(n) {
    var w = Math.min(root.clientWidth || 1200, 1360);
    return n > 1 ? Math.max(380, Math.floor(w / Math.min(n, 3)) - 24) : Math.min(w - 20, 960);
  }

  function chart(parent, title, options, data, colours) {
    var box = add(parent, 'div', { class: 'plot' });
    options.title = title;
    options.legend = { live: true };
    var u = new uPlot(options, data, box);
    var c = { u: u, colours: colours };
    charts.push(c);
    applyHidden(c);
    return u;
  }
  function applyHidden(c) {
    c.colours.forEach(function (col, i) {
      var show = !hidden[col];
      if (c.u.series[i + 1].show !== show) c.u.setSeries(i + 1, { show: show });
    });
  }

  // Keys: one checkbox per colour, acting on every chart.
  function keys(parent, labels) {
    var k = add(parent, 'div', { class: 'keys' });
    labels.forEach(function (label, i) {
      var l = add(k, 'label', {});
      var cb = add(l, 'input', { type: 'checkbox' });
      cb.checked = true;
      cb.addEventListener('change', function () {
        hidden[i] = !cb.checked;
        charts.forEach(applyHidden);
      });
      add(l, 'span', { class: 'swatch', style: 'background:' + colour(i) });
      l.appendChild(document.createTextNode(label));
    });
    var all = add(k, 'label', {});
    var b = add(all, 'button', { type: 'button', text: 'all / none' });
    b.addEventListener('click', function () {
      var any = labels.some(function (_, i) { return !hidden[i]; });
      k.querySelectorAll('input').forEach(function (cb, i) { cb.checked = !any; hidden[i] = any; });
      charts.forEach(applyHidden);
    });
  }

  // Distribution lines on one shared x: the CDF F(x) = fraction <= x (a step after each
  // point) or the CCDF P(X >= x) (a step before each point, so the level 1 - F(x_i) starts
  // right after x_i). Every line also gets a left anchor (F = 0, P = 1) so a line of a single
  // value is drawn, and the CDF a right anchor at 1.
  function distribution(lines, ccdf, logx) {
    var xs = [];
    lines.forEach(function (l) { l.points.forEach(function (p) { if (!logx || p[0] > 0) xs.push(p[0]); }); });
    xs.sort(function (a, b) { return a - b; });
    var ux = [];
    xs.forEach(function (x) { if (!ux.length || ux[ux.length - 1] !== x) ux.push(x); });
    if (!ux.length) return null;
    var lo = ux[0], hi = ux[ux.length - 1];
    var left = logx ? lo / 1.25 : Math.max(0, lo - Math.max((hi - lo) * 0.03, 1));
    var right = logx ? hi * 1.25 : hi + Math.max((hi - lo) * 0.03, 1);
    ux.unshift(left); ux.push(right);
    var ys = lines.map(function (l) {
      var pts = l.points.filter(function (p) { return !logx || p[0] > 0; });
      var out = new Array(ux.length), j = 0, n = l.n;
      for (var i = 0; i < ux.length; i++) {
        var x = ux[i];
        while (j < pts.length && pts[j][0] <= x) j++;  // pts[0..j) are <= x
        if (!ccdf) {
          out[i] = j > 0 ? pts[j - 1][1] / n : 0;
        } else {
          // P(X >= x): samples above the last point strictly below x.
          var k = (j > 0 && pts[j - 1][0] === x) ? j - 1 : j;
          var below = k > 0 ? pts[k - 1][1] : (pts.length && pts[0][0] < x ? pts[0][1] : 0);
          var p = (n - below) / n;
          out[i] = p > 0 ? p : null;
        }
      }
      return out;
    });
    return [ux].concat(ys);
  }

  function distributionChart(parent, title, lines, ccdf) {
    var data = distribution(lines, ccdf, opts.logx);
    if (!data) { add(parent, 'p', { class: 'note', text: title + ': no samples' }); return; }
    var ymin = 1;
    data.slice(1).forEach(function (s) { s.forEach(function (y) { if (y != null && y > 0 && y < ymin) ymin = y; }); });
    var xr = null;
    if (opts.tail) {
      // Zoom the tail: from the smallest per-line p99 to the end.
      var p99 = Infinity;
      lines.forEach(function (l) {
        for (var i = 0; i < l.points.length; i++) if (l.points[i][1] >= 0.99 * l.n) { p99 = Math.min(p99, l.points[i][0]); break; }
      });
      if (isFinite(p99)) xr = [p99, data[0][data[0].length - 1]];
    }
    var stepped = uPlot.paths.stepped({ align: ccdf ? -1 : 1 });
    var options = {
      width: width(parent.dataset.n | 0), height: 340,
      scales: {
        x: { time: false, distr: opts.logx ? 3 : 1, range: xr ? function () { return xr; } : undefined },
        y: ccdf ? { distr: 3, range: function () { return [Math.pow(10, Math.floor(Math.log10(ymin))), 1]; } }
          : { range: [0, 1.02] }
      },
      axes: [{ label: 'application-layer latency (ms)' },
        { label: ccdf ? 'fraction of writes ≥ x' : 'fraction of writes ≤ x', size: 60 }],
      series: [{ label: 'ms', value: function (u, v) { return fmt(v); } }].concat(lines.map(function (l) {
        return { label: l.label, stroke: colour(l.colour), width: 1.5, dash: DASH[l.dash % DASH.length],
          paths: stepped, points: { show: false }, value: function (u, v) { return v == null ? '-' : v.toPrecision(4); } };
      }))
    };
    chart(parent, title, options, data, lines.map(function (l) { return l.colour; }));
  }

  // Metric against the swept parameter: mean over repetitions with a band from min to max.
  function metricChart(parent, title, col, L) {
    var groups = {}; // line -> x -> values
    D.runs.forEach(function (r) {
      var v = r[col];
      if (v == null) return;
      var p = L.configs[r[0]], key = p.line * D.flows + r[1];
      (groups[key] = groups[key] || {})[p.x] = (groups[key][p.x] || []).concat([v]);
    });
    var keysSorted = Object.keys(groups).map(Number).sort(function (a, b) { return a - b; });
    if (!keysSorted.length) { add(parent, 'p', { class: 'note', text: title + ': no values' }); return; }
    var xs = L.x_numeric ? L.x_values.slice() : L.x_labels.map(function (_, i) { return i; });
    var order = xs.map(function (_, i) { return i; }).sort(function (a, b) { return xs[a] - xs[b]; });
    var data = [order.map(function (i) { return xs[i]; })];
    var series = [{ label: L.x_param || '', value: function (u, v) { return L.x_numeric ? String(v) : (L.x_labels[v] || ''); } }];
    var colours = [], bands = [];
    keysSorted.forEach(function (key) {
      var line = Math.floor(key / D.flows), flow = key % D.flows, g = groups[key];
      var stat = function (f) { return order.map(function (i) { return g[i] ? f(g[i]) : null; }); };
      var mean = stat(function (a) { return a.reduce(function (s, v) { return s + v; }, 0) / a.length; });
      var mn = stat(function (a) { return Math.min.apply(null, a); });
      var mx = stat(function (a) { return Math.max.apply(null, a); });
      var lc = L.mvp_lines[line][1], label = L.mvp_lines[line][0] + (D.flows > 1 ? ' · flow ' + flow : '');
      var base = data.length;
      data.push(mean, mn, mx);
      series.push({ label: label, stroke: colour(lc), width: 2, dash: DASH[flow % DASH.length], points: { show: true, size: 6 }, spanGaps: true },
        { label: 'min', stroke: colour(lc), width: 0.5, alpha: 0.6, points: { show: false }, spanGaps: true },
        { label: 'max', stroke: colour(lc), width: 0.5, alpha: 0.6, points: { show: false }, spanGaps: true });
      bands.push({ series: [base + 2, base + 1], fill: colour(lc) + '22' });
      colours.push(lc, lc, lc);
    });
    var options = {
      width: width(3), height: 300, bands: bands,
      scales: { x: { time: false, range: function (u, a, b) { var p = (b - a) * 0.05 || 0.5; return [a - p, b + p]; } } },
      axes: [{ label: L.x_param || '', values: L.x_numeric ? undefined : function (u, splits) { return splits.map(function (v) { return Number.isInteger(v) ? (L.x_labels[v] || '') : ''; }); } },
        { label: title, size: 60 }],
      series: series
    };
    chart(parent, title, options, data, colours);
  }

  function writeSeriesChart(parent, s) {
    parent.innerHTML = '';
    if (!s) return;
    add(parent, 'p', { class: 'note', text: s.label + ': repetition ' + s.repetition + ' (seed ' + s.seed + '), the one with the largest latency; ' +
      s.writes + ' delivered writes' + (s.bucket > 1 ? ', each point the maximum of ' + s.bucket + ' consecutive writes' : '') +
      '. A retransmission timeout shows as a spike, and the writes queued behind it (head-of-line blocking) as the slope after it.' });
    var data = [s.points.map(function (p) { return p[0]; }), s.points.map(function (p) { return p[1]; })];
    var box = add(parent, 'div', {});
    var u = new uPlot({
      title: 'application-layer latency per write', width: width(1), height: 300,
      scales: { x: { time: false }, y: { distr: opts.logy ? 3 : 1 } },
      axes: [{ label: 'write (index in write order, delivered writes)' }, { label: 'latency (ms)', size: 60 }],
      series: [{ label: 'write' }, { label: s.label, stroke: colour(D.layout.configs[s.config].colour), width: 1, points: { show: s.points.length < 60 } }]
    }, data, box);
    charts.push({ u: u, colours: [] });
    if (s.sequence) sequenceChart(parent, s.sequence);
  }

  // Time-sequence graph (as tcptrace draws one) around the worst write: every write, send by
  // cause, arrival, delivery and cumulative ACK of the flow in the window, as points.
  function sequenceChart(parent, q) {
    add(parent, 'p', { class: 'note', text: 'Around the worst write (written at ' + fmt(q.write_ms) + ' ms, delivered ' +
      fmt(q.latency_ms) + ' ms later, ending at byte ' + q.end + '): the same run again, ' + fmt(q.from_ms) + ' to ' +
      fmt(q.to_ms) + ' ms. Each point is the end offset of a write, a segment sent (by cause), its arrival, the in-order delivery or the cumulative ACK; a vertical bar is a SACK block the sender received (the bytes the receiver holds above a hole).' });
    var xs = [];
    q.points.forEach(function (p) { xs.push(p[1]); });
    xs.sort(function (a, b) { return a - b; });
    var ux = [];
    xs.forEach(function (x) { if (!ux.length || ux[ux.length - 1] !== x) ux.push(x); });
    if (!ux.length) return;
    var index = {};
    ux.forEach(function (x, i) { index[x] = i; });
    var ys = q.categories.map(function () { return new Array(ux.length).fill(null); });
    q.points.forEach(function (p) {
      var row = ys[p[0]], i = index[p[1]];
      row[i] = row[i] == null ? p[2] : Math.max(row[i], p[2]);
    });
    var box = add(parent, 'div', {});
    var sackSeries = q.categories.length; // series 0 is x
    var sacks = q.sacks || [];
    var u = new uPlot({
      title: 'time-sequence graph around the worst write', width: width(1), height: 360,
      scales: { x: { time: false } },
      hooks: { draw: [function (u) {
        if (!u.series[sackSeries] || !u.series[sackSeries].show) return;
        var ctx = u.ctx;
        ctx.save();
        ctx.strokeStyle = colour(sackSeries - 1);
        ctx.lineWidth = 2 * (window.devicePixelRatio || 1);
        sacks.forEach(function (b) {
          var x = u.valToPos(b[0], 'x', true);
          ctx.beginPath();
          ctx.moveTo(x, u.valToPos(b[1], 'y', true));
          ctx.lineTo(x, u.valToPos(b[2], 'y', true));
          ctx.stroke();
        });
        ctx.restore();
      }] },
      axes: [{ label: 'time (ms)' }, { label: 'stream offset (bytes)', size: 80 }],
      series: [{ label: 'ms' }].concat(q.categories.map(function (c, i) {
        return { label: c, stroke: colour(i), fill: colour(i), paths: function () { return null; },
          points: { show: true, size: 6, stroke: colour(i), fill: colour(i) } };
      }))
    }, [ux].concat(ys), box);
    charts.push({ u: u, colours: [] });
  }

  function section(title, note) {
    add(root, 'h2', { text: title });
    if (note) add(root, 'p', { class: 'note', text: note });
    return add(root, 'div', {});
  }

  function drawDistributions(box, L) {
    box.innerHTML = '';
    charts = charts.filter(function (c) { if (box.contains(c.u.root)) { c.u.destroy(); return false; } return true; });
    var lines = D.lines.map(function (l) {
      var p = L.configs[l.config];
      return { label: l.label, points: l.points, n: l.n, colour: p.colour, facet: p.facet, dash: l.flow };
    });
    ['CDF', 'tail (CCDF)'].forEach(function (what, v) {
      add(box, 'h3', { text: 'application-layer latency, ' + what });
      var grid = add(box, 'div', { class: 'grid' });
      grid.dataset.n = L.facets.length;
      L.facets.forEach(function (f, i) {
        var mine = lines.filter(function (l) { return l.facet === i; });
        distributionChart(grid, f || D.scenario, mine, v === 1);
      });
    });
  }

  function renderRun() {
    var L = D.layout;
    var info = add(root, 'p', { class: 'note' });
    info.textContent = 'thinlab ' + D.version + (D.complete ? '' : ' — INTERRUPTED: not every run finished') +
      '. Drag on a plot to zoom, double-click to reset; hover for values; the keys show or hide a configuration in every plot.';
    if (D.warnings.length) add(root, 'div', { class: 'warnings', text: 'Run health\n' + D.warnings.join('\n') });
    var t = section('Summary', 'Pooled over repetitions; ≥ marks a lower bound (writes undelivered at the end of the run); retrans summed over repetitions.');
    var table = add(t, 'table', { class: 'summary' });
    add(table, 'tr', {}, D.table_header.map(function (h) { return el('th', { text: h }); }));
    D.table.forEach(function (r) { add(table, 'tr', {}, r.map(function (c) { return el('td', { text: c }); })); });

    var dist = section('Latency distributions', L.facets.length > 1
      ? 'One plot per combination of ' + 'the swept parameters other than the colour key; the same colour is the same setting in every plot.' : '');
    var ctl = add(dist, 'div', { class: 'controls' });
    [['logx', 'log latency axis'], ['tail', 'zoom to the tail (from the smallest p99)']].forEach(function (o) {
      var l = add(ctl, 'label', {});
      var cb = add(l, 'input', { type: 'checkbox' });
      cb.addEventListener('change', function () { opts[o[0]] = cb.checked; drawDistributions(plots, L); });
      l.appendChild(document.createTextNode(' ' + o[1]));
    });
    keys(dist, L.colours);
    if (D.lines_omitted) add(dist, 'p', { class: 'note', text: D.lines_omitted + ' more lines are not drawn; latency_cdf.csv has every line.' });
    var plots = add(dist, 'div', {});
    drawDistributions(plots, L);

    var m = section('Metrics against ' + (L.x_param || 'the configuration'),
      'Per run: line = mean over repetitions, band = min to max. Redundancy = redundant ÷ all payload bytes sent.' +
      (D.runs_omitted ? ' (' + D.runs_omitted + ' run records beyond the first ' + D.runs.length + ' are left out.)' : ''));
    var grid = add(m, 'div', { class: 'grid' });
    [[3, 'app latency p50 (ms)'], [4, 'app latency p99 (ms)'], [5, 'app latency max (ms)'],
      [6, 'retransmissions per run'], [7, 'redundancy (% of payload)']].forEach(function (c) { metricChart(grid, c[1], c[0], L); });

    var w = section('Latency of every write', 'Choose a configuration.');
    var sel = add(w, 'select', { id: 'series-select' });
    var worst = 0, worstV = -Infinity;
    D.series.forEach(function (s, i) {
      add(sel, 'option', { value: String(i), text: s.label });
      s.points.forEach(function (p) { if (p[1] > worstV) { worstV = p[1]; worst = i; } });
    });
    sel.value = String(worst);
    var logy = add(w, 'label', {}); var lcb = add(logy, 'input', { type: 'checkbox' }); logy.appendChild(document.createTextNode(' log latency axis'));
    var sbox = add(w, 'div', {});
    var redraw = function () {
      charts = charts.filter(function (c) { if (sbox.contains(c.u.root)) { c.u.destroy(); return false; } return true; });
      opts.logy = lcb.checked; writeSeriesChart(sbox, D.series[sel.value | 0]);
    };
    sel.addEventListener('change', redraw); lcb.addEventListener('change', redraw);
    redraw();

    var sc = section('Scenario', 'scenario.resolved.toml: the scenario after --set, runnable as is.');
    var d = add(sc, 'details', {});
    add(d, 'summary', { text: 'show' });
    add(d, 'pre', { text: D.resolved });
  }

  function renderCompare() {
    add(root, 'p', { class: 'note', text: 'thinlab ' + D.version + '. Relative differences are against the first folder. Drag to zoom, double-click to reset.' });
    var t = section('Side by side', 'Pooled application-layer latency per configuration and flow, from each folder\'s latency_cdf.csv.');
    var table = add(t, 'table', { class: 'summary' });
    add(table, 'tr', {}, D.header.map(function (h) { return el('th', { text: h }); }));
    D.rows.forEach(function (r) { add(table, 'tr', {}, r.map(function (c) { return el('td', { text: c }); })); });
    var dist = section('Latency distributions', 'One plot per configuration and flow; one colour per folder.');
    keys(dist, D.folders);
    var ctl = add(dist, 'div', { class: 'controls' });
    var l = add(ctl, 'label', {}); var cb = add(l, 'input', { type: 'checkbox' }); l.appendChild(document.createTextNode(' log latency axis'));
    var plots = add(dist, 'div', {});
    var draw = function () {
      charts.forEach(function (c) { c.u.destroy(); }); charts = [];
      plots.innerHTML = '';
      opts.logx = cb.checked;
      ['CDF', 'tail (CCDF)'].forEach(function (what, v) {
        add(plots, 'h3', { text: 'application-layer latency, ' + what });
        var grid = add(plots, 'div', { class: 'grid' });
        grid.dataset.n = D.groups.length;
        D.groups.forEach(function (g) {
          var lines = g.lines.map(function (x) { return { label: D.folders[x.folder], points: x.points, n: x.n, colour: x.folder, dash: 0 }; });
          distributionChart(grid, g.label, lines, v === 1);
        });
      });
    };
    cb.addEventListener('change', draw);
    draw();
  }

  try {
    if (document.body.dataset.kind === 'compare') renderCompare(); else renderRun();
    document.body.dataset.charts = String(document.querySelectorAll('.uplot').length);
  } catch (e) {
    thinlabError(e && e.stack ? e.stack : e);
  }
})();
