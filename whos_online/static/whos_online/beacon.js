/* django-whos-online: count visitors of pages served from a cache or a CDN.
 * No dependencies. Tells the server the visitor is here; the server records
 * the caller exactly as its middleware would, guard cookie included.
 *
 * On a page with widgets, the cached widgets are out of date: the beacon is
 * sent with every page load and asks for the widgets as they are now
 * (widgets=1); its answer is handed to refresh.js (loaded with this script)
 * in a "whos-online:widgets" event, so the page is up to date at once with
 * no second request. On a page without widgets, it is sent at most once per
 * guard period per page address (remembered in localStorage), with
 * navigator.sendBeacon, or fetch where that is missing. */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script) return;
  var url = script.getAttribute("data-whos-online-beacon");
  var seconds = parseInt(script.getAttribute("data-whos-online-seconds"), 10);
  if (!url) return;

  if (document.querySelector(".whos-online[data-whos-online-room]")) {
    fetch(url, {
      method: "POST",
      credentials: "same-origin",
      cache: "no-store",
      body: new URLSearchParams({ widgets: "1" })
    })
      .then(function (response) {
        return response.status === 200 ? response.json() : null;
      })
      .then(function (answer) {
        if (!answer || !answer.widgets) return;
        document.dispatchEvent(
          new CustomEvent("whos-online:widgets", { detail: answer.widgets }));
      })
      .catch(function () {});
    return;
  }

  var memory = "whos_online_beacon:" + url;
  var now = Date.now();
  try {
    var last = parseInt(window.localStorage.getItem(memory), 10);
    if (seconds > 0 && last > now - seconds * 1000 && last <= now) return;
    window.localStorage.setItem(memory, String(now));
  } catch (e) {
    /* No storage (a private window, a policy): send, and rely on the guard. */
  }
  if (navigator.sendBeacon && navigator.sendBeacon(url)) return;
  fetch(url, { method: "POST", credentials: "same-origin", keepalive: true })
    .catch(function () {});
})();
