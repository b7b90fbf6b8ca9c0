// Part of the isolate prelude (js/prelude/begin.js): the `performance` global
// (and perf_hooks.performance) with the User Timing marks and measures.
// A fragment, not a module: it shares the prelude function's scope.

// ---------------------------------------------------------------------------
// performance

class PerformanceEntry {
  constructor(name, entryType, startTime, duration, detail) {
    this.name = name;
    this.entryType = entryType;
    this.startTime = startTime;
    this.duration = duration;
    this.detail = detail === undefined ? null : detail;
  }
  toJSON() {
    return { name: this.name, entryType: this.entryType, startTime: this.startTime, duration: this.duration, detail: this.detail };
  }
}

// Marks and measures in the order they were made, as getEntries() lists them.
const performanceEntries = [];

// A mark's name, or a time in ms since timeOrigin.
function performanceTime(nameOrTime) {
  if (typeof nameOrTime === 'number') return nameOrTime;
  for (let i = performanceEntries.length - 1; i >= 0; i--) {
    const e = performanceEntries[i];
    if (e.entryType === 'mark' && e.name === nameOrTime) return e.startTime;
  }
  throw new DOMException(`The "${nameOrTime}" performance mark has not been set`, 'SyntaxError');
}

const performance = {
  // The native function itself: an arrow around it was one more JS call per
  // read, in the interpreter or baseline code where short loops run.
  now: native.now,
  timeOrigin: Date.now() - native.now(),
  mark(name, options = {}) {
    const startTime = options && options.startTime !== undefined ? options.startTime : native.now();
    if (typeof startTime !== 'number' || startTime < 0) throw new TypeError('The "startTime" option must be a non-negative number');
    const mark = new PerformanceEntry(String(name), 'mark', startTime, 0, options && options.detail);
    performanceEntries.push(mark);
    return mark;
  },
  // measure(name[, startMark[, endMark]]) or measure(name, {start, end,
  // duration, detail}); without a start it runs from timeOrigin, without an
  // end until now.
  measure(name, startOrOptions, endMark) {
    let start = 0;
    let end;
    let detail;
    if (startOrOptions !== null && typeof startOrOptions === 'object') {
      const o = startOrOptions;
      detail = o.detail;
      if (o.start !== undefined) start = performanceTime(o.start);
      if (o.end !== undefined) end = performanceTime(o.end);
      else if (o.duration !== undefined) end = start + o.duration;
      if (o.start === undefined && o.end !== undefined && o.duration !== undefined) start = end - o.duration;
    } else if (startOrOptions !== undefined) {
      start = performanceTime(startOrOptions);
    }
    if (endMark !== undefined) end = performanceTime(endMark);
    if (end === undefined) end = native.now();
    const measure = new PerformanceEntry(String(name), 'measure', start, end - start, detail);
    performanceEntries.push(measure);
    return measure;
  },
  getEntries: () => performanceEntries.slice(),
  getEntriesByName: (name, type) => performanceEntries.filter((e) => e.name === name && (type === undefined || e.entryType === type)),
  getEntriesByType: (type) => performanceEntries.filter((e) => e.entryType === type),
  clearMarks(name) { clearPerformanceEntries('mark', name); },
  clearMeasures(name) { clearPerformanceEntries('measure', name); },
};
performance.toJSON = () => ({ timeOrigin: performance.timeOrigin });

function clearPerformanceEntries(type, name) {
  for (let i = performanceEntries.length - 1; i >= 0; i--) {
    const e = performanceEntries[i];
    if (e.entryType === type && (name === undefined || e.name === name)) performanceEntries.splice(i, 1);
  }
}
