// Live updates only: the console works without this file. One EventSource (same origin, the session cookie);
// nothing is fetched from anywhere else, and no text from the server is ever inserted as HTML.
(function () {
  "use strict";
  // The policy editor's live check: the same form the Check button posts, sent while the person types; the
  // answer is data (JSON) and is shown as text only.
  var editor = document.getElementById("candidate-text");
  var live = document.getElementById("live-check");
  if (editor && live && window.fetch && window.FormData) {
    var timer = null, sent = 0;
    editor.addEventListener("input", function () {
      if (timer) clearTimeout(timer);
      timer = setTimeout(function () {
        var mine = ++sent;
        live.textContent = "checking…";
        fetch("/console/policy/check", {method: "POST", credentials: "same-origin",
                                        headers: {"x-console-live": "check"},
                                        body: new URLSearchParams(new FormData(editor.form))})
          .then(function (r) { return r.json(); })
          .then(function (data) {
            if (mine !== sent) return;  // an older answer after a newer question: dropped
            if (data.error) { live.textContent = data.error; return; }
            var problems = data.problems || [];
            live.textContent = problems.length ? "" : "No problems.";
            live.className = problems.length ? "live-check error" : "live-check ok";
            problems.forEach(function (p) {
              var line = document.createElement("span");
              line.className = "problem " + String(p.severity);
              line.textContent = "line " + p.line + ": " + p.severity + ": " + p.message;
              live.appendChild(line);
              live.appendChild(document.createElement("br"));
            });
          })
          .catch(function () { if (mine === sent) live.textContent = "the check did not answer"; });
      }, 400);
    });
  }
  if (!window.EventSource) return;
  var count = document.getElementById("inbox-count");
  var note = document.getElementById("live-note");
  var page = document.body.getAttribute("data-page") || "";
  var known = null;
  var typing = false;
  document.addEventListener("input", function () { typing = true; });

  function beep() {
    try {
      var Ctx = window.AudioContext || window.webkitAudioContext;
      if (!Ctx) return;
      var ctx = new Ctx(), osc = ctx.createOscillator(), gain = ctx.createGain();
      osc.frequency.value = 880; gain.gain.value = 0.08;
      osc.connect(gain); gain.connect(ctx.destination); osc.start(); osc.stop(ctx.currentTime + 0.25);
    } catch (e) { /* no sound: fine */ }
  }

  function tell(text) {
    note.textContent = text + " ";
    var a = document.createElement("a");
    a.href = "/console/inbox"; a.textContent = "Open the inbox";
    note.appendChild(a);
    note.hidden = false;
  }

  var source = new EventSource("/console/events");
  source.addEventListener("inbox", function (ev) {
    var parts = String(ev.data).split(" ");
    var n = parseInt(parts[0], 10) || 0, risky = parts[1] === "1";
    count.textContent = n ? String(n) : "";
    // the inbox reloads by itself only while it shows nothing to answer: a page with forms on it never moves
    // under the cursor (a new question listed first would put its Approve where another's was)
    var answering = document.querySelector("form[action^='/console/inbox/']") !== null;
    if (known !== null && n > known) {
      if (page.indexOf("/console/inbox") === 0 && !typing && !answering) { window.location.reload(); return; }
      tell(n + " question(s) wait for you.");
      if (risky) beep();
      if (window.Notification && Notification.permission === "granted") {
        new Notification("Sentinel", { body: n + " question(s) wait for you" });
      }
    } else if (known !== null && n < known && page.indexOf("/console/inbox") === 0 && !typing && !answering) {
      window.location.reload();
      return;
    }
    known = n;
  });
  // a page follows a kind of change by reloading when the count of such changes is not the one it was
  // rendered at: the stream says the count as it opens too, so a change in between is not missed
  function follow(kind, shows) {
    var seen = document.body.getAttribute("data-" + kind + "-seen");
    source.addEventListener(kind, function (ev) {
      if (!shows() || typing || String(ev.data) === seen) return;
      window.location.reload();
    });
  }
  follow("activity", function () { return page === "/console/activity"; });
  follow("agent", function () { return page.indexOf("/console/agent") === 0; });  // a run's new steps
  if (window.Notification && Notification.permission === "default") {
    document.addEventListener("click", function ask() {
      document.removeEventListener("click", ask);
      try { Notification.requestPermission(); } catch (e) { /* ignore */ }
    });
  }
})();
