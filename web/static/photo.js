/* tiplu photographs: upload a photo (or take one with the table camera), draw the
   cards the server found over it, ask about the doubtful cards first (each with its
   corner zoomed from the photo and its alternatives as big buttons: one tap to confirm
   or change), let a tap fix any other card, show the scorer's answer and the doubts
   the server found, and write the cards into the form. No game rule is computed here:
   the doubts come from the server. Licence: AGPL-3.0-or-later. */
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  /* Doubts that frame a place a card may be missing from (vision.doubts.PLACE_KINDS): a check sends them back. */
  var PLACE_KINDS = ["faint_card", "stacked_copy"];
  /* The reading's doubts a hand's check sends back and answers again, with the rest of its doubts
     (vision.score.judge_cards, as tiplu score gives them): the page then shows the check's. */
  var SENT_BACK = PLACE_KINDS.concat(["short_meld"]);
  var OUTLINE_COLOURS = ["#1f5fbf", "#7b3fa0", "#0b6e4f", "#c0262d", "#2a9d8f", "#d98e04", "#444"];

  function el(id) { return document.getElementById(id); }

  function setup(panel) {
    var text = panel.dataset;
    var status = el("photo-status"), body = el("photo-body"), image = el("photo-image");
    var overlay = el("photo-overlay"), list = el("photo-cards"), answerBox = el("photo-answer");
    var removeButton = el("photo-remove"), live = el("camera-live"), view = el("camera-view");
    var doubtBox = el("photo-doubts");
    var state = { target: null, purpose: "hand", seat: "", photo: null, cards: [], selected: -1,
                  outline: [], previewing: false, sequence: 0, notes: [], answerDoubts: [], added: 0,
                  answered: false };

    function say(message) { status.textContent = message || ""; }

    function open(tools) {
      state.target = tools.dataset.target;
      state.purpose = tools.dataset.purpose;
      state.seat = tools.dataset.seat;
      state.photo = null;
      state.cards = [];
      state.notes = [];
      state.answerDoubts = [];
      state.answered = false;
      state.added = 0;
      state.selected = -1;
      panel.hidden = false;
      body.hidden = true;
      live.hidden = true;
      answerBox.textContent = "";
      say("");
      document.body.classList.add("photo-open");
      panel.scrollTop = 0;
    }

    function close() {
      state.previewing = false;
      panel.hidden = true;
      document.body.classList.remove("photo-open");
    }

    function send(url, options, done) {
      options.credentials = "same-origin";
      options.headers = Object.assign({ "Accept": "application/json", "X-CSRFToken": text.csrf },
                                      options.headers || {});
      fetch(url, options).then(function (response) {
        return response.json().catch(function () {
          return { error: text.msgServer + " (" + response.status + ")" };
        });
      }).then(function (data) {
        if (data.error) { say(data.error); return; }
        done(data);
      }).catch(function () { say(text.msgOffline); });
    }

    function photoForm() {
      var form = new FormData();
      form.append("purpose", state.purpose);
      form.append("seat", state.seat || "");
      form.append("csrf_token", text.csrf);
      return form;
    }

    function upload(file) {
      say(text.msgReading);
      var form = photoForm();
      form.append("image", file);
      send(text.upload, { method: "POST", body: form }, shown);
    }

    function shown(data) {
      state.previewing = false;
      live.hidden = true;
      state.photo = data.photo;
      var groupOf = {};
      (data.reading.groups || []).forEach(function (group, g) {
        group.forEach(function (index) { groupOf[index] = g; });
      });
      state.grouped = (data.reading.groups || []).length > 0;
      var corners = data.reading.corners || [];
      state.cards = data.reading.cards.map(function (c, index) {
        var corner = (c.corners || []).map(function (k) { return corners[k]; }).filter(Boolean)
          .sort(function (a, b) { return b.confidence - a.confidence; })[0];
        return { card: c.card, box: c.box, corner: corner ? corner.box : c.box, uncertain: !!c.uncertain,
                 fixed: false, confidence: c.confidence, source: index,
                 alternatives: (c.alternatives || []).map(function (a) { return a.card; }),
                 group: groupOf[index] === undefined ? null : groupOf[index] };
      });
      state.notes = data.reading.doubts || [];
      state.answerDoubts = [];
      state.answered = false;
      state.added = 0;
      state.selected = -1;
      image.src = data.photo.url;
      overlay.setAttribute("viewBox", "0 0 " + data.photo.width + " " + data.photo.height);
      body.hidden = false;
      say(text.msgFound.replace("%n", state.cards.length) + (data.notice ? " " + data.notice : ""));
      render();
      check();
    }

    function svg(name, attributes) {
      var node = document.createElementNS(SVG, name);
      Object.keys(attributes).forEach(function (key) { node.setAttribute(key, attributes[key]); });
      return node;
    }

    function select(index) {
      state.selected = state.selected === index ? -1 : index;
      render();
    }

    function doubtful(card) { return card.uncertain && !card.fixed; }

    /* The reading's doubts still open: none of their cards checked since (a meld of two
       also closes once a card was added). */
    function readingNotes() {
      return state.notes.filter(function (note) {
        if (note.kind === "short_meld" && state.added > 0) return false;
        return !note.cards.some(function (i) { return !state.cards[i] || state.cards[i].fixed; });
      });
    }

    /* The doubts shown: the reading's still open, then the last check's. A hand's check
       answers the ones it was sent again (SENT_BACK), so those are shown once, in its words. */
    function openNotes() {
      var fromReading = readingNotes().filter(function (note) {
        return !state.answered || SENT_BACK.indexOf(note.kind) < 0;
      });
      return fromReading.concat(state.answerDoubts);
    }

    function zoom(canvas, box) {
      if (!image.complete || !image.naturalWidth) {
        image.addEventListener("load", function () { zoom(canvas, box); }, { once: true });
        return;
      }
      var w = box[2] - box[0], h = box[3] - box[1], grow = 0.35;
      var x = Math.max(0, box[0] - grow * w), y = Math.max(0, box[1] - grow * h);
      var cw = Math.min(image.naturalWidth - x, w * (1 + 2 * grow));
      var ch = Math.min(image.naturalHeight - y, h * (1 + 2 * grow));
      var scale = Math.min(canvas.width / cw, canvas.height / ch);
      var context = canvas.getContext("2d");
      context.fillStyle = "#fff";
      context.fillRect(0, 0, canvas.width, canvas.height);
      context.drawImage(image, x, y, cw, ch, (canvas.width - cw * scale) / 2, (canvas.height - ch * scale) / 2,
                        cw * scale, ch * scale);
    }

    function choose(index, name) {
      var card = state.cards[index];
      card.card = name;
      card.fixed = true;
      card.uncertain = false;
      if (state.selected === index) state.selected = -1;
      render();
      check();
    }

    function choice(index, name, label, className) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "doubt-choice " + className;
      button.dataset.index = index;
      button.dataset.card = name;
      button.textContent = label;
      button.addEventListener("click", function () { choose(index, name); });
      return button;
    }

    /* Doubtful cards first: the ones a verdict hangs on, then the least sure. */
    function renderDoubts() {
      doubtBox.textContent = "";
      var notes = openNotes();
      var faint = notes.filter(function (note) { return note.kind === "faint_card"; }).length;
      notes.forEach(function (note) {
        if (note.kind === "faint_card") return;
        line(doubtBox, note.message, "doubt-note " + note.kind);
        if (note.kind === "verdict_hinges" && !note.cards.length && note.card) {
          var add = document.createElement("button");  /* a missed card the verdict hangs on: one tap adds it */
          add.type = "button";
          add.className = "doubt-choice add";
          add.dataset.card = note.card;
          add.textContent = "+ " + note.card;
          add.addEventListener("click", function () { state.selected = -1; fix(note.card); });
          doubtBox.appendChild(add);
        }
      });
      if (faint) line(doubtBox, text.msgFaint.replace("%n", faint), "doubt-note faint_card");
      var hinges = {};
      state.answerDoubts.forEach(function (d) { if (d.kind === "verdict_hinges") hinges[d.cards[0]] = true; });
      var order = state.cards.map(function (c, i) { return i; }).filter(function (i) { return doubtful(state.cards[i]); });
      order.sort(function (a, b) {
        return (hinges[b] ? 1 : 0) - (hinges[a] ? 1 : 0) || state.cards[a].confidence - state.cards[b].confidence;
      });
      if (!order.length) {
        if (state.cards.length) line(doubtBox, text.msgAllSure, "muted doubt-none");
        return;
      }
      line(doubtBox, text.msgCheckFirst.replace("%n", order.length), "doubt-head");
      order.forEach(function (index) {
        var card = state.cards[index];
        var row = document.createElement("div");
        row.className = "doubt-card" + (hinges[index] ? " hinge" : "");
        row.dataset.index = index;
        var canvas = document.createElement("canvas");
        canvas.width = 96;
        canvas.height = 128;
        canvas.className = "doubt-zoom";
        canvas.setAttribute("role", "img");
        canvas.setAttribute("aria-label", text.msgZoom.replace("%s", card.card));
        canvas.addEventListener("click", function () { select(index); });
        zoom(canvas, card.corner || card.box);
        row.appendChild(canvas);
        var choices = document.createElement("div");
        choices.className = "doubt-choices";
        choices.appendChild(choice(index, card.card, "\u2713 " + card.card, "confirm"));
        card.alternatives.forEach(function (name) { choices.appendChild(choice(index, name, name, "instead")); });
        var other = document.createElement("button");
        other.type = "button";
        other.className = "doubt-choice other";
        other.textContent = text.msgOther;
        other.addEventListener("click", function () {
          state.selected = index;
          render();
          el("photo-grid").scrollIntoView({ block: "center" });
        });
        choices.appendChild(other);
        row.appendChild(choices);
        doubtBox.appendChild(row);
      });
    }

    function render() {
      var size = state.photo ? Math.max(state.photo.width, state.photo.height) : 1000;
      var stroke = Math.max(2, size / 300), font = Math.max(12, size / 35);
      overlay.textContent = "";
      state.outline.forEach(function (group, g) {
        var boxes = group.map(function (i) { return state.cards[i] && state.cards[i].box; }).filter(Boolean);
        if (!boxes.length) return;
        var pad = stroke * 3;
        var x1 = Math.min.apply(null, boxes.map(function (b) { return b[0]; })) - pad;
        var y1 = Math.min.apply(null, boxes.map(function (b) { return b[1]; })) - pad;
        var x2 = Math.max.apply(null, boxes.map(function (b) { return b[2]; })) + pad;
        var y2 = Math.max.apply(null, boxes.map(function (b) { return b[3]; })) + pad;
        overlay.appendChild(svg("rect", { x: x1, y: y1, width: x2 - x1, height: y2 - y1, rx: stroke * 3,
          fill: "none", stroke: OUTLINE_COLOURS[g % OUTLINE_COLOURS.length], "stroke-width": stroke,
          "stroke-dasharray": stroke * 4 + " " + stroke * 2, "class": "meld-outline" }));
      });
      openNotes().forEach(function (note) {
        if (!note.box) return;
        var b = note.box, pad = stroke * 4;
        overlay.appendChild(svg("rect", { x: b[0] - pad, y: b[1] - pad, width: b[2] - b[0] + 2 * pad,
          height: b[3] - b[1] + 2 * pad, fill: "none", "stroke-width": stroke * 1.5,
          "stroke-dasharray": stroke * 2 + " " + stroke * 2, "class": "look-here" }));
      });
      state.cards.forEach(function (card, index) {
        if (!card.box) return;
        var b = card.box;
        var kind = index === state.selected ? "selected" : card.fixed ? "fixed" : card.uncertain ? "uncertain" : "sure";
        var group = svg("g", { "class": "detection " + kind, "data-index": index });
        group.appendChild(svg("rect", { x: b[0], y: b[1], width: b[2] - b[0], height: b[3] - b[1],
                                        "stroke-width": index === state.selected ? stroke * 2 : stroke }));
        var label = svg("text", { x: b[0], y: Math.max(font, b[1] - stroke), "font-size": font });
        label.textContent = card.card;
        group.appendChild(label);
        group.addEventListener("click", function () { select(index); });
        overlay.appendChild(group);
      });
      list.textContent = "";
      state.cards.forEach(function (card, index) {
        var chip = document.createElement("button");
        chip.type = "button";
        chip.className = "photo-card" + (card.uncertain && !card.fixed ? " uncertain" : "") +
          (card.fixed ? " fixed" : "") + (index === state.selected ? " selected" : "");
        chip.dataset.index = index;
        chip.textContent = card.card + (card.uncertain && !card.fixed ? " ?" : "");
        chip.setAttribute("aria-pressed", index === state.selected ? "true" : "false");
        chip.addEventListener("click", function () { select(index); });
        list.appendChild(chip);
      });
      removeButton.disabled = state.selected < 0;
      renderDoubts();
    }

    function fieldValue(name) {
      var form = el(state.target) && el(state.target).form;
      var field = form && form.elements[name];
      if (!field) return null;
      if (field.type === "checkbox") return field.checked;
      return field.value;
    }

    function check() {
      var mine = ++state.sequence;
      var open = readingNotes();
      var payload = { cards: state.cards.map(function (c) { return c.card; }), purpose: state.purpose,
                      tiplu: fieldValue("tiplu"), turned: fieldValue("turned"),
                      alternatives: state.cards.map(function (c) { return doubtful(c) ? c.alternatives : []; }),
                      confidences: state.cards.map(function (c) {
                        return typeof c.confidence === "number" ? c.confidence : null;
                      }),
                      faint: open.filter(function (n) { return PLACE_KINDS.indexOf(n.kind) >= 0 && n.card; })
                        .map(function (n) {
                          var place = { card: n.card, box: n.box, kind: n.kind };
                          if (typeof n.confidence === "number") place.confidence = n.confidence;
                          return place;
                        }) };
      if (state.grouped && state.purpose === "hand") {
        var groups = {};
        state.cards.forEach(function (c, index) {
          if (c.group === null) return;
          (groups[c.group] = groups[c.group] || []).push(index);
        });
        payload.groups = Object.keys(groups).map(function (g) { return groups[g]; });
        payload.short_melds = open.filter(function (n) { return n.kind === "short_meld"; })
          .map(function (n) { return n.box ? { cards: n.cards, box: n.box } : { cards: n.cards }; });
      }
      if (state.seat !== "") {
        var seen = fieldValue("p" + state.seat + "_seen");
        if (seen !== null) payload.seen = seen;
      }
      fetch(text.check, { method: "POST", credentials: "same-origin", body: JSON.stringify(payload),
                          headers: { "Content-Type": "application/json", "Accept": "application/json",
                                     "X-CSRFToken": text.csrf } })
        .then(function (r) { return r.json(); })
        .then(function (data) { if (mine === state.sequence) answer(data); })
        .catch(function () { answerBox.textContent = text.msgOffline; });
    }

    function line(parent, content, className) {
      var p = document.createElement("p");
      if (className) p.className = className;
      p.textContent = content;
      parent.appendChild(p);
    }

    function answer(data) {
      answerBox.textContent = "";
      state.outline = data.outline || [];
      state.answerDoubts = data.doubts || [];
      state.answered = Array.isArray(data.doubts);
      if (data.error) {
        line(answerBox, data.error, "error");
      } else if (data.verdict) {
        var v = data.verdict;
        line(answerBox, v.valid ? text.msgValid + " (" + (v.route === "dublees" ? text.msgRouteDublees : text.msgRouteMelds) + ")" : text.msgInvalid + ": " + v.reason,
             v.valid ? "verdict valid" : "verdict invalid");
        v.melds.forEach(function (meld) { line(answerBox, meld.join(" "), "meld"); });
        if (data.as_laid && data.grouping !== "player") {  /* the headline is the hand as laid already */
          line(answerBox, text.msgLaid + ": " + (data.as_laid.valid ? text.msgValid : data.as_laid.reason),
               data.as_laid.valid ? "valid" : "invalid");
        }
      } else if (data.maal) {
        line(answerBox, text.msgMaal + ": " + data.maal.total, "verdict");
        data.maal.items.forEach(function (item) {
          line(answerBox, item.label + ": " + item.cards.join(" ") + " = " + item.points, "meld");
        });
      } else if (data.penalty) {
        line(answerBox, text.msgPenalty + ": " + data.penalty.penalty, "verdict");
        if (data.penalty.unmatched.length) line(answerBox, data.penalty.unmatched.join(" "), "meld");
      }
      render();
    }

    function fix(card) {
      if (state.selected >= 0) {
        var chosen = state.cards[state.selected];
        chosen.card = card;
        chosen.fixed = true;
        chosen.uncertain = false;
        state.selected = -1;
      } else {
        state.cards.push({ card: card, box: null, uncertain: false, fixed: true, group: null, alternatives: [] });
        state.added += 1;
      }
      render();
      check();
    }

    function use() {
      var input = el(state.target);
      var names = state.cards.map(function (c) { return c.card; });
      var grid = document.querySelector('.card-grid[data-target="' + CSS.escape(state.target) + '"]');
      var multi = grid ? grid.dataset.multi === "true" : true;
      input.value = multi ? names.join(" ") : (names[0] || "");
      if (state.seat !== "" && multi) {
        ["_maal", "_penalty"].forEach(function (suffix) {
          var number = input.form && input.form.elements["p" + state.seat + suffix];
          if (number) number.value = "";
        });
      }
      if (input.form && state.photo) {
        var kept = document.createElement("input");
        kept.type = "hidden";
        kept.name = "photo";
        kept.value = state.photo.id;
        input.form.appendChild(kept);
        /* The cards confirmed or changed by a tap, by their place in the reading: kept as
           corrections (corner crop and right card) when the round is saved. */
        var corrected = state.cards.filter(function (c) { return c.fixed && c.source !== undefined; })
          .map(function (c) { return [c.source, c.card]; });
        if (corrected.length) {
          var correction = document.createElement("input");
          correction.type = "hidden";
          correction.name = "correction";
          correction.value = JSON.stringify({ photo: state.photo.id, cards: corrected });
          input.form.appendChild(correction);
        }
      }
      input.dispatchEvent(new Event("input", { bubbles: true }));
      input.dispatchEvent(new Event("change", { bubbles: true }));
      close();
      input.scrollIntoView({ block: "center" });
    }

    function preview() {
      if (!state.previewing) return;
      var next = new Image();
      next.onload = function () {
        view.src = next.src;
        if (state.cameraLost) { state.cameraLost = false; say(""); }
        setTimeout(preview, 300);
      };
      /* A camera that stops answering may come back (plugged in again): keep asking, more slowly. */
      next.onerror = function () {
        state.cameraLost = true;
        say(text.msgNoCamera);
        setTimeout(preview, 1500);
      };
      next.src = text.preview + "?t=" + Date.now();
    }

    document.querySelectorAll(".photo-tools").forEach(function (tools) {
      var input = tools.querySelector(".photo-input");
      input.addEventListener("change", function () {
        if (!input.files || !input.files.length) return;
        open(tools);
        upload(input.files[0]);
        input.value = "";
      });
      var camera = tools.querySelector(".camera-open");
      if (camera) {
        camera.addEventListener("click", function () {
          open(tools);
          live.hidden = false;
          state.previewing = true;
          preview();
        });
      }
    });
    el("camera-shoot").addEventListener("click", function () {
      say(text.msgReading);
      send(text.camera, { method: "POST", body: photoForm() }, shown);
    });
    el("photo-grid").addEventListener("click", function (event) {
      var button = event.target.closest(".card");
      if (button) fix(button.dataset.card);
    });
    removeButton.addEventListener("click", function () {
      if (state.selected < 0) return;
      var removed = state.selected;
      state.cards.splice(removed, 1);
      state.notes = state.notes.filter(function (note) { return note.cards.indexOf(removed) < 0; })
        .map(function (note) {
          return Object.assign({}, note, { cards: note.cards.map(function (i) { return i > removed ? i - 1 : i; }) });
        });
      state.answerDoubts = [];
      state.answered = false;
      state.selected = -1;
      state.outline = [];
      render();
      check();
    });
    el("photo-use").addEventListener("click", use);
    el("photo-cancel").addEventListener("click", close);
  }

  document.addEventListener("DOMContentLoaded", function () {
    var panel = el("photo-review");
    if (panel) setup(panel);
  });
})();
