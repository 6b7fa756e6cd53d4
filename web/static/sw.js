/* tiplu's service worker: keeps the page shell (styles, scripts, icons, the pages last seen) for when
   the Wi-Fi drops. Pages are fetched from the server first and the copy is used only when it cannot
   be reached; writes (POST) always go to the server. Licence: AGPL-3.0-or-later. */
"use strict";
var CACHE = "tiplu-shell-v1";
var SHELL = ["/", "/static/tiplu.css", "/static/tiplu.js", "/static/theme.js", "/static/photo.js",
             "/static/icons/tiplu.svg", "/static/icons/tiplu-192.png", "/offline"];

self.addEventListener("install", function (event) {
  event.waitUntil(caches.open(CACHE).then(function (cache) { return cache.addAll(SHELL); })
    .then(function () { return self.skipWaiting(); }));
});

self.addEventListener("activate", function (event) {
  event.waitUntil(caches.keys().then(function (names) {
    return Promise.all(names.filter(function (n) { return n !== CACHE; }).map(function (n) { return caches.delete(n); }));
  }).then(function () { return self.clients.claim(); }));
});

self.addEventListener("fetch", function (event) {
  var request = event.request;
  if (request.method !== "GET" || new URL(request.url).origin !== self.location.origin) return;
  var path = new URL(request.url).pathname;
  if (path.indexOf("/api/") === 0 || path.indexOf("/camera/") === 0 || /\/photos\//.test(path)) return;
  event.respondWith(fetch(request).then(function (response) {
    if (response.ok && response.type === "basic") {
      var copy = response.clone();
      caches.open(CACHE).then(function (cache) { cache.put(request, copy); });
    }
    return response;
  }).catch(function () {
    return caches.match(request).then(function (hit) {
      if (hit) return hit;
      return request.mode === "navigate" ? caches.match("/offline") : Response.error();
    });
  }));
});
