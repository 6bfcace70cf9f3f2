/* ipywidgets 8's page renderer (@jupyter-widgets/html-manager) typesets HTML widgets with
   MathJax 2's MathJax.Hub.Queue; the book serves MathJax 3, which has no Hub, so every HTML
   widget logged "Cannot read properties of undefined (reading 'Queue')". This gives MathJax 3
   the one call the renderer makes, as MathJax 3's own typesetPromise. Loaded deferred after
   MathJax's deferred script, so it runs before the renderer draws on the page's load event. */
(function () {
  var M = window.MathJax;
  if (!M || !M.version || String(M.version).charAt(0) !== "3" || M.Hub) return;
  M.Hub = {
    Queue: function (job) {
      var node = job && job.length > 2 ? job[2] : undefined;
      var run = function () {
        if (typeof M.typesetPromise === "function") {
          return M.typesetPromise(node ? [node] : undefined).catch(function () {});
        }
      };
      if (M.startup && M.startup.promise) M.startup.promise.then(run);
      else run();
    },
  };
})();
