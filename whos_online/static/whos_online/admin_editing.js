/* django-whos-online: who else is editing this, on a Django admin change form.
 * No dependencies. Every few seconds while the form is open, and at once when
 * it is changed, changed back, or shown again, POSTs to the object's presence
 * URL the page's mark (its tab, signed by the server) and whether the form
 * differs from what it was when the page opened; shows the answer: the other
 * staff who have the object open and whether it was saved since this form
 * was opened (or since the save the page tells of already, when it refused
 * to save), by someone else or in another tab. As the page closes, says so,
 * so that the others see it gone at once.
 *
 * Under ASGI the page also names a stream of the object's rooms: it says
 * only that what this staff member may learn of the others changed, and the
 * form asks at once, so the notice follows within a second. The asks every
 * few seconds go on beside it (they keep the tab in the rooms); a stream that
 * cannot open or breaks (WSGI, a proxy that buffers, Redis down), or a
 * browser without EventSource, leaves the asks as they were. */
(function () {
  "use strict";
  var data = document.getElementById("whos-online-editing-script");
  var notice = document.getElementById("whos-online-editing");
  if (!data || !notice) return;
  var config = JSON.parse(data.textContent);
  var form = notice.closest("form");
  if (!form || !(config.seconds > 0)) return;
  var editing = false;
  var timer = null;
  var source = null;
  var streaming = Boolean(config.stream && window.EventSource);
  // Not the form's own state: the box to save over a save, and the token.
  var ours = { csrfmiddlewaretoken: true, whos_online_overwrite: true };

  // The form's values as one string: files by name, size and date.
  function serialized() {
    var values = [];
    new FormData(form).forEach(function (value, name) {
      if (ours[name]) return;
      var shown = typeof value === "string"
        ? value
        : [value.name, value.size, value.lastModified].join("/");
      values.push(encodeURIComponent(name) + "=" + encodeURIComponent(shown));
    });
    return values.join("&");
  }

  // Taken once the page has loaded: the admin's own widgets (the two boxes
  // of a many-to-many field) rebuild their fields on load.
  var initial = null;
  function remember() {
    initial = serialized();
  }
  if (document.readyState === "complete") remember();
  else window.addEventListener("load", remember);

  function body(extra) {
    var sent = new FormData();
    var token = form.querySelector("[name=csrfmiddlewaretoken]");
    sent.append("csrfmiddlewaretoken", token ? token.value : "");
    sent.append("opened", String(config.mark));
    sent.append("editing", editing ? "1" : "0");
    Object.keys(extra).forEach(function (name) {
      sent.append(name, extra[name]);
    });
    return sent;
  }

  function show(answer) {
    if (answer && typeof answer.html === "string") notice.innerHTML = answer.html;
  }

  function stop() {
    window.clearTimeout(timer);
    timer = null;
  }

  // Ask at once whenever the stream says something changed.
  function listen() {
    if (!streaming || source) return;
    source = new EventSource(config.stream);
    source.onmessage = function () {
      if (timer !== null) ask();
    };
    source.onerror = function () {
      // For the rest of the page's life, the asks alone, as before.
      streaming = false;
      quiet();
      if (timer !== null) ask();
    };
  }

  function quiet() {
    if (source) source.close();
    source = null;
  }

  function ask(extra) {
    stop();
    timer = window.setTimeout(function () {
      ask();
    }, config.seconds * 1000);
    var sent = body(extra || {});
    fetch(config.url, { method: "POST", body: sent, credentials: "same-origin" })
      .then(function (response) {
        // 404: the object is gone (the answer says who deleted it); there is
        // nobody to ask about any more.
        if (response.status === 404) {
          stop();
          quiet();
        }
        return response.status === 200 || response.status === 404 ? response.json() : null;
      })
      .then(show)
      .catch(function () {});
  }

  // Editing while the form differs from what it was when the page opened:
  // changes undone by hand are no changes.
  function changed() {
    if (timer === null) return;
    var now = initial === null || serialized() !== initial;
    if (now === editing) return;
    editing = now;
    ask({});
  }

  form.addEventListener("input", changed);
  form.addEventListener("change", changed);
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible" && timer !== null) ask();
  });
  window.addEventListener("pageshow", function (event) {
    if (!event.persisted) return;
    ask();
    listen();
  });
  window.addEventListener("pagehide", function () {
    if (timer === null) return;
    stop();
    quiet();
    navigator.sendBeacon(config.url, body({ leaving: "1" }));
  });
  ask();
  listen();
})();
