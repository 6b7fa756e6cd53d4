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
  var OUTLINE_COLOURS = ["#1f5fbf", "#7b3fa0", "#0b6e4f", "#2a9d8f", "#d98e04", "#444"];
  /* The smallest box a finger can tap on the photo, in screen pixels: the photo opens larger until each box is. */
  var MIN_BOX = 32;
  var MAX_ZOOM = 8;

  function el(id) { return document.getElementById(id); }

  function setup(panel) {
    var text = panel.dataset;
    var status = el("photo-status"), body = el("photo-body"), image = el("photo-image");
    var overlay = el("photo-overlay"), list = el("photo-cards"), answerBox = el("photo-answer");
    var removeButton = el("photo-remove"), live = el("camera-live"), view = el("camera-view");
    var doubtBox = el("photo-doubts"), legend = el("photo-legend"), zoomButton = el("photo-zoom");
    var frame = el("photo-frame"), scroller = el("photo-scroll");
    var state = { target: null, purpose: "hand", seat: "", photo: null, cards: [], selected: -1,
                  outline: [], previewing: false, sequence: 0, notes: [], answerDoubts: [], added: 0,
                  answered: false, kept: {}, valid: false, zoom: 1 };

    function say(message) { status.textContent = message || ""; }

    /* A count's sentence in the page's language: the server gave the form for 1, for 0 and for any other count. */
    function plural(name, n) {
      var form = n === 1 ? "One" : n === 0 ? "Zero" : "Other";
      return (text["msg" + name + form] || "").replace("%n", n);
    }

    /* The photo at its page width, or larger (scrolled inside its own box) until the smallest card box is
       MIN_BOX px on the screen: a tap on the button or on the photo itself opens it. */
    function zoomTo(factor) {
      state.zoom = factor;
      frame.style.width = factor > 1 ? (factor * 100) + "%" : "";
      frame.style.maxWidth = factor > 1 ? "none" : "";
      frame.classList.toggle("zoomed", factor > 1);
      zoomButton.setAttribute("aria-pressed", factor > 1 ? "true" : "false");
      zoomButton.textContent = factor > 1 ? text.msgSmaller : text.msgLarger;
      if (factor > 1) {
        var first = state.cards.filter(function (c) { return c.box && doubtful(c); })[0] ||
                    state.cards.filter(function (c) { return c.box; })[0];
        if (first && state.photo) {
          /* Open on the cards, not on the cloth around them: centre the first card to check both ways. */
          var scale = frame.clientWidth / state.photo.width;
          scroller.scrollLeft = Math.max(0, (first.box[0] + first.box[2]) / 2 * scale - scroller.clientWidth / 2);
          scroller.scrollTop = Math.max(0, (first.box[1] + first.box[3]) / 2 * scale - scroller.clientHeight / 2);
        }
      }
    }

    function largerZoom() {
      if (!state.photo) return 2;
      var boxes = state.cards.filter(function (c) { return c.box; }).map(function (c) {
        return Math.min(c.box[2] - c.box[0], c.box[3] - c.box[1]);
      });
      var smallest = boxes.length ? Math.max(1, Math.min.apply(null, boxes)) : state.photo.width;
      var shown = smallest * frame.clientWidth / state.photo.width;
      var factor = Math.ceil(MIN_BOX / shown * 4 + 0.01) / 4;
      return Math.min(MAX_ZOOM, Math.max(2, factor));
    }

    function toggleZoom() { zoomTo(state.zoom > 1 ? 1 : largerZoom()); }

    function open(tools) {
      state.target = tools.dataset.target;
      state.purpose = tools.dataset.purpose;
      state.seat = tools.dataset.seat;
      state.photo = null;
      state.cards = [];
      state.notes = [];
      state.answerDoubts = [];
      state.answered = false;
      state.kept = {};
      state.valid = false;
      state.added = 0;
      state.selected = -1;
      zoomTo(1);
      panel.hidden = false;
      body.hidden = true;
      live.hidden = true;
      answerBox.textContent = "";
      say("");
      document.body.classList.add("photo-open");
      panel.scrollTop = 0;
      /* A dialog: focus moves into it (a screen reader reads its title), and back to the opener on close. */
      state.opener = document.activeElement;
      panel.focus();
    }

    function close() {
      state.previewing = false;
      panel.hidden = true;
      document.body.classList.remove("photo-open");
      if (state.opener && state.opener.focus && document.contains(state.opener)) state.opener.focus();
      state.opener = null;
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
      state.kept = {};
      state.added = 0;
      state.selected = -1;
      zoomTo(1);
      image.src = data.photo.url;
      overlay.setAttribute("viewBox", "0 0 " + data.photo.width + " " + data.photo.height);
      body.hidden = false;
      /* No card at all: say how to take a photo that reads, not only "0 cards found". */
      var found = state.cards.length ? plural("Found", state.cards.length) : text.msgNone;
      say(found + (data.notice ? " " + data.notice : ""));
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

    /* The notes that named a card the verdict hangs on, for cards tapped since: the server no longer
       doubts a tapped card, but after a wrong tap (the hand no longer finishes) the player still needs to
       know which card decides. */
    function keptNotes(shown) {
      if (state.valid) return [];
      var named = {};
      shown.forEach(function (note) { if (note.kind === "verdict_hinges") named[note.cards[0]] = true; });
      return Object.keys(state.kept).map(Number).filter(function (index) {
        return !named[index] && state.cards[index] && state.cards[index].fixed;
      }).map(function (index) { return state.kept[index]; });
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
      keptNotes(notes).forEach(function (note) {
        var index = note.cards[0];
        line(doubtBox, note.message, "doubt-note verdict_hinges kept");
        var choices = document.createElement("div");
        choices.className = "doubt-choices";
        [note.card, note.instead].forEach(function (name) {
          if (name && name !== state.cards[index].card) choices.appendChild(choice(index, name, name, "instead"));
        });
        doubtBox.appendChild(choices);
      });
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
      if (faint) line(doubtBox, plural("Faint", faint), "doubt-note faint_card");
      var hinges = {};
      state.answerDoubts.forEach(function (d) { if (d.kind === "verdict_hinges") hinges[d.cards[0]] = true; });
      var order = state.cards.map(function (c, i) { return i; }).filter(function (i) { return doubtful(state.cards[i]); });
      order.sort(function (a, b) {
        return (hinges[b] ? 1 : 0) - (hinges[a] ? 1 : 0) || state.cards[a].confidence - state.cards[b].confidence;
      });
      if (!order.length) {
        if (state.cards.length && !doubtBox.childNodes.length) line(doubtBox, text.msgAllSure, "muted doubt-none");
        return;
      }
      line(doubtBox, plural("CheckFirst", order.length), "doubt-head");
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

    /* Fanned cards' boxes overlap: a label that would cover one already placed moves down a line. */
    function placeLabel(label, x, top, size, placed) {
      /* Measured when drawn; a hidden photo measures 0, so never less than the characters' usual width. */
      var measured = label.getComputedTextLength ? label.getComputedTextLength() : 0;
      var width = Math.max(measured, size * 0.62 * label.textContent.length) + size * 0.3;
      /* A line's glyphs and their dark outline reach a little above and below the font size. */
      var line = size * 1.3;
      var spot = { x1: x - size * 0.1, x2: x + width, y1: top, y2: top + line };
      var crossing = function (other) {
        return other.x1 < spot.x2 && spot.x1 < other.x2 && other.y1 < spot.y2 && spot.y1 < other.y2;
      };
      for (var tries = 0; tries < 20 && placed.some(crossing); tries++) {
        spot.y1 += line;
        spot.y2 += line;
      }
      label.setAttribute("y", spot.y1 + size * 1.05);
      placed.push(spot);
    }

    function render() {
      var size = state.photo ? Math.max(state.photo.width, state.photo.height) : 1000;
      var stroke = Math.max(2, size / 300), font = Math.max(12, size / 35);
      var drawn = { uncertain: false, melds: false, look: false };
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
          "class": "meld-outline" }));
        drawn.melds = true;
      });
      openNotes().forEach(function (note) {
        if (!note.box) return;
        var b = note.box, pad = stroke * 4;
        overlay.appendChild(svg("rect", { x: b[0] - pad, y: b[1] - pad, width: b[2] - b[0] + 2 * pad,
          height: b[3] - b[1] + 2 * pad, fill: "none", "stroke-width": stroke * 1.5,
          "stroke-dasharray": stroke * 2 + " " + stroke * 2, "class": "look-here" }));
        drawn.look = true;
      });
      var placed = [];
      state.cards.forEach(function (card, index) {
        if (!card.box) return;
        var b = card.box;
        var kind = index === state.selected ? "selected" : card.fixed ? "fixed" : card.uncertain ? "uncertain" : "sure";
        drawn.uncertain = drawn.uncertain || kind === "uncertain";
        var group = svg("g", { "class": "detection " + kind, "data-index": index });
        group.appendChild(svg("rect", { x: b[0], y: b[1], width: b[2] - b[0], height: b[3] - b[1],
                                        "stroke-width": index === state.selected ? stroke * 2 : stroke }));
        /* Under its box and no wider than it, so neighbours' labels do not run into each other. */
        var width = Math.max(b[2] - b[0], 1), size = Math.min(font, width / (0.62 * card.card.length));
        var label = svg("text", { x: b[0], y: b[3] + size, "font-size": size, "class": "label" });
        label.textContent = card.card;
        group.appendChild(label);
        group.addEventListener("click", function () { select(index); });
        overlay.appendChild(group);
        placeLabel(label, b[0], b[3], size, placed);
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
      legend.textContent = [drawn.uncertain && text.msgLegendUncertain, drawn.melds && text.msgLegendMelds,
                            drawn.look && text.msgLegendLook].filter(Boolean).join(" ");
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
      state.answerDoubts.forEach(function (d) {
        if (d.kind === "verdict_hinges" && d.cards.length === 1) state.kept[d.cards[0]] = d;
      });
      state.valid = !!(data.verdict && data.verdict.valid);
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

    /* A photo judged with the tiplu (or turned card) while that field is empty: say so under the field
       (the page wrote the line; which photos need which field is the page's data-needs), not after a
       photo taken in vain. False when the photo may go ahead. */
    function neededFirst(tools) {
      var field = tools.dataset.needs && el(tools.dataset.needs);
      if (!field || field.value.trim()) return false;
      var hint = el(tools.dataset.needs + "-first");
      if (!hint) return false;
      hint.hidden = false;
      field.setAttribute("aria-invalid", "true");
      field.setAttribute("aria-describedby", hint.id);
      var picker = field.closest(".cards-entry") && field.closest(".cards-entry").querySelector(".card-picker");
      if (picker) picker.open = true;
      field.closest(".cards-entry").scrollIntoView({ block: "start" });
      return true;
    }

    document.querySelectorAll(".needed-first").forEach(function (hint) {
      var field = el(hint.id.replace(/-first$/, ""));
      if (!field) return;
      var filled = function () {
        if (hint.hidden || !field.value.trim()) return;
        hint.hidden = true;
        field.removeAttribute("aria-invalid");
        field.removeAttribute("aria-describedby");
      };
      field.addEventListener("input", filled);
      field.addEventListener("change", filled);
    });

    document.querySelectorAll(".photo-tools").forEach(function (tools) {
      var input = tools.querySelector(".photo-input");
      tools.querySelector(".photo-pick").addEventListener("click", function (event) {
        if (neededFirst(tools)) event.preventDefault();
      });
      input.addEventListener("change", function () {
        if (!input.files || !input.files.length) return;
        open(tools);
        upload(input.files[0]);
        input.value = "";
      });
      var camera = tools.querySelector(".camera-open");
      if (camera) {
        camera.addEventListener("click", function () {
          if (neededFirst(tools)) return;
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
      var kept = {};
      Object.keys(state.kept).map(Number).forEach(function (i) {
        if (i !== removed) kept[i > removed ? i - 1 : i] = state.kept[i];
      });
      state.kept = kept;
      state.answerDoubts = [];
      state.answered = false;
      state.selected = -1;
      state.outline = [];
      render();
      check();
    });
    el("photo-use").addEventListener("click", use);
    zoomButton.addEventListener("click", toggleZoom);
    overlay.addEventListener("click", function (event) {
      if (!event.target.closest(".detection")) toggleZoom();
    });
    el("photo-cancel").addEventListener("click", close);
  }

  document.addEventListener("DOMContentLoaded", function () {
    var panel = el("photo-review");
    if (panel) setup(panel);
  });
})();
