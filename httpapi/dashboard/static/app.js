// Cortex dashboard: progressive enhancement only. Every page works without
// this script; it adds local times, the theme switch and keyboard keys.
(function () {
  "use strict";
  var root = document.documentElement;
  try {
    var saved = localStorage.getItem("cortex-theme");
    if (saved === "light" || saved === "dark") root.setAttribute("data-theme", saved);
  } catch (e) {}

  function pad(n) { return n < 10 ? "0" + n : "" + n; }
  function localTimes() {
    var els = document.querySelectorAll("time[datetime]");
    for (var i = 0; i < els.length; i++) {
      var d = new Date(els[i].getAttribute("datetime"));
      if (isNaN(d.getTime())) continue;
      els[i].title = els[i].textContent;
      els[i].textContent = d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " +
        pad(d.getHours()) + ":" + pad(d.getMinutes()) + ":" + pad(d.getSeconds());
    }
  }

  function openTarget() {
    if (!location.hash) return;
    var el = document.getElementById(location.hash.slice(1));
    if (!el) return;
    for (var p = el; p; p = p.parentElement) if (p.tagName === "DETAILS") p.open = true;
    el.scrollIntoView({ block: "center" });
    if (el.tabIndex < 0) el.focus({ preventScroll: true });
  }

  function rows() { return Array.prototype.slice.call(document.querySelectorAll(".transcript > li.row")); }
  function move(step) {
    var list = rows();
    if (!list.length) return;
    var cur = list.indexOf(document.activeElement.closest ? document.activeElement.closest("li.row") : null);
    var next = list[Math.max(0, Math.min(list.length - 1, cur < 0 ? 0 : cur + step))];
    next.focus();
    next.scrollIntoView({ block: "nearest" });
    history.replaceState(null, "", "#" + next.id);
  }

  document.addEventListener("keydown", function (ev) {
    var t = ev.target;
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT")) {
      if (ev.key === "Escape") t.blur();
      return;
    }
    if (ev.key === "/") { var q = document.getElementById("q"); if (q) { ev.preventDefault(); q.focus(); } }
    else if (ev.key === "j") move(1);
    else if (ev.key === "k") move(-1);
    else if (ev.key === "o" || ev.key === "Enter") {
      var li = document.activeElement && document.activeElement.closest && document.activeElement.closest("li.row");
      var d = li && li.querySelector("details");
      if (d && document.activeElement === li) { ev.preventDefault(); d.open = !d.open; }
    }
  });

  document.addEventListener("DOMContentLoaded", function () {
    localTimes();
    openTarget();
    var btn = document.getElementById("theme");
    if (btn) {
      btn.hidden = false;
      btn.addEventListener("click", function () {
        var dark = root.getAttribute("data-theme") === "dark" ||
          (!root.getAttribute("data-theme") && window.matchMedia("(prefers-color-scheme: dark)").matches);
        var next = dark ? "light" : "dark";
        root.setAttribute("data-theme", next);
        try { localStorage.setItem("cortex-theme", next); } catch (e) {}
      });
    }
  });
  window.addEventListener("hashchange", openTarget);
})();
