// Draws the dashboard's orders-and-refunds chart with uPlot (served from this server). The data
// comes in the element's data-chart attribute (JSON): the CSP forbids inline script. The table
// next to the chart holds the same numbers for screen readers and for browsers without script.
(() => {
  const draw = (el) => {
    const data = JSON.parse(el.dataset.chart);
    const width = Math.max(280, Math.min(el.clientWidth || 800, 1100));
    const day = (s) => new Date(s * 1000).toISOString().slice(5, 10);
    const chart = new uPlot(
      {
        width,
        height: 260,
        scales: { x: { time: false }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        axes: [
          { values: (_u, ticks) => ticks.map(day), stroke: '#57606a' },
          // Counts: whole-number ticks only.
          { stroke: '#57606a', incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6] },
        ],
        series: [
          { label: 'Day (UTC)', value: (_u, v) => (v == null ? '' : day(v)) },
          { label: 'Orders', stroke: '#0b5cad', width: 2 },
          { label: 'Refunds', stroke: '#a40e26', width: 2, dash: [6, 4] },
        ],
      },
      [data.days, data.orders, data.refunds],
      el,
    );
    el.dataset.chartRendered = 'true';
    return chart;
  };
  const start = () => {
    for (const el of document.querySelectorAll('[data-chart]')) draw(el);
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
