/* django-whos-online: keep the staff page current without reloading it.
 * No dependencies. Every N seconds while the page is visible, fetches the
 * page again and swaps in its #content-main. It waits while something in
 * #content-main has focus, so a keyboard user never loses their place, and
 * leaves the page as it is when the answer is not the page (an error, or the
 * login page after the session ended). */
(function () {
  "use strict";
  var script = document.currentScript;
  var seconds = script ? parseInt(script.getAttribute("data-whos-online-seconds"), 10) : 0;
  if (!(seconds > 0)) return;

  function refresh() {
    var main = document.getElementById("content-main");
    if (!main || document.visibilityState === "hidden") return;
    if (main.contains(document.activeElement)) return;
    fetch(window.location.href, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) {
        return response.ok && !response.redirected ? response.text() : null;
      })
      .then(function (html) {
        if (html === null) return;
        var page = new DOMParser().parseFromString(html, "text/html");
        var fresh = page.getElementById("content-main");
        var current = document.getElementById("content-main");
        if (fresh && current && !current.contains(document.activeElement)) {
          current.replaceWith(document.adoptNode(fresh));
        }
      })
      .catch(function () {});
  }

  window.setInterval(refresh, seconds * 1000);
})();
