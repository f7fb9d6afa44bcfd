/**
 * Tiny DOM helpers: elements are built with createElement and text nodes (never innerHTML), so
 * task payloads, errors and names are shown as text, whatever they contain.
 */

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * Creates an element. `attrs`: attributes; `on*` functions become listeners; `dataset` an object.
 * Children: nodes, strings (as text), arrays, null/undefined/false (skipped).
 */
export function h(tag, attrs = {}, ...children) {
  return build(document.createElement(tag), attrs, children);
}

/** As {@link h}, for SVG elements. */
export function s(tag, attrs = {}, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

function build(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Replaces the children of `el`. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A table: `columns` [{label, value: (row) => node|string}], one row per item; `onRow` makes rows clickable. */
export function table(columns, rows, { onRow, rowAttrs } = {}) {
  return h('table', {},
    h('thead', {}, h('tr', {}, columns.map((c) => h('th', {}, c.label)))),
    h('tbody', {}, rows.length === 0
      ? h('tr', {}, h('td', { colspan: columns.length, class: 'muted' }, 'nothing here'))
      : rows.map((r) => h('tr', { class: onRow ? 'clickable' : undefined, onclick: onRow ? () => onRow(r) : undefined, ...(rowAttrs?.(r) ?? {}) },
        columns.map((c) => h('td', {}, c.value(r)))))));
}

/** A state name styled by state. */
export function status(state) {
  return h('span', { class: `status s-${state}` }, state ?? '');
}


/** Pretty JSON in a <pre>. */
export function json(value) {
  return h('pre', {}, value === undefined ? '' : JSON.stringify(value, null, 2));
}

/** A labelled <select> with an empty "any" choice. */
export function select(name, label, options, value = '') {
  return h('label', {}, label, h('select', { name },
    h('option', { value: '' }, 'any'),
    options.map((o) => h('option', { value: o, selected: o === value }, o))));
}

/** A labelled text <input>. */
export function input(name, label, value = '', attrs = {}) {
  return h('label', {}, label, h('input', { name, value, ...attrs }));
}
