/* tiplu page helpers. They only collect taps and show what the server returned:
   no game rule is computed here (maal, penalties and settlements come from the
   scorer through the preview endpoint). Licence: AGPL-3.0-or-later. */
(function () {
  "use strict";

  function tokens(text) {
    return text.split(/[\s,;]+/).filter(Boolean);
  }

  /* --- card pickers: a rank, then a suit, writes the card's name into the text field --- */
  function setupGrid(grid) {
    var input = document.getElementById(grid.dataset.target);
    if (!input) return;
    var multi = grid.dataset.multi === "true";
    var entry = grid.closest(".cards-entry");
    var chips = entry.querySelector(".chips");
    var rank = null;

    function press(button, on) {
      button.classList.toggle("selected", on);
      button.setAttribute("aria-pressed", on ? "true" : "false");
    }

    function render() {
      var list = tokens(input.value).map(function (t) { return t.toUpperCase(); });
      var single = !multi && list.length === 1 ? list[0] : null;
      grid.querySelectorAll(".rank").forEach(function (button) {
        press(button, rank !== null ? button.dataset.rank === rank
                                    : single !== null && single.slice(0, -1) === button.dataset.rank);
      });
      grid.querySelectorAll(".suit").forEach(function (button) {
        press(button, rank === null && single !== null && single !== "JOKER" && single.slice(-1) === button.dataset.suit);
      });
      grid.querySelectorAll(".card").forEach(function (button) {
        var count = list.filter(function (t) { return t === button.dataset.card; }).length;
        press(button, count > 0);
        var n = button.querySelector(".n");
        if (n) n.textContent = multi && count > 1 ? "×" + count : "";
      });
      if (chips) {
        chips.textContent = "";
        tokens(input.value).forEach(function (token, index) {
          var chip = document.createElement("button");
          chip.type = "button";
          chip.textContent = token + " ✕";
          chip.setAttribute("aria-label", (chips.dataset.remove || "remove %s").replace("%s", token));
          chip.addEventListener("click", function () {
            var now = tokens(input.value);
            now.splice(index, 1);
            input.value = now.join(" ");
            changed();
          });
          chips.appendChild(chip);
        });
      }
    }

    function changed() {
      render();
      input.dispatchEvent(new Event("change", { bubbles: true }));
    }

    function pick(card) {
      if (multi) {
        input.value = tokens(input.value).concat([card]).join(" ");
      } else {
        input.value = input.value.trim().toUpperCase() === card ? "" : card;
      }
      rank = null;
      changed();
    }

    grid.addEventListener("click", function (event) {
      var button = event.target.closest("button");
      if (!button) return;
      if (button.dataset.rank) {
        rank = rank === button.dataset.rank ? null : button.dataset.rank;
        render();
      } else if (button.dataset.suit) {
        var current = tokens(input.value);
        if (rank !== null) {
          pick(rank + button.dataset.suit);
        } else if (!multi && current.length === 1 && current[0].toUpperCase() !== "JOKER") {
          pick(current[0].toUpperCase().slice(0, -1) + button.dataset.suit);
        }
      } else if (button.dataset.card) {
        pick(button.dataset.card);
      }
    });
    input.addEventListener("input", function () { rank = null; render(); });
    var clear = entry.querySelector(".clear-cards");
    if (clear) clear.addEventListener("click", function () { input.value = ""; changed(); });
    render();
  }

  /* --- round form rows: the winner's row, the seen switch, the maal stepper --- */
  function setupRows(form) {
    var numbers = Array.prototype.slice.call(form.querySelectorAll(".points-input"));

    function markWinner() {
      form.querySelectorAll(".player-row").forEach(function (row) {
        var radio = row.querySelector('input[name="winner"]');
        row.classList.toggle("winner", radio.checked);
        var seen = row.querySelector('input[name$="_seen"]');
        if (radio.checked && seen && !seen.checked) {
          seen.checked = true;
          seen.dispatchEvent(new Event("change", { bubbles: true }));
        }
      });
      var nobody = form.querySelector(".no-winner input");
      if (nobody && form.querySelector('input[name="winner"]:checked')) nobody.checked = false;
    }
    form.querySelectorAll('input[name="winner"]').forEach(function (radio) {
      radio.addEventListener("change", markWinner);
    });

    form.querySelectorAll(".stepper").forEach(function (stepper) {
      var input = stepper.querySelector("input");
      stepper.querySelectorAll(".step").forEach(function (button) {
        button.addEventListener("click", function () {
          var value = parseInt(input.value || "0", 10);
          if (isNaN(value)) value = 0;
          input.value = Math.max(0, value + parseInt(button.dataset.step, 10));
          input.dispatchEvent(new Event("input", { bubbles: true }));
        });
      });
    });

    /* Entering a player's maal ticks "seen" (only a player who has seen counts maal): one tap fewer a
       player, the same whether the maal is typed, its cards tapped or photographed. The switch can
       still be unticked after; a later change of the maal does not tick it again. */
    form.querySelectorAll(".player-row").forEach(function (row) {
      var seen = row.querySelector('input[name$="_seen"]');
      var seat = row.dataset.seat;
      var number = form.elements["p" + seat + "_maal"];
      var cards = form.elements["p" + seat + "_cards"];
      if (!seen || !number) return;
      var ticked = false;
      function entered() {
        return parseInt(number.value, 10) > 0 || (cards && tokens(cards.value).length > 0);
      }
      function tick() {
        if (ticked || seen.checked || !entered()) return;
        ticked = true;
        seen.checked = true;
        seen.dispatchEvent(new Event("change", { bubbles: true }));
      }
      number.addEventListener("input", tick);
      if (cards) { cards.addEventListener("input", tick); cards.addEventListener("change", tick); }
    });

    /* The keyboard's "next" key moves to the next player's points instead of saving half a round. */
    numbers.forEach(function (input, index) {
      input.addEventListener("keydown", function (event) {
        if (event.key !== "Enter") return;
        event.preventDefault();
        var next = numbers[index + 1];
        if (next) next.focus(); else input.blur();
      });
    });

    form.addEventListener("submit", function (event) {
      var nobody = form.querySelector(".no-winner input");
      if (form.querySelector('input[name="winner"]:checked') || (nobody && nobody.checked)) return;
      if (window.confirm(form.dataset.confirmNoWinner)) {
        if (nobody) nobody.checked = true;
      } else {
        event.preventDefault();
        var first = form.querySelector('input[name="winner"]');
        if (first) first.closest(".player-row").scrollIntoView({ block: "center" });
      }
    });
    markWinner();
  }

  /* --- new-session form: the chosen family's house rules, and as many seats as its player limit --- */
  function setupSessionForm(form) {
    function update() {
      var chosen = form.querySelector("input[name=rules]:checked");
      var family = chosen ? chosen.value : "";
      form.querySelectorAll("fieldset.options, .seat-limit").forEach(function (el) {
        el.hidden = el.dataset.family !== family;
      });
      var limit = form.querySelector('select[name="opt_' + family + '_players_max"]');
      var high = limit ? parseInt(limit.value, 10) : 6;
      var note = form.querySelector('.seat-limit[data-family="' + family + '"]');
      if (note && limit) {
        note.firstChild.textContent = note.firstChild.textContent.replace(/\d+(\D+)\d+/, note.dataset.low + "$1" + high);
      }
      form.querySelectorAll(".player-name[data-seat]").forEach(function (label) {
        var input = label.querySelector("input");
        label.hidden = parseInt(label.dataset.seat, 10) >= high && !input.value;
      });
    }
    /* Two decks deal fewer cards: a hand size left at its default follows the tick (the sizes come
       from the rule registry through the page; nothing is decided here). */
    form.addEventListener("change", function (event) {
      var box = event.target;
      if (!box.name || !/_two_decks$/.test(box.name)) return;
      var size = form.querySelector('select[name="' + box.name.replace(/two_decks$/, "hand_size") + '"]');
      if (!size || !size.dataset.twoDecks) return;
      if (box.checked && size.value === size.dataset.default) size.value = size.dataset.twoDecks;
      else if (!box.checked && size.value === size.dataset.twoDecks) size.value = size.dataset.default;
    });
    form.addEventListener("change", update);
    update();
  }

  /* --- round form: ask the server for the scored round and show it --- */
  function setupPreview(form) {
    var url = form.dataset.preview;
    var netBody = document.getElementById("preview-net");
    var timer = null;
    var sequence = 0;

    function show(data) {
      form.querySelectorAll(".line-preview").forEach(function (el) { el.textContent = ""; });
      form.querySelectorAll(".points-input.counted").forEach(function (el) {
        el.classList.remove("counted");
        el.placeholder = "0";
      });
      netBody.querySelectorAll(".points").forEach(function (el) { el.textContent = "–"; });
      /* A round that cannot be scored yet shows "–"; saving explains what to fix, under the field. */
      if (data.error) return;
      var round = data.round;
      Object.keys(round.players).forEach(function (name) {
        var line = round.players[name];
        var box = form.querySelector('.line-preview[data-player="' + CSS.escape(name) + '"]');
        if (box && ((line.maal_items && line.maal_items.length) || line.penalty_detail)) {
          var parts = [];
          if (line.maal_items && line.maal_items.length) {
            parts = line.maal_items.map(function (item) {
              return item.label + " " + item.cards.join(" ") + " = " + item.points;
            });
          }
          if (line.penalty_detail && line.penalty_detail.unmatched) {
            parts.push((form.dataset.msgLeftOut || "left out") + ": " + line.penalty_detail.unmatched.join(" "));
          }
          var value = line.maal !== undefined ? line.maal : line.penalty;
          /* Cards given: the number box shows what the scorer counted from them, not 0. */
          var row = box.closest(".player-row");
          var counted = row && row.querySelector(".points-input");
          if (counted && line.cards && !counted.value) {
            counted.placeholder = String(value);
            counted.classList.add("counted");
          }
          var strong = document.createElement("span");
          strong.className = "points";
          strong.textContent = "= " + value;
          box.textContent = parts.join(" · ") + " ";
          box.appendChild(strong);
        }
        var cell = netBody.querySelector('li[data-player="' + CSS.escape(name) + '"] .points');
        if (cell) {
          var net = round.net[name];
          cell.textContent = (net > 0 ? "+" : "") + net;
          cell.parentNode.classList.toggle("up", net > 0);
          cell.parentNode.classList.toggle("down", net < 0);
        }
      });
    }

    function request() {
      var mine = ++sequence;
      fetch(url, { method: "POST", body: new FormData(form), credentials: "same-origin",
                   headers: { "Accept": "application/json" } })
        .then(function (r) { return r.json(); })
        .then(function (data) { if (mine === sequence) show(data); })
        .catch(function () { /* the preview is optional; saving still works */ });
    }

    function schedule() {
      clearTimeout(timer);
      timer = setTimeout(request, 250);
    }
    form.addEventListener("change", schedule);
    form.addEventListener("input", schedule);
    form.addEventListener("submit", function (event) {
      if (event.defaultPrevented) return;
      var button = document.getElementById("save-round");
      if (button) setTimeout(function () { button.disabled = true; }, 0);
    });
    schedule();
  }

  /* --- ledger chart: totals per player by round (Chart.js, served locally) --- */
  var PALETTE = ["#0b6e4f", "#c0262d", "#1f5fbf", "#d98e04", "#7b3fa0", "#2a9d8f"];
  var DARK_PALETTE = ["#4cc497", "#ff7b7f", "#7aa7ff", "#f2b84b", "#c58af0", "#5fd3c5"];
  function setupChart(canvas) {
    var source = document.getElementById("chart-data");
    if (!source || typeof window.Chart === "undefined") return;
    var data = JSON.parse(source.textContent);
    var style = getComputedStyle(document.body);
    var dark = style.colorScheme === "dark" || getComputedStyle(document.documentElement).colorScheme === "dark";
    var palette = dark ? DARK_PALETTE : PALETTE;
    window.Chart.defaults.color = style.color;
    window.Chart.defaults.borderColor = getComputedStyle(document.documentElement).getPropertyValue("--line").trim();
    data.datasets.forEach(function (set, i) {
      set.borderColor = palette[i % palette.length];
      set.backgroundColor = palette[i % palette.length];
      set.tension = 0.15;
      set.pointRadius = 3;
    });
    new window.Chart(canvas, {
      type: "line",
      data: data,
      options: { responsive: true, maintainAspectRatio: false, animation: false,
                 plugins: { legend: { position: "bottom" } },
                 scales: { y: { ticks: { precision: 0 } } } }
    });
  }

  function setupConfirm(button) {
    button.addEventListener("click", function (event) {
      if (!window.confirm(button.dataset.confirm)) event.preventDefault();
    });
  }

  /* --- dark or light: the toggle overrides the phone's setting and is remembered --- */
  function setupTheme(button) {
    var root = document.documentElement;
    function dark() {
      return root.dataset.theme ? root.dataset.theme === "dark"
                                : window.matchMedia("(prefers-color-scheme: dark)").matches;
    }
    function label() {
      button.setAttribute("aria-pressed", dark() ? "true" : "false");
      button.title = dark() ? button.dataset.labelLight : button.dataset.labelDark;
    }
    button.addEventListener("click", function () {
      root.dataset.theme = dark() ? "light" : "dark";
      try { window.localStorage.setItem("tiplu-theme", root.dataset.theme); } catch (e) { /* not kept */ }
      label();
    });
    label();
  }

  /* --- installable: the service worker keeps the page shell for when the Wi-Fi drops --- */
  function registerWorker() {
    var url = document.body.dataset.worker;
    if (url && "serviceWorker" in navigator && window.isSecureContext) {
      navigator.serviceWorker.register(url, { scope: "/" }).catch(function () { /* pages still work online */ });
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    var toggle = document.getElementById("theme-toggle");
    if (toggle) setupTheme(toggle);
    registerWorker();
    document.querySelectorAll(".card-grid").forEach(setupGrid);
    var sessionForm = document.querySelector(".session-form");
    if (sessionForm) setupSessionForm(sessionForm);
    var roundForm = document.getElementById("round-form");
    if (roundForm) { setupRows(roundForm); setupPreview(roundForm); }
    var canvas = document.getElementById("totals-chart");
    if (canvas) setupChart(canvas);
    document.querySelectorAll("[data-confirm]").forEach(setupConfirm);
  });
})();
