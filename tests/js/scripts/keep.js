// For --keep: the first two runs die from an uncaught exception; the third
// one survives and reports how many restarts it took.
if (settee.restartCount < 2) {
  setTimeout(function crash() {
    throw new Error('crash number ' + settee.restartCount);
  }, 1);
} else {
  console.log('survived after ' + settee.restartCount + ' restarts');
}
