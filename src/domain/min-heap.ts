/**
 * A min-priority queue ordered by a comparator (negative: `a` comes first): a binary heap, plus a
 * run of items pushed in order. An item not before the run's last joins the run (O(1)); any other
 * goes into the heap (O(log n)); pop takes the lesser of the two heads. Due entries mostly arrive
 * in order (a window read in due order; a backlog or herd handed out from it), so most pushes and
 * pops cost O(1) and one comparison: the observation behind natural merge sorts, which keep the
 * runs already in the input (Knuth, TAOCP vol. 3, §5.2.4). push and pop are O(log n) in the worst
 * case; peek is O(1).
 */
export class MinHeap<T> {
  /** Binary heap (items[0] the least). */
  private items: T[] = [];
  /** Items pushed in order, least first from `head`. */
  private run: T[] = [];
  private head = 0;

  /** @param compare total order; ties keep no particular order, so include a sequence number */
  constructor(private readonly compare: (a: T, b: T) => number) {}

  get size(): number {
    return this.items.length + this.run.length - this.head;
  }

  /** Removes every item. */
  clear(): void {
    this.items = [];
    this.run = [];
    this.head = 0;
  }

  peek(): T | undefined {
    if (this.head === this.run.length) return this.items[0];
    if (this.items.length === 0 || this.compare(this.run[this.head], this.items[0]) <= 0) return this.run[this.head];
    return this.items[0];
  }

  push(item: T): void {
    const run = this.run;
    if (this.head === run.length || this.compare(item, run[run.length - 1]) >= 0) {
      run.push(item);
      return;
    }
    const a = this.items;
    let i = a.length;
    a.push(item);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.compare(item, a[parent]) >= 0) break;
      a[i] = a[parent];
      i = parent;
    }
    a[i] = item;
  }

  pop(): T | undefined {
    if (this.head < this.run.length && (this.items.length === 0 || this.compare(this.run[this.head], this.items[0]) <= 0))
      return this.takeRun();
    return this.popHeap();
  }

  private takeRun(): T {
    const run = this.run;
    const top = run[this.head];
    run[this.head] = undefined as T; // no reference kept to a popped item
    this.head++;
    if (this.head === run.length) {
      run.length = 0;
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= run.length) {
      this.run = run.slice(this.head);
      this.head = 0;
    }
    return top;
  }

  private popHeap(): T | undefined {
    const a = this.items;
    if (a.length === 0) return undefined;
    const top = a[0];
    const last = a.pop() as T;
    const n = a.length;
    if (n === 0) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const m = r < n && this.compare(a[r], a[l]) < 0 ? r : l;
      if (this.compare(a[m], last) >= 0) break;
      a[i] = a[m];
      i = m;
    }
    a[i] = last;
    return top;
  }
}
