// cabletrack: a few lines of progressive enhancement. Every page works without it.
(function () {
  "use strict";
  function $all(sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); }

  // The header's Menu: open on a desk-wide window (the links read as a row), folded on the phone.
  if (window.matchMedia && window.matchMedia("(min-width: 700px)").matches) {
    $all("details[data-open-wide]").forEach(function (d) { d.open = true; });
  }

  // Bulk selection on the desk lists: "select all", a count, buttons enabled only with a selection.
  $all("form.bulk").forEach(function (form) {
    var boxes = function () { return $all("input[data-row-check]", form); };
    var counter = form.querySelector("[data-selected-count]");
    var buttons = $all("[data-needs-selection]", form);
    function update() {
      var n = boxes().filter(function (b) { return b.checked; }).length;
      if (counter) counter.textContent = n + " selected";
      buttons.forEach(function (b) { b.disabled = n === 0; });
    }
    $all("[data-check-all]", form).forEach(function (all) {
      all.addEventListener("change", function () { boxes().forEach(function (b) { b.checked = all.checked; }); update(); });
    });
    form.addEventListener("change", update);
    update();
  });

  // The power-meter form: picking one of "your instruments" fills in its details as last used.
  $all("select[data-fill-from]").forEach(function (pick) {
    var data = document.getElementById(pick.getAttribute("data-fill-from"));
    if (!data) return;
    var rows = JSON.parse(data.textContent);
    pick.addEventListener("change", function () {
      var row = rows[Number(pick.value)] || {};
      Object.keys(row).forEach(function (name) {
        var field = pick.form.elements[name];
        if (field) field.value = row[name] || "";
      });
    });
  });

  // Scan a module's serial with the phone camera where the browser can decode barcodes.
  if ("BarcodeDetector" in window && navigator.mediaDevices) {
    $all("button[data-scan-into]").forEach(function (btn) {
      btn.hidden = false;
      btn.addEventListener("click", async function () {
        var input = document.getElementById(btn.getAttribute("data-scan-into"));
        var video = document.getElementById("scanview");
        var detector = new window.BarcodeDetector();
        var stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: "environment" } });
        video.srcObject = stream; video.hidden = false; await video.play();
        var done = false;
        async function tick() {
          if (done) return;
          var codes = await detector.detect(video).catch(function () { return []; });
          if (codes.length) {
            done = true; input.value = codes[0].rawValue.trim();
            stream.getTracks().forEach(function (t) { t.stop(); }); video.hidden = true; input.focus();
          } else { requestAnimationFrame(tick); }
        }
        tick();
      });
    });
  }
})();
