// The MongoDB db.eval string loop (issue 4; the eval suite of `settee bench`,
// bench/harness/eval_suite.h). Runs unchanged under node and in settee's
// isolates (`settee run --threads N`, or the eval suite's in-process pool):
//
//   string_loop.js [iterations [stdout|message]]
//
// Calls dotest() `iterations` times (default 1), checks every result and
// reports one JSON object per thread: {thread, ms, samples, result, start,
// end}. ms is the in-script time of all iterations, samples each one's,
// start/end the epoch ms around the loop (so runs in several processes can be
// put on one clock). "stdout" prints it as a line (node, `settee run`);
// "message" sends it to the embedding host with settee.postMessage.
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

var EXPECTED = 867000000;
var iterations = Number(process.argv[2] || 1);
var report = process.argv[3] || 'stdout';
if (!(iterations >= 1)) throw new Error('iterations must be a positive number, not ' + process.argv[2]);

var clock = function () { return performance.timeOrigin + performance.now(); };
var samples = [];
var total = 0;
var start = clock();
for (var n = 0; n < iterations; n++) {
  var t0 = performance.now();
  total = dotest();
  samples.push(Math.round((performance.now() - t0) * 1000) / 1000);
  // A fast wrong answer must fail loudly.
  if (total !== EXPECTED) throw new Error('dotest() returned ' + total + ', expected ' + EXPECTED);
}
var end = clock();

var result = {
  thread: typeof settee === 'object' ? settee.threadId : 0,
  ms: Math.round(samples.reduce(function (a, b) { return a + b; }, 0) * 100) / 100,
  samples: samples,
  result: total,
  start: start,
  end: end,
};
if (report === 'message') settee.postMessage(result);
else console.log(JSON.stringify(result));
