// The claim form's evidence (views/claim-form.eta): each chosen file is uploaded at once to the
// form's upload address with a progress bar, and named in the form by its file id (a hidden
// `evidence` field); the file input is then emptied, so the form itself sends no file. Without
// this script the form sends its files as multipart/form-data: the same storage, the same checks.
(() => {
  const form = document.querySelector('form[data-claim-form]');
  if (!form) return;
  const input = form.querySelector('input[type="file"][name="files"]');
  const list = form.querySelector('[data-uploads]');
  const status = form.querySelector('[data-upload-status]');
  const csrf = form.querySelector('input[name="_csrf"]').value;
  const maxFiles = Number(form.dataset.maxFiles);
  let pending = 0;

  const kept = () => form.querySelectorAll('input[name="evidence"]').length;

  function upload(file) {
    const item = document.createElement('li');
    const name = document.createElement('span');
    name.textContent = file.name;
    const bar = document.createElement('progress');
    bar.max = file.size || 1;
    bar.value = 0;
    bar.setAttribute('aria-label', `Uploading ${file.name}`);
    item.append(name, ' ', bar);
    list.append(item);
    pending++;
    const request = new XMLHttpRequest();
    request.open('POST', form.dataset.uploadUrl);
    request.setRequestHeader('X-CSRF-Token', csrf);
    request.setRequestHeader('Content-Type', file.type || 'application/octet-stream');
    request.upload.addEventListener('progress', (event) => {
      if (event.lengthComputable) {
        bar.max = event.total;
        bar.value = event.loaded;
      }
    });
    const finish = (text, fileId) => {
      pending--;
      item.textContent = '';
      if (fileId) {
        const field = document.createElement('input');
        field.type = 'hidden';
        field.name = 'evidence';
        field.value = fileId;
        item.dataset.uploaded = fileId;
        const remove = document.createElement('button');
        remove.type = 'button';
        remove.textContent = 'Remove';
        remove.setAttribute('aria-label', `Remove ${file.name}`);
        remove.addEventListener('click', () => {
          item.remove();
          status.textContent = `${file.name} removed.`;
          input.focus();
        });
        item.append(field, `${file.name}: ${text} `, remove);
      } else {
        item.className = 'error';
        item.dataset.failed = '';
        item.append(`${file.name}: not uploaded — ${text}`);
      }
      status.textContent = pending ? `Uploading ${pending} file(s)…` : `${file.name}: ${fileId ? 'uploaded' : 'not uploaded'}.`;
    };
    request.addEventListener('load', () => {
      let body = null;
      try {
        body = JSON.parse(request.responseText);
      } catch {}
      if (request.status === 200 && body?.fileId) finish(`uploaded (${body.label})`, body.fileId);
      else finish(body?.message ?? `the server answered ${request.status}`, null);
    });
    request.addEventListener('error', () => finish('the connection failed; try again', null));
    request.send(file);
  }

  input.addEventListener('change', () => {
    const files = [...input.files];
    input.value = '';
    const room = maxFiles - kept() - pending;
    if (files.length > room) status.textContent = `At most ${maxFiles} files: ${files.length - Math.max(0, room)} not added.`;
    for (const file of files.slice(0, Math.max(0, room))) upload(file);
  });

  form.addEventListener('submit', (event) => {
    if (pending > 0) {
      event.preventDefault();
      status.textContent = 'Wait for the uploads to finish, then send the claim.';
    }
  });
})();
