import { h } from './dom.js';

/**
 * Cursor pages of one list (the API's `limit` + `next_cursor`): the cursor each page was read with
 * is kept (the first page: none), so Previous reads that page again and Next follows
 * `next_cursor`. `read(cursor)` answers a page; `render(answer, bar, index)` shows it, `bar` being
 * the Previous / page n / Next buttons made for it (their ids from `ids`: bar, prev, number, next).
 * @returns `load(index)`, `reload()` (the page shown, after a change) and `at()` (its index)
 */
export function cursorPager(read, render, ids) {
  const cursors = [undefined];
  let at = 0;
  const load = async (index) => {
    const r = await read(cursors[index]);
    at = index;
    if (r.next_cursor) cursors[index + 1] = r.next_cursor;
    else cursors.length = index + 1;
    render(r, h('div', { class: 'pager', id: ids.bar },
      h('button', { id: ids.prev, disabled: at === 0, onclick: () => load(at - 1) }, '‹ Previous'),
      h('span', { id: ids.number }, `page ${at + 1}`),
      h('button', { id: ids.next, disabled: !r.next_cursor, onclick: () => load(at + 1) }, 'Next ›')), index);
  };
  return { load, reload: () => load(at), at: () => at };
}
