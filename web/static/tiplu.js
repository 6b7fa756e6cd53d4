/* tiplu page helpers. They only collect taps and show what the server returned:
   no game rule is computed here (maal, penalties and settlements come from the
   scorer through the preview endpoint). Licence: AGPL-3.0-or-later. */
(function () {
  "use strict";

  function tokens(text) {
    return text.split(/[\s,;]+/).filter(Boolean);
  }

  /* --- card grids: a tap writes the card's name into the text field --- */
  function setupGrid(grid) {
    var input = document.getElementById(grid.dataset.target);
    if (!input) return;
    var multi = grid.dataset.multi === "true";
    var entry = grid.closest(".cards-entry");
    var chips = entry.querySelector(".chips");

    function render() {
      var list = tokens(input.value).map(function (t) { return t.toUpperCase(); });
      grid.querySelectorAll(".card").forEach(function (button) {
        var count = list.filter(function (t) { return t === button.dataset.card; }).length;
        button.classList.toggle("selected", count > 0);
        button.setAttribute("aria-pressed", count > 0 ? "true" : "false");
        button.querySelector(".n").textContent = multi && count > 1 ? "×" + count : "";
      });
      if (chips) {
        chips.textContent = "";
        tokens(input.value).forEach(function (token, index) {
          var chip = document.createElement("button");
          chip.type = "button";
          chip.textContent = token + " ✕";
          chip.setAttribute("aria-label", "remove " + token);
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

    grid.addEventListener("click", function (event) {
      var button = event.target.closest(".card");
      if (!button) return;
      var card = button.dataset.card;
      if (multi) {
        input.value = tokens(input.value).concat([card]).join(" ");
      } else {
        input.value = input.value.trim().toUpperCase() === card ? "" : card;
      }
      changed();
    });
    input.addEventListener("input", render);
    var clear = entry.querySelector(".clear-cards");
    if (clear) clear.addEventListener("click", function () { input.value = ""; changed(); });
    render();
  }

  /* --- new-session form: show only the chosen family's options --- */
  function setupSessionForm(form) {
    function update() {
      var chosen = form.querySelector("input[name=rules]:checked");
      form.querySelectorAll("fieldset.options").forEach(function (fs) {
        fs.hidden = chosen && fs.dataset.family !== chosen.value;
      });
    }
    form.addEventListener("change", update);
    update();
  }

  /* --- round form: ask the server for the scored round and show it --- */
  function setupPreview(form) {
    var url = form.dataset.preview;
    var panel = document.getElementById("preview");
    var errorBox = document.getElementById("preview-error");
    var netBody = document.getElementById("preview-net");
    var payList = document.getElementById("preview-payments");
    var timer = null;
    var sequence = 0;

    function show(data) {
      panel.hidden = false;
      form.querySelectorAll(".line-preview").forEach(function (el) { el.textContent = ""; });
      netBody.textContent = "";
      payList.textContent = "";
      if (data.error) {
        errorBox.hidden = false;
        errorBox.textContent = data.error;
        return;
      }
      errorBox.hidden = true;
      var round = data.round;
      Object.keys(round.players).forEach(function (name) {
        var line = round.players[name];
        var box = form.querySelector('.line-preview[data-player="' + CSS.escape(name) + '"]');
        if (box) {
          var parts = [];
          if (line.maal_items && line.maal_items.length) {
            parts = line.maal_items.map(function (item) {
              return item.label + " " + item.cards.join(" ") + " = " + item.points;
            });
          }
          if (line.penalty_detail && line.penalty_detail.unmatched) {
            parts.push("left out: " + line.penalty_detail.unmatched.join(" "));
          }
          var value = line.maal !== undefined ? line.maal : line.penalty;
          var strong = document.createElement("span");
          strong.className = "points";
          strong.textContent = "= " + value;
          box.textContent = parts.join(" · ") + " ";
          box.appendChild(strong);
        }
        var row = document.createElement("tr");
        var th = document.createElement("th");
        th.textContent = name;
        var td = document.createElement("td");
        td.className = "num";
        var net = round.net[name];
        td.textContent = (net > 0 ? "+" : "") + net;
        row.appendChild(th);
        row.appendChild(td);
        netBody.appendChild(row);
      });
      round.payments.forEach(function (p) {
        var li = document.createElement("li");
        li.textContent = p.from + " → " + p.to + ": " + p.points + " (" + p.reason + ")";
        payList.appendChild(li);
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
    form.addEventListener("submit", function () {
      var button = document.getElementById("save-round");
      if (button) setTimeout(function () { button.disabled = true; }, 0);
    });
    schedule();
  }

  /* --- ledger chart: totals per player by round (Chart.js, served locally) --- */
  var PALETTE = ["#0b6e4f", "#c0262d", "#1f5fbf", "#d98e04", "#7b3fa0", "#2a9d8f"];
  function setupChart(canvas) {
    var source = document.getElementById("chart-data");
    if (!source || typeof window.Chart === "undefined") return;
    var data = JSON.parse(source.textContent);
    data.datasets.forEach(function (set, i) {
      set.borderColor = PALETTE[i % PALETTE.length];
      set.backgroundColor = PALETTE[i % PALETTE.length];
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

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll(".card-grid").forEach(setupGrid);
    var sessionForm = document.querySelector(".session-form");
    if (sessionForm) setupSessionForm(sessionForm);
    var roundForm = document.getElementById("round-form");
    if (roundForm) setupPreview(roundForm);
    var canvas = document.getElementById("totals-chart");
    if (canvas) setupChart(canvas);
    document.querySelectorAll("[data-confirm]").forEach(setupConfirm);
  });
})();
