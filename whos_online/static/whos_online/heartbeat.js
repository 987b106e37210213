/* django-whos-online: keep a logged-in user's status exact.
 * No dependencies. POSTs to the heartbeat endpoint every N seconds while the
 * page is visible (Page Visibility API), and at once when it becomes visible
 * again. The server rate-limits heartbeats per user. */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script) return;
  var url = script.getAttribute("data-whos-online-heartbeat");
  var seconds = parseInt(script.getAttribute("data-whos-online-seconds"), 10);
  var csrf = script.getAttribute("data-whos-online-csrf") || "";
  if (!url || !(seconds > 0)) return;

  function ping() {
    if (document.visibilityState !== "visible") return;
    fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrf },
      keepalive: true,
    }).catch(function () {});
  }

  window.setInterval(ping, seconds * 1000);
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") ping();
  });
})();
