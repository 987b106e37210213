/* django-whos-online: count visitors of pages served from a cache or a CDN.
 * No dependencies. Tells the server the visitor is here, at most once per
 * guard period per page address (remembered in localStorage), with
 * navigator.sendBeacon, or fetch where that is missing. The server records
 * the caller exactly as its middleware would, guard cookie included. */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script) return;
  var url = script.getAttribute("data-whos-online-beacon");
  var seconds = parseInt(script.getAttribute("data-whos-online-seconds"), 10);
  if (!url) return;

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
