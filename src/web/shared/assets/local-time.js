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

// Numbers in the viewer's own locale (issue 44, 7): the server writes amounts and quantities as
// machine-readable text ("1234.50 USD", "-3.25", "1200"), as the CSV files and the API do; this
// rewrites the marked ones — table cells of class "num", a statistic's figure (.stats dd), an
// element with data-num — with the browser's thousands separator and decimal mark ("1,234.50 USD",
// "1.234,50 USD"), keeping the decimals. Ids are never marked. Without script the plain text stays.
const NUMBER = /^(-?\d+)(?:\.(\d+))?( [A-Z]{3})?$/;

function showLocalNumbers(root) {
  for (const element of root.querySelectorAll('td.num, .stats dd, [data-num]')) {
    if (element.children.length > 0 || element.hasAttribute('data-num-shown')) continue;
    const match = NUMBER.exec(element.textContent.trim());
    if (!match) continue;
    const decimals = match[2]?.length ?? 0;
    const value = Number(`${match[1]}.${match[2] ?? '0'}`);
    const text = new Intl.NumberFormat(navigator.languages, { minimumFractionDigits: decimals, maximumFractionDigits: decimals }).format(value);
    element.textContent = `${text}${match[3] ?? ''}`;
    element.setAttribute('data-num-shown', '');
  }
}

showLocalNumbers(document);
document.addEventListener('htmx:afterSettle', (event) => showLocalNumbers(event.target));
