/* Apply the dark/light choice before the page paints (no flash); without a choice the phone's setting rules.
   Licence: AGPL-3.0-or-later. */
(function () {
  "use strict";
  try {
    var chosen = window.localStorage.getItem("tiplu-theme");
    if (chosen === "dark" || chosen === "light") document.documentElement.dataset.theme = chosen;
  } catch (e) { /* storage may be off; the phone's setting still applies */ }
})();
