// Shows why an htmx request was refused (htmx does not swap error responses): the page's own
// message, in the status region at the top of the page. Served from this server; no inline script.
document.addEventListener('htmx:responseError', (event) => {
  const flash = document.getElementById('flash');
  if (!flash) return;
  const doc = new DOMParser().parseFromString(event.detail.xhr.responseText, 'text/html');
  const message = doc.querySelector('.error');
  flash.textContent = message ? message.textContent : `The request failed (HTTP ${event.detail.xhr.status}).`;
  flash.className = 'error';
});
