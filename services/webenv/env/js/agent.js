// The env's helper, installed in every document of the tab before the page's
// own scripts (Page.addScriptToEvaluateOnNewDocument). It counts DOM
// mutations and requests in flight (for the settler), assigns bids, lists the
// interactive elements, and prepares the element-level actions. It works on
// any page: ours, third-party MiniWoB pages, or anything else.
(function () {
  if (window.__wob) return;
  var S = (window.__wob = { mut: 0, last: performance.now(), inflight: 0, nextBid: 0 });

  // --- activity tracking for the settler --------------------------------------
  var mo = new MutationObserver(function (list) {
    S.mut += list.length;
    S.last = performance.now();
  });
  mo.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });

  // --- click listeners -------------------------------------------------------------
  // An element a page listens to for clicks is interactive even without a
  // role, a cursor or a tag that says so: MiniWoB++'s click-color and
  // click-shades boxes are divs given a handler by d3. This script runs
  // before the page's, so every addEventListener call passes here. The
  // document, window, <html> and <body> (where delegated handlers sit) are
  // not elements a click aims at.
  var clickListened = new WeakSet();
  var CLICKY = { click: 1, mousedown: 1, mouseup: 1, dblclick: 1 };
  var origAdd = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function (type, listener, options) {
    if (CLICKY[type] && this instanceof Element && this !== document.documentElement && this !== document.body) {
      clickListened.add(this);
    }
    return origAdd.call(this, type, listener, options);
  };

  var origFetch = window.fetch;
  if (origFetch) {
    window.fetch = function () {
      S.inflight++;
      var settled = false;
      function done() {
        if (!settled) {
          settled = true;
          S.inflight--;
          S.last = performance.now();
        }
      }
      var p;
      try {
        p = origFetch.apply(this, arguments);
      } catch (e) {
        done();
        throw e;
      }
      p.then(done, done);
      return p;
    };
  }
  var origSend = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function () {
    S.inflight++;
    var settled = false;
    this.addEventListener('loadend', function () {
      if (!settled) {
        settled = true;
        S.inflight--;
        S.last = performance.now();
      }
    });
    return origSend.apply(this, arguments);
  };

  // A navigation that the page started (a link, a form) marks the document
  // as leaving: the settler must wait for the next document, not settle on
  // this one while the request is in flight. Listeners on window run after
  // the page's own, so a prevented default is no navigation.
  S.nav = 0;
  function markNav() { S.nav = performance.now(); }
  window.addEventListener('beforeunload', markNav);
  window.addEventListener('submit', function (e) { if (!e.defaultPrevented) markNav(); });
  window.addEventListener('click', function (e) {
    if (e.defaultPrevented || e.button !== 0 || !e.target || !e.target.closest) return;
    var a = e.target.closest('a[href]');
    if (!a || (a.target && a.target !== '_self')) return;
    var u;
    try { u = new URL(a.getAttribute('href'), location.href); } catch (err) { return; }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return;
    if (u.hash && u.href.split('#')[0] === location.href.split('#')[0]) return;
    markNav();
  });

  S.settleState = function () {
    var core = window.core;
    return {
      ready: document.readyState,
      inflight: S.inflight,
      // A navigation that did not happen in 10s was cancelled.
      leaving: S.nav > 0 && performance.now() - S.nav < 10000,
      since: performance.now() - S.last,
      pending: core && typeof core.pending === 'number' ? core.pending : 0
    };
  };

  // waitSettled resolves once the page looks settled (see settle.go), or at
  // the timeout: one round trip instead of polling over the protocol.
  S.waitSettled = function (quietMs, hints, timeoutMs) {
    return new Promise(function (resolve) {
      var t0 = performance.now();
      (function check() {
        var st = S.settleState();
        var ok = st.ready === 'complete' && st.inflight <= 0 && !st.leaving && st.since >= quietMs &&
          (!hints || st.pending <= 0);
        if (ok || performance.now() - t0 >= timeoutMs) resolve({ ok: ok });
        else setTimeout(check, 5);
      })();
    });
  };

  // --- elements -----------------------------------------------------------------
  var TEXTY = { text: 1, email: 1, password: 1, search: 1, tel: 1, url: 1, number: 1, '': 1 };

  function isTextField(el) {
    if (el.tagName === 'TEXTAREA') return true;
    if (el.tagName === 'INPUT') return !!TEXTY[(el.getAttribute('type') || '').toLowerCase()];
    return el.isContentEditable;
  }

  function roleOf(el) {
    var r = el.getAttribute('role');
    if (r) return r;
    var tag = el.tagName;
    if (tag === 'A') return 'link';
    if (tag === 'BUTTON' || tag === 'SUMMARY') return 'button';
    if (tag === 'SELECT') return el.multiple ? 'listbox' : 'combobox';
    if (tag === 'TEXTAREA') return 'textbox';
    if (tag === 'LABEL') return 'label';
    if (tag === 'INPUT') {
      var t = (el.getAttribute('type') || 'text').toLowerCase();
      if (t === 'checkbox' || t === 'radio') return t;
      if (t === 'submit' || t === 'button' || t === 'reset' || t === 'image') return 'button';
      if (t === 'range') return 'slider';
      return 'textbox';
    }
    if (el.isContentEditable) return 'textbox';
    return 'clickable';
  }

  function clean(s) {
    s = (s || '').replace(/\s+/g, ' ').trim();
    return s.length > 120 ? s.slice(0, 120) : s;
  }

  // inView is a textarea's value as a person sees it: all of it when it
  // fits; when it overflows, the part scrolled into view, estimated from
  // the scroll position as a share of the text (lines wrap unevenly) and
  // widened to whole words. Of a view longer than
  // clean keeps, a view scrolled from the top keeps its end: the text the
  // last scroll revealed (scroll-text's last word, when scrolled down).
  function inView(el) {
    var v = el.value || '', h = el.scrollHeight;
    if (h <= el.clientHeight + 1) return clean(v);
    var from = Math.floor(v.length * el.scrollTop / h);
    var to = Math.ceil(v.length * (el.scrollTop + el.clientHeight) / h);
    if (el.scrollTop + el.clientHeight >= h - 1) to = v.length;
    while (from > 0 && !/\s/.test(v[from - 1])) from--;
    while (to < v.length && !/\s/.test(v[to])) to++;
    var w = v.slice(from, to).replace(/\s+/g, ' ').trim();
    if (el.scrollTop <= 0 || w.length <= 120) return clean(w);
    w = w.slice(w.length - 120);
    var sp = w.indexOf(' ');
    return sp >= 0 ? w.slice(sp + 1) : w;
  }

  // labelText is the text of the field's label: one bound to it, else a
  // label just before it that is bound to nothing (MiniWoB++'s login-user
  // writes <label>Username</label><input>, which a reader of the page takes
  // for the field's name though the DOM does not link them).
  function labelText(el) {
    if (el.labels && el.labels.length) return clean(el.labels[0].innerText);
    var prev = el.previousElementSibling;
    if (prev && prev.tagName === 'LABEL' && !prev.htmlFor && !prev.control) return clean(prev.innerText);
    return '';
  }

  function textOf(el) {
    var tag = el.tagName;
    if (tag === 'INPUT') {
      var t = (el.getAttribute('type') || 'text').toLowerCase();
      if (t === 'submit' || t === 'button' || t === 'reset') return clean(el.value);
      return clean(el.getAttribute('aria-label') || labelText(el) || el.getAttribute('placeholder') || '');
    }
    if (tag === 'TEXTAREA') return clean(el.getAttribute('aria-label') || labelText(el) || el.getAttribute('placeholder') || '');
    if (tag === 'SELECT') return clean(el.getAttribute('aria-label') || labelText(el));
    // SVG elements have no innerText: a <text> glyph's text is its content.
    var inner = el.innerText === undefined ? el.textContent : el.innerText;
    return clean(inner || el.getAttribute('aria-label') || el.getAttribute('title') || '');
  }

  // hintOf names what an element is beyond its text: its tag, its input
  // type and its class names, as words ("span like", "input text",
  // "textarea"). Icon buttons carry their meaning only there (MiniWoB++'s
  // social-media: <span class="like">), and so do widgets asked for by kind
  // (click-widget: a "textarea" widget); WGE and DOM-Q-NET read the same
  // DOM attributes.
  // SVG shapes are also named by what a reader calls them.
  var SHAPES = { rect: 'rect rectangle square', polygon: 'polygon triangle', ellipse: 'ellipse circle' };

  function hintOf(el) {
    var tag = el.tagName.toLowerCase();
    var w = [SHAPES[tag] || tag];
    if (el.tagName === 'INPUT') {
      var t = (el.getAttribute('type') || 'text').toLowerCase();
      w.push(TEXTY[t] || t === 'input' ? 'text' : t);
    }
    if (tag === 'text' && el.ownerSVGElement) {
      // A glyph drawn as SVG text is a digit or a letter to a reader.
      var g = (el.textContent || '').trim();
      if (/^[0-9]+$/.test(g)) w.push('digit number');
      else if (/^[A-Za-z]$/.test(g)) w.push('letter');
    }
    var c = typeof el.className === 'string' ? el.className : (el.getAttribute('class') || '');
    if (c) w.push(c.replace(/[-_]+/g, ' '));
    return clean(w.join(' ')).slice(0, 80);
  }

  // contextOf is the visible text around an element: that of its nearest
  // ancestor (below body, at most 6 levels up) whose text says more than the
  // element's own. A tweet's reply button has no text; its tweet names the
  // user the instruction asks about (social-media), as a row names the
  // item its buttons act on. The climb stops below the block that holds the
  // instruction (#query): the instruction is not any element's context.
  function contextOf(el, own, query, texts) {
    var p = el.parentElement;
    for (var i = 0; i < 6 && p && p !== document.body && !(query && p.contains(query)); i++, p = p.parentElement) {
      // Siblings share their ancestors: each ancestor's text is read once
      // per listing (texts).
      var t = texts.get(p);
      if (t === undefined) {
        t = clean(p.innerText);
        texts.set(p, t);
      }
      if (t && t !== own) return t.slice(0, 100);
    }
    return '';
  }

  function candidate(el) {
    var tag = el.tagName;
    if (tag === 'A') return el.hasAttribute('href');
    if (tag === 'BUTTON' || tag === 'SELECT' || tag === 'TEXTAREA' || tag === 'SUMMARY' || tag === 'LABEL') return true;
    if (tag === 'INPUT') return (el.getAttribute('type') || '').toLowerCase() !== 'hidden';
    if (el.hasAttribute('role') || el.hasAttribute('onclick') || el.hasAttribute('tabindex') || el.isContentEditable) return true;
    if (el.id === 'sync-task-cover') return true;
    if (clickListened.has(el)) return true;
    // Clickable by style only (third-party pages): the outermost pointer
    // element, not its children that inherit the cursor.
    var cur = getComputedStyle(el).cursor;
    if (cur !== 'pointer') return false;
    var p = el.parentElement;
    return !p || getComputedStyle(p).cursor !== 'pointer';
  }

  function visible(el, r) {
    if (r.width <= 0 || r.height <= 0) return false;
    var cs = getComputedStyle(el);
    return cs.visibility !== 'hidden' && cs.display !== 'none' && Number(cs.opacity) !== 0;
  }

  function bidOf(el) {
    var b = el.getAttribute('bid');
    if (!b) {
      b = String(++S.nextBid);
      el.setAttribute('bid', b);
    }
    return b;
  }

  // pageText is the page's visible text as lines, in reading order: that
  // of the task area (#area: MiniWoB++'s and the built-in pages'; else the
  // body without the instruction block), deduplicated, at most 32 lines of
  // 80 characters. Text no element holds is here: copy-text's code in a
  // <b>, a phone number in a table cell, read now or copied pages later.
  S.pageText = function () {
    var root = document.getElementById('area') || document.body;
    if (!root) return [];
    var query = document.getElementById('query');
    var q = query && !root.contains(query) ? '' : clean(query ? query.innerText : '');
    var lines = (root.innerText || '').split('\n'), out = [], seen = {};
    for (var i = 0; i < lines.length && out.length < 32; i++) {
      var l = lines[i].replace(/\s+/g, ' ').trim().slice(0, 80);
      if (!l || seen[l] || (q && q.indexOf(l) >= 0)) continue;
      seen[l] = true;
      out.push(l);
    }
    return out;
  };

  S.elements = function () {
    var out = [];
    if (!document.body) return out;
    var all = document.body.getElementsByTagName('*');
    var vw = window.innerWidth, vh = window.innerHeight;
    var query = document.getElementById('query'), texts = new Map();
    for (var i = 0; i < all.length; i++) {
      var el = all[i];
      if (!candidate(el)) continue;
      var r = el.getBoundingClientRect();
      if (!visible(el, r)) continue;
      var e = {
        bid: bidOf(el),
        role: roleOf(el),
        text: textOf(el),
        hint: hintOf(el),
        box: { x: Math.round(r.left), y: Math.round(r.top), w: Math.round(r.width), h: Math.round(r.height) },
        inViewport: r.right > 0 && r.bottom > 0 && r.left < vw && r.top < vh,
        focused: document.activeElement === el,
        disabled: !!el.disabled
      };
      e.context = contextOf(el, e.text, query, texts);
      if (el.id) e.domId = el.id.slice(0, 100);
      if (el.tagName === 'INPUT' || el.tagName === 'SELECT') e.value = clean(el.value);
      if (el.tagName === 'TEXTAREA') e.value = inView(el);
      if (el.type === 'checkbox' || el.type === 'radio') e.checked = !!el.checked;
      // A label is as checked as its box: clicking the label ticks it, and a
      // policy that clicks labels must see what it did (click-checkboxes'
      // greedy policy ticked a label's box and unticked it the next step).
      var ctl = el.tagName === 'LABEL' ? el.control : null;
      if (ctl && (ctl.type === 'checkbox' || ctl.type === 'radio')) e.checked = !!ctl.checked;
      if (el.tagName === 'SELECT') {
        e.options = [];
        for (var j = 0; j < el.options.length; j++) e.options.push(clean(el.options[j].textContent));
        if (el.multiple) {
          e.selected = [];
          for (var s = 0; s < el.options.length; s++) if (el.options[s].selected) e.selected.push(clean(el.options[s].textContent));
        }
        var so = el.options[el.selectedIndex];
        e.text = clean(e.text + (so ? ' ' + so.textContent : ''));
      }
      out.push(e);
    }
    return out;
  };

  // fingerprint summarises the page state that an action can change, for the
  // no-op click penalty.
  S.fingerprint = function () {
    var vals = [];
    var fs = document.querySelectorAll('input,select,textarea');
    for (var i = 0; i < fs.length; i++) vals.push(fs[i].type === 'checkbox' || fs[i].type === 'radio' ? fs[i].checked : fs[i].value);
    var a = document.activeElement;
    var info = window.WOB_REWARD_INFO;
    return [S.mut, location.href, window.scrollX, window.scrollY, a ? a.getAttribute('bid') || a.tagName : '',
      info && info.version, vals.join('\u0001')].join('\u0002');
  };

  function find(bid) {
    var el = document.querySelector('[bid="' + String(bid).replace(/["\\]/g, '\\$&') + '"]');
    if (!el) throw new Error('no element with bid "' + bid + '"');
    return el;
  }

  // query assigns bids and returns the bid of the first visible element
  // matching a CSS selector (for the oracle), or "".
  S.query = function (css) {
    var els = document.querySelectorAll(css);
    for (var i = 0; i < els.length; i++) {
      var r = els[i].getBoundingClientRect();
      if (visible(els[i], r)) return bidOf(els[i]);
    }
    return '';
  };

  // point scrolls an element into view and returns the point to click. On
  // a page whose episode already ended (a MiniWoB++ task's own time limit
  // can end it between two steps) it refuses: core.js has brought its
  // cover back, and a click on the cover would start an unseeded episode.
  // point returns where a click on element bid lands, and with withFP the
  // page's fingerprint from before it scrolls the element into view (the
  // no-op click penalty's "before", without a round trip of its own).
  S.point = function (bid, withFP) {
    var fp = withFP ? S.fingerprint() : '';
    var p = aim(bid);
    p.fp = fp;
    return p;
  };

  // wheelAt is where scroll turns the wheel for element bid: the centre of
  // its visible part. The element is not scrolled into view first (that
  // would be a scroll of its own); one wholly outside the viewport gets the
  // viewport's centre, where a reader scrolls the page towards it.
  S.wheelAt = function (bid) {
    var r = find(bid).getBoundingClientRect();
    var x0 = Math.max(r.left, 0), x1 = Math.min(r.right, window.innerWidth - 1);
    var y0 = Math.max(r.top, 0), y1 = Math.min(r.bottom, window.innerHeight - 1);
    if (x1 < x0 || y1 < y0) return { x: window.innerWidth / 2, y: window.innerHeight / 2 };
    return { x: (x0 + x1) / 2, y: (y0 + y1) / 2 };
  };

  // over refuses to press anything on a page whose episode already ended
  // (see point): element clicks through aim, point clicks and drags
  // through live.
  function over() {
    if (window.WOB_DONE_GLOBAL) throw new Error('the episode is over (' + (window.WOB_REWARD_REASON || 'done') + '): nothing is clicked');
  }
  S.live = function () { over(); return true; };

  function aim(bid) {
    over();
    var el = find(bid);
    if (el.tagName === 'OPTION') throw new Error('bid "' + bid + '" is an option: use select_option on its select');
    el.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    var rs = el.getClientRects();
    var r = rs.length ? rs[0] : el.getBoundingClientRect();
    if (!visible(el, r)) throw new Error('element "' + bid + '" is not visible');
    var x = Math.min(Math.max(r.left + r.width / 2, 0), window.innerWidth - 1);
    var y = Math.min(Math.max(r.top + r.height / 2, 0), window.innerHeight - 1);
    if (hits(el, x, y)) return { x: x, y: y };
    // The centre is covered, or off the viewport where no scroll reaches
    // (MiniWoB++'s click-dialog places its close button at negative x on
    // some seeds): the first point of a grid over the element's visible
    // part that reaches it, as a user would aim; else a DOM click, which
    // is how MiniWoB++'s own interface clicks an element off the screen
    // (Liu et al. 2018: "clicking and typing on off-screen elements are
    // allowed since they are performed by Javascript calls").
    var x0 = Math.max(r.left, 0), x1 = Math.min(r.right, window.innerWidth - 1);
    var y0 = Math.max(r.top, 0), y1 = Math.min(r.bottom, window.innerHeight - 1);
    for (var i = 1; i <= 4 && x1 > x0 && y1 > y0; i++) {
      for (var j = 1; j <= 4; j++) {
        var px = x0 + (x1 - x0) * i / 5, py = y0 + (y1 - y0) * j / 5;
        if (hits(el, px, py)) return { x: px, y: py };
      }
    }
    return { x: x, y: y, dom: true };
  }

  // hits reports whether a click at (x, y) reaches el or one of its
  // descendants (a label's click reaches its control).
  function hits(el, x, y) {
    var h = document.elementFromPoint(x, y);
    return !!h && reaches(el, h);
  }

  // reaches says whether a press on h (what is at the point) reaches el.
  function reaches(el, h) {
    return el === h || el.contains(h) || (h.tagName === 'LABEL' && h.control === el);
  }

  // waitHit resolves true once a press at (x, y) reaches element bid, or
  // false after timeoutMs. Hovering can change what is under the pointer:
  // social-media swaps an icon's image on :hover, and in a new document the
  // swapped-in image has no size for a few milliseconds, so the icon
  // shrinks from under the pointer, loses the hover, grows back and
  // flickers so, frame by frame, until the image is there. An element that
  // is under the pointer and not yet hovered may be in such a flicker; one
  // that is under it and hovered shows what the press will meet.
  S.waitHit = function (bid, x, y, timeoutMs) {
    var el = find(bid), t0 = performance.now();
    return new Promise(function (resolve) {
      (function check() {
        var h = document.elementFromPoint(x, y);
        if (h && reaches(el, h) && h.matches(':hover')) resolve(true);
        else if (performance.now() - t0 >= timeoutMs) resolve(false);
        else setTimeout(check, 5);
      })();
    });
  };

  // netWait makes one request to the task server (GET /api/wait), which
  // its latency profile delays, and resolves with the delay the server drew
  // (ms, from its Server-Timing header; 0 without a profile).
  S.netWait = function () {
    return fetch('/api/wait', { cache: 'no-store' }).then(function (r) {
      var m = /wobdelay;dur=([0-9.]+)/.exec(r.headers.get('Server-Timing') || '');
      return m ? parseFloat(m[1]) : 0;
    });
  };

  // domClick clicks el with a DOM click event (S.point's last resort).
  S.domClick = function (bid) {
    over();
    find(bid).click();
    return true;
  };

  // Inputs whose value has a format of its own (a date picker, a time
  // field): typed text does not reach them, so fill sets the value as
  // Playwright's fill (BrowserGym's) does, with the events a user's edit
  // fires.
  var VALUED = { date: 1, time: 1, 'datetime-local': 1, month: 1, week: 1, color: 1, range: 1 };

  // prepareFill focuses a text field and selects its content, so that the
  // inserted text replaces it, and returns "insert"; a valued input gets
  // text as its value at once, and "set".
  // localValue reads text as a person would type it into the field in the
  // en-US locale the browser runs in (05/17/2016 for a date, 5:38 PM for a
  // time) and returns the value the input holds for it (2016-05-17, 17:38);
  // text already in the value's own form, or of another type, is kept.
  function localValue(type, text) {
    var t = (text || '').trim(), m;
    if (type === 'date' && (m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(t))) {
      return m[3] + '-' + ('0' + m[1]).slice(-2) + '-' + ('0' + m[2]).slice(-2);
    }
    if (type === 'time' && (m = /^(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([AaPp])\.?[Mm]\.?$/.exec(t))) {
      var h = parseInt(m[1], 10) % 12 + (/[Pp]/.test(m[4]) ? 12 : 0);
      return ('0' + h).slice(-2) + ':' + m[2] + (m[3] ? ':' + m[3] : '');
    }
    return text;
  }

  S.prepareFill = function (bid, empty, text) {
    var el = find(bid);
    if (el.tagName === 'INPUT' && VALUED[(el.getAttribute('type') || '').toLowerCase()]) {
      if (el.disabled || el.readOnly) throw new Error('element "' + bid + '" is not editable');
      el.scrollIntoView({ block: 'nearest', inline: 'nearest' });
      el.focus();
      el.value = localValue(el.type, text);
      if (text !== '' && el.value === '') throw new Error('"' + text + '" is not a valid ' + el.type + ' value (want e.g. 2017-03-15 for a date, 14:05 for a time)');
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
      return 'set';
    }
    if (!isTextField(el)) throw new Error('element "' + bid + '" is not a text field (it is ' + roleOf(el) + ')');
    if (el.disabled || el.readOnly) throw new Error('element "' + bid + '" is not editable');
    el.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    el.focus();
    if (el.isContentEditable) {
      var range = document.createRange();
      range.selectNodeContents(el);
      var sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      if (empty) {
        el.textContent = '';
        el.dispatchEvent(new Event('input', { bubbles: true }));
      }
    } else {
      el.select();
      if (empty) {
        el.value = '';
        el.dispatchEvent(new Event('input', { bubbles: true }));
        el.dispatchEvent(new Event('change', { bubbles: true }));
      }
    }
    return 'insert';
  };

  S.select = function (bid, wanted) {
    var el = find(bid);
    if (el.tagName !== 'SELECT') throw new Error('element "' + bid + '" is not a select (it is ' + roleOf(el) + ')');
    if (el.disabled) throw new Error('element "' + bid + '" is disabled');
    if (!el.multiple && wanted.length > 1) throw new Error('element "' + bid + '" takes one option');
    var picked = [];
    for (var w = 0; w < wanted.length; w++) {
      var want = wanted[w], hit = null;
      for (var i = 0; i < el.options.length && !hit; i++) {
        var o = el.options[i];
        if (o.value === want || clean(o.textContent) === want) hit = o;
      }
      for (var k = 0; k < el.options.length && !hit; k++) {
        if (clean(el.options[k].textContent).toLowerCase() === String(want).toLowerCase()) hit = el.options[k];
      }
      if (!hit) throw new Error('select "' + bid + '" has no option "' + want + '"');
      picked.push(hit);
    }
    el.focus();
    for (var j = 0; j < el.options.length; j++) el.options[j].selected = picked.indexOf(el.options[j]) >= 0;
    el.dispatchEvent(new Event('input', { bubbles: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
    return true;
  };

  S.focus = function (bid) {
    var el = find(bid);
    el.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    el.focus();
    return true;
  };

  S.status = function () {
    var W = window;
    var hasCore = typeof W.core === 'object' && W.core !== null;
    var utter = '';
    try {
      if (hasCore && typeof W.core.getUtterance === 'function') {
        var u = W.core.getUtterance();
        utter = typeof u === 'string' ? u : u && u.utterance ? String(u.utterance) : '';
      } else {
        var q = document.getElementById('query');
        utter = q ? q.textContent.replace(/\s+/g, ' ').trim() : '';
      }
    } catch (e) {}
    return {
      hasCore: hasCore,
      done: !!W.WOB_DONE_GLOBAL,
      reward: Number(W.WOB_REWARD_GLOBAL) || 0,
      raw: Number(W.WOB_RAW_REWARD_GLOBAL) || 0,
      reason: W.WOB_REWARD_REASON == null ? '' : String(W.WOB_REWARD_REASON),
      episodeId: Number(W.WOB_EPISODE_ID) || 0,
      ready: W.WOB_TASK_READY === undefined ? true : !!W.WOB_TASK_READY,
      info: W.WOB_REWARD_INFO && typeof W.WOB_REWARD_INFO === 'object' ? W.WOB_REWARD_INFO : null,
      utterance: utter,
      viewport: (function () {
        var m = document.querySelector('meta[name="wob-viewport"]');
        return m ? m.getAttribute('content') : '';
      })()
    };
  };
})();
