/* django-whos-online: presence on pages whose templates the site does not
 * own ({% whos_online_decorate %}). No dependencies.
 *
 * Collects the paths of the page's links (those with text: an avatar's link
 * beside a name is left alone) and the room tokens of the elements marked
 * data-whos-online-viewing, and asks the server once for all of them. The
 * server resolves each path: a link to a user's profile gets their online
 * badge after it, a link to a page in a room gets "N viewing" after it (not
 * a link to this very page, whose widget says who is here), and a marked
 * element shows "N viewing" inside. Whatever it shows is the server's
 * escaped HTML. Asks again every N seconds while the page is visible (the
 * script's own interval, else that of a refreshing widget on the page), and
 * collects the links again each time, so links added since count too. */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script) return;
  var url = script.getAttribute("data-whos-online-decorate");
  var most = parseInt(script.getAttribute("data-whos-online-most"), 10) || 200;
  var seconds = parseInt(script.getAttribute("data-whos-online-seconds"), 10);
  if (!url) return;
  if (!(seconds > 0)) {
    var widget = document.querySelector("[data-whos-online-refresh][data-whos-online-seconds]");
    seconds = widget ? parseInt(widget.getAttribute("data-whos-online-seconds"), 10) : 0;
  }
  var DECORATION = "data-whos-online-decoration";

  function links() {
    return Array.prototype.filter.call(document.querySelectorAll("a[href]"), function (a) {
      return a.origin === window.location.origin && a.textContent.trim() !== "" &&
        !a.closest(".whos-online, [" + DECORATION + "]");
    });
  }

  /* Show `html` right after `link`, in the one decoration it has. */
  function after(link, html) {
    var next = link.nextElementSibling;
    var kept = next && next.hasAttribute(DECORATION) ? next : null;
    if (!html) {
      if (kept) kept.remove();
      return;
    }
    if (!kept) {
      kept = document.createElement("span");
      kept.setAttribute(DECORATION, "");
      link.after(kept);
    }
    if (kept.innerHTML !== html) kept.innerHTML = html;
  }

  function show(found, answer) {
    found.links.forEach(function (link) {
      var path = link.pathname;
      var html = (answer.badges || {})[path] || "";
      if (path !== window.location.pathname) html += (answer.viewing || {})[path] || "";
      after(link, html);
    });
    found.marks.forEach(function (mark) {
      var html = (answer.rooms || {})[mark.getAttribute("data-whos-online-viewing")];
      if (typeof html === "string" && mark.innerHTML !== html) mark.innerHTML = html;
    });
  }

  function ask() {
    if (document.visibilityState === "hidden") return;
    var found = { links: links(), marks: document.querySelectorAll("[data-whos-online-viewing]") };
    var body = new URLSearchParams();
    var paths = [];
    found.links.forEach(function (link) {
      if (paths.length < most && paths.indexOf(link.pathname) < 0) paths.push(link.pathname);
    });
    paths.forEach(function (path) { body.append("path", path); });
    found.marks.forEach(function (mark) {
      body.append("room", mark.getAttribute("data-whos-online-viewing"));
    });
    if (!paths.length && !found.marks.length) return;
    fetch(url, { method: "POST", credentials: "same-origin", cache: "no-store", body: body })
      .then(function (response) {
        return response.status === 200 ? response.json() : null;
      })
      .then(function (answer) {
        if (answer) show(found, answer);
      })
      .catch(function () {});
  }

  ask();
  if (seconds > 0) {
    window.setInterval(ask, seconds * 1000);
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "visible") ask();
    });
  }
})();
