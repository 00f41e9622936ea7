window.addEventListener('load', function () {
  var problems = [];
  var svgs = document.querySelectorAll('svg');
  svgs.forEach(function (svg, si) {
    var box = svg.getBoundingClientRect();
    var texts = Array.prototype.slice.call(svg.querySelectorAll('text'));
    var rects = [];
    texts.forEach(function (t) {
      var r = t.getBoundingClientRect();
      if (r.width === 0 || r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5) {
        problems.push('svg ' + si + ': label "' + t.textContent + '" is clipped (' + Math.round(r.left) + '..' + Math.round(r.right) + ' of ' + Math.round(box.left) + '..' + Math.round(box.right) + ')');
      }
      rects.forEach(function (o) {
        if (r.left < o.r.right - 1 && o.r.left < r.right - 1 && r.top < o.r.bottom - 1 && o.r.top < r.bottom - 1) {
          problems.push('svg ' + si + ': label "' + t.textContent + '" overlaps "' + o.t + '"');
        }
      });
      rects.push({r: r, t: t.textContent});
    });
    var seen = {};
    svg.querySelectorAll('polyline').forEach(function (p) {
      var pts = p.getAttribute('points');
      var r = p.getBoundingClientRect();
      if (!pts || r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 1.5 || r.bottom > box.bottom + 1.5) {
        problems.push('svg ' + si + ': a line is empty or outside its chart');
      }
      if (seen[pts]) { problems.push('svg ' + si + ': two lines coincide (one hides the other)'); }
      seen[pts] = true;
    });
  });
  var out = document.createElement('pre');
  out.id = 'layout-check';
  out.textContent = JSON.stringify({svgs: svgs.length, problems: problems});
  document.body.appendChild(out);
});
