import { apiKey, setApiKey } from './api.js';
import { h, replace } from './dom.js';
import * as overview from './pages/overview.js';
import * as tasks from './pages/tasks.js';
import * as deadLetter from './pages/dead-letter.js';
import * as crons from './pages/crons.js';
import * as workflows from './pages/workflows.js';
import * as tenants from './pages/tenants.js';

/**
 * The dashboard's shell: hash routing (`#page?param=value`), the API key form, and a status line
 * for the outcome of actions. Each page module exports `render(root, ctx)`; `ctx.onLeave(fn)`
 * registers clean-up (timers) run when another page is shown.
 */
const PAGES = { overview, tasks, 'dead-letter': deadLetter, crons, workflows, tenants };

const root = document.getElementById('page');
const flashEl = document.getElementById('flash');
let leaving = [];

function flash(message, ok = true) {
  flashEl.className = ok ? 'ok' : 'bad';
  replace(flashEl, message);
}

function route() {
  for (const fn of leaving) fn();
  leaving = [];
  const [name, qs] = (location.hash.slice(1) || 'overview').split('?');
  const page = PAGES[name] ?? overview;
  for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('active', a.dataset.page === name);
  const ctx = {
    params: new URLSearchParams(qs ?? ''),
    flash,
    onLeave: (fn) => leaving.push(fn),
    /** Shows `page` with `params` (an object). */
    go: (pageName, params = {}) => {
      const q = new URLSearchParams(Object.entries(params).filter(([, v]) => v)).toString();
      location.hash = q ? `${pageName}?${q}` : pageName;
    },
  };
  document.body.dataset.ready = '';
  replace(root, h('p', { class: 'muted' }, 'Loading…'));
  document.body.dataset.page = name;
  Promise.resolve(page.render(root, ctx))
    .then(() => { document.body.dataset.ready = name; })
    .catch((err) => {
      replace(root, h('p', { class: 'error' }, String(err.message ?? err)),
        err.status === 401 || err.status === 403 ? h('p', {}, 'Enter an API key above (an admin key for metrics, tenants and rate limits).') : null);
      document.body.dataset.ready = name;
    });
}

function showKeyState() {
  replace(document.getElementById('key-state'), apiKey() ? 'key set for this tab' : 'no key');
}

document.getElementById('key-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const field = document.getElementById('api-key');
  setApiKey(field.value.trim());
  field.value = '';
  showKeyState();
  route();
});
document.getElementById('key-clear').addEventListener('click', () => {
  setApiKey('');
  showKeyState();
  route();
});
window.addEventListener('hashchange', route);
showKeyState();
route();
