// smllm serve: the one script. It only reads: a running session's page asks the
// viewer for the lines recorded since it was drawn and appends them. Everything it
// inserts was rendered (and escaped) by the server's templates.
"use strict";
(function () {
  var PERIOD_MS = 2000;
  var list = document.getElementById("timeline");
  if (!list || document.body.dataset.live !== "1") { return; }
  var note = document.getElementById("live-note");
  var status = document.getElementById("status");

  function replace(id, html) {
    var el = document.getElementById(id);
    if (el && typeof html === "string") { el.innerHTML = html; }
  }

  function poll() {
    var url = list.dataset.liveUrl + "?stream=" + encodeURIComponent(list.dataset.stream) +
      "&after=" + encodeURIComponent(list.dataset.after) + "&tail=" + list.dataset.tail;
    fetch(url, {credentials: "same-origin", cache: "no-store"}).then(function (r) {
      if (!r.ok) { throw new Error("HTTP " + r.status); }
      return r.json();
    }).then(function (data) {
      var before = Number(list.dataset.after);
      replace("summary", data.summary);
      replace("effects", data.effects);
      var count = document.getElementById("stream-lines");
      if (count) { count.textContent = String(data.lines); }
      if (list.dataset.tail === "1") {
        if (data.after > before) { list.insertAdjacentHTML("beforeend", data.rows); }
        list.dataset.after = String(data.after);
        var end = document.getElementById("page-end");
        if (end) { end.textContent = String(data.after); }
      } else if (data.lines > before && note) {
        note.hidden = false;
        note.textContent = (data.lines - before) + " more lines recorded; see the last page.";
      }
      if (!data.live && data.scanning === null) {
        document.body.dataset.live = "0";
        if (status) { status.textContent = "ended"; status.className = "status ended"; }
        return;
      }
      var behind = data.scanning !== null || (data.after < data.lines && list.dataset.tail === "1");
      window.setTimeout(poll, behind ? 50 : PERIOD_MS);
    }).catch(function (err) {
      if (note) { note.hidden = false; note.textContent = "live updates stopped: " + err.message; }
    });
  }
  window.setTimeout(poll, document.getElementById("scanning") ? 50 : PERIOD_MS);
}());
