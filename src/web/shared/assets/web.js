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

// A refusal that answers with the part of the page it concerns (header HX-Refused: row — a refund
// rejected without a reason): swapped like a success, so the reason shows where the form is.
document.addEventListener('htmx:beforeSwap', (event) => {
  if (event.detail.xhr.getResponseHeader('HX-Refused') !== 'row') return;
  event.detail.shouldSwap = true;
  event.detail.isError = false;
});

// The import page: a chosen file's name and text go into the form's fields, which are posted as
// an ordinary form (the console takes only form posts; docs/decisions.md, "Console import uploads").
document.addEventListener('change', async (event) => {
  const input = event.target;
  if (!(input instanceof HTMLInputElement) || !input.hasAttribute('data-import-file') || !input.files?.length) return;
  const file = input.files[0];
  const form = input.form;
  form.elements.fileName.value = file.name;
  form.elements.fileText.value = await file.text();
});

// The navigation's Menu button (issue 44, 6): on a phone the navigation folds away behind it
// (stockist.css); pressing it (mouse, Enter or Space) opens or closes it, aria-expanded says which,
// and Escape closes it from inside and puts the focus back on the button. Without this script the
// button stays hidden and the navigation is shown in full.
{
  const menu = document.querySelector('.menu-toggle');
  if (menu) {
    const nav = document.getElementById(menu.getAttribute('aria-controls'));
    menu.hidden = false;
    menu.addEventListener('click', () => menu.setAttribute('aria-expanded', String(menu.getAttribute('aria-expanded') !== 'true')));
    nav?.addEventListener('keydown', (event) => {
      if (event.key !== 'Escape' || menu.getAttribute('aria-expanded') !== 'true') return;
      menu.setAttribute('aria-expanded', 'false');
      menu.focus();
    });
  }
}
