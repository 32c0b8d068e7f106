// Draws the Usage page's requests-per-day chart with uPlot (served from this server). The data
// comes in the element's data-chart attribute (JSON): the CSP forbids inline script. The table
// below the chart holds the same numbers for screen readers and for browsers without script.
(() => {
  const draw = (el) => {
    const data = JSON.parse(el.dataset.chart);
    const day = (s) => new Date(s * 1000).toISOString().slice(5, 10);
    const chart = new uPlot(
      {
        width: Math.max(280, Math.min(el.clientWidth || 800, 1100)),
        height: 260,
        scales: { x: { time: false } },
        axes: [{ values: (_u, ticks) => ticks.map(day), stroke: '#57606a' }, { stroke: '#57606a' }],
        series: [
          { label: 'Day (UTC)', value: (_u, v) => (v == null ? '' : day(v)) },
          { label: '2xx', stroke: '#1a7f37', width: 2 },
          { label: '3xx', stroke: '#57606a', width: 1, dash: [2, 4] },
          { label: '4xx', stroke: '#9a6700', width: 2, dash: [6, 4] },
          { label: '5xx', stroke: '#a40e26', width: 2, dash: [10, 3, 2, 3] },
        ],
      },
      [data.days, data.ok, data.redirect, data.clientError, data.serverError],
      el,
    );
    el.dataset.chartRendered = 'true';
    // A phone turned sideways (or a narrower window): the chart follows the page's width.
    window.addEventListener('resize', () => chart.setSize({ width: Math.max(280, Math.min(el.clientWidth || 800, 1100)), height: 260 }));
    return chart;
  };
  const start = () => {
    for (const el of document.querySelectorAll('[data-chart]')) draw(el);
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
