/* django-whos-online: who else is editing this, on a Django admin change form.
 * No dependencies. Every few seconds while the form is open, and at once when
 * it is changed or shown again, POSTs to the object's presence URL whether the
 * form has unsaved changes, and shows the answer: the other staff who have
 * the object open and whether someone saved it since this form was opened
 * (or since the save the page tells of already, when it refused to save).
 * As the page closes, says so, so that the others see it gone at once. */
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

  function body(extra) {
    var sent = new FormData();
    var token = form.querySelector("[name=csrfmiddlewaretoken]");
    sent.append("csrfmiddlewaretoken", token ? token.value : "");
    sent.append("opened", String(config.after));
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

  function ask() {
    stop();
    timer = window.setTimeout(ask, config.seconds * 1000);
    fetch(config.url, { method: "POST", body: body({}), credentials: "same-origin" })
      .then(function (response) {
        // 404: the object is gone (the answer says who deleted it); there is
        // nobody to ask about any more.
        if (response.status === 404) stop();
        return response.status === 200 || response.status === 404 ? response.json() : null;
      })
      .then(show)
      .catch(function () {});
  }

  function changed() {
    if (editing || timer === null) return;
    editing = true;
    ask();
  }

  form.addEventListener("input", changed);
  form.addEventListener("change", changed);
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible" && timer !== null) ask();
  });
  window.addEventListener("pageshow", function (event) {
    if (event.persisted) ask();
  });
  window.addEventListener("pagehide", function () {
    if (timer === null) return;
    stop();
    navigator.sendBeacon(config.url, body({ leaving: "1" }));
  });
  ask();
})();
