// Copy buttons (both front ends; served from this server, no inline script). A `data-copy` button
// copies the text of the element just before it: the one-time secret displays have theirs in the
// page; every code block (`pre > code`) gets one here, after the block. Without script or without
// the Clipboard API there is no button, and the text is still selectable.
if (navigator.clipboard) {
  for (const button of document.querySelectorAll('button.copy[data-copy]')) button.hidden = false;
  for (const block of document.querySelectorAll('main pre:has(> code)')) {
    if (block.nextElementSibling?.matches('button.copy[data-copy]')) continue;
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'copy code-copy';
    button.dataset.copy = '';
    const hint = document.createElement('span');
    hint.className = 'visually-hidden';
    hint.textContent = ' the code above';
    button.append('Copy', hint);
    block.after(button);
  }
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
