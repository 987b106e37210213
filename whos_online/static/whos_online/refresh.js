/* django-whos-online: refresh {% whos_online refresh=N %} widgets in place.
 * No dependencies. Where the page names a live stream (under ASGI), shows
 * each change it sends; otherwise, or once it fails, asks for the fragment
 * every N seconds while the page is visible, sending the last ETag so an
 * unchanged list costs a 304. A site-wide widget also brings every {% online_count %} on the page up to
 * date. Without JavaScript the static widget stays.
 *
 * The count sentence (.whos-online-counts) is the widget's one aria-live
 * region. It stays the same element: only its text changes, so a screen
 * reader announces a new count and nothing else. The rest of the widget is
 * swapped around it.
 *
 * The beacon of a page served from a cache (beacon.js) hands over the
 * page's widgets as they are now, keyed by room ("" for the site's), in a
 * "whos-online:widgets" event: every widget on the page, refreshing or not,
 * shows them at once. Loaded twice on one page, it starts once.
 *
 * On a page in rooms, it also keeps the tab in them while it is open, and
 * takes it out as it closes (see keepTab below). */
(function () {
  "use strict";
  if (window.whosOnlineRefresh) return;
  window.whosOnlineRefresh = true;

  function list(nodes) {
    return Array.prototype.slice.call(nodes);
  }

  function updateCounts(widget) {
    if (!widget || !widget.hasAttribute("data-whos-online-people")) return;
    document.querySelectorAll("[data-whos-online-count]").forEach(function (el) {
      var value = widget.getAttribute(
        "data-whos-online-" + el.getAttribute("data-whos-online-count"));
      if (value !== null && el.textContent !== value) el.textContent = value;
    });
  }

  /* Make `current` (the widget on the page) show `fresh` (the fetched one). */
  function swap(current, fresh) {
    list(current.attributes).forEach(function (attribute) {
      if (!fresh.hasAttribute(attribute.name)) current.removeAttribute(attribute.name);
    });
    list(fresh.attributes).forEach(function (attribute) {
      current.setAttribute(attribute.name, attribute.value);
    });
    var live = current.querySelector(":scope > .whos-online-counts");
    var next = fresh.querySelector(":scope > .whos-online-counts");
    if (!live || !next) {
      current.replaceChildren.apply(current, list(fresh.childNodes));
      return;
    }
    list(current.childNodes).forEach(function (node) {
      if (node !== live) current.removeChild(node);
    });
    var after = false;
    list(fresh.childNodes).forEach(function (node) {
      if (node === next) after = true;
      else current.insertBefore(node, after ? null : live);
    });
    if (live.textContent !== next.textContent) live.textContent = next.textContent;
  }

  /* Show `html` (a fetched widget.html) in the widget of `box`. */
  function show(box, html) {
    var fetched = document.createElement("template");
    fetched.innerHTML = html;
    var fresh = fetched.content.querySelector(".whos-online-widget");
    var current = box.querySelector(".whos-online-widget");
    if (!fresh || !current) return;
    swap(current, fresh);
    updateCounts(current);
  }

  function start(box) {
    if (box.hasAttribute("data-whos-online-started")) return;
    box.setAttribute("data-whos-online-started", "");
    var url = box.getAttribute("data-whos-online-refresh");
    var seconds = parseInt(box.getAttribute("data-whos-online-seconds"), 10);
    if (!url || !(seconds > 0)) return;
    var etag = null;

    function refresh() {
      if (document.visibilityState === "hidden") return;
      var headers = {};
      if (etag) headers["If-None-Match"] = etag;
      fetch(url, { credentials: "same-origin", cache: "no-store", headers: headers })
        .then(function (response) {
          if (response.status !== 200) return;
          etag = response.headers.get("ETag");
          return response.text().then(function (html) {
            show(box, html);
          });
        })
        .catch(function () {});
    }

    function poll() {
      window.setInterval(refresh, seconds * 1000);
      document.addEventListener("visibilitychange", function () {
        if (document.visibilityState === "visible") refresh();
      });
    }

    /* Under ASGI the page names a stream: each change arrives as the
     * widget's new HTML, within a second. If it cannot open or breaks (a
     * proxy that buffers, Redis down, WSGI's 204), the widget polls as
     * before, for the rest of the page's life. */
    var stream = box.getAttribute("data-whos-online-stream");
    if (!stream || !window.EventSource) return poll();
    var source = new EventSource(stream);
    source.onmessage = function (event) { show(box, event.data); };
    source.onerror = function () {
      source.close();
      refresh();
      poll();
    };
  }

  document.querySelectorAll("[data-whos-online-refresh]").forEach(start);

  /* A page in rooms keeps its tab there while it is open, visible or not
   * (a browser runs a background tab's timers about once a minute, and the
   * server keeps a tab for WHOS_ONLINE_TAB_TIMEOUT after its last word),
   * and takes it out as it closes. Each page load is a tab of its own. */
  function keepTab(boxes) {
    var url = boxes[0].getAttribute("data-whos-online-here-url");
    var seconds = parseInt(boxes[0].getAttribute("data-whos-online-tab-seconds"), 10);
    if (!url || !(seconds > 0)) return;
    var tokens = [];
    boxes.forEach(function (box) {
      var token = box.getAttribute("data-whos-online-here");
      if (tokens.indexOf(token) < 0) tokens.push(token);
    });
    function newTab() {
      var bytes = new Uint8Array(12);
      window.crypto.getRandomValues(bytes);
      return "t" + list(bytes).map(function (b) {
        return ("0" + b.toString(16)).slice(-2);
      }).join("");
    }
    var tab = newTab();

    function said(leaving) {
      var body = new URLSearchParams({ tab: tab });
      if (leaving) body.append("leave", "1");
      else tokens.forEach(function (token) { body.append("room", token); });
      return body;
    }
    function here() {
      fetch(url, { method: "POST", credentials: "same-origin", body: said(false),
                   keepalive: true }).catch(function () {});
    }
    function gone() {
      var body = said(true);
      if (navigator.sendBeacon && navigator.sendBeacon(url, body)) return;
      fetch(url, { method: "POST", credentials: "same-origin", body: body,
                   keepalive: true }).catch(function () {});
    }

    here();
    window.setInterval(here, seconds * 1000);
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "visible") here();
    });
    window.addEventListener("pagehide", gone);
    window.addEventListener("pageshow", function (event) {
      /* Back from the back-forward cache: a page shown again is a tab of
       * its own, as a page load is (another process may still be sparing
       * the old tab's pings). */
      if (event.persisted) {
        tab = newTab();
        here();
      }
    });
  }

  var inRooms = list(document.querySelectorAll("[data-whos-online-here]"));
  if (inRooms.length && window.crypto && window.URLSearchParams) keepTab(inRooms);

  document.addEventListener("whos-online:widgets", function (event) {
    var widgets = event.detail || {};
    document.querySelectorAll(".whos-online[data-whos-online-room]").forEach(
      function (box) {
        var room = box.getAttribute("data-whos-online-room");
        if (Object.prototype.hasOwnProperty.call(widgets, room)) {
          show(box, widgets[room]);
        }
      });
  });
})();
