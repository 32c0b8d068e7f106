// Times in the viewer's own zone (issue 29, item 8). The server writes every instant as
// <time datetime="2026-05-01T14:03:07Z" title="2026-05-01 14:03:07 UTC">2026-05-01 14:03 UTC</time>
// (src/web/times.ts); this rewrites the text into the browser's zone in the same format,
// "2026-05-01 23:03 GMT+9", and keeps the UTC time in the title for a hover. Served from this
// server (the pages' CSP allows no inline script); without it the page reads in UTC.
const localTime = new Intl.DateTimeFormat('en-GB', {
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
  timeZoneName: 'short',
});

const pad = (n) => String(n).padStart(2, '0');
const utcTitle = (d) =>
  `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} UTC`;

function showLocalTimes(root) {
  for (const element of root.querySelectorAll('time[datetime$="Z"]')) {
    const when = new Date(element.getAttribute('datetime'));
    if (Number.isNaN(when.getTime())) continue;
    const part = Object.fromEntries(localTime.formatToParts(when).map((p) => [p.type, p.value]));
    element.textContent = `${part.year}-${part.month}-${part.day} ${part.hour}:${part.minute} ${part.timeZoneName}`;
    element.title = utcTitle(when);
  }
}

showLocalTimes(document);
// Parts of a page htmx swaps in carry server-rendered (UTC) times too.
document.addEventListener('htmx:afterSettle', (event) => showLocalTimes(event.target));
