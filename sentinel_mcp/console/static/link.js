// The owner's one-time sign-in link (login_once.html): its token is after "#", which the browser never sends
// (no server log, no Referer). Put it into the form the button sends, and take it off the address (history);
// a next link pasted onto this page differs only after "#", which loads no page: taken the same way.
"use strict";
(function () {
  function take() {
    var code = window.location.hash.slice(1);
    var field = document.getElementById("link-token");
    if (field && code) field.value = code;
    if (window.location.hash) window.history.replaceState(null, "", window.location.pathname);
  }
  take();
  window.addEventListener("hashchange", take);
})();
