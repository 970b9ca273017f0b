// The scenario list, the charts of every scenario and the scenario pages
// of harness's index.html, with history entries that keep where the list
// was. The data comes from the island (gzip-compressed JSON in base64);
// text from it is only ever set as text (textContent, attribute values),
// never parsed as markup.
(function () {
  'use strict';

  // The island: the run's JSON, gzip-compressed, in base64.
  function load() {
    var text = document.getElementById('harness-data').textContent.trim();
    var binary = atob(text);
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    return new Response(stream).text().then(JSON.parse);
  }
  load().then(start, function (err) {
    document.getElementById('list-count').textContent = 'The run\'s data could not be read: ' + err;
    throw err;
  });

  function start(data) {
    var run = data.run;
    var scenarios = run.scenarios;
    var CHUNK = 100;

    var diffs = new Map();
    data.diffs.forEach(function (d) { diffs.set(d.scenario + ':' + d.failure, d); });
    var baseline = new Map();
    if (run.comparison) {
      run.comparison.scenarios.forEach(function (c) { baseline.set(c.name, c); });
    }
    var byName = new Map();
    scenarios.forEach(function (s, i) { byName.set(s.name, i); });
    // With --variant: each variant's scenarios by name (the first
    // variant's are the top level's, with their transcripts), and the
    // diffs of results that differ from the first variant's.
    var variants = run.variants || [];
    var variantScenarios = variants.map(function (v) {
      var m = new Map();
      v.scenarios.forEach(function (s) { m.set(s.name, s); });
      return m;
    });
    var variantDiffs = new Map();
    (data.variant_diffs || []).forEach(function (d) { variantDiffs.set(d.scenario + ':' + d.variant, d); });

    function el(tag, props) {
      var node = document.createElement(tag);
      if (props) {
        Object.keys(props).forEach(function (k) {
          if (k === 'text') node.textContent = props[k];
          else if (k === 'cls') node.className = props[k];
          else node.setAttribute(k, props[k]);
        });
      }
      for (var i = 2; i < arguments.length; i++) {
        var child = arguments[i];
        if (child === null || child === undefined || child === false) continue;
        node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
      }
      return node;
    }
    function badge(text, cls) { return el('span', { cls: 'badge ' + (cls || text), text: text }); }

    // ---- scales ----------------------------------------------------------
    // Bar lengths on a square-root scale: small values stay visible next to
    // large ones (a bar of any value above 0 is at least 2 px); the values
    // themselves are always written beside or on the bars.
    function sqrtScale(value, max, width) {
      if (!(max > 0) || !(value > 0)) return 0;
      return Math.max(2, Math.sqrt(value / max) * width);
    }
    function short(name, n) { return name.length > n ? name.slice(0, n - 1) + '…' : name; }

    // ---- the list -------------------------------------------------------
    var tags = new Set();
    var tools = new Set();
    var maxTokens = 1;
    var rows = scenarios.map(function (s, i) {
      var used = new Set();
      s.calls.forEach(function (c) { used.add(c.tool); tools.add(c.tool); });
      s.tags.forEach(function (t) { tags.add(t); });
      var base = baseline.get(s.name);
      var before = base && base.compared ? base.baseline.result_tokens + base.baseline.input_tokens : null;
      maxTokens = Math.max(maxTokens, s.stats.result_tokens, base ? base.baseline.result_tokens : 0);
      return { s: s, i: i, tools: used, base: base, before: before, change: before === null ? 0 :
        Math.abs(s.stats.result_tokens + s.stats.input_tokens - before), text: null };
    });
    // What the text filter searches: the name, file, tags, skip reason and
    // failed checks, then the calls' arguments and results as kept (each at
    // most CALL_TEXT characters, all of them at most SCENARIO_TEXT).
    var CALL_TEXT = 1000, SCENARIO_TEXT = 4000;
    function callText(s) {
      var parts = [];
      var t = s.transcript;
      if (!t) return '';
      t.turns.forEach(function (turn) {
        turn.calls.forEach(function (c) {
          parts.push(c.tool + ' ' + c.arguments.text.slice(0, CALL_TEXT));
          c.content.forEach(function (b) {
            if (b.type === 'text') parts.push((b.text + (b.tail ? '\n' + b.tail : '')).slice(0, CALL_TEXT));
          });
        });
      });
      return parts.join('\n').slice(0, SCENARIO_TEXT);
    }
    function searchText(r) {
      if (r.text === null) {
        var parts = [r.s.name, r.s.file, r.s.tags.join(' '), r.s.skip_reason || ''];
        r.s.failures.forEach(function (f) { parts.push(f.step || '', f.check); });
        parts.push(callText(r.s));
        r.text = parts.join('\n').toLowerCase();
      }
      return r.text;
    }
    function fill(select, values) {
      Array.from(values).sort().forEach(function (v) { select.appendChild(el('option', { text: v })); });
    }
    var fStatus = document.getElementById('f-status');
    var fTag = document.getElementById('f-tag');
    var fTool = document.getElementById('f-tool');
    var fText = document.getElementById('f-text');
    var fSort = document.getElementById('f-sort');
    var list = document.getElementById('list');
    var more = document.getElementById('list-more');
    var count = document.getElementById('list-count');
    fill(fTag, tags);
    fill(fTool, tools);

    var view = [];
    var shown = 0;
    var sorters = {
      index: function (a, b) { return a.i - b.i; },
      tokens: function (a, b) { return b.s.stats.result_tokens - a.s.stats.result_tokens || a.i - b.i; },
      input: function (a, b) { return b.s.stats.input_tokens - a.s.stats.input_tokens || a.i - b.i; },
      duration: function (a, b) { return b.s.stats.duration_ms - a.s.stats.duration_ms || a.i - b.i; },
      retries: function (a, b) { return b.s.stats.retries - a.s.stats.retries || a.i - b.i; },
      change: function (a, b) { return b.change - a.change || a.i - b.i; },
      name: function (a, b) { return a.s.name < b.s.name ? -1 : a.s.name > b.s.name ? 1 : a.i - b.i; }
    };

    // The scale of the list's bars, labelled in the header: where 1/16,
    // 1/4 and all of the largest value fall on a square-root scale.
    var BAR_WIDTH = 100;
    function scaleLabels() {
      var box = el('span', { cls: 'scale', title: 'result tokens, square-root scale; | marks the baseline' });
      [1 / 16, 1 / 4, 1].forEach(function (f) {
        var value = Math.round(maxTokens * f);
        box.appendChild(el('span', { style: 'left:' + (100 * Math.sqrt(f)).toFixed(1) + '%', text: String(value) }));
      });
      return box;
    }
    function header() {
      return el('div', { cls: 'row head' }, el('span', { text: 'status' }), el('span', { text: 'scenario' }),
        el('span', { cls: 'barhead' }, 'result tokens (√ scale, | baseline)', scaleLabels()),
        el('span', { cls: 'v', text: 'result tokens' }), el('span', { cls: 'v', text: 'input tokens' }),
        el('span', { cls: 'v', text: 'ms' }), el('span', { cls: 'v', text: 'retries' }));
    }
    function pct(value) { return (100 * sqrtScale(value, maxTokens, BAR_WIDTH) / BAR_WIDTH).toFixed(2) + '%'; }
    function row(r) {
      var s = r.s;
      var bar = el('div', { cls: 'barcell' });
      if (r.base && r.base.compared) {
        bar.appendChild(el('span', { cls: 'b-base', style: 'width:' + pct(r.base.baseline.result_tokens) }));
      }
      bar.appendChild(el('span', { cls: 'b-now', style: 'width:' + pct(s.stats.result_tokens) }));
      var node = el('div', { cls: 'row', 'data-index': String(r.i), 'data-status': s.status, role: 'link', tabindex: '0' },
        el('span', null, badge(s.status)),
        el('span', { cls: 'name', title: s.name }, s.name, el('br'), el('span', { cls: 'file', text: s.file })),
        bar,
        el('span', { cls: 'v', 'data-col': 'result_tokens', text: String(s.stats.result_tokens) }),
        el('span', { cls: 'v', 'data-col': 'input_tokens', text: String(s.stats.input_tokens) }),
        el('span', { cls: 'v', text: String(s.stats.duration_ms) }),
        el('span', { cls: 'v', text: String(s.stats.retries) }));
      return node;
    }
    function renderMore() {
      var end = Math.min(view.length, shown + CHUNK);
      var frag = document.createDocumentFragment();
      for (; shown < end; shown++) frag.appendChild(row(view[shown]));
      list.appendChild(frag);
      more.textContent = '';
      if (shown < view.length) {
        var button = el('button', { type: 'button', text: 'show ' + Math.min(CHUNK, view.length - shown) + ' more' });
        button.addEventListener('click', renderMore);
        more.appendChild(button);
      }
    }
    function refresh() {
      var status = fStatus.value, tag = fTag.value, tool = fTool.value;
      var text = fText.value.trim().toLowerCase();
      view = rows.filter(function (r) {
        return (!status || r.s.status === status) && (!tag || r.s.tags.indexOf(tag) >= 0) &&
          (!tool || r.tools.has(tool)) && (!text || searchText(r).indexOf(text) >= 0);
      });
      view.sort(sorters[fSort.value] || sorters.index);
      list.textContent = '';
      list.appendChild(header());
      shown = 0;
      renderMore();
      count.textContent = view.length + ' of ' + scenarios.length + ' scenarios';
    }
    [fStatus, fTag, fTool, fSort].forEach(function (f) { f.addEventListener('change', refresh); });
    fText.addEventListener('input', refresh);
    if ('IntersectionObserver' in window) {
      new IntersectionObserver(function (entries) {
        if (entries.some(function (e) { return e.isIntersecting; }) && shown < view.length) renderMore();
      }, { rootMargin: '400px' }).observe(more);
    }

    // Opening a scenario keeps where the list was (its filters, how many
    // rows were shown and the scroll position) in the history entry being
    // left, so that the browser's back button, or the page's own back link,
    // returns to it.
    // Whether the scenario shown was opened from the list (then the back
    // link goes back in history, to the list as it was).
    var cameFromList = false, opening = false;
    if ('scrollRestoration' in history) history.scrollRestoration = 'manual';
    function listState() {
      return { y: window.scrollY, status: fStatus.value, tag: fTag.value, tool: fTool.value,
        text: fText.value, sort: fSort.value, shown: shown };
    }
    function open(index) {
      if (!overview.hidden) {
        history.replaceState({ list: listState() }, '', location.href);
        opening = true;
      }
      location.hash = '#s/' + index;
    }
    function restore(st) {
      var same = fStatus.value === st.status && fTag.value === st.tag && fTool.value === st.tool &&
        fText.value === st.text && fSort.value === st.sort;
      if (!same) {
        fStatus.value = st.status; fTag.value = st.tag; fTool.value = st.tool;
        fText.value = st.text; fSort.value = st.sort;
        refresh();
      }
      while (shown < Math.min(st.shown, view.length)) renderMore();
      window.scrollTo(0, st.y);
    }
    function opener(container, selector, attr) {
      container.addEventListener('click', function (e) {
        var r = e.target.closest(selector);
        if (r) { e.preventDefault(); open(r.getAttribute(attr)); }
      });
      container.addEventListener('keydown', function (e) {
        var r = e.target.closest(selector);
        if (r && e.key === 'Enter') open(r.getAttribute(attr));
      });
    }
    opener(list, '.row[data-index]', 'data-index');
    document.getElementById('overview').addEventListener('click', function (e) {
      var a = e.target.closest('a[data-scenario]');
      if (!a) return;
      var i = byName.get(a.getAttribute('data-scenario'));
      if (i !== undefined) { e.preventDefault(); open(i); }
    });

    // ---- charts of every scenario ---------------------------------------
    // Rows of bars in a scrolling box, drawn a hundred at a time (one SVG
    // each) as the box scrolls: a suite of 10,000 draws 100 at first.
    var SVG = 'http://www.w3.org/2000/svg';
    function svg(tag, attrs, text) {
      var node = document.createElementNS(SVG, tag);
      Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
      if (text !== undefined) node.textContent = text;
      return node;
    }
    function rowsChart(box, items, draw, rowHeight) {
      var done = 0;
      var sentinel = el('div', { cls: 'chart-more' });
      function next() {
        var end = Math.min(items.length, done + CHUNK);
        var n = end - done;
        var chunk = svg('svg', { width: String(CHART_W), height: String(n * rowHeight), viewBox: '0 0 ' + CHART_W + ' ' + n * rowHeight, role: 'img' });
        for (var k = 0; done < end; done++, k++) chunk.appendChild(draw(items[done], k * rowHeight));
        box.insertBefore(chunk, sentinel);
        sentinel.textContent = done < items.length ? (items.length - done) + ' more as you scroll' : '';
      }
      // A new order starts again at the top, with the first hundred.
      if (box.watch) box.watch.disconnect();
      box.textContent = '';
      box.scrollTop = 0;
      box.appendChild(sentinel);
      if (items.length) next();
      if ('IntersectionObserver' in window) {
        box.watch = new IntersectionObserver(function (entries) {
          if (entries.some(function (e) { return e.isIntersecting; }) && done < items.length) next();
        }, { root: box, rootMargin: '200px' });
        box.watch.observe(sentinel);
      }
    }
    function chartOpener(box) {
      box.addEventListener('click', function (e) {
        var g = e.target.closest('g[data-index]');
        if (g) open(g.getAttribute('data-index'));
      });
    }
    var CHART_W = 720, LABEL = 210, BARS = 400;
    function nameLabel(g, s, y) {
      g.appendChild(svg('text', { x: String(LABEL - 6), y: String(y), 'text-anchor': 'end' }, short(s.name, 30)));
    }
    var cRows = document.getElementById('c-rows');
    var cSort = document.getElementById('c-sort');
    function scenarioChart() {
      var max = 1;
      scenarios.forEach(function (s) { max = Math.max(max, s.stats.result_tokens); });
      var items = rows.slice().sort(sorters[cSort.value] || sorters.tokens);
      rowsChart(cRows, items, function (r, y) {
        var s = r.s, w = sqrtScale(s.stats.result_tokens, max, BARS);
        var g = svg('g', { 'data-index': String(r.i), 'data-tokens': String(s.stats.result_tokens), class: 'bar-row' });
        g.appendChild(svg('title', {}, s.name + ': ' + s.stats.result_tokens + ' result tokens (' + s.status + ')'));
        nameLabel(g, s, y + 13);
        g.appendChild(svg('rect', { x: String(LABEL), y: String(y + 4), width: w.toFixed(1), height: '11', class: 's-result' + (s.status === 'failed' ? ' failed' : '') }));
        g.appendChild(svg('text', { x: (LABEL + w + 5).toFixed(1), y: String(y + 13), class: 'value' }, String(s.stats.result_tokens)));
        return g;
      }, 18);
    }
    if (cRows) { chartOpener(cRows); cSort.addEventListener('change', scenarioChart); scenarioChart(); }

    var bRows = document.getElementById('b-rows');
    var bSort = document.getElementById('b-sort');
    function baselineChart() {
      var changed = rows.filter(function (r) { return r.before !== null && r.change !== 0; });
      var max = 1;
      changed.forEach(function (r) { max = Math.max(max, r.before, r.s.stats.result_tokens + r.s.stats.input_tokens); });
      changed.sort(sorters[bSort.value] || sorters.change);
      rowsChart(bRows, changed, function (r, y) {
        var now = r.s.stats.result_tokens + r.s.stats.input_tokens, b = r.before;
        var bw = sqrtScale(b, max, BARS - 100), nw = sqrtScale(now, max, BARS - 100);
        var diff = now - b;
        var change = (diff > 0 ? '+' : '') + diff + (b ? ' (' + (diff > 0 ? '+' : '') + (100 * diff / b).toFixed(1) + '%)' : '');
        var g = svg('g', { 'data-index': String(r.i), class: 'bar-row' });
        g.appendChild(svg('title', {}, r.s.name + ': ' + b + ' → ' + now + ' result + input tokens, ' + change));
        nameLabel(g, r.s, y + 14);
        g.appendChild(svg('rect', { x: String(LABEL), y: String(y + 3), width: bw.toFixed(1), height: '8', class: 's-base' }));
        g.appendChild(svg('rect', { x: String(LABEL), y: String(y + 11), width: nw.toFixed(1), height: '8', class: 's-result' }));
        g.appendChild(svg('text', { x: (LABEL + Math.max(bw, nw) + 5).toFixed(1), y: String(y + 14), class: 'value ' + (diff > 0 ? 'up' : 'down') }, b + ' → ' + now + ', ' + change));
        return g;
      }, 22);
    }
    if (bRows) { chartOpener(bRows); bSort.addEventListener('change', baselineChart); baselineChart(); }

    // ---- a scenario's page ----------------------------------------------
    var NOTICE = /truncat|showing|limit|more lines|offset|full output|not shown/i;
    function isNotice(line) {
      var t = line.trim();
      return t.charAt(0) === '[' && t.charAt(t.length - 1) === ']' && NOTICE.test(t);
    }
    function textPre(text, focus) {
      var pre = el('pre');
      var lines = text.split('\n');
      lines.forEach(function (line, n) {
        var inFocus = focus && n + 1 >= focus.first_line && n + 1 <= focus.last_line;
        if (inFocus || isNotice(line)) {
          pre.appendChild(el('span', { cls: inFocus ? 'focus' : 'notice', text: line }));
        } else {
          pre.appendChild(document.createTextNode(n + 1 < lines.length ? line + '\n' : line));
        }
      });
      return pre;
    }
    function clipPre(clip) {
      var pre = textPre(clip.text);
      if (clip.omitted_bytes) {
        pre.appendChild(el('span', { cls: 'omitted', text: '… ' + clip.omitted_bytes +
          ' bytes the model read are not kept in this report …' }));
        var tail = textPre(clip.tail || '');
        while (tail.firstChild) pre.appendChild(tail.firstChild);
      }
      return pre;
    }
    function args(clip) {
      if (!clip.omitted_bytes) {
        try { return el('pre', { text: JSON.stringify(JSON.parse(clip.text), null, 2) }); } catch (e) { /* not JSON: as sent */ }
      }
      return clipPre(clip);
    }
    // A result's text with its closing notice (a truncation notice, say)
    // after the scrolling box rather than at the bottom of it, where a long
    // result would hide it.
    function resultText(b) {
      var lines = (b.omitted_bytes ? (b.tail || '') : b.text).split('\n');
      var k = lines.length;
      while (k > 0 && lines[k - 1].trim() === '') k--;
      var j = k;
      while (j > 0 && isNotice(lines[j - 1])) j--;
      if (j === k) return clipPre(b);
      var rest = lines.slice(0, j).join('\n');
      var box = el('div', { cls: 'text-result' });
      if (b.omitted_bytes) box.appendChild(clipPre({ text: b.text, omitted_bytes: b.omitted_bytes, tail: rest }));
      else if (rest.trim() !== '') box.appendChild(clipPre({ text: rest }));
      lines.slice(j, k).forEach(function (n) { box.appendChild(el('div', { cls: 'notice after', text: n })); });
      return box;
    }
    var IMAGE = /^image\/(png|jpeg|gif|webp)$/;
    function block(b) {
      if (b.type === 'text') return resultText(b);
      if (b.data && IMAGE.test(b.mime_type)) {
        return el('img', { alt: b.mime_type + ' image, ' + b.bytes + ' bytes', src: 'data:' + b.mime_type + ';base64,' + b.data });
      }
      return el('p', { cls: 'meta', text: b.mime_type + ' image of ' + b.bytes + ' base64 bytes (not kept in this report)' });
    }
    function figs(f, extra) {
      var box = el('div', { cls: 'figs' });
      ['turns', 'calls', 'errors', 'retries', 'retries_avoided', 'result_tokens', 'input_tokens',
        'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'definition_tokens'].forEach(function (k) {
        box.appendChild(el('span', null, k.replace(/_/g, ' ') + ' ', el('b', { text: String(f[k]) })));
      });
      if (extra) box.appendChild(extra);
      return box;
    }
    function failure(s, index, f) {
      var node = el('div', { cls: 'failure' },
        el('div', null, el('b', { text: (f.step || 'scenario') + ' · ' + f.check })));
      var d = diffs.get(index + ':' + s.failures.indexOf(f));
      if (d) {
        node.appendChild(el('div', { cls: 'meta', text: 'diff (- expected, + actual)' + (d.cut ? ', cut' : '') }));
        var pre = el('pre', { cls: 'diff' });
        d.lines.forEach(function (line) {
          var c = line.charAt(0);
          pre.appendChild(el('span', { cls: c === '-' ? 'del' : c === '+' ? 'ins' : 'ctx', text: line }));
        });
        node.appendChild(pre);
      } else {
        node.appendChild(el('div', { cls: 'meta', text: 'expected' }));
        node.appendChild(textPre(f.expected));
        if (f.focus && f.focus.lines) {
          // A text cut to its bound: the focus keeps its own lines.
          node.appendChild(el('div', { cls: 'meta', text: 'actual, lines ' + f.focus.first_line + '-' +
            f.focus.last_line + (f.actual_cut ? ' of ' + f.actual_cut.lines : '') + ' (' + f.focus.reason + ')' }));
          var win = el('pre');
          f.focus.lines.forEach(function (line, n) {
            win.appendChild(el('span', { cls: 'focus', text: (f.focus.first_line + n) + ' │ ' + line }));
          });
          node.appendChild(win);
          node.appendChild(el('div', { cls: 'meta', text: 'actual, cut' + (f.actual_cut ? ' (of ' + f.actual_cut.bytes + ' bytes)' : '') }));
          node.appendChild(textPre(f.actual));
        } else {
          node.appendChild(el('div', { cls: 'meta', text: 'actual' + (f.focus ? ' (' + f.focus.reason + ')' : '') }));
          node.appendChild(textPre(f.actual, f.focus));
        }
      }
      return node;
    }
    // A call's element id: the scenario, the variant (v1, v2 … for a
    // variant after the first) and the call.
    function callId(index, id) { return 'call-' + index + '-' + id; }
    function call(index, c, stat) {
      var node = el('div', { cls: 'call' + (c.is_error ? ' error' : '') + (c.finished ? '' : ' running'), id: callId(index, c.id) });
      var head = el('div', { cls: 'head' }, el('span', { cls: 'tool', text: c.tool }), el('span', { cls: 'id', text: c.id }));
      if (c.is_error) head.appendChild(badge('error', 'failed'));
      if (stat && stat.truncated) head.appendChild(badge('truncated', 'warn'));
      if (!c.finished) head.appendChild(badge('no result: stopped while running', 'warn'));
      // A retry links to the call whose error it answers: the attempt just
      // before it (run.json's `answers`; older reports only name the first
      // call of the chain, `retry_of`).
      var answered = c.answers || c.retry_of;
      if (answered) {
        var link = el('a', { href: '#s/' + String(index).split('-')[0], 'data-answers': answered,
          text: 'answers ' + answered + (c.retry_of && c.retry_of !== answered ? ' (a retry of ' + c.retry_of + ')' : '') });
        link.addEventListener('click', function (e) {
          e.preventDefault();
          var target = document.getElementById(callId(index, answered));
          if (target) {
            target.scrollIntoView({ block: 'center' });
            target.classList.remove('flash');
            void target.offsetWidth;
            target.classList.add('flash');
          }
        });
        head.appendChild(el('span', { cls: 'badge note' }, link));
      }
      node.appendChild(head);
      if (stat) {
        node.appendChild(el('div', { cls: 'tokens', text: stat.args_tokens + ' argument tokens · ' +
          stat.result_tokens + ' result tokens · ' + stat.duration_ms + ' ms' }));
      }
      node.appendChild(el('details', c.arguments.text.length <= 400 ? { open: '' } : null,
        el('summary', { text: 'arguments' }), args(c.arguments)));
      if (c.finished) {
        var result = el('div', { cls: 'result' });
        c.content.forEach(function (b) { result.appendChild(block(b)); });
        node.appendChild(result);
      }
      if (c.details !== undefined) {
        node.appendChild(el('details', null, el('summary', { text: 'details' }),
          el('pre', { text: JSON.stringify(c.details, null, 2) })));
      } else if (c.details_omitted_bytes) {
        node.appendChild(el('p', { cls: 'meta', text: 'details: ' + c.details_omitted_bytes + ' bytes, not kept' }));
      }
      if (c.updates) {
        var shownUpdate = function (label, clip) {
          return [el('div', { cls: 'meta', text: label }),
            clip.text || clip.omitted_bytes || clip.tail ? clipPre(clip) : el('p', { cls: 'meta', text: '(no text)' })];
        };
        var fold = el('details', { cls: 'updates' }, el('summary', { text: 'streamed updates' }),
          el('p', { cls: 'meta', text: 'The tool sent partial results while it ran; the model read only the final result. ' +
            'The first and the last are kept; how many came, and those between, depend on timing.' }));
        shownUpdate('first', c.updates.first).forEach(function (n) { fold.appendChild(n); });
        if (c.updates.last) shownUpdate('last', c.updates.last).forEach(function (n) { fold.appendChild(n); });
        node.appendChild(fold);
      } else if (c.streamed) {
        node.appendChild(el('details', { cls: 'updates' }, el('summary', { text: 'streamed updates' }),
          el('p', { cls: 'meta', text: 'The tool sent partial results while it ran; none are kept for a call that did not finish.' })));
      }
      return node;
    }
    // A scenario's transcript into `page`; `index` is the key of its
    // calls' element ids (the scenario's position, with the variant's).
    function transcript(page, s, index, stats) {
      var t = s.transcript;
      if (!t) {
        page.appendChild(el('p', { cls: 'meta', text: 'No transcript: the scenario did not reach its model loop.' }));
      } else {
        if (t.cut) {
          page.appendChild(el('p', { cls: 'meta', text: data.trim
            ? 'This page keeps at most ' + data.trim.transcript_bytes + ' bytes of each transcript (the suite is large); later blocks keep only their sizes, and run.json has what was recorded.'
            : 'This transcript reached the report\'s size bound; later blocks keep only their sizes.' }));
        }
        t.turns.forEach(function (turn) {
          var usage = s.turns[turn.turn - 1];
          var head = el('div', { cls: 'turn-head' }, el('b', { text: 'Turn ' + turn.turn }), ' · ' + turn.stop_reason);
          if (usage) {
            head.appendChild(document.createTextNode(' · input ' + usage.input_tokens + ' · output ' + usage.output_tokens +
              ' · cache read ' + usage.cache_read_tokens + ' · cache write ' + usage.cache_write_tokens + ' tokens'));
          }
          var node = el('div', { cls: 'turn' }, head);
          (turn.text || []).forEach(function (clip) {
            if (clip.text || clip.omitted_bytes) node.appendChild(el('div', { cls: 'say' }, clipPre(clip)));
          });
          if (turn.calls.length > 1) {
            node.appendChild(el('div', { cls: 'meta', text: 'a batch of ' + turn.calls.length + ' calls, sent together' }));
          }
          var batch = el('div', { cls: 'batch', style: '--n:' + Math.max(1, Math.min(turn.calls.length, 3)) });
          turn.calls.forEach(function (c) { batch.appendChild(call(index, c, stats.get(c.id))); });
          node.appendChild(batch);
          page.appendChild(node);
        });
        if (t.error) page.appendChild(el('p', { cls: 'failure', text: 'The loop ended early: ' + t.error }));
      }
    }
    // With --variant: the scenario in each variant (its figures side by
    // side) and, for each variant after the first, its transcript and the
    // diff of its results against the first variant's where they differ.
    function variantPart(page, s, index) {
      page.appendChild(el('h3', { text: 'Variants' }));
      var table = el('table', { cls: 'totals variants' });
      var head = el('tr');
      ['variant', 'status', 'result tokens', 'input tokens', 'errors', 'retries', 'calls'].forEach(function (h) {
        head.appendChild(el('th', { text: h }));
      });
      table.appendChild(el('thead', null, head));
      var tbody = el('tbody');
      variants.forEach(function (v, k) {
        var vs = k === 0 ? s : variantScenarios[k].get(s.name);
        var tr = el('tr', null, el('th', { text: v.name }));
        if (!vs) {
          tr.appendChild(el('td', { text: 'not run' }));
        } else {
          tr.appendChild(el('td', null, badge(vs.status)));
          ['result_tokens', 'input_tokens', 'errors', 'retries', 'calls'].forEach(function (f) {
            tr.appendChild(el('td', { cls: 'num', text: String(vs.stats[f]) }));
          });
        }
        tbody.appendChild(tr);
      });
      table.appendChild(tbody);
      page.appendChild(table);
      variants.forEach(function (v, k) {
        if (k === 0) return;
        var vs = variantScenarios[k].get(s.name);
        if (!vs) return;
        var fold = el('details', { cls: 'variant', 'data-variant': v.name },
          el('summary', { text: 'Variant ' + v.name + ' (' + v.file + '): ' + vs.status }));
        var d = variantDiffs.get(index + ':' + k);
        if (d) {
          fold.appendChild(el('div', { cls: 'meta', text: 'results differ from variant ' + variants[0].name +
            ' (- ' + variants[0].name + ', + ' + v.name + ')' + (d.cut ? ', cut' : '') }));
          var pre = el('pre', { cls: 'diff variant-diff' });
          d.lines.forEach(function (line) {
            var c = line.charAt(0);
            pre.appendChild(el('span', { cls: c === '-' ? 'del' : c === '+' ? 'ins' : 'ctx', text: line }));
          });
          fold.appendChild(pre);
        } else if (vs.transcript && s.transcript) {
          fold.appendChild(el('p', { cls: 'meta', text: 'The results are those of variant ' + variants[0].name + '.' }));
        }
        fold.appendChild(figs(vs.stats));
        if (vs.agent) {
          fold.appendChild(el('h4', { text: 'Agent ' + vs.agent.name }));
          agentPart(fold, vs.agent);
        }
        var vstats = new Map();
        vs.calls.forEach(function (c) { vstats.set(c.id, c); });
        fold.appendChild(el('h4', { text: 'Transcript, variant ' + v.name }));
        transcript(fold, vs, index + '-v' + k, vstats);
        if (vs.failures.length) {
          fold.appendChild(el('h4', { text: 'Failed checks, variant ' + v.name }));
          vs.failures.forEach(function (f) { fold.appendChild(failure(vs, -1, f)); });
        }
        page.appendChild(fold);
      });
    }
    // A scenario served to a real agent: which agent, how it ended, what
    // it sent and its last words (run.json's `agent`; the texts are text).
    function agentPart(node, a) {
      var parts = [a.api, a.exit, a.requests + ' requests', a.side_calls + ' side calls',
        a.finished ? 'final answer sent' : 'final answer not sent', 'isolation: ' + a.isolation];
      node.appendChild(el('div', { cls: 'server agent' }, el('b', { text: a.name }), ': ' + parts.join(', ')));
      (a.warnings || []).forEach(function (w) { node.appendChild(el('p', { cls: 'meta', text: 'warning: ' + w })); });
      [['its output (the end, at most 4 KiB)', a.output], ['its standard error (the end, at most 4 KiB)', a.stderr]].forEach(function (p) {
        node.appendChild(el('div', { cls: 'meta', text: p[0] }));
        node.appendChild(p[1] ? el('pre', { text: p[1] }) : el('p', { cls: 'meta', text: '(nothing)' }));
      });
    }
    function scenarioPage(index) {
      var s = scenarios[index];
      var page = el('div');
      var back = el('a', { cls: 'back', href: '#scenarios', text: '← all scenarios' });
      back.addEventListener('click', function (e) {
        // Back to the list where it was, as the browser's back button.
        if (cameFromList) { e.preventDefault(); history.back(); }
      });
      page.appendChild(back);
      page.appendChild(el('h2', null, el('span', { cls: 'meta kind', text: 'scenario' }), ' ', badge(s.status), ' ', s.name));
      page.appendChild(el('p', { cls: 'meta', text: s.file + (s.tags.length ? ' · tags: ' + s.tags.join(', ') : '') +
        ' · ' + s.stats.duration_ms + ' ms' }));
      if (s.skip_reason) page.appendChild(el('p', { text: 'Skipped: ' + s.skip_reason }));
      page.appendChild(figs(s.stats));
      var base = baseline.get(s.name);
      if (base) {
        page.appendChild(el('p', { cls: 'meta', text: 'baseline (' + base.baseline_status + '):' }));
        page.appendChild(figs(base.baseline));
      }
      if (s.servers && s.servers.length) {
        page.appendChild(el('h3', { text: 'MCP servers' }));
        s.servers.forEach(function (v) {
          var parts = [v.transport];
          if (v.shared) parts.push('shared');
          if (v.server_name) parts.push(v.server_name + (v.server_version ? ' ' + v.server_version : ''));
          if (v.protocol_version) parts.push('protocol ' + v.protocol_version);
          if (v.startup_ms !== undefined) parts.push('started in ' + v.startup_ms + ' ms');
          if (v.error) parts.push('did not start: ' + v.error);
          if (v.exit_status) parts.push((v.ended_early ? 'ended early: ' : '') + v.exit_status);
          if (v.junk_lines) parts.push(v.junk_lines + ' junk lines on stdout');
          if (v.definition_tokens !== undefined) parts.push('tool definitions ' + v.definition_tokens + ' tokens');
          if (v.calls !== undefined) {
            var errs = v.error_results + ' error result' + (v.error_results === 1 ? '' : 's');
            if (v.jsonrpc_errors) errs += ' (' + v.jsonrpc_errors + ' JSON-RPC)';
            parts.push(v.calls + ' call' + (v.calls === 1 ? '' : 's') + ', ' + errs + ', results ' + v.result_tokens + ' tokens');
          }
          var node = el('div', { cls: 'server' }, el('b', { text: v.name }), ': ' + parts.join(', '));
          if (v.stderr_tail) node.appendChild(el('pre', { text: v.stderr_tail }));
          page.appendChild(node);
        });
      }
      if (s.agent) {
        page.appendChild(el('h3', { text: 'Agent' }));
        agentPart(page, s.agent);
      }
      var checks = s.failures.filter(function (f) { return !(f.step || '').startsWith('files:'); });
      var files = s.failures.filter(function (f) { return (f.step || '').startsWith('files:'); });
      var stats = new Map();
      s.calls.forEach(function (c) { stats.set(c.id, c); });
      page.appendChild(el('h3', { text: variants.length ? 'Transcript, variant ' + variants[0].name : 'Transcript' }));
      transcript(page, s, index, stats);
      page.appendChild(el('h3', { text: 'Failed checks' }));
      if (!checks.length) page.appendChild(el('p', { cls: 'meta', text: 'None.' }));
      checks.forEach(function (f) { page.appendChild(failure(s, index, f)); });
      page.appendChild(el('h3', { text: 'File checks' }));
      if (!files.length) page.appendChild(el('p', { cls: 'meta', text: s.status === 'passed' ? 'All held.' : 'No file check failed.' }));
      files.forEach(function (f) { page.appendChild(failure(s, index, f)); });
      if (variants.length) variantPart(page, s, index);
      return page;
    }

    var overview = document.getElementById('overview-view');
    var detail = document.getElementById('scenario-view');
    function route() {
      var m = /^#s\/(\d+)$/.exec(location.hash);
      var index = m ? Number(m[1]) : -1;
      if (index >= 0 && index < scenarios.length) {
        cameFromList = opening;
        opening = false;
        detail.textContent = '';
        detail.appendChild(scenarioPage(index));
        overview.hidden = true;
        detail.hidden = false;
        document.title = scenarios[index].name + ' · harness';
        window.scrollTo(0, 0);
      } else {
        detail.hidden = true;
        detail.textContent = '';
        overview.hidden = false;
        document.title = originalTitle;
        var st = history.state && history.state.list;
        if (st) restore(st);
        else if (location.hash === '#scenarios') document.getElementById('scenarios').scrollIntoView();
      }
    }
    var originalTitle = document.title;
    window.addEventListener('hashchange', route);
    if (data.trim) {
      document.getElementById('list-count').insertAdjacentElement('afterend', el('p', { cls: 'meta', id: 'trim-note',
        text: 'This suite is large: to keep the page within its bound, it keeps at most ' + data.trim.transcript_bytes +
          ' bytes of each transcript and ' + data.trim.failure_bytes + ' of each failure text; run.json has them whole.' }));
    }
    refresh();
    route();
    // When the list first showed (the browser check reports it).
    performance.mark('harness-ready');
  }
}());
