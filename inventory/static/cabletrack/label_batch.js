// The label batch page: poll the batch's status until it is done (a file, not an inline script: CSP).
(function () {
  var box = document.getElementById("batch-state");
  function poll() {
    fetch(box.dataset.statusUrl, {credentials: "same-origin"}).then(function (r) { return r.json(); }).then(function (s) {
      document.getElementById("batch-status").textContent = s.status_display;
      document.getElementById("batch-done").textContent = s.done;
      document.getElementById("batch-total").textContent = s.total;
      document.getElementById("batch-progress").value = s.percent;
      document.getElementById("batch-error").textContent = s.error;
      if (s.download) { document.getElementById("batch-download").hidden = false; return; }
      if (s.status !== "failed") { setTimeout(poll, 1000); }
    }).catch(function () { setTimeout(poll, 3000); });
  }
  setTimeout(poll, 1000);
})();
