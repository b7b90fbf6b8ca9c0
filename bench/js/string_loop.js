// The MongoDB-eval string loop of issue 4. Runs unchanged under node and
// under `settee run --threads N`; prints one JSON line per thread.
function dotest() {
  var str = "xxxxxxxxxxxxxxxxx0000000000";
  var data = str + str + str + str;
  data = data + data + data + data;
  var max = 10000;
  var arr = [];
  var total = 0;
  for (var a = 0; a < 100; a++) {
    for (var i = 0; i < max; i++) arr.push(data + " . " + data);
    for (var i = 0; i < arr.length; i++) total += arr[i].length;
    arr = [];
  }
  return total;
}

var t0 = performance.now();
var total = dotest();
var ms = performance.now() - t0;
if (total !== 867000000) {
  console.error('wrong total ' + total);
  process.exit(1);
}
var thread = typeof settee === 'object' ? settee.threadId : 0;
console.log(JSON.stringify({ thread: thread, ms: Math.round(ms * 100) / 100 }));
