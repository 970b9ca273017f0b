// The scenario list and the scenario pages of harness's index.html. The
// data comes from the island (gzip-compressed JSON in base64); text from it
// is only ever set as text (textContent, attribute values), never parsed
// as markup.
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
      return { s: s, i: i, tools: used, base: base, change: before === null ? 0 :
        Math.abs(s.stats.result_tokens + s.stats.input_tokens - before), text: null };
    });
    function searchText(r) {
      if (r.text === null) {
        var parts = [r.s.name, r.s.file, r.s.tags.join(' '), r.s.skip_reason || ''];
        r.s.failures.forEach(function (f) { parts.push(f.step || '', f.check); });
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
      change: function (a, b) { return b.change - a.change || a.i - b.i; }
    };

    function header() {
      return el('div', { cls: 'row head' }, el('span', { text: 'status' }), el('span', { text: 'scenario' }),
        el('span', { text: 'result tokens (| baseline)' }), el('span', { cls: 'v', text: 'tokens' }),
        el('span', { cls: 'v', text: 'ms' }), el('span', { cls: 'v', text: 'retries' }));
    }
    function row(r) {
      var s = r.s;
      var bar = el('div', { cls: 'barcell' });
      if (r.base && r.base.compared) {
        bar.appendChild(el('span', { cls: 'b-base', style: 'width:' + (100 * r.base.baseline.result_tokens / maxTokens).toFixed(2) + '%' }));
      }
      bar.appendChild(el('span', { cls: 'b-now', style: 'width:' + (100 * s.stats.result_tokens / maxTokens).toFixed(2) + '%' }));
      var node = el('div', { cls: 'row', 'data-index': String(r.i), 'data-status': s.status, role: 'link', tabindex: '0' },
        el('span', null, badge(s.status)),
        el('span', { cls: 'name', title: s.name }, s.name, el('br'), el('span', { cls: 'file', text: s.file })),
        bar,
        el('span', { cls: 'v', text: String(s.stats.result_tokens) }),
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
    list.addEventListener('click', function (e) {
      var r = e.target.closest('.row[data-index]');
      if (r) location.hash = '#s/' + r.getAttribute('data-index');
    });
    list.addEventListener('keydown', function (e) {
      var r = e.target.closest('.row[data-index]');
      if (r && e.key === 'Enter') location.hash = '#s/' + r.getAttribute('data-index');
    });
    document.getElementById('overview').addEventListener('click', function (e) {
      var a = e.target.closest('a[data-scenario]');
      if (!a) return;
      var i = byName.get(a.getAttribute('data-scenario'));
      if (i !== undefined) { e.preventDefault(); location.hash = '#s/' + i; }
    });

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
    var IMAGE = /^image\/(png|jpeg|gif|webp)$/;
    function block(b) {
      if (b.type === 'text') return clipPre(b);
      if (b.data && IMAGE.test(b.mime_type)) {
        return el('img', { alt: b.mime_type + ' image, ' + b.bytes + ' bytes', src: 'data:' + b.mime_type + ';base64,' + b.data });
      }
      return el('p', { cls: 'meta', text: b.mime_type + ' image of ' + b.bytes + ' base64 bytes (not kept in this report)' });
    }
    function figs(f, extra) {
      var box = el('div', { cls: 'figs' });
      ['turns', 'calls', 'errors', 'retries', 'retries_avoided', 'result_tokens', 'input_tokens',
        'output_tokens', 'cache_read_tokens', 'cache_write_tokens'].forEach(function (k) {
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
        node.appendChild(el('div', { cls: 'meta', text: 'actual' + (f.focus ? ' (' + f.focus.reason + ')' : '') }));
        node.appendChild(textPre(f.actual, f.focus));
      }
      return node;
    }
    function callId(index, id) { return 'call-' + index + '-' + id; }
    function call(index, c, stat) {
      var node = el('div', { cls: 'call' + (c.is_error ? ' error' : '') + (c.finished ? '' : ' running'), id: callId(index, c.id) });
      var head = el('div', { cls: 'head' }, el('span', { cls: 'tool', text: c.tool }), el('span', { cls: 'id', text: c.id }));
      if (c.is_error) head.appendChild(badge('error', 'failed'));
      if (stat && stat.truncated) head.appendChild(badge('truncated', 'warn'));
      if (!c.finished) head.appendChild(badge('no result: stopped while running', 'warn'));
      if (c.retry_of) {
        var link = el('a', { href: '#s/' + index, text: 'retry of ' + c.retry_of });
        link.addEventListener('click', function (e) {
          e.preventDefault();
          var target = document.getElementById(callId(index, c.retry_of));
          if (target) { target.scrollIntoView({ block: 'center' }); target.classList.add('flash'); }
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
      if (c.streamed) {
        node.appendChild(el('details', null, el('summary', { text: 'streamed updates' }),
          el('p', { cls: 'meta', text: 'The tool sent partial results while it ran; the model read only the final result, so they are not kept.' })));
      }
      return node;
    }
    function scenarioPage(index) {
      var s = scenarios[index];
      var page = el('div');
      page.appendChild(el('a', { cls: 'back', href: '#scenarios', text: '← all scenarios' }));
      page.appendChild(el('h2', null, badge(s.status), ' ', s.name));
      page.appendChild(el('p', { cls: 'meta', text: s.file + (s.tags.length ? ' · tags: ' + s.tags.join(', ') : '') +
        ' · ' + s.stats.duration_ms + ' ms' }));
      if (s.skip_reason) page.appendChild(el('p', { text: 'Skipped: ' + s.skip_reason }));
      page.appendChild(figs(s.stats));
      var base = baseline.get(s.name);
      if (base) {
        page.appendChild(el('p', { cls: 'meta', text: 'baseline (' + base.baseline_status + '):' }));
        page.appendChild(figs(base.baseline));
      }
      var checks = s.failures.filter(function (f) { return !(f.step || '').startsWith('files:'); });
      var files = s.failures.filter(function (f) { return (f.step || '').startsWith('files:'); });
      var stats = new Map();
      s.calls.forEach(function (c) { stats.set(c.id, c); });
      var t = s.transcript;
      page.appendChild(el('h3', { text: 'Transcript' }));
      if (!t) {
        page.appendChild(el('p', { cls: 'meta', text: 'No transcript: the scenario did not reach its model loop.' }));
      } else {
        if (t.cut) page.appendChild(el('p', { cls: 'meta', text: 'This transcript reached the report\'s size bound; later blocks keep only their sizes.' }));
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
      page.appendChild(el('h3', { text: 'Failed checks' }));
      if (!checks.length) page.appendChild(el('p', { cls: 'meta', text: 'None.' }));
      checks.forEach(function (f) { page.appendChild(failure(s, index, f)); });
      page.appendChild(el('h3', { text: 'File checks' }));
      if (!files.length) page.appendChild(el('p', { cls: 'meta', text: s.status === 'passed' ? 'All held.' : 'No file check failed.' }));
      files.forEach(function (f) { page.appendChild(failure(s, index, f)); });
      return page;
    }

    var overview = document.getElementById('overview-view');
    var detail = document.getElementById('scenario-view');
    function route() {
      var m = /^#s\/(\d+)$/.exec(location.hash);
      var index = m ? Number(m[1]) : -1;
      if (index >= 0 && index < scenarios.length) {
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
        if (location.hash === '#scenarios') document.getElementById('scenarios').scrollIntoView();
      }
    }
    var originalTitle = document.title;
    window.addEventListener('hashchange', route);
    refresh();
    route();
    // When the list first showed (the browser check reports it).
    performance.mark('harness-ready');
  }
}());
