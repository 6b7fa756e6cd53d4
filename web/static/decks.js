/* tiplu decks: while a deck is being learnt in the background, poll its status and move the
   progress bar; when it is done, load the page again to show the new deck or version.
   Licence: AGPL-3.0-or-later. */
(function () {
  "use strict";
  document.addEventListener("DOMContentLoaded", function () {
    var box = document.getElementById("deck-job");
    if (!box || box.dataset.state !== "running") return;
    var bar = document.getElementById("deck-progress"), message = document.getElementById("deck-job-message");
    function poll() {
      fetch(box.dataset.status, { credentials: "same-origin", headers: { "Accept": "application/json" } })
        .then(function (response) { return response.json(); })
        .then(function (status) {
          bar.value = status.progress;
          message.textContent = status.message;
          if (status.state === "running") { setTimeout(poll, 1000); return; }
          window.location.reload();
        })
        .catch(function () { setTimeout(poll, 3000); });
    }
    poll();
  });
})();
