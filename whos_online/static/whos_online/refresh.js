/* django-whos-online: refresh {% whos_online refresh=N %} widgets in place.
 * No dependencies. Asks for the fragment every N seconds while the page is
 * visible, sending the last ETag so an unchanged list costs a 304. A
 * site-wide widget also brings every {% online_count %} on the page up to
 * date. Without JavaScript the static widget simply stays. */
(function () {
  "use strict";

  function updateCounts(widget) {
    if (!widget || !widget.hasAttribute("data-whos-online-people")) return;
    document.querySelectorAll("[data-whos-online-count]").forEach(function (el) {
      var value = widget.getAttribute(
        "data-whos-online-" + el.getAttribute("data-whos-online-count"));
      if (value !== null && el.textContent !== value) el.textContent = value;
    });
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
            box.innerHTML = html;
            updateCounts(box.querySelector(".whos-online-widget"));
          });
        })
        .catch(function () {});
    }

    window.setInterval(refresh, seconds * 1000);
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "visible") refresh();
    });
  }

  document.querySelectorAll("[data-whos-online-refresh]").forEach(start);
})();
