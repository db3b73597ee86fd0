/*
 * AsyncWebRL page core: our own implementation of the MiniWoB page protocol.
 *
 * The harness starts each episode with core.endEpisode(0);
 * Math.seedrandom(seed); core.startEpisodeReal(), then polls WOB_TASK_READY.
 * Our pages' genProblem() asks the server for the problem of
 * (family, site, seed): problems are generated and scored on the server, so
 * the core reports what the user does (values, clicks, Enter, messages) and
 * copies the server's score to the globals.
 *
 * Globals: WOB_REWARD_GLOBAL, WOB_RAW_REWARD_GLOBAL, WOB_REWARD_REASON,
 * WOB_DONE_GLOBAL, WOB_EPISODE_ID, WOB_TASK_READY, and our extension
 * WOB_REWARD_INFO (the rubric: facts met, partial credit, success).
 */
(function () {
  'use strict';
  var W = window;
  var cfg = W.WOB_CONFIG || {};

  W.WOB_REWARD_GLOBAL = 0;
  W.WOB_RAW_REWARD_GLOBAL = 0;
  W.WOB_REWARD_REASON = null;
  W.WOB_DONE_GLOBAL = false;
  W.WOB_EPISODE_ID = 0;
  W.WOB_TASK_READY = true;
  W.WOB_REWARD_INFO = null;

  // --- seeded random -------------------------------------------------------
  // A 32-bit string hash and a small PRNG (mulberry32); seeding replaces
  // Math.random, as the protocol's harnesses expect.
  function hash32(s) {
    var h = 2166136261 >>> 0;
    for (var i = 0; i < s.length; i++) {
      h ^= s.charCodeAt(i);
      h = Math.imul(h, 16777619) >>> 0;
    }
    return h >>> 0;
  }
  function prng(seed) {
    var a = seed >>> 0;
    return function () {
      a = (a + 0x6d2b79f5) >>> 0;
      var t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  var nativeRandom = Math.random;
  // The client-side loading effects draw from their own stream, so they never
  // change what the seed generates.
  var fxRandom = prng(hash32(String(Date.now()) + String(nativeRandom())));

  var core = (W.core = {
    EPISODE_MAX_TIME: cfg.maxTimeMs || 10000,
    seed: null,
    ep: null,
    pending: 0, // async work in flight: problem load, event batches, effects
    startTime: 0,
    timer: null,
    queue: [],
    sending: false,
    scoreVersion: -1,
    loadToken: 0
  });

  Math.seedrandom = function (seed) {
    var s = String(seed);
    core.seed = s;
    Math.random = prng(hash32(s));
    return s;
  };

  function byId(id) { return document.getElementById(id); }
  function setQuery(text) { var q = byId('query'); if (q) q.textContent = text; }

  core.getUtterance = function () {
    var q = byId('query');
    return q ? q.textContent.replace(/\s+/g, ' ').trim() : '';
  };

  // --- the start cover ------------------------------------------------------
  core.showCover = function () {
    var wrap = byId('wrap');
    if (!wrap || cfg.mode === 'episode') return;
    var c = byId('sync-task-cover');
    if (!c) {
      c = document.createElement('div');
      c.id = 'sync-task-cover';
      c.textContent = 'START';
      c.addEventListener('click', function () { core.startEpisodeReal(); });
      wrap.appendChild(c);
    }
    c.style.display = 'flex';
  };
  core.hideCover = function () {
    var c = byId('sync-task-cover');
    if (c) c.style.display = 'none';
  };

  // --- episodes ---------------------------------------------------------------
  core.startEpisode = function () { core.showCover(); };

  core.startEpisodeReal = function () {
    if (typeof W.genProblem === 'function') W.genProblem();
    W.WOB_REWARD_GLOBAL = 0;
    W.WOB_RAW_REWARD_GLOBAL = 0;
    W.WOB_REWARD_REASON = null;
    W.WOB_DONE_GLOBAL = false;
    W.WOB_REWARD_INFO = null;
    W.scrollTo(0, 0);
    core.hideCover();
    core.startTime = Date.now();
    core.arm(core.EPISODE_MAX_TIME);
  };

  core.arm = function (ms) {
    clearTimeout(core.timer);
    core.timer = setTimeout(function () {
      core.send({ t: 'timeout' });
      core.endEpisode(-1, false, 'timed out');
    }, Math.max(0, ms));
  };

  // endEpisode: only the first call of an episode counts.
  core.endEpisode = function (reward, timeProportional, reason) {
    if (W.WOB_DONE_GLOBAL) return;
    var r = Number(reward) || 0;
    W.WOB_RAW_REWARD_GLOBAL = r;
    if (timeProportional) {
      var left = 1 - (Date.now() - core.startTime) / core.EPISODE_MAX_TIME;
      r = r * Math.max(0, left);
    }
    W.WOB_REWARD_GLOBAL = r;
    W.WOB_REWARD_REASON = reason === undefined ? null : reason;
    W.WOB_DONE_GLOBAL = true;
    W.WOB_EPISODE_ID++;
    clearTimeout(core.timer);
    core.timer = null;
    core.showCover();
  };

  // --- server problems --------------------------------------------------------
  core.loadServerProblem = function () {
    var token = ++core.loadToken;
    W.WOB_TASK_READY = false;
    core.ep = null;
    core.queue = [];
    core.scoreVersion = -1;
    var area = byId('area');
    if (area) area.innerHTML = '';
    setQuery('');
    var seed = core.seed !== null ? core.seed : String(Math.floor(nativeRandom() * 2147483647));
    core.pending++;
    fetch('/api/episodes', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ family: cfg.family, site: cfg.site, seed: seed })
    })
      .then(function (r) { return r.json().then(function (j) { return { ok: r.ok, j: j }; }); })
      .then(function (x) {
        if (token !== core.loadToken) return;
        if (!x.ok) {
          var why = (x.j && x.j.error) || 'unknown error';
          setQuery('error: ' + why);
          W.WOB_TASK_READY = true;
          core.endEpisode(-1, false, 'error: ' + why);
          return;
        }
        core.applyProblem(x.j);
      })
      .catch(function (e) {
        if (token !== core.loadToken) return;
        W.WOB_TASK_READY = true;
        core.endEpisode(-1, false, 'error: ' + e);
      })
      .then(function () { core.pending--; });
  };

  core.applyProblem = function (p) {
    core.ep = p.id;
    if (p.home && W.history && W.history.replaceState) W.history.replaceState(null, '', p.home);
    setQuery(p.instruction);
    var area = byId('area');
    area.innerHTML = p.html;
    core.EPISODE_MAX_TIME = p.maxTimeMs;
    core.arm(p.maxTimeMs - (Date.now() - core.startTime));
    core.applyScore(p.score);
    core.effects(area);
    W.WOB_TASK_READY = true;
  };

  // --- reporting ----------------------------------------------------------------
  // Events are sent one batch at a time, in order; events that arrive while a
  // batch is in flight are queued, and consecutive values of one field merge.
  core.send = function (ev) {
    if (!core.ep || W.WOB_DONE_GLOBAL) return;
    var q = core.queue, last = q[q.length - 1];
    if (ev.t === 'set' && last && last.t === 'set' && last.k === ev.k) q[q.length - 1] = ev;
    else q.push(ev);
    core.flush();
  };

  core.flush = function () {
    if (core.sending || !core.queue.length || !core.ep) return;
    var batch = core.queue;
    core.queue = [];
    core.sending = true;
    core.pending++;
    fetch('/api/e/' + encodeURIComponent(core.ep) + '/events', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ events: batch }),
      keepalive: true
    })
      .then(function (r) { return r.json(); })
      .then(core.applyScore)
      .catch(function () {})
      .then(function () {
        core.sending = false;
        core.pending--;
        core.flush();
      });
  };

  core.applyScore = function (s) {
    if (!s || typeof s.version !== 'number' || s.episode !== core.ep) return;
    if (s.version < core.scoreVersion) return;
    core.scoreVersion = s.version;
    W.WOB_REWARD_INFO = s;
    var errs = s.errors || {};
    var slots = document.querySelectorAll('[data-err]');
    for (var i = 0; i < slots.length; i++) slots[i].textContent = errs[slots[i].getAttribute('data-err')] || '';
    if (s.done && !W.WOB_DONE_GLOBAL) core.endEpisode(s.raw, false, s.reason);
  };

  // getDOMInfo returns the visible element tree of #wrap, for harnesses that
  // read it: tag, ref, id, classes, box, text of leaves, value, focus.
  var nextRef = 0;
  core.getDOMInfo = function () {
    function info(el) {
      if (!el.dataset.wob_ref) el.dataset.wob_ref = String(++nextRef);
      var r = el.getBoundingClientRect();
      var out = {
        tag: el.tagName.toLowerCase(), ref: Number(el.dataset.wob_ref), id: el.id || '',
        classes: el.className && typeof el.className === 'string' ? el.className : '',
        left: r.left, top: r.top, width: r.width, height: r.height,
        focused: document.activeElement === el, children: []
      };
      if ('value' in el && el.tagName !== 'BUTTON') out.value = el.value;
      if (el.type === 'checkbox' || el.type === 'radio') out.value = el.checked;
      for (var i = 0; i < el.children.length; i++) {
        var c = el.children[i], cr = c.getBoundingClientRect();
        if (cr.width > 0 && cr.height > 0) out.children.push(info(c));
      }
      if (!out.children.length) out.text = (el.textContent || '').trim();
      return out;
    }
    var wrap = byId('wrap');
    return wrap ? info(wrap) : null;
  };

  // elementClick clicks and focuses the element of a getDOMInfo ref.
  core.elementClick = function (ref) {
    var el = document.querySelector('[data-wob_ref="' + Number(ref) + '"]');
    if (!el) return false;
    if (el.focus) el.focus();
    el.click();
    return true;
  };

  // userMessage is how the env delivers send_msg_to_user to the page.
  core.userMessage = function (text) { core.send({ t: 'msg', v: String(text) }); };

  function keyOf(el) { return el && el.getAttribute ? el.getAttribute('data-k') : null; }

  function onField(e) {
    var el = e.target, k = keyOf(el);
    if (!k) return;
    var v;
    if (el.type === 'checkbox') v = el.checked ? '1' : '0';
    else if (el.type === 'radio') {
      if (!el.checked) return;
      v = el.getAttribute('data-v') || el.value;
    } else v = el.value;
    core.send({ t: 'set', k: k, v: v });
  }
  document.addEventListener('input', onField, true);
  document.addEventListener('change', onField, true);

  document.addEventListener('click', function (e) {
    var t = e.target;
    if (!t || !t.closest) return;
    // Client-side views: tabs, panes, dialogs (no server round trip).
    var sw = t.closest('[data-show]');
    if (sw) core.show(sw.getAttribute('data-show'), sw);
    var el = t.closest('[data-k]');
    if (!el) return;
    var tag = el.tagName;
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA' || tag === 'OPTION' || tag === 'LABEL') return;
    if (tag === 'A' && el.getAttribute('href') === '#') e.preventDefault();
    core.send({ t: 'click', k: keyOf(el), v: el.getAttribute('data-v') || '' });
  }, true);

  document.addEventListener('keydown', function (e) {
    if (e.key !== 'Enter') return;
    var el = e.target, k = keyOf(el);
    if (!k || el.tagName === 'TEXTAREA') return;
    if (el.hasAttribute('data-enter')) {
      e.preventDefault();
      core.send({ t: 'enter', k: k, v: el.value || '' });
    }
  }, true);

  // show makes the element with id visible and hides the others of its
  // group (data-pane="group"); the trigger's own group (data-tabs) gets its
  // "active" class moved to the trigger.
  core.show = function (id, trigger) {
    var target = byId(id);
    if (!target) return;
    var group = target.getAttribute('data-pane');
    if (group) {
      var panes = document.querySelectorAll('[data-pane="' + group + '"]');
      for (var i = 0; i < panes.length; i++) panes[i].hidden = panes[i] !== target;
    } else target.hidden = false;
    var tabs = trigger && trigger.getAttribute('data-tabs');
    if (tabs) {
      var ts = document.querySelectorAll('[data-tabs="' + tabs + '"]');
      for (var j = 0; j < ts.length; j++) ts[j].classList.toggle('active', ts[j] === trigger);
    }
  };

  // --- client-side asynchronous loading ---------------------------------------
  function draw(lo, hi) { return lo + Math.floor(fxRandom() * (Math.max(hi, lo) - lo + 1)); }
  function later(ms, fn) {
    core.pending++;
    setTimeout(function () {
      core.pending--;
      fn();
    }, ms);
  }

  core.effects = function (root) {
    var a = cfg.async;
    if (!a || !a.enabled || !root) return;
    var spin = draw(a.spinner_min_ms, a.spinner_max_ms);
    if (spin > 0) {
      root.classList.add('wob-loading');
      later(spin, function () { root.classList.remove('wob-loading'); });
    }
    var lazy = root.querySelectorAll('[data-lazy]');
    for (var i = 0; i < lazy.length; i++) {
      (function (el) {
        el.classList.add('wob-lazy');
        later(spin + draw(a.lazy_min_ms, a.lazy_max_ms), function () { el.classList.remove('wob-lazy'); });
      })(lazy[i]);
    }
    if (fxRandom() < a.shift_prob) {
      later(spin + draw(a.shift_min_ms, a.shift_max_ms), function () {
        var b = document.createElement('div');
        b.className = 'wob-banner';
        b.style.height = draw(12, 26) + 'px';
        b.textContent = ['Sponsored', 'New: try our app', 'Cookies help us', 'Offer ends soon'][draw(0, 3)];
        root.insertBefore(b, root.firstChild);
      });
    }
  };

  // --- start -----------------------------------------------------------------
  if (cfg.mode === 'episode') {
    document.addEventListener('DOMContentLoaded', function () {
      core.ep = cfg.ep;
      core.EPISODE_MAX_TIME = cfg.maxTimeMs;
      core.startTime = Date.now() - (cfg.elapsedMs || 0);
      var s = cfg.score;
      if (s) {
        core.scoreVersion = s.version;
        W.WOB_REWARD_INFO = s;
        if (s.done) {
          W.WOB_DONE_GLOBAL = true;
          W.WOB_RAW_REWARD_GLOBAL = s.raw;
          W.WOB_REWARD_GLOBAL = s.raw;
          W.WOB_REWARD_REASON = s.reason;
        }
      }
      if (!W.WOB_DONE_GLOBAL) core.arm(cfg.maxTimeMs - (cfg.elapsedMs || 0));
      core.effects(byId('area'));
    });
  } else {
    W.addEventListener('load', function () { core.startEpisode(); });
  }
})();
