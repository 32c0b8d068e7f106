// Copy buttons of the one-time secret displays (both front ends; served from this server, no inline
// script). A `data-copy` button copies the text of the element just before it; it stays hidden
// without script or without the Clipboard API, and the secret is still selectable text then.
for (const button of document.querySelectorAll('button.copy[data-copy]')) {
  if (navigator.clipboard) button.hidden = false;
}

document.addEventListener('click', async (event) => {
  const button = event.target instanceof Element ? event.target.closest('button.copy[data-copy]') : null;
  const source = button?.previousElementSibling;
  if (!source) return;
  const label = button.firstChild;
  button.setAttribute('aria-live', 'polite');
  try {
    await navigator.clipboard.writeText(source.textContent);
    label.textContent = 'Copied';
  } catch {
    label.textContent = 'Copy failed: select the text';
  }
  setTimeout(() => {
    label.textContent = 'Copy';
  }, 4000);
});
